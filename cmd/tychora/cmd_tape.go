package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces/mcp/tape"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// tape diff exits 0, 1 or 2 for its verdict and 3 on any error, a usage
// error included (DESIGN §9).
const exitTapeError = 3

func tapeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "tape",
		Usage: "record MCP sessions, replay them offline, compare two recordings",
		Description: "A tape is a directory under WORKSPACE/tapes (meta.json and trace.jsonl, mode\n" +
			"0600): every JSON-RPC message of one session, each response with the request it\n" +
			"answers. tychora serve --stdio --record NAME records tychora's own sessions;\n" +
			"tape rec records any stdio MCP server. A NAME with a / is a tape directory.\n" +
			"See docs/tapes.md.",
		Subcommands: []*cli.Command{
			tapeRecCommand(e),
			tapePlayCommand(e),
			tapeDiffCommand(e),
			tapeLsCommand(e),
			tapeReportCommand(e),
		},
	}
}

func tapeRecCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "rec",
		Usage:     "record a stdio MCP server's session, as a transparent proxy",
		UsageText: "tychora tape rec --name NAME -- COMMAND [ARGS...]",
		Description: "Starts COMMAND and passes every line between this process's stdin/stdout\n" +
			"and COMMAND's unchanged, writing each to the tape NAME. COMMAND's stderr is\n" +
			"this process's. Exits with COMMAND's exit status when it ends.",
		Flags: []cli.Flag{&cli.StringFlag{Name: "name", Usage: "the tape's name (letters, digits, '.', '_', '-'); required"}},
		Action: func(c *cli.Context) error {
			if c.String("name") == "" {
				return usageError("tape rec needs --name NAME%s", seeHelp(c))
			}
			if c.NArg() == 0 {
				return usageError("tape rec takes the server's command after --%s", seeHelp(c))
			}
			dir, err := workspaceDir(c)
			if err != nil {
				return err
			}
			argv := c.Args().Slice()
			rec, err := startRecording(dir, c.String("name"), strings.Join(argv, " "))
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stderr = e.stderr
			perr := tape.Proxy(ctx, rec, cmd, e.stdin, e.stdout)
			if err := rec.Close(); err != nil {
				return err
			}
			var ee *exec.ExitError
			if errors.As(perr, &ee) {
				return withExit(ee.ExitCode(), errSilent)
			}
			return perr
		},
	}
}

// httpRecorder records the owner's MCP sessions over HTTP under the
// workspace dir, with its tape_redact patterns when it has settings.
func httpRecorder(dir string, log *slog.Logger) (*tape.HTTPRecorder, error) {
	redact, err := redactPatterns(dir)
	if err != nil {
		return nil, err
	}
	return tape.NewHTTPRecorder(filepath.Join(dir, tape.DirName), tape.Options{
		Server: "tychora serve (Streamable HTTP)", TychoraVersion: tyruntime.Version, Redact: redact,
	}, log)
}

// redactPatterns is the tape_redact setting of the workspace dir (none
// when it has no settings yet).
func redactPatterns(dir string) ([]string, error) {
	s, err := workspace.LoadSettings(workspace.NewLayout(dir))
	switch {
	case err == nil:
		return s.TapeRedact, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	}
	return nil, err
}

// startRecording creates the tape name in the workspace dir, with the
// workspace's tape_redact patterns when it has settings.
func startRecording(dir, name, server string) (*tape.Recorder, error) {
	if err := tape.CheckName(name); err != nil {
		return nil, withExit(exitUsage, err)
	}
	redact, err := redactPatterns(dir)
	if err != nil {
		return nil, err
	}
	return tape.Create(filepath.Join(dir, tape.DirName, name), tape.Options{
		Name: name, Server: server, TychoraVersion: tyruntime.Version, Redact: redact,
	})
}

func tapePlayCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "play",
		Usage:     "serve a tape over stdio as an MCP server, with no workspace or index",
		UsageText: "tychora tape play [--lenient] NAME",
		Description: "Answers initialize with the recorded answer, ping itself, and every other\n" +
			"request with the earliest unconsumed recorded exchange of the same method and\n" +
			"JSON-equal arguments. A call that matches nothing gets a tool error (NOT_FOUND,\n" +
			"\"tape drift: ...\"). A tape in which the server sent requests (sampling,\n" +
			"elicitation, roots) is refused: exit 1.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "lenient", Usage: "a call with no exact match takes the earliest unconsumed call of the same tool"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || c.Args().First() == "" {
				return usageError("tape play takes one tape NAME%s", seeHelp(c))
			}
			t, err := loadTape(c, c.Args().First())
			if err != nil {
				return err
			}
			p, err := tape.NewPlayer(t, tape.PlayOptions{Lenient: c.Bool("lenient"), Logger: logger(c, e)})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if err := p.Serve(ctx, e.stdin, e.stdout); err != nil && !errors.Is(err, ctx.Err()) {
				return err
			}
			return nil
		},
	}
}

// loadTape loads the tape ref names: a name under the workspace's tapes
// folder, or a tape directory. The workspace itself is never opened.
func loadTape(c *cli.Context, ref string) (*tape.Tape, error) {
	dir, err := workspaceDir(c)
	if err != nil {
		return nil, err
	}
	td, err := tape.Resolve(dir, ref)
	if err != nil {
		return nil, withExit(exitUsage, err)
	}
	return tape.Load(td)
}

func tapeDiffCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "report the first exchange where two tapes drift",
		UsageText: "tychora tape diff [--strict] [--context N] A B",
		Description: "Pairs the calls of A and B by method and arguments and prints the first drift\n" +
			"with the calls before it. Exits 0 when both hold the same calls with the same\n" +
			"answers, 1 when the calls are the same but an answer differs, 2 when the calls\n" +
			"differ (a call on one side only, another count, another order of calls that\n" +
			"were not in flight together), 3 on any error, a usage error included. Run ids,\n" +
			"job and other UUIDs, timestamps, *_at and *_ms members and cursors are\n" +
			"normalized first; --strict compares raw bytes.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "strict", Usage: "compare raw bytes, normalizing nothing"},
			&cli.IntFlag{Name: "context", Value: 3, Usage: "how many calls before the drift to print"},
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return withExit(exitTapeError, workspace.Errorf(workspace.CodeInvalidArgument, "%s%s", flagProblem(err), seeHelp(c)))
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 || c.Args().Get(0) == "" || c.Args().Get(1) == "" {
				return withExit(exitTapeError, workspace.Errorf(workspace.CodeInvalidArgument, "tape diff takes tapes A and B%s", seeHelp(c)))
			}
			if c.Int("context") < 0 {
				return withExit(exitTapeError, workspace.Errorf(workspace.CodeInvalidArgument, "--context must not be negative%s", seeHelp(c)))
			}
			var tapes [2]*tape.Tape
			for i := range tapes {
				t, err := loadTape(c, c.Args().Get(i))
				if err != nil {
					return withExit(exitTapeError, err)
				}
				tapes[i] = t
			}
			d := tape.Diff(tapes[0], tapes[1], tape.DiffOptions{Strict: c.Bool("strict"), Context: max(c.Int("context"), 1)})
			printDiff(e, c.Args().Get(0), c.Args().Get(1), d, c.Int("context"))
			if d.Outcome != tape.Same {
				return withExit(int(d.Outcome), errSilent)
			}
			return nil
		},
	}
}

