package interfaces

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
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
			return "field " + clip(te.Field, 80) + " has the wrong type or is out of range"
		}
		return "wrong JSON type"
	}
	return clip(err.Error(), 160)
}

// clip shortens s to at most n bytes of valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
