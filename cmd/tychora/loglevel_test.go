package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// FuzzLogLevel: --log-level takes debug, info, warn and error in any case
// and nothing else; anything else is a usage error (exit 2) that names the
// allowed values.
func FuzzLogLevel(f *testing.F) {
	for _, s := range []string{"debug", "INFO", "Warn", "error", "loud", "", "info+4", "warn-1", "DEBUG-4", "ERROR+8", "warning", " info"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		_, err := logLevel(v)
		switch strings.ToLower(v) {
		case "debug", "info", "warn", "error":
			if err != nil {
				t.Fatalf("%q refused: %v", v, err)
			}
			return
		}
		var ce *codedError
		if !errors.As(err, &ce) || ce.code != exitUsage || workspace.ErrorCode(err) != workspace.CodeInvalidArgument ||
			!strings.Contains(workspace.ErrorMessage(err), "use debug, info, warn or error") {
			t.Fatalf("%q: %v", v, err)
		}
	})
}
