package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// printJSON writes v as the owner's HTTP API writes a /v1 body
// (interfaces/http writeJSON): json.Marshal's compact bytes and a newline.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// printError reports err on stderr: the {"error":{"code","message"}}
// envelope when --json was asked for or stderr is not a terminal (scripts,
// agents), a plain sentence for a person at a terminal.
func printError(e *env, err error, asJSON bool) {
	if errors.Is(err, errSilent) {
		return
	}
	body := interfaces.NewErrorBody(err)
	var we *workspace.Error
	if !errors.As(err, &we) {
		// A failure inside this process: the text is the user's own and
		// stays on their machine.
		body.Error.Message = err.Error()
	}
	if asJSON || !isTerminal(e.stderr) {
		b, _ := json.Marshal(body)
		fmt.Fprintln(e.stderr, string(b))
		return
	}
	fmt.Fprintf(e.stderr, "tychora: %s (%s)\n", body.Error.Message, body.Error.Code)
}

// errSilent is returned by a command that has already said why it failed.
var errSilent = errors.New("silent")

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
