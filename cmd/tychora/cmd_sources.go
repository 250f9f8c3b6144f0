package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

func addCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "add",
		Usage: "add a file, folder or git repository and index it",
		UsageText: "tychora add [--kind file|folder|repository] [--collection C] [--include GLOB]... [--exclude GLOB]... [--name N] [--wait] [--json] PATH\n" +
			"   tychora add --selection ID --text-file F [--sha256 H] [--model M] [--source S] [--revision R] [--wait] [--json]",
		Description: "Registers PATH (made absolute against the current directory; it must lie\n" +
			"inside an ingest root) and queues a durable job that indexes it. With a running\n" +
			"owner the job runs there: --wait follows it to the end. Without one, tychora\n" +
			"becomes the owner for this command and runs the job to completion. Folders\n" +
			"and repositories honour .gitignore.\n\n" +
			"The job id goes to stderr as soon as it is known. When the owner it follows goes\n" +
			"away (a restart, a takeover), --wait follows the same job through the next\n" +
			"owner, or runs it in this process when no owner comes back.\n\n" +
			"Exits 1 when the job it followed ends failed or cancelled (the job is printed\n" +
			"all the same). Ctrl-C stops following: a job in the running owner goes on\n" +
			"there; one run by this command goes back to the queue for the next owner.\n\n" +
			selectionHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "kind", Usage: "file, folder or repository (detected when absent)"},
			&cli.StringFlag{Name: "collection", Usage: "the collection (default: default)"},
			&cli.StringSliceFlag{Name: "include", Usage: "index only files matching this glob (repeatable)"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "leave out files matching this glob (repeatable)"},
			&cli.StringFlag{Name: "name", Usage: "a display name"},
			&cli.BoolFlag{Name: "wait", Usage: "follow the job until it ends (progress on stderr); exit 1 if it fails or is cancelled"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1 body ({\"job\":...})"},
		}, selectionFlags...),
		Action: func(c *cli.Context) error {
			if c.IsSet("selection") || c.IsSet("text-file") {
				return addSelection(c, e)
			}
			path, err := oneArg(c, "PATH")
			if err != nil {
				return err
			}
			if !utf8.ValidString(path) {
				// JSON would carry it with U+FFFD in place of the bad
				// bytes: another path, which does not exist.
				return usageError("PATH is not valid UTF-8: tychora indexes paths that are text (rename the file, or add its folder: such names are listed as undecodable)")
			}
			if c.IsSet("kind") && !sources.Kind(c.String("kind")).Valid() {
				return usageError("--kind %q: use file, folder or repository (or leave it out)", c.String("kind"))
			}
			if c.IsSet("collection") && !workspace.ValidCollectionName(c.String("collection")) {
				return usageError("--collection %q is not a valid collection name", c.String("collection"))
			}
			if !filepath.IsAbs(path) {
				cwd, err := os.Getwd()
				if err != nil {
					return err
				}
				path = filepath.Join(cwd, path)
			}
			req := interfaces.AddSourcesRequest{Action: interfaces.SourceActionAdd, Source: &interfaces.SourceInput{
				Kind: sources.Kind(c.String("kind")), Path: path, CollectionID: c.String("collection"),
				Include: c.StringSlice("include"), Exclude: c.StringSlice("exclude"), Name: c.String("name"),
			}}
			return runJob(c, e, req)
		},
	}
}

func printJob(e *env, j jobs.Job) {
	p := j.Progress
	fmt.Fprintf(e.stdout, "job %s  %s %s  source %s  collection %s  attempt %d\n", j.ID, j.Kind, j.State, j.SourceID, j.CollectionID, j.Attempt)
	fmt.Fprintf(e.stdout, "  %d files seen, %d indexed, %d unchanged, %d skipped, %d deleted, %s read\n",
		p.FilesSeen, p.Indexed, p.Unchanged, p.Skipped, p.Deleted, humanBytes(p.Bytes))
	if p.Deleted > 0 {
		fmt.Fprintf(e.stdout, "  %d %s removed from the index (gone from disk, or now left out)\n", p.Deleted, filesWord(p.Deleted))
	}
	if j.Error != nil {
		fmt.Fprintf(e.stdout, "  error %s: %s\n", j.Error.Code, j.Error.Message)
	}
}

func filesWord(n int64) string {
	if n == 1 {
		return "file"
	}
	return "files"
}

func sourcesCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "sources",
		Usage:     "list the sources you can see",
		UsageText: "tychora sources [--json]",
		Description: "Prints the discover sources answer: every source of your collections with its\n" +
			"kind, path and current revision.",
		Flags:       []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the discover sources body"}},
		Subcommands: []*cli.Command{sourcesListCommand(e), sourcesRemoveCommand(e)},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return withReads(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
				res, err := discoverAll(ctx, svc, query.SubjectSources)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				if len(res.Items) == 0 {
					fmt.Fprintln(e.stdout, "no sources yet (add one with tychora add PATH)")
					return nil
				}
				active, err := activeJobs(ctx, svc)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tCOLLECTION\tPATH\tLAST SYNCED")
				for _, it := range res.Items {
					m := toMap(it)
					last := "never"
					if v, ok := m["last_synced_at"].(string); ok && v != "" {
						last = v
						if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
							last = t.Local().Format(time.DateTime)
						}
					}
					id, _ := m["id"].(string)
					if state, ok := active[id]; ok {
						last += " (a job is " + state + ")"
					}
					fmt.Fprintf(tw, "%v\t%v\t%v\t%v\t%s\n", m["id"], m["kind"], m["collection_id"], m["path"], last)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				if note := pendingJobs(ctx, svc, inProcess); note != "" && inProcess {
					fmt.Fprintln(e.stdout, note)
				}
				return nil
			})
		},
	}
}

// activeJobs maps each source with a queued or running job to that
// job's state.
func activeJobs(ctx context.Context, svc interfaces.Service) (map[string]string, error) {
	active := map[string]string{}
	for _, state := range []string{jobs.StateQueued, jobs.StateRunning} {
		res, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: interfaces.JobActionList, State: state, Limit: maxJobsPage})
		if err != nil {
			return nil, err
		}
		for _, j := range res.Jobs {
			active[j.SourceID] = j.State
		}
	}
	return active, nil
}

// discoverAll follows cursors to the end and returns one body with every
// item.
func discoverAll(ctx context.Context, svc interfaces.Service, subject string) (interfaces.DiscoverResult, error) {
	all := interfaces.DiscoverResult{Subject: subject, Items: []json.RawMessage{}}
	cursor := ""
	for {
		res, err := svc.Discover(ctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: subject, Cursor: cursor, Limit: 200}})
		if err != nil {
			return all, err
		}
		all.Items = append(all.Items, res.Items...)
		if res.NextCursor == nil {
			return all, nil
		}
		cursor = *res.NextCursor
	}
}
