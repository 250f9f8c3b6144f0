// Command tychora is the CLI of the tychora workspace daemon: it parses
// flags, finds or becomes the workspace owner, and prints results. Every
// other concern lives in the packages below it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitNoOwner = 3
)

func main() {
	os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// env carries the process's streams so that commands are testable.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// program is how this process was started (args[0]), for the command
	// lines it suggests.
	program string
}

type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// withExit attaches an exit code to err.
func withExit(code int, err error) error { return &codedError{code: code, err: err} }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) > 0 {
		e.program = args[0]
	}
	app := newApp(e)
	err := app.RunContext(ctx, reorderArgs(app, args))
	if err == nil {
		return exitOK
	}
	code := exitFailure
	var ee *codedError
	if errors.As(err, &ee) {
		code = ee.code
		err = ee.err
	}
	if err != nil {
		printError(e, err, jsonRequested(args))
	}
	return code
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:  "tychora",
		Usage: "fast, scoped, token-budgeted search over your own files for AI agents",
		Description: "tychora keeps a search index of your files, folders and git repositories in a\n" +
			"workspace directory and serves it to agents over MCP (stdio or HTTP on\n" +
			"127.0.0.1) and to people through this CLI. One owner process holds a workspace;\n" +
			"other tychora commands find it through .runtime/endpoint.json and delegate.\n\n" +
			"Flags go before or after a command's arguments; after -- everything is an\n" +
			"argument. tychora help COMMAND (or tychora COMMAND --help) shows a command's flags.",
		Version: tyruntime.Version,
		// A repeated flag gives a list; a value is never split at commas
		// (a glob's {a,b} alternation, a path with a comma).
		DisableSliceFlagSeparator: true,
		Reader:                    e.stdin,
		Writer:                    e.stdout,
		ErrWriter:                 e.stderr,
		HideHelpCommand:           true,
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "workspace",
				Aliases: []string{"w"},
				Usage:   "workspace directory (default: $TYCHORA_WORKSPACE, else the nearest .tychora here or in a parent, else ./.tychora)",
			},
			&cli.StringFlag{
				Name:  "log-level",
				Value: "info",
				Usage: "log level on stderr: debug, info, warn or error",
			},
		},
		Commands: []*cli.Command{
			initCommand(e),
			serveCommand(e),
			stopCommand(e),
			statusCommand(e),
			tokenCommand(e),
			addCommand(e),
			syncCommand(e),
			sourcesCommand(e),
			jobsCommand(e),
			searchCommand(e),
			discoverCommand(e),
			inspectCommand(e),
			runsCommand(e),
			tapeCommand(e),
			mcpConfigCommand(e),
		},
		// A bad global flag value is a usage error before any command runs.
		Before: func(c *cli.Context) error {
			_, err := logLevel(c.String("log-level"))
			return err
		},
		// Without a command: the help; with an unknown one: a usage error.
		Action: groupAction,
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageError("%s%s", flagProblem(err), seeHelp(c))
		},
		ExitErrHandler: func(*cli.Context, error) {}, // run() reports errors
	}
	installUsage(app.Commands)
	return app
}

// workspaceDir is the workspace a command works on: --workspace, else
// $TYCHORA_WORKSPACE, else the nearest .tychora here or in a parent, else
// ./.tychora.
func workspaceDir(c *cli.Context) (string, error) {
	found, err := findWorkspace(c)
	return found.Dir, err
}

func findWorkspace(c *cli.Context) (workspace.Found, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return workspace.Found{}, err
	}
	return workspace.FindDir(c.String("workspace"), os.Getenv(workspace.EnvWorkspace), cwd), nil
}

// existingWorkspace is workspaceDir for a command that needs the workspace
// to exist already; when it does not, the error says what was looked for
// and where, and how to create it.
func existingWorkspace(c *cli.Context) (string, error) {
	found, err := findWorkspace(c)
	if err != nil {
		return "", err
	}
	if workspace.NewLayout(found.Dir).Exists() {
		return found.Dir, nil
	}
	return "", missingWorkspace(found)
}

// missingWorkspace is the NOT_FOUND error for a workspace that found names
// but that does not exist.
func missingWorkspace(found workspace.Found) error {
	switch found.Origin {
	case workspace.FromFlag:
		return workspace.Errorf(workspace.CodeNotFound, "no workspace at %s, which --workspace names (create it with tychora --workspace %s init)", found.Dir, shellQuote(found.Dir))
	case workspace.FromEnv:
		return workspace.Errorf(workspace.CodeNotFound, "no workspace at %s, which $%s names (create it with tychora init)", found.Dir, workspace.EnvWorkspace)
	}
	from, to := found.SearchFrom, found.SearchTo
	var where string
	switch {
	case to == "":
		where = from + " (it belongs to another user, so its parents were not searched)"
	case filepath.Dir(to) == to && from == to:
		where = from
	case filepath.Dir(to) == to:
		where = from + " and its parents"
	case from == to:
		where = fmt.Sprintf("%s (its parent %s belongs to another user)", from, filepath.Dir(to))
	default:
		where = fmt.Sprintf("%s and its parents up to %s (%s belongs to another user)", from, to, filepath.Dir(to))
	}
	return workspace.Errorf(workspace.CodeNotFound, "no workspace: looked for %s in %s; run tychora init to create %s, or pass --workspace", workspace.DefaultDirName, where, found.Dir)
}

// initDir is the workspace tychora init creates: --workspace, else
// $TYCHORA_WORKSPACE, else ./.tychora (no upward search).
func initDir(c *cli.Context) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return workspace.ResolveDir(c.String("workspace"), os.Getenv(workspace.EnvWorkspace), cwd)
}

// logLevels are the values --log-level takes.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// logLevel parses a --log-level value (any case); another value is a usage
// error that lists the allowed ones.
func logLevel(v string) (slog.Level, error) {
	if lvl, ok := logLevels[strings.ToLower(v)]; ok {
		return lvl, nil
	}
	return 0, usageError("--log-level %q: use debug, info, warn or error (see tychora --help)", v)
}

func logger(c *cli.Context, e *env) *slog.Logger {
	lvl, err := logLevel(c.String("log-level"))
	if err != nil {
		lvl = slog.LevelInfo // refused before any command runs
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: lvl}))
}

// jsonRequested reports whether --json appears among the arguments, so
// that errors raised before flag parsing finishes are still JSON.
func jsonRequested(args []string) bool {
	for _, a := range args {
		if a == "--json" || a == "-json" || a == "--json=true" {
			return true
		}
		if a == "--" {
			return false
		}
	}
	return false
}

// quietLogger is the logger of an owner opened for one command: warnings
// and errors only, unless --log-level says otherwise.
func quietLogger(c *cli.Context, e *env) *slog.Logger {
	if c.IsSet("log-level") {
		return logger(c, e)
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
