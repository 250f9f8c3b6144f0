package render

import (
	"context"
	"strings"
	"testing"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// FuzzFit fits hits made of arbitrary text (split into up to three hits at
// '\x1e') into arbitrary budgets, and holds every answer to checkFit.
func FuzzFit(f *testing.F) {
	f.Add("package main\n\nfunc main() {}\n", 300, uint8(0), false)
	f.Add("a < b && c > d\n\x1e漢字 🎉\nnaïve\n\x1e\n\n\n", 180, uint8(1), true)
	f.Add("```\n~~~\n````go\n\x1e\xff\xfe bad bytes\n", 250, uint8(2), false)
	f.Add(strings.Repeat("long line <&> ", 300)+"\nshort\n", 400, uint8(3), true)
	f.Add("\u2028\u2029\r\n\t'\"\\/", 1, uint8(0), false)
	f.Fuzz(func(t *testing.T, text string, budget int, format uint8, cl bool) {
		var hits []query.Hit
		for i, part := range strings.SplitN(text, "\x1e", 3) {
			s := part
			hits = append(hits, query.Hit{EvidenceID: "ev_" + string(rune('a'+i)), SourceID: "src_1", RevisionID: "rev_1",
				Kind: "code", Path: "dir/file.go", HeadingPath: []string{"h"}, Span: query.Span{StartLine: 1, EndLine: 1 + strings.Count(s, "\n")},
				Score: float64(3 - i), Snippet: part[:min(len(part), 16)], Text: &s, Hash: "sha256:00"})
		}
		in := FitInput{Result: query.QueryResult{RunID: "run_fuzz", Hits: hits, TotalMatches: len(hits)},
			MaxTokens: budget % 20001, Format: formats[int(format)%len(formats)]}
		if cl {
			in.Counter = "cl100k_base"
		}
		out, err := Fit(context.Background(), in)
		switch {
		case in.MaxTokens <= 0:
			if workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
				t.Fatalf("budget %d: %v", in.MaxTokens, err)
			}
		case err != nil:
			if workspace.ErrorCode(err) != workspace.CodeOutputBudgetExceeded {
				t.Fatalf("budget %d: %v", in.MaxTokens, err)
			}
			if least := minimum(t, in); least <= in.MaxTokens {
				t.Fatalf("budget %d refused, but the minimum is %d", in.MaxTokens, least)
			}
		default:
			checkFit(t, in, out)
		}
	})
}
