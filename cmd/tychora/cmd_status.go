package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show the running owner: pid, URL, uptime, version and jobs",
		UsageText: "tychora [--workspace W] status [--json]",
		Description: "Asks the owner named by .runtime/endpoint.json, after proving it answers for\n" +
			"this workspace. Exits 0 when an owner runs, 3 when none does.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the /v1/status body"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			found, err := findWorkspace(c)
			if err != nil {
				return err
			}
			dir := found.Dir
			if !workspace.NewLayout(dir).Exists() {
				return withExit(exitNoOwner, missingWorkspace(found))
			}
			client, _, err := tyruntime.ConnectLocal(c.Context, dir)
			if errors.Is(err, tyruntime.ErrNoOwner) {
				return withExit(exitNoOwner, workspace.Errorf(workspace.CodeUnavailable, "no tychora owner is running for %s (start one with tychora serve)", dir))
			}
			if err != nil {
				return err
			}
			st, err := client.Status(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(e.stdout, st)
			}
			fmt.Fprintf(e.stdout, "workspace  %s\n", dir)
			fmt.Fprintf(e.stdout, "owner      pid %d at %s\n", st.PID, st.URL)
			fmt.Fprintf(e.stdout, "uptime     %s (since %s)\n", time.Duration(st.UptimeS)*time.Second, st.StartedAt.Local().Format(time.RFC3339))
			fmt.Fprintf(e.stdout, "version    %s\n", st.Version)
			fmt.Fprintf(e.stdout, "jobs       %d queued, %d running\n", st.Jobs.Queued, st.Jobs.Running)
			printWatchStatus(e, st.Watch)
			return nil
		},
	}
}
