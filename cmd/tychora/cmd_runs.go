package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Exit codes of runs diff.
const exitDiffError = 3

func runsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "list recorded searches and compare two of them",
		Description: "Every search records a run: its request hash, the hits with their hashes and\n" +
			"scores, and totals. With query_history \"full\" the request itself is kept, and\n" +
			"tychora search --replay RUN re-runs it against today's index.",
		Subcommands: []*cli.Command{runsListCommand(e), runsDiffCommand(e)},
	}
}

func runsListCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list runs you can see, newest first (the discover runs body)",
		UsageText: "tychora runs list [--json]",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the discover runs body"}},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				res, err := discoverAll(ctx, svc, query.SubjectRuns)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				return printRuns(e.stdout, res)
			})
		},
	}
}

// printRuns prints runs as a table, and says why a run shows no question.
func printRuns(w io.Writer, res interfaces.DiscoverResult) error {
	if len(res.Items) == 0 {
		fmt.Fprintln(w, "no runs yet")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tHITS\tMATCHES\tTOKENS\tRETAINED\tQUESTION")
	notKept := 0
	for _, it := range res.Items {
		r, err := asRun(it)
		if err != nil {
			return err
		}
		q := "(not kept)"
		if r.Request == nil {
			notKept++
		} else {
			q = r.Request.Question
			if len(q) > 60 {
				q = q[:57] + "..."
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.ID, r.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			len(r.Hits), r.TotalMatches, r.UsedTokens, yesNo(r.Retained), q)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if notKept > 0 {
		fmt.Fprintf(w, "%d of %d runs keep no question: they were recorded under query_history \"metadata\" (the default), which keeps hashes, hits and totals only.\n"+
			"Set \"query_history\": \"full\" in tychora.json to keep the questions of later searches and replay them (tychora search --replay RUN_ID).\n", notKept, len(res.Items))
	}
	return nil
}

func runsDiffCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "report the first rank where two runs drift",
		UsageText: "tychora runs diff [--json] RUN_A RUN_B",
		Description: "Exits 0 when the runs have the same hits in the same order with the same\n" +
			"scores and hashes, 1 when they have the same hits in another order or with\n" +
			"other scores or hashes, 2 when the sets of hits differ, 3 on any error,\n" +
			"a usage error included.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the diff as JSON"}},
		// Exit status 2 means "different sets" here: a usage error
		// is an error, 3.
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return withExit(exitDiffError, workspace.Errorf(workspace.CodeInvalidArgument, "%s%s", flagProblem(err), seeHelp(c)))
		},
		Action: func(c *cli.Context) error { return runsDiff(c, e) },
	}
}

// runsDiff compares two runs; its exit status is the outcome.
func runsDiff(c *cli.Context, e *env) error {
	if c.NArg() != 2 || c.Args().Get(0) == "" || c.Args().Get(1) == "" {
		return withExit(exitDiffError, workspace.Errorf(workspace.CodeInvalidArgument, "runs diff takes RUN_A and RUN_B%s", seeHelp(c)))
	}
	a, b := c.Args().Get(0), c.Args().Get(1)
	var d query.RunDiff
	err := withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
		ra, rb, err := findRuns(ctx, svc, a, b)
		if err != nil {
			return err
		}
		d = query.DiffRuns(ra, rb)
		return nil
	})
	if err != nil {
		return withExit(exitDiffError, err)
	}
	if c.Bool("json") {
		out := struct {
			A string `json:"a"`
			B string `json:"b"`
			query.RunDiff
		}{a, b, d}
		if err := printJSON(e.stdout, out); err != nil {
			return withExit(exitDiffError, err)
		}
	} else {
		switch d.Outcome {
		case query.DiffSame:
			fmt.Fprintln(e.stdout, "same: the same hits in the same order, with the same scores and hashes")
		case query.DiffReordered:
			fmt.Fprintf(e.stdout, "drift at rank %d: %s (same set of hits)\n", d.FirstDrift, d.Reason)
		default:
			fmt.Fprintf(e.stdout, "drift at rank %d: %s; only in %s: %d, only in %s: %d\n", d.FirstDrift, d.Reason, a, len(d.OnlyInA), b, len(d.OnlyInB))
		}
	}
	if d.Outcome != query.DiffSame {
		return withExit(d.Outcome, errSilent)
	}
	return nil
}

// findRuns finds runs a and b among those the caller can see.
func findRuns(ctx context.Context, svc interfaces.Service, a, b string) (query.Run, query.Run, error) {
	res, err := discoverAll(ctx, svc, query.SubjectRuns)
	if err != nil {
		return query.Run{}, query.Run{}, err
	}
	runs := map[string]query.Run{}
	for _, it := range res.Items {
		r, err := asRun(it)
		if err != nil {
			return query.Run{}, query.Run{}, err
		}
		runs[r.ID] = r
	}
	ra, okA := runs[a]
	rb, okB := runs[b]
	if !okA || !okB {
		missing := a
		if okA {
			missing = b
		}
		return query.Run{}, query.Run{}, workspace.Errorf(workspace.CodeNotFound, "no run %s", missing)
	}
	return ra, rb, nil
}

// asRun reads a discover runs item.
func asRun(item json.RawMessage) (query.Run, error) {
	var r query.Run
	err := json.Unmarshal(item, &r)
	return r, err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