func printDiff(e *env, a, b string, d tape.DiffResult, context int) {
	if d.Outcome == tape.Same {
		fmt.Fprintf(e.stdout, "same: %d calls with the same answers\n", d.Exchanges)
		return
	}
	kind := "output drift"
	if d.Outcome == tape.StructuralDrift {
		kind = "structural drift"
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", kind, d.Reason)
	if context > 0 && len(d.Context) > 0 {
		fmt.Fprintln(e.stdout, "before it:")
		for _, x := range d.Context[max(0, len(d.Context)-context):] {
			fmt.Fprintf(e.stdout, "  %d. %s\n", x.Index+1, describeCall(x))
		}
	}
	if d.Outcome == tape.OutputDrift {
		from := firstDifference(d.AOut, d.BOut)
		fmt.Fprintf(e.stdout, "first difference at byte %d of the normalized answers:\n%s: %s\n%s: %s\n", from, a, window(d.AOut, from), b, window(d.BOut, from))
	}
}

func firstDifference(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// window is the part of s around byte at: 200 bytes before, 400 after.
func window(s string, at int) string {
	from := max(0, at-200)
	for from > 0 && from < len(s) && !utf8.RuneStart(s[from]) {
		from--
	}
	from = min(from, len(s))
	out := workspace.Clip(s[from:], 600) // marks a cut with "…"
	if from > 0 {
		out = "…" + out
	}
	return out
}

func describeCall(x *tape.Exchange) string {
	if x.Tool != "" {
		return x.Method + " " + x.Tool
	}
	return x.Method
}

func tapeLsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list the workspace's tapes",
		UsageText: "tychora tape ls [--json]",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the list as JSON"}},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			dir, err := workspaceDir(c)
			if err != nil {
				return err
			}
			entries, err := tape.List(dir)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				type item struct {
					Name  string     `json:"name"`
					Meta  *tape.Meta `json:"meta"`
					Error string     `json:"error,omitempty"`
				}
				out := struct {
					Tapes []item `json:"tapes"`
				}{Tapes: []item{}}
				for _, en := range entries {
					it := item{Name: en.Name}
					if en.Err != nil {
						it.Error = en.Err.Error()
					} else {
						it.Meta = &en.Meta
					}
					out.Tapes = append(out.Tapes, it)
				}
				return printJSON(e.stdout, out)
			}
			if len(entries) == 0 {
				fmt.Fprintf(e.stdout, "no tapes in %s\n", filepath.Join(dir, tape.DirName))
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTARTED\tMESSAGES\tCALLS\tSERVER")
			for _, en := range entries {
				if en.Err != nil {
					fmt.Fprintf(tw, "%s\t-\t-\t-\t(unreadable meta.json)\n", en.Name)
					continue
				}
				m := en.Meta
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", en.Name, m.StartedAt.Local().Format("2006-01-02 15:04:05"), m.Counts.Messages, m.Counts.Requests, m.Server)
			}
			return tw.Flush()
		},
	}
}

func tapeReportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "print a tape message by message",
		UsageText: "tychora tape report [--json] NAME",
		Description: "One row a message: its number, the milliseconds since the start, direction\n" +
			"(-> client to server, <- server to client), kind, method or tool, size in\n" +
			"bytes, and for a response the milliseconds its request took.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print meta.json and the rows as JSON"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || c.Args().First() == "" {
				return usageError("tape report takes one tape NAME%s", seeHelp(c))
			}
			t, err := loadTape(c, c.Args().First())
			if err != nil {
				return err
			}
			rows := tape.Report(t)
			if c.Bool("json") {
				return printJSON(e.stdout, struct {
					Meta tape.Meta        `json:"meta"`
					Rows []tape.ReportRow `json:"rows"`
				}{t.Meta, rows})
			}
			m := t.Meta
			fmt.Fprintf(e.stdout, "tape %s: %s, protocol %s, client %s, started %s\n", m.Name, m.Server, orDash(m.ProtocolVersion), orDash(m.Client), m.StartedAt.Local().Format("2006-01-02 15:04:05"))
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "SEQ\tAT_MS\tDIR\tKIND\tMETHOD\tBYTES\tMS\t")
			for _, r := range rows {
				ms := ""
				if r.Kind == tape.KindResponse || r.Kind == tape.KindError {
					ms = fmt.Sprintf("%.1f", r.MS)
				}
				arrow := "->"
				if r.Dir == tape.FromServer {
					arrow = "<-"
				}
				fmt.Fprintf(tw, "%d\t%.1f\t%s\t%s\t%s\t%d\t%s\t\n", r.Seq, r.AtMS, arrow, r.Kind, r.What, r.Bytes, ms)
			}
			return tw.Flush()
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
