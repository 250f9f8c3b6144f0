package render

import (
	"encoding/json"
	"testing"

	"github.com/tychora/tychora/query"
)

// TestCoreOfIsMarshal: a hit's structured fragment, made by calling its
// MarshalJSON, is what json.Marshal makes of it, whole and as a citation,
// with text that json.Marshal escapes (HTML, line separators, quotes,
// control characters, invalid UTF-8).
func TestCoreOfIsMarshal(t *testing.T) {
	texts := []string{"", "plain", "<b>tags</b> & \"quotes\"\n\ttabs", "\u2028\u2029 line seps", "bad \xff utf-8 \x01", "café ≤ naïve"}
	for _, hits := range [][]query.Hit{realisticHits(6), focused(realisticHits(6))} {
		for i := range hits {
			text := texts[i%len(texts)]
			h := hits[i]
			h.Text = &text
			h.Title = "<" + text + ">"
			h.HeadingPath = append(h.HeadingPath, text)
			h.StaleReason = &text
			for _, cited := range []bool{false, true} {
				c := h
				if cited {
					c = citationOf(h)
				}
				got, err := coreOf(&c)
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(&c)
				if err != nil {
					t.Fatal(err)
				}
				if want := string(b[2 : len(b)-1]); got != want {
					t.Errorf("hit %d (cited %v): coreOf\n%s\njson.Marshal\n%s", i, cited, got, want)
				}
			}
		}
	}
}
