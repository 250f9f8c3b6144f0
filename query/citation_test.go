package query

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHitCitationJSON: a hit marked Cited travels as a compact citation
// (its file, or its source and path when the file is not known; its span
// and flags; no score, text, snippet, hash or excerpt), a whole hit as
// every field, and each decodes to what it was and encodes again to the
// same bytes.
func TestHitCitationJSON(t *testing.T) {
	text, reason := "func F() {}\n", StaleChanged
	whole := Hit{EvidenceID: "ev_1", SourceID: "src_1", RevisionID: "rev_1", Kind: "code", Path: "a/f.go",
		File: "/w/a/f.go", Span: Span{StartLine: 3, EndLine: 9}, Score: 0, Snippet: "F", Text: &text,
		Excerpt: &Span{StartLine: 4, EndLine: 4}, Hash: "sha256:00", Stale: true, StaleReason: &reason}
	noFile := whole
	noFile.File = ""
	for _, c := range []struct {
		name     string
		h        Hit
		has, not []string
	}{
		{"whole", whole, []string{`"score":0`, `"text":`, `"source_id":"src_1"`, `"path":"a/f.go"`, `"excerpt":`}, nil},
		{"citation", citationOf(whole), []string{`"file":"/w/a/f.go"`, `"span":{"start_line":3,"end_line":9}`, `"stale":true`, `"stale_reason":"changed"`},
			[]string{`"score"`, `"text"`, `"snippet"`, `"hash"`, `"excerpt"`, `"source_id"`, `"path"`, `"kind"`}},
		{"citation without a file", citationOf(noFile), []string{`"source_id":"src_1"`, `"path":"a/f.go"`},
			[]string{`"score"`, `"file"`, `"text"`}},
	} {
		b, err := json.Marshal(c.h)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.has {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s: %s lacks %s", c.name, b, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(string(b), s) {
				t.Errorf("%s: %s holds %s", c.name, b, s)
			}
		}
		var back Hit
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Cited != c.h.Cited {
			t.Errorf("%s: decoded Cited %v, want %v", c.name, back.Cited, c.h.Cited)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(b) {
			t.Errorf("%s: encodes again as\n%s\nwant\n%s", c.name, again, b)
		}
	}
	var h Hit
	h.EvidenceID = "ev_kept"
	if err := json.Unmarshal([]byte("null"), &h); err != nil || h.EvidenceID != "ev_kept" || h.Cited {
		t.Errorf("null decodes into %+v (%v), want the hit left as it was", h, err)
	}
	current := citationOf(Hit{EvidenceID: "ev_2", File: "/w/b.go", Span: Span{StartLine: 1, EndLine: 1}})
	if b, _ := json.Marshal(current); string(b) != `{"evidence_id":"ev_2","file":"/w/b.go","span":{"start_line":1,"end_line":1},"stale":false}` {
		t.Errorf("a current citation is %s", b)
	}
}

// citationOf marks h as a citation, as render does under a render.
func citationOf(h Hit) Hit {
	h.Cited = true
	return h
}
