package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	tyruntime "github.com/tychora/tychora/runtime"
)

func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "become the workspace owner and serve the HTTP API and MCP on loopback",
		UsageText: "tychora [--workspace W] serve [--listen 127.0.0.1:PORT]",
		Description: "Takes the workspace lock, opens the index, listens on 127.0.0.1 (or ::1) and\n" +
			"publishes .runtime/endpoint.json (mode 0600) with the URL and a bearer token\n" +
			"that is new at every start. A missing workspace is created with default\n" +
			"settings. Runs until SIGINT or SIGTERM, then shuts down in order and removes\n" +
			"endpoint.json. A second serve on the same workspace exits with an error\n" +
			"naming the running owner.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "address to listen on, overriding the listen setting (127.0.0.1:PORT or [::1]:PORT; port 0 picks one)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return withExit(exitUsage, errorf("serve takes no arguments (got %q)", c.Args().First()))
			}
			dir, err := workspaceDir(c)
			if err != nil {
				return err
			}
			log := logger(c, e)
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			own, err := tyruntime.Start(ctx, tyruntime.Options{
				Dir:    dir,
				Create: true,
				Listen: c.String("listen"),
				Logger: log,
			})
			if err != nil {
				return err
			}
			if own.Created() {
				fmt.Fprintf(e.stderr, "tychora: created workspace %s with default settings (ingest root %s)\n",
					dir, own.Settings().IngestRoots[0])
			}
			fmt.Fprintf(e.stderr, "tychora: owner of %s listening on %s (pid %d); stop with Ctrl-C\n", dir, own.URL(), os.Getpid())
			var serveErr error
			select {
			case <-ctx.Done():
			case serveErr = <-own.Done():
			}
			stop()
			if err := own.Close(context.WithoutCancel(c.Context)); err != nil {
				return err
			}
			return serveErr
		},
	}
}
