package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
)

// Page sizes the owner accepts (runtime, query); the flags' help says them
// too, and a value outside is a usage error.
const (
	maxJobsPage     = 100
	maxDiscoverPage = 200
	maxInspectPage  = 200
)

func jobsCommand(e *env) *cli.Command {
	cancel := jobCommand(e, interfaces.JobActionCancel)
	cancel.Description = "Stops a queued or running job promptly. A finished job cannot be cancelled (CONFLICT)."
	retry := jobCommand(e, interfaces.JobActionRetry)
	retry.Description = "Queues a failed or cancelled job again under the same id, with attempt + 1."
	return &cli.Command{
		Name:  "jobs",
		Usage: "list, inspect, cancel and retry source jobs",
		Description: "Every add and sync is a durable job: it survives restarts and crashes, and\n" +
			"resumes when the owner starts again.",
		Subcommands: []*cli.Command{jobsListCommand(e), jobCommand(e, interfaces.JobActionGet), cancel, retry},
	}
}

// jobCommand is jobs get, cancel or retry: action on one job.
func jobCommand(e *env, action string) *cli.Command {
	return &cli.Command{
		Name:      action,
		Usage:     action + " a job",
		UsageText: "tychora jobs " + action + " [--json] JOB_ID",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the /v1 body"}},
		Action: func(c *cli.Context) error {
			id, err := oneArg(c, "JOB_ID")
			if err != nil {
				return err
			}
			req := interfaces.ManageJobRequest{Action: action, JobID: id}
			connect := withService // cancel and retry act: sent once
			if action == interfaces.JobActionGet {
				connect = withReads
			}
			return connect(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				res, err := svc.ManageJob(ctx, req)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				printJob(e, *res.Job)
				return nil
			})
		},
	}
}

func jobsListCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list jobs, newest first",
		UsageText: "tychora jobs list [--state S] [--limit N] [--cursor C] [--json]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state", Usage: "queued, running, succeeded, failed or cancelled"},
			&cli.IntFlag{Name: "limit", Usage: "page size, 1 to 100", DefaultText: "20"},
			&cli.StringFlag{Name: "cursor", Usage: "next_cursor of the previous page"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1 body"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			if c.IsSet("state") && !jobs.ValidState(c.String("state")) {
				return usageError("--state %q: use queued, running, succeeded, failed or cancelled", c.String("state"))
			}
			limit, err := intFlag(c, "limit", 1, maxJobsPage)
			if err != nil {
				return err
			}
			req := interfaces.ManageJobRequest{Action: interfaces.JobActionList, State: c.String("state"), Limit: limit, Cursor: c.String("cursor")}
			return withReads(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
				res, err := svc.ManageJob(ctx, req)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				if inProcess {
					defer func() {
						if note := pendingJobs(ctx, svc, inProcess); note != "" {
							fmt.Fprintln(e.stdout, note)
						}
					}()
				}
				if len(res.Jobs) == 0 {
					fmt.Fprintln(e.stdout, "no jobs")
					return nil
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tSTATE\tSOURCE\tCOLLECTION\tATTEMPT\tINDEXED\tREMOVED\tSKIPPED\tCREATED")
				for _, j := range res.Jobs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", j.ID, j.Kind, j.State, j.SourceID, j.CollectionID,
						j.Attempt, j.Progress.Indexed, j.Progress.Deleted, j.Progress.Skipped, j.CreatedAt.Local().Format("2006-01-02 15:04:05"))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				if res.NextCursor != nil {
					fmt.Fprintf(e.stdout, "more: %s\n", nextPageHint(c, e, *res.NextCursor, nil))
				}
				return nil
			})
		},
	}
}

// jsonString is v as compact JSON.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// toMap turns a value into its JSON object form.
func toMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}
