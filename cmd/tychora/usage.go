package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/workspace"
)

// Usage errors: an unknown flag or command, a flag value that cannot be
// right, a missing or extra argument. Each is INVALID_ARGUMENT on stderr,
// nothing on stdout, exit status 2 (3 for runs diff). They are found before
// anything is opened or contacted.

// usageError is a usage error: INVALID_ARGUMENT, exit status 2.
func usageError(format string, args ...any) error {
	return withExit(exitUsage, workspace.Errorf(workspace.CodeInvalidArgument, format, args...))
}

// commandPath is "tychora jobs list" for the command c runs.
func commandPath(c *cli.Context) string {
	var names []string
	for _, cc := range c.Lineage() {
		if cc.Command != nil && cc.Command.Name != "" && cc.Command.Name != c.App.Name {
			names = append(names, cc.Command.Name)
		}
	}
	slices.Reverse(names)
	return strings.Join(append([]string{"tychora"}, names...), " ")
}

// seeHelp is the hint that ends a usage error's message.
func seeHelp(c *cli.Context) string {
	return fmt.Sprintf(" (see %s --help)", commandPath(c))
}

// flagProblem rewords the flag package's parse errors with the double dash
// the help shows.
func flagProblem(err error) string {
	msg := err.Error()
	for _, p := range []string{"flag provided but not defined: -", "flag needs an argument: -"} {
		if strings.HasPrefix(msg, p) && !strings.HasPrefix(msg, p+"-") {
			return p + "-" + msg[len(p):]
		}
	}
	if i := strings.Index(msg, " for flag -"); i >= 0 && !strings.HasPrefix(msg[i+len(" for flag -"):], "-") {
		return msg[:i] + " for flag --" + msg[i+len(" for flag -"):]
	}
	return msg
}

// installUsage makes every command's usage errors the INVALID_ARGUMENT
// envelope with exit status 2 (a command may set its own OnUsageError, as
// runs diff does for its exit status 3), gives commands with subcommands an
// action that refuses an unknown one, and drops urfave's "(default: false)"
// from boolean flags.
func installUsage(cmds []*cli.Command) {
	for _, cmd := range cmds {
		if cmd.OnUsageError == nil {
			cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
				return usageError("%s%s", flagProblem(err), seeHelp(c))
			}
		}
		if len(cmd.Subcommands) > 0 && cmd.Action == nil {
			cmd.Action = groupAction
		}
		for _, f := range cmd.Flags {
			if bf, ok := f.(*cli.BoolFlag); ok {
				bf.DisableDefaultText = true
			}
		}
		installUsage(cmd.Subcommands)
	}
}

// groupAction runs a command that only holds subcommands (tychora, jobs,
// token, runs) when no subcommand was named: alone it shows its help; with
// an argument that names no subcommand it is a usage error.
func groupAction(c *cli.Context) error {
	root := c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name
	if c.NArg() == 0 {
		if root {
			return cli.ShowAppHelp(c)
		}
		return cli.ShowSubcommandHelp(c)
	}
	var names []string
	subs := c.App.Commands
	if !root {
		subs = c.Command.Subcommands
	}
	for _, s := range subs {
		if !s.Hidden && s.Name != "help" {
			names = append(names, s.Name)
		}
	}
	return usageError("%s has no command %q: use %s%s", commandPath(c), c.Args().First(), strings.Join(names, ", "), seeHelp(c))
}

// noArgs refuses positional arguments.
func noArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError("%s takes no arguments (got %q)%s", commandPath(c), c.Args().First(), seeHelp(c))
	}
	return nil
}

// oneArg returns the one positional argument, which must not be empty;
// what names it in the message (PATH, JOB_ID).
func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", usageError("%s takes one %s, got %d arguments%s", commandPath(c), what, c.NArg(), seeHelp(c))
	}
	a := c.Args().First()
	if a == "" {
		return "", usageError("%s: %s is empty", commandPath(c), what)
	}
	return a, nil
}

// intFlag returns an integer flag that, when given, must lie in [lo, hi];
// 0 when it is not given (the server's default).
func intFlag(c *cli.Context, name string, lo, hi int) (int, error) {
	if !c.IsSet(name) {
		return 0, nil
	}
	n := c.Int(name)
	if n < lo || n > hi {
		return 0, usageError("--%s %d: want %d to %d (leave it out for the default)", name, n, lo, hi)
	}
	return n, nil
}

// collectionFlags checks the names given to a repeatable --collection.
func collectionFlags(c *cli.Context) ([]string, error) {
	cols := c.StringSlice("collection")
	for _, col := range cols {
		if !workspace.ValidCollectionName(col) {
			return nil, usageError("--collection %q is not a valid collection name", col)
		}
	}
	return cols, nil
}

// nextPageHint is a command line that fetches the page after this one. A
// cursor is bound to the request that issued it, so the line repeats every
// flag given (but --cursor and --json) and the arguments, quoted for a
// POSIX shell.
func nextPageHint(c *cli.Context, e *env, next string, args []string) string {
	parts := []string{shellQuote(programFor(e.program))}
	if c.IsSet("workspace") {
		ws := c.String("workspace")
		if abs, err := filepath.Abs(ws); err == nil {
			ws = abs // the line works from any directory
		}
		parts = append(parts, "--workspace", shellQuote(ws))
	}
	parts = append(parts, strings.Fields(strings.TrimPrefix(commandPath(c), "tychora"))...)
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if name == "cursor" || name == "json" || !c.IsSet(name) {
			continue
		}
		switch f.(type) {
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(name) {
				parts = append(parts, "--"+name, shellQuote(v))
			}
		case *cli.BoolFlag:
			if c.Bool(name) {
				parts = append(parts, "--"+name)
			} else {
				parts = append(parts, "--"+name+"=false")
			}
		case *cli.IntFlag:
			parts = append(parts, "--"+name, strconv.Itoa(c.Int(name)))
		default:
			parts = append(parts, "--"+name, shellQuote(c.String(name)))
		}
	}
	parts = append(parts, "--cursor", shellQuote(next))
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		parts = append(parts, "--")
	}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// programFor is the program a suggested command line runs: the one this
// process was started as — by its absolute path when it was started by a
// path (./ty), by its name when the shell found it on PATH — or tychora.
func programFor(argv0 string) string {
	switch {
	case argv0 == "":
		return "tychora"
	case strings.ContainsRune(argv0, filepath.Separator):
		if abs, err := filepath.Abs(argv0); err == nil {
			return abs
		}
		return argv0
	}
	return argv0
}

// shellQuote quotes s for a POSIX shell: as is when it holds only safe
// characters, else in single quotes.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
