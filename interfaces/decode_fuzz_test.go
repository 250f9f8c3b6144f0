package interfaces

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLoneSurrogate holds LoneSurrogate to encoding/json itself: for valid
// JSON that holds no U+FFFD of its own (literal or escaped), it reports a
// lone surrogate exactly when decoding would put a U+FFFD in a string or
// a member name.
func FuzzLoneSurrogate(f *testing.F) {
	for _, s := range []string{
		`{"request":{"question":"\ud800 lone"}}`, `"\udc00"`, `"\ud800\u0041"`, `"\ud83d\ude00"`,
		`"\\ud800"`, `"\\\ud800"`, `{"\ud800":1}`, `["\uDBFF\uDFFF","\uD800\uD800"]`, `"\ud800\n"`,
		`"\ud800\\u dc00"`, `"\ud800\udc0"`, `"x\u00e9\u2028"`, `{"a":"\\\\"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := LoneSurrogate(b)
		if !json.Valid(b) || !utf8.Valid(b) || bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`)) {
			return
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return
		}
		if want := hasReplacement(v); got != want {
			t.Fatalf("LoneSurrogate(%q) = %v, but decoding puts a U+FFFD in it: %v", b, got, want)
		}
	})
}

func hasReplacement(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, utf8.RuneError)
	case []any:
		for _, e := range v {
			if hasReplacement(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, utf8.RuneError) || hasReplacement(e) {
				return true
			}
		}
	}
	return false
}
