package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
)

func sourcesRemoveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Usage:     "remove a source and everything indexed from it",
		UsageText: "tychora sources remove [--json] SOURCE",
		Description: "SOURCE is a source id, name or path, as for sync. The source's evidence,\n" +
			"revisions, files, coverage and the assets no other source holds leave the\n" +
			"index in one transaction, its queued or running job is cancelled, and it is\n" +
			"no longer watched. The files on disk are not touched. Needs the write grant\n" +
			"on the source's collection (DELETE /v1/sources/{id}).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the /v1 body"},
		},
		Action: func(c *cli.Context) error {
			arg, err := oneArg(c, "SOURCE")
			if err != nil {
				return err
			}
			var id string
			err = withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				id, err = resolveSource(ctx, svc, arg)
				return err
			})
			if err != nil {
				return err
			}
			return withService(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				res, err := svc.RemoveSource(ctx, id)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				fmt.Fprintf(e.stdout, "removed source %s (%s, collection %s)\n", res.ID, res.Path, res.CollectionID)
				if res.CancelledJob != nil {
					fmt.Fprintf(e.stdout, "  its job %s was cancelled\n", *res.CancelledJob)
				}
				return nil
			})
		},
	}
}

// sourcesListCommand is "sources list", the same as "sources".
func sourcesListCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the sources you can see (the same as tychora sources)",
		UsageText: "tychora sources list [--json]",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the discover sources body"}},
		Action:    func(c *cli.Context) error { return sourcesCommand(e).Action(c) },
	}
}
