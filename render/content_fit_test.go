package render_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// contentLines is a file of n numbered lines as query.Inspector.Content
// resolves it, the whole file asked for.
func contentLines(n int) *query.FileLines {
	fl := &query.FileLines{FileContent: query.FileContent{SourceID: "src_1", RevisionID: "rev_1", Path: "a.go",
		File: "/w/a.go", Kind: "code", Language: "go", Hash: strings.Repeat("ab", 32), StartLine: 1}}
	for i := range n {
		fl.All = append(fl.All, fmt.Sprintf("func Line%d() string { return \"line %d of the file\" }\n", i+1, i+1))
	}
	fl.Lines, fl.End = n, n
	return fl
}

// answerOf answers k lines of fl, with a cursor when lines are left out.
func answerOf(fl *query.FileLines) func(k int, b query.ContentBudget) (query.FileContent, error) {
	return func(k int, b query.ContentBudget) (query.FileContent, error) {
		var next *string
		if k < fl.Rest() {
			c := fmt.Sprintf("cursor-at-%d", fl.StartLine+k)
			next = &c
		}
		return fl.Answer(k, b, next), nil
	}
}

// edgeCount is the token count of the answer as the edges send it: an
// interfaces.InspectResult holding its JSON.
func edgeCount(t *testing.T, counter string, a query.FileContent) int {
	t.Helper()
	res, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(interfaces.InspectResult{Result: res})
	if err != nil {
		t.Fatal(err)
	}
	c, err := render.CounterFor(counter)
	if err != nil {
		t.Fatal(err)
	}
	return c.CountBytes(body)
}

// TestContentFit: the lines kept are the most whose answer fits, and the
// answer's used_tokens is the exact count of the body the edges send.
func TestContentFit(t *testing.T) {
	fl := contentLines(80)
	answer := answerOf(fl)
	for _, tc := range []struct {
		name      string
		defaults  render.ContentFit
		budget    *query.Budget
		wantAll   bool
		wantLimit int
	}{
		{"the defaults hold the file", render.ContentFit{MaxTokens: 100000, Counter: "o200k_base"}, nil, true, 100000},
		{"the request's budget over the defaults", render.ContentFit{MaxTokens: 100000, Counter: "o200k_base"}, &query.Budget{MaxTokens: 400, Counter: "cl100k_base"}, false, 400},
		{"a small default", render.ContentFit{MaxTokens: 500}, nil, false, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.defaults
			if err := f.Prepare(tc.budget); err != nil {
				t.Fatal(err)
			}
			k, b, err := f.Fit(fl.Rest(), answer)
			if err != nil {
				t.Fatal(err)
			}
			if b.MaxTokens != tc.wantLimit || (tc.budget != nil && tc.budget.Counter != "" && b.Counter != tc.budget.Counter) {
				t.Fatalf("budget %+v, want max_tokens %d", b, tc.wantLimit)
			}
			if (k == fl.Rest()) != tc.wantAll || k == 0 {
				t.Fatalf("kept %d of %d lines", k, fl.Rest())
			}
			got, err := answer(k, b)
			if err != nil {
				t.Fatal(err)
			}
			if n := edgeCount(t, b.Counter, got); n != b.UsedTokens || n > b.MaxTokens {
				t.Fatalf("used_tokens %d, the body counts %d (max %d)", b.UsedTokens, n, b.MaxTokens)
			}
			if k < fl.Rest() {
				// One line more is over the budget, whatever it claims.
				more, _ := answer(k+1, query.ContentBudget{MaxTokens: b.MaxTokens, UsedTokens: b.MaxTokens, Counter: b.Counter})
				if n := edgeCount(t, b.Counter, more); n <= b.MaxTokens {
					t.Fatalf("kept %d lines, but %d fit (%d tokens of %d)", k, k+1, n, b.MaxTokens)
				}
			}
		})
	}
}

// TestContentFitRefusals: a budget below the answer of no line, an unknown
// counter, and an answer that fails.
func TestContentFitRefusals(t *testing.T) {
	fl := contentLines(10)
	f := render.ContentFit{MaxTokens: 5}
	if err := f.Prepare(nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Fit(fl.Rest(), answerOf(fl)); workspace.ErrorCode(err) != workspace.CodeOutputBudgetExceeded {
		t.Fatalf("below the answer of no line: %v", err)
	}
	if err := (&render.ContentFit{MaxTokens: 100}).Prepare(&query.Budget{Counter: "nope"}); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
		t.Fatalf("unknown counter: %v", err)
	}
	f = render.ContentFit{MaxTokens: 10000}
	if err := f.Prepare(nil); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	_, _, err := f.Fit(fl.Rest(), func(int, query.ContentBudget) (query.FileContent, error) { return query.FileContent{}, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("a failing answer: %v", err)
	}
}
