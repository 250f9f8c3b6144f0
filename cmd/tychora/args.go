package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// urfave/cli/v2 stops reading a command's flags at its first positional
// argument, so `tychora add /path --wait` would see --wait as a second
// PATH. reorderArgs rewrites a command line before it is parsed so that
// every command reads its flags first:
//
//   - each flag goes before the positional arguments of the command that
//     defines it, with its value when it takes one (--budget 1000,
//     --budget=1000);
//   - a global flag given after a command (tychora add /p --workspace W)
//     moves back to the command that defines it;
//   - `--` ends the flags: what follows is positional, and the rewritten
//     line keeps the `--` so that a question may start with a dash;
//   - `tychora help [COMMAND...]` becomes `tychora [COMMAND...] --help`,
//     and a command's --help drops its positional arguments.
//
// A flag no level defines stays where the command's parser reports it.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) == 0 {
		return args
	}
	root := &argLevel{flags: app.Flags, subs: app.Commands, global: true}
	out := []string{args[0]}
	return append(out, root.reorder(args[1:], nil)...)
}

// argLevel is one command of the command line: the app itself or a
// command, with the flags it defines and its subcommands.
type argLevel struct {
	flags  []cli.Flag
	subs   []*cli.Command
	global bool // the app: --version is a flag here

	taken []string // flags (with values) this level parses
}

// reorder rewrites the arguments that follow this level's name; parents
// are the levels above it, nearest last, which may claim a flag this level
// does not define.
func (l *argLevel) reorder(args []string, parents []*argLevel) []string {
	var positional []string
	dashDash, wantsHelp := false, false
	var sub []string // the subcommand's name and what follows it
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			dashDash = true
			positional = append(positional, args[i+1:]...)
			break
		}
		if isFlagArg(a) {
			owner, valued := l.flagOwner(a, parents)
			flag := []string{a}
			if valued && i+1 < len(args) {
				flag = append(flag, args[i+1])
				i++
			}
			owner.taken = append(owner.taken, flag...)
			if owner == l && (a == "--help" || a == "-h") {
				wantsHelp = true
			}
			continue
		}
		if len(positional) == 0 && len(l.subs) > 0 {
			if a == "help" && findCommand(l.subs, a) == nil {
				// tychora help [COMMAND...]: the help of that command.
				names := args[i+1:]
				return l.helpFor(names, parents)
			}
			if cmd := findCommand(l.subs, a); cmd != nil {
				next := &argLevel{flags: cmd.Flags, subs: cmd.Subcommands}
				rest := next.reorder(args[i+1:], append(slices.Clone(parents), l))
				sub = append(append([]string{a}, next.taken...), rest...)
				break
			}
		}
		positional = append(positional, a)
	}
	if wantsHelp && sub == nil {
		// urfave reads a positional argument after --help as a help topic.
		positional, dashDash = nil, false
	}
	var out []string
	if len(parents) == 0 {
		out = append(out, l.taken...) // a command's own flags are placed by its parent
	}
	out = append(out, sub...)
	if dashDash {
		out = append(out, "--")
	}
	return append(out, positional...)
}

// helpFor is `COMMAND... --help` for `help COMMAND...`, with the flags
// gathered so far kept in front.
func (l *argLevel) helpFor(names []string, parents []*argLevel) []string {
	var out []string
	if len(parents) == 0 {
		out = append(out, l.taken...)
	}
	for _, n := range names {
		if isFlagArg(n) {
			break
		}
		out = append(out, n)
	}
	return append(out, "--help")
}

// flagOwner is the level that defines the flag arg names (this one when
// none does, so that its parser reports it) and whether the flag reads the
// next argument as its value.
func (l *argLevel) flagOwner(arg string, parents []*argLevel) (*argLevel, bool) {
	name := strings.TrimLeft(arg, "-")
	hasValue := false
	if i := strings.IndexByte(name, '='); i >= 0 {
		name, hasValue = name[:i], true
	}
	levels := append([]*argLevel{l}, reversed(parents)...)
	for _, lv := range levels {
		if f := lv.lookup(name); f != nil {
			return lv, !hasValue && takesValue(f)
		}
		if name == "help" || name == "h" || lv.global && (name == "version" || name == "v") {
			return lv, false
		}
	}
	return l, false
}

func (l *argLevel) lookup(name string) cli.Flag {
	for _, f := range l.flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// takesValue reports whether f reads a value (every flag but a boolean).
func takesValue(f cli.Flag) bool {
	if tv, ok := f.(cli.DocGenerationFlag); ok {
		return tv.TakesValue()
	}
	return true
}

// isFlagArg reports whether a reads as a flag: a dash and more (a lone "-"
// is an argument, as the flag package has it).
func isFlagArg(a string) bool {
	return len(a) > 1 && a[0] == '-'
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func reversed(ls []*argLevel) []*argLevel {
	out := slices.Clone(ls)
	slices.Reverse(out)
	return out
}
