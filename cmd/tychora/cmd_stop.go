package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// stopWait bounds how long stop waits for the owner to finish its ordered
// shutdown (requests drain in 10 s at most, running jobs checkpoint in 10 s
// more).
const stopWait = 30 * time.Second

func stopCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "stop the running owner cleanly",
		UsageText: "tychora [--workspace W] stop [--json]",
		Description: "Proves the owner named by .runtime/endpoint.json, then asks it to stop\n" +
			"(SIGTERM): it marks endpoint.json stopping, lets requests in flight answer,\n" +
			"puts running jobs back in the queue for the next owner, closes storage and\n" +
			"removes endpoint.json. Waits until it has. A stdio session bridged to it\n" +
			"becomes the owner, or finds the next one. Exits 0 when an owner stopped, 3\n" +
			"when none was running.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: `print {"stopped":true,"pid":N,"url":URL}`},
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
			ep, err := tyruntime.Stop(c.Context, dir, stopWait)
			if errors.Is(err, tyruntime.ErrNoOwner) {
				return withExit(exitNoOwner, workspace.Errorf(workspace.CodeUnavailable, "no tychora owner is running for %s", dir))
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(e.stdout, map[string]any{"stopped": true, "pid": ep.PID, "url": ep.URL})
			}
			fmt.Fprintf(e.stdout, "stopped the owner (pid %d, %s)\n", ep.PID, ep.URL)
			return nil
		},
	}
}
