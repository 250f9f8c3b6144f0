package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
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
		Name:      "add",
		Usage:     "add a file, folder or git repository and index it",
		UsageText: "tychora add [--kind file|folder|repository] [--collection C] [--include GLOB]... [--exclude GLOB]... [--name N] [--wait] [--json] PATH",
		Description: "Registers PATH (made absolute against the current directory; it must lie\n" +
			"inside an ingest root) and queues a durable job that indexes it. With a running\n" +
			"owner the job runs there: --wait follows it to the end. Without one, tychora\n" +
			"becomes the owner for this command and runs the job to completion. Folders\n" +
			"and repositories honour .gitignore.\n\n" +
			"Exits 1 when the job it followed ends failed or cancelled (the job is printed\n" +
			"all the same). Ctrl-C stops following: a job in the running owner goes on\n" +
			"there; one run by this command goes back to the queue for the next owner.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kind", Usage: "file, folder or repository (detected when absent)"},
			&cli.StringFlag{Name: "collection", Usage: "the collection (default: default)"},
			&cli.StringSliceFlag{Name: "include", Usage: "index only files matching this glob (repeatable)"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "leave out files matching this glob (repeatable)"},
			&cli.StringFlag{Name: "name", Usage: "a display name"},
			&cli.BoolFlag{Name: "wait", Usage: "follow the job until it ends (progress on stderr); exit 1 if it fails or is cancelled"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1 body ({\"job\":...})"},
		},
		Action: func(c *cli.Context) error {
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
			return withService(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
				res, err := svc.AddSources(ctx, req)
				if err != nil {
					return err
				}
				return followJob(c, e, ctx, svc, res.Job, inProcess)
			})
		},
	}
}

func syncCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "re-index a source: only what changed is extracted again",
		UsageText: "tychora sync [--wait] [--json] SOURCE_ID",
		Description: "Queues a sync of SOURCE_ID (see tychora sources). A sync asked for while one is\n" +
			"queued or running answers with that job. Without a running owner the sync\n" +
			"runs to completion in this process. Exits 1 when the job it followed ends\n" +
			"failed or cancelled (the job is printed all the same).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "wait", Usage: "follow the job until it ends (progress on stderr); exit 1 if it fails or is cancelled"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1 body ({\"job\":...})"},
		},
		Action: func(c *cli.Context) error {
			id, err := oneArg(c, "SOURCE_ID")
			if err != nil {
				return err
			}
			req := interfaces.AddSourcesRequest{Action: interfaces.SourceActionSync, SourceID: id}
			return withService(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
				res, err := svc.AddSources(ctx, req)
				if err != nil {
					return err
				}
				return followJob(c, e, ctx, svc, res.Job, inProcess)
			})
		},
	}
}

// followJob prints a job, first waiting for it to end when --wait is set or
// the job runs in this process (inProcess). Ctrl-C stops following; a job
// run in this process is then checkpointed and resumes at the next start,
// one in the running owner goes on there. A job that ends failed or
// cancelled is exit status 1.
func followJob(c *cli.Context, e *env, ctx context.Context, svc interfaces.Service, j jobs.Job, inProcess bool) error {
	asJSON := c.Bool("json")
	if (inProcess || c.Bool("wait")) && !j.Final() {
		sctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		bar := newProgress(e, asJSON)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
	loop:
		for {
			select {
			case <-sctx.Done():
				bar.finish()
				fmt.Fprintln(e.stderr, interruptNote(ctx, svc, j, inProcess))
				return withExit(exitFailure, errSilent)
			case <-t.C:
			}
			res, err := svc.GetJob(ctx, j.ID)
			if err != nil {
				bar.finish()
				return err
			}
			j = res.Job
			bar.update(j)
			if j.Final() {
				break loop
			}
		}
		bar.finish()
	}
	if asJSON {
		if err := printJSON(e.stdout, interfaces.JobResult{Job: j}); err != nil {
			return err
		}
	} else {
		printJob(e, j)
	}
	if j.State == jobs.StateFailed {
		msg := "job failed"
		if j.Error != nil {
			return withExit(exitFailure, &workspace.Error{Code: j.Error.Code, Message: j.Error.Message})
		}
		return withExit(exitFailure, workspace.Errorf(workspace.CodeInternal, "%s", msg))
	}
	if j.State == jobs.StateCancelled {
		// Not a success; the job printed above says what happened.
		return withExit(exitFailure, errSilent)
	}
	return nil
}

// interruptNote says, after Ctrl-C, where the job j (last seen state) is
// left: asked again of the owner, since it may have moved on.
func interruptNote(ctx context.Context, svc interfaces.Service, j jobs.Job, inProcess bool) string {
	if inProcess {
		// Closing this process's owner checkpoints a running job back to
		// the queue.
		return fmt.Sprintf("tychora: stopped job %s (state %s); it goes back to the queue and resumes when an owner next starts", j.ID, j.State)
	}
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if res, err := svc.GetJob(qctx, j.ID); err == nil {
		j = res.Job
	}
	if j.Final() {
		return fmt.Sprintf("tychora: stopped following job %s; it has ended (state %s)", j.ID, j.State)
	}
	return fmt.Sprintf("tychora: stopped following job %s; the job goes on in the owner (state %s)", j.ID, j.State)
}

func printJob(e *env, j jobs.Job) {
	p := j.Progress
	fmt.Fprintf(e.stdout, "job %s  %s %s  source %s  collection %s  attempt %d\n", j.ID, j.Kind, j.State, j.SourceID, j.CollectionID, j.Attempt)
	fmt.Fprintf(e.stdout, "  %d files seen, %d indexed, %d unchanged, %d skipped, %s read\n", p.FilesSeen, p.Indexed, p.Unchanged, p.Skipped, humanBytes(p.Bytes))
	if j.Error != nil {
		fmt.Fprintf(e.stdout, "  error %s: %s\n", j.Error.Code, j.Error.Message)
	}
}

func sourcesCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "sources",
		Usage:     "list the sources you can see",
		UsageText: "tychora sources [--json]",
		Description: "Prints the discover sources answer: every source of your collections with its\n" +
			"kind, path and current revision.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the discover sources body"}},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return withService(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
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
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tCOLLECTION\tPATH\tLAST SYNCED")
				for _, it := range res.Items {
					m, _ := it.(map[string]any)
					if m == nil {
						m = toMap(it)
					}
					last := "never"
					if v, ok := m["last_synced_at"].(string); ok && v != "" {
						last = v
					}
					fmt.Fprintf(tw, "%v\t%v\t%v\t%v\t%s\n", m["id"], m["kind"], m["collection_id"], m["path"], last)
				}
				return tw.Flush()
			})
		},
	}
}

// discoverAll follows cursors to the end and returns one body with every
// item.
func discoverAll(ctx context.Context, svc interfaces.Service, subject string) (interfaces.DiscoverResult, error) {
	all := interfaces.DiscoverResult{Subject: subject, Items: []any{}}
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
