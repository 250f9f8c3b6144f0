package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces/mcp/tape"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "become the workspace owner and serve the HTTP API and MCP on loopback",
		UsageText: "tychora [--workspace W] serve [--listen 127.0.0.1:PORT] [--record-http | --stdio [--grant G] [--collection C]... [--record NAME]]",
		Description: "Takes the workspace lock, opens the index, listens on 127.0.0.1 (or ::1) and\n" +
			"publishes .runtime/endpoint.json (mode 0600) with the URL and a bearer token\n" +
			"that is new at every start. A missing workspace is created with default\n" +
			"settings. Runs until SIGINT or SIGTERM, then shuts down in order and removes\n" +
			"endpoint.json. A second serve on the same workspace exits with an error\n" +
			"naming the running owner.\n\n" +
			"With --stdio it serves MCP on stdin/stdout (logs go to stderr) for an agent that\n" +
			"starts it as a subprocess, and exits when stdin closes. It is the owner when\n" +
			"none runs (and then also listens on loopback for siblings); otherwise it\n" +
			"bridges to the running owner without opening storage, and takes over if that\n" +
			"owner exits. --grant and --collection limit what the stdio client may do\n" +
			"(default: manage on every collection).\n\n" +
			"--record NAME writes the stdio session to the tape NAME under WORKSPACE/tapes;\n" +
			"--record-http writes each MCP session over HTTP to a tape of its own (see\n" +
			"tychora tape --help and docs/tapes.md).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "address to listen on, overriding the listen setting (127.0.0.1:PORT or [::1]:PORT; port 0: the last owner's port while it is free, else any)"},
			&cli.BoolFlag{Name: "stdio", Usage: "serve MCP on stdin/stdout"},
			&cli.StringFlag{Name: "grant", Usage: "with --stdio: read, write or manage (default manage)"},
			&cli.StringSliceFlag{Name: "collection", Usage: "with --stdio: limit the client to this collection (repeatable)"},
			&cli.StringFlag{Name: "record", Usage: "with --stdio: record the session as the tape NAME (docs/tapes.md)"},
			&cli.BoolFlag{Name: "record-http", Usage: "without --stdio: record each MCP session over HTTP as a tape of its own"},
			// For bench/load.sh: a CPU profile of the whole serve, written
			// at exit.
			&cli.StringFlag{Name: "cpuprofile", Hidden: true, Usage: "write a CPU profile of the run to this file"},
		},
		Action: func(c *cli.Context) error { return runServe(c, e) },
	}
}

// checkServeFlags refuses flags that do not go together.
func checkServeFlags(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if c.IsSet("listen") {
		if err := workspace.CheckListen(c.String("listen")); err != nil {
			return withExit(exitUsage, err)
		}
	}
	if !c.Bool("stdio") && (c.IsSet("grant") || c.IsSet("collection")) {
		return usageError("--grant and --collection go with --stdio")
	}
	if !c.Bool("stdio") && c.IsSet("record") {
		return usageError("--record goes with --stdio (--record-http records the HTTP sessions)")
	}
	if c.Bool("stdio") && c.Bool("record-http") {
		return usageError("--record-http goes without --stdio (--record records the stdio session)")
	}
	return nil
}

// runServe runs the serve command: over stdio, or as the owner on loopback.
func runServe(c *cli.Context, e *env) error {
	if err := checkServeFlags(c); err != nil {
		return err
	}
	var principal workspace.Principal
	if c.Bool("stdio") {
		p, err := stdioPrincipal(c)
		if err != nil {
			return withExit(exitUsage, err)
		}
		principal = p
	}
	dir, err := workspaceDir(c)
	if err != nil {
		return err
	}
	log := logger(c, e)
	if path := c.String("cpuprofile"); path != "" {
		stopProfile, err := startCPUProfile(path)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if c.Bool("stdio") {
		return serveStdio(ctx, c, e, tyruntime.StdioOptions{
			Options:   tyruntime.Options{Dir: dir, Listen: c.String("listen"), Logger: log},
			Principal: principal,
			In:        e.stdin,
			Out:       e.stdout,
		})
	}
	return serveOwner(ctx, stop, c, e, tyruntime.Options{Dir: dir, Create: true, Listen: c.String("listen"), Logger: log})
}

// serveOwner is the owner of the workspace until ctx ends (a signal, which
// stop stops catching) or the owner stops serving.
func serveOwner(ctx context.Context, stop func(), c *cli.Context, e *env, o tyruntime.Options) error {
	dir, log := o.Dir, o.Logger
	if c.Bool("record-http") {
		rec, err := httpRecorder(dir, log)
		if err != nil {
			return err
		}
		defer rec.Close()
		o.WrapMCP = rec.Wrap
	}
	own, err := tyruntime.Start(ctx, o)
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
}

// serveStdio serves MCP on stdio; with --record, through a recorder that
// writes every line of the session to a tape.
func serveStdio(ctx context.Context, c *cli.Context, e *env, o tyruntime.StdioOptions) error {
	name := c.String("record")
	if name == "" {
		return tyruntime.ServeStdio(ctx, o)
	}
	rec, err := startRecording(o.Dir, name, "tychora serve --stdio")
	if err != nil {
		return err
	}
	o.In, o.Out = rec.Reader(o.In, tape.FromClient), rec.Writer(o.Out, tape.FromServer)
	serveErr := tyruntime.ServeStdio(ctx, o)
	if err := rec.Close(); err != nil && serveErr == nil {
		serveErr = err
	}
	return serveErr
}

// startCPUProfile profiles the process's CPU into path until the
// returned func is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// stdioPrincipal is the stdio client's grant from --grant and
// --collection.
func stdioPrincipal(c *cli.Context) (workspace.Principal, error) {
	p := workspace.Principal{ID: "stdio", Grant: workspace.GrantManage}
	if c.IsSet("grant") {
		g, err := workspace.ParseGrant(c.String("grant"))
		if err != nil {
			return p, err
		}
		p.Grant = g
	}
	for _, col := range c.StringSlice("collection") {
		if !workspace.ValidCollectionName(col) {
			return p, workspace.Errorf(workspace.CodeInvalidArgument, "--collection %q is not a valid collection name", col)
		}
		p.Collections = append(p.Collections, col)
	}
	return p, nil
}
