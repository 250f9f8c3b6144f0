package interfaces

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/tychora/tychora/workspace"
)

// JSONProblem words a JSON decoding error for the caller, the same on every
// edge, without echoing the caller's input at length.
func JSONProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "malformed JSON"
	case errors.As(err, &te):
		if te.Field != "" {
			return "field " + workspace.Clip(te.Field, 80) + " has the wrong type or is out of range"
		}
		return "wrong JSON type"
	}
	return workspace.Clip(err.Error(), 160)
}

// LoneSurrogate reports whether a JSON string in b holds an escaped
// surrogate (\uD800 to \uDFFF) that is not a high one directly followed by
// an escaped low one, which encoding/json decodes to U+FFFD without a
// word. The /v1 bodies and the MCP tool arguments are checked with it:
// arguments are never quietly changed.
func LoneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++ // the escaped byte; a "\\" is skipped whole
		if i >= len(b) || b[i] != 'u' {
			continue
		}
		r, ok := hex4(b, i+1)
		if !ok {
			continue
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+2 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return true
			}
			lo, ok := hex4(b, i+3)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(n), err == nil
}
