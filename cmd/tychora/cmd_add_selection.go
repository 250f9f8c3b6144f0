package main

import (
	"context"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// selectionHelp is the part of add's description about the selection form.
const selectionHelp = "With --selection, add records the text seen in an image instead: ID is an\n" +
	"image selection that `tychora inspect source_selections SOURCE` listed, and\n" +
	"--text-file F (\"-\" for stdin) holds what was seen in it (a transcription, a\n" +
	"description, or both). --sha256 is the selection's hash as listed: the job\n" +
	"fails with CONFLICT when the image has changed since. Without it, the hash\n" +
	"listed now is used. The text is searchable beside the image once the job ends."

var selectionFlags = []cli.Flag{
	&cli.StringFlag{Name: "selection", Usage: "record text seen in this image selection (its id, from inspect source_selections)"},
	&cli.StringFlag{Name: "text-file", Usage: "with --selection: the file holding the text seen in the image (\"-\" for stdin)"},
	&cli.StringFlag{Name: "sha256", Usage: "with --selection: the selection's sha256 as listed (default: the one listed now)"},
	&cli.StringFlag{Name: "model", Usage: "with --selection: what produced the text (a label)"},
	&cli.StringFlag{Name: "source", Usage: "with --selection: the selection's source id"},
	&cli.StringFlag{Name: "revision", Usage: "with --selection: the revision the selection was listed in"},
}

// addSelection is add --selection: the selection form of SourceInput.
func addSelection(c *cli.Context, e *env) error {
	if err := noArgs(c); err != nil {
		return usageError("add --selection takes no PATH%s", seeHelp(c))
	}
	for _, f := range []string{"kind", "include", "exclude", "name"} {
		if c.IsSet(f) {
			return usageError("--%s goes with PATH, not with --selection", f)
		}
	}
	id, file := c.String("selection"), c.String("text-file")
	if id == "" || file == "" {
		return usageError("add --selection needs both --selection ID and --text-file F%s", seeHelp(c))
	}
	text, err := readSelectionText(file)
	if err != nil {
		return err
	}
	in := &interfaces.SourceInput{SelectionID: id, SHA256: c.String("sha256"), Text: text, Model: c.String("model"),
		SourceID: c.String("source"), RevisionID: c.String("revision"), CollectionID: c.String("collection")}
	if in.SHA256 == "" {
		err := withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
			in.SHA256, err = listedHash(ctx, svc, in.SourceID, id)
			return err
		})
		if err != nil {
			return err
		}
	}
	return runJob(c, e, interfaces.AddSourcesRequest{Action: interfaces.SourceActionAdd, Source: in})
}

// readSelectionText reads the text file, refusing one over the limit
// without reading it whole.
func readSelectionText(name string) (string, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", usageError("--text-file: %v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, sources.MaxSelectionTextBytes+1))
	if err != nil {
		return "", usageError("--text-file: %v", err)
	}
	if len(b) > sources.MaxSelectionTextBytes {
		return "", workspace.Errorf(workspace.CodeInvalidArgument, "--text-file is over the %d-byte limit of a selection's text", sources.MaxSelectionTextBytes)
	}
	return string(b), nil
}

// listedHash finds the selection id among the selections of the source
// named (or of every source the caller sees) and returns its hash as
// listed now.
func listedHash(ctx context.Context, svc interfaces.Service, sourceID, id string) (string, error) {
	ids := []string{sourceID}
	if sourceID == "" {
		list, err := discoverAll(ctx, svc, query.SubjectSources)
		if err != nil {
			return "", err
		}
		ids = ids[:0]
		for _, it := range list.Items {
			if sid, _ := toMap(it)["id"].(string); sid != "" {
				ids = append(ids, sid)
			}
		}
	}
	for _, sid := range ids {
		cursor := ""
		for {
			res, err := svc.Inspect(ctx, interfaces.InspectArgs{Request: interfaces.InspectRequest{
				Subject: query.InspectSourceSelections, SourceID: sid, Cursor: cursor, Limit: 200}})
			if workspace.ErrorCode(err) == workspace.CodeNotFound && sourceID == "" {
				break // no revision yet
			}
			if err != nil {
				return "", err
			}
			page := toMap(res.Result)
			items, _ := page["items"].([]any)
			for _, it := range items {
				m, _ := it.(map[string]any)
				if m["id"] == id {
					sha, _ := m["sha256"].(string)
					return sha, nil
				}
			}
			next, _ := page["next_cursor"].(string)
			if next == "" {
				break
			}
			cursor = next
		}
	}
	return "", workspace.Errorf(workspace.CodeNotFound, "no selection %q in the sources you can see (tychora inspect source_selections SOURCE lists them)", workspace.Clip(id, 64))
}
