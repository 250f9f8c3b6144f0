package servicetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// testContent: inspect content returns the indexed lines of one file,
// whole or a range, fitted to a budget with a cursor to the rest; a
// document's evidence holds the file's text.
func testContent(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	ce := newContentEnv(t, h)
	ce.wholeAndRanges(t)
	ce.paged(t)
	ce.refused(t)
	ce.documentEvidence(t)
	ce.scopeAndRevoked(t)
	ce.byFile(t)
	ce.changed(t)
}

// contentEnv is an indexed source holding steps.go, whose text is code
// (its lines, each with its "\n"), and a reader of it.
type contentEnv struct {
	h     Harness
	dir   string
	root  string // dir, its symlinks resolved
	src   string
	code  string
	lines []string
	r     interfaces.Service
	rctx  context.Context
}

func newContentEnv(t *testing.T, h Harness) *contentEnv {
	t.Helper()
	dir := filepath.Join(h.Root, "content-me")
	var b strings.Builder
	b.WriteString("package content\n\n")
	for i := range 120 {
		fmt.Fprintf(&b, "// Step%d says <what> & why, line %d.\nfunc Step%d() int { return %d }\n\n", i, 3*i+3, i, i)
	}
	code := b.String()
	files := map[string]string{"steps.go": code, "README.md": "# Content\n\nWhole files and ranges.\n",
		"wide.txt": "narrow\n" + strings.Repeat("one wide line of many words ", 300) + "\nnarrow\n"}
	for name, body := range files {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, wctx := h.As(t, workspace.GrantWrite, nil)
	res, err := w.AddSources(wctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	src := waitJob(t, w, wctx, res.Job.ID).SourceID
	r, rctx := h.As(t, workspace.GrantRead, nil)
	lines := strings.SplitAfter(code, "\n")
	lines = lines[:len(lines)-1] // after the final "\n"
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &contentEnv{h: h, dir: dir, root: root, src: src, code: code, lines: lines, r: r, rctx: rctx}
}

// content inspects the content of a file of the source; its used_tokens
// must count the structured JSON exactly.
func (ce *contentEnv) content(t *testing.T, req interfaces.InspectRequest) (query.FileContent, error) {
	t.Helper()
	req.Subject, req.SourceID = "content", ce.src
	out, err := ce.r.Inspect(ce.rctx, interfaces.InspectArgs{Request: req})
	if err != nil {
		return query.FileContent{}, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Result query.FileContent `json:"result"`
	}
	if err := json.Unmarshal(raw, &fc); err != nil {
		t.Fatal(err)
	}
	// used_tokens counts the structured JSON exactly.
	c, _ := render.CounterFor(fc.Result.Budget.Counter)
	if n := c.CountBytes(raw); fc.Result.Budget == nil || n != fc.Result.Budget.UsedTokens || n > fc.Result.Budget.MaxTokens {
		t.Errorf("content %+v: used_tokens %+v, recount %d", req, fc.Result.Budget, n)
	}
	return fc.Result, nil
}

// wholeAndRanges: the whole file under a budget that holds it, a range, a
// range past the end, and the ranges and paths refused.
func (ce *contentEnv) wholeAndRanges(t *testing.T) {
	// The whole file, under a budget that holds it.
	whole, err := ce.content(t, interfaces.InspectRequest{Path: "steps.go", Budget: &query.Budget{MaxTokens: 100000}})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Text != ce.code || whole.Lines != len(ce.lines) || whole.StartLine != 1 || whole.EndLine != len(ce.lines) ||
		whole.Truncated || whole.NextCursor != nil || whole.Stale || whole.File != filepath.Join(ce.root, "steps.go") {
		t.Fatalf("whole file: %+v", whole)
	}
	// A range.
	part, err := ce.content(t, interfaces.InspectRequest{Path: "steps.go", StartLine: 10, EndLine: 14})
	if err != nil || part.Text != strings.Join(ce.lines[9:14], "") || part.StartLine != 10 || part.EndLine != 14 {
		t.Fatalf("range 10-14: %+v %v", part, err)
	}
	// A range that ends past the end ends at the last line; one that
	// starts past it is refused.
	tail, err := ce.content(t, interfaces.InspectRequest{Path: "steps.go", StartLine: len(ce.lines) - 1, EndLine: len(ce.lines) + 50})
	if err != nil || tail.EndLine != len(ce.lines) || tail.Text != strings.Join(ce.lines[len(ce.lines)-2:], "") {
		t.Fatalf("range past the end: %+v %v", tail, err)
	}
	_, err = ce.content(t, interfaces.InspectRequest{Path: "steps.go", StartLine: len(ce.lines) + 1})
	wantCode(t, "start past the end", err, workspace.CodeInvalidArgument)
	_, err = ce.content(t, interfaces.InspectRequest{Path: "steps.go", StartLine: 9, EndLine: 3})
	wantCode(t, "end before start", err, workspace.CodeInvalidArgument)
	_, err = ce.content(t, interfaces.InspectRequest{Path: "../outside.go"})
	wantCode(t, "a path the source did not index", err, workspace.CodeNotFound)
	_, err = ce.content(t, interfaces.InspectRequest{})
	wantCode(t, "no path", err, workspace.CodeInvalidArgument)
}

// paged: under a small budget, pages of whole lines, next_cursor to the
// rest, every line once and in order.
func (ce *contentEnv) paged(t *testing.T) {
	// A small budget: pages of whole ce.lines, next_cursor to the rest, every
	// line once and in order.
	var got strings.Builder
	cursor, pages := "", 0
	for {
		page, err := ce.content(t, interfaces.InspectRequest{Path: "steps.go", Cursor: cursor, Budget: &query.Budget{MaxTokens: 600}})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got.WriteString(page.Text)
		if page.NextCursor == nil {
			break
		}
		if !page.Truncated || pages > 100 {
			t.Fatalf("page %d: %+v", pages, page)
		}
		cursor = *page.NextCursor
	}
	if got.String() != ce.code || pages < 3 {
		t.Fatalf("paged content: %d pages, same text %v", pages, got.String() == ce.code)
	}
}

// refused: a budget below the answer of no line, a first line alone over
// the budget, and budgets and arguments that subject content does not take.
func (ce *contentEnv) refused(t *testing.T) {
	_, err := ce.content(t, interfaces.InspectRequest{Path: "steps.go", Budget: &query.Budget{MaxTokens: 1}})
	wantCode(t, "budget below the answer of no line", err, workspace.CodeOutputBudgetExceeded)
	// The answer of no line fits 600 tokens (paged), the wide line does not.
	first, err := ce.content(t, interfaces.InspectRequest{Path: "wide.txt", Budget: &query.Budget{MaxTokens: 600}})
	if err != nil || first.Text != "narrow\n" || !first.Truncated || first.NextCursor == nil {
		t.Fatalf("wide.txt under 600 tokens: %+v %v", first, err)
	}
	_, err = ce.content(t, interfaces.InspectRequest{Path: "wide.txt", Cursor: *first.NextCursor, Budget: &query.Budget{MaxTokens: 600}})
	wantCode(t, "a line alone over the budget", err, workspace.CodeOutputBudgetExceeded)
	if err != nil && !strings.Contains(err.Error(), "line 2 alone") {
		t.Errorf("a line alone over the budget: %v", err)
	}
	for _, tc := range []struct {
		name string
		req  interfaces.InspectRequest
	}{
		{"negative max_tokens", interfaces.InspectRequest{Path: "steps.go", Budget: &query.Budget{MaxTokens: -1}}},
		{"max_tokens over the bound", interfaces.InspectRequest{Path: "steps.go", Budget: &query.Budget{MaxTokens: query.MaxBudgetTokens + 1}}},
		{"unknown counter", interfaces.InspectRequest{Path: "steps.go", Budget: &query.Budget{Counter: "nope"}}},
		{"a revision", interfaces.InspectRequest{Path: "steps.go", RevisionID: "rev_x"}},
		{"a limit", interfaces.InspectRequest{Path: "steps.go", Limit: 5}},
	} {
		_, err := ce.content(t, tc.req)
		wantCode(t, tc.name, err, workspace.CodeInvalidArgument)
	}
	// The arguments of subject content go with it alone.
	_, err = ce.r.Inspect(ce.rctx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "source", SourceID: ce.src, Path: "steps.go"}})
	wantCode(t, "a path with subject source", err, workspace.CodeInvalidArgument)
}

// documentEvidence: a document's evidence is the file's indexed text.
func (ce *contentEnv) documentEvidence(t *testing.T) {
	// A document's evidence is the file's indexed text.
	out, err := ce.r.Search(ce.rctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "Step7", Filters: &query.Filters{Sources: []string{ce.src}}}})
	if err != nil || len(out.Result.Hits) == 0 {
		t.Fatalf("search: %v", err)
	}
	doc := ""
	for e, err := ce.r.Evidence(ce.rctx, out.Result.Hits[0].EvidenceID); err == nil; e, err = ce.r.Evidence(ce.rctx, *e.Evidence.ParentID) {
		if e.Evidence.Level == "document" {
			doc = e.Evidence.Text
			break
		}
		if e.Evidence.ParentID == nil {
			break
		}
	}
	if doc != ce.code {
		t.Errorf("the document's evidence text is not the file (%d bytes, want %d)", len(doc), len(ce.code))
	}
}

// scopeAndRevoked: out of the caller's collections, not found; a revoked
// token, refused.
func (ce *contentEnv) scopeAndRevoked(t *testing.T) {
	// Out of the caller's collections: not found. A revoked token: refused.
	other, octx := ce.h.As(t, workspace.GrantRead, []string{"b"})
	_, err := other.Inspect(octx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "content", SourceID: ce.src, Path: "steps.go"}})
	wantCode(t, "another collection's file", err, workspace.CodeNotFound)
	if ce.h.WithSecret != nil {
		admin, actx := ce.h.As(t, workspace.GrantManage, nil)
		tok, err := admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Name: "content-revoked"})
		if err != nil {
			t.Fatal(err)
		}
		ts, tctx := ce.h.WithSecret(t, tok.Token)
		req := interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "content", SourceID: ce.src, Path: "steps.go"}}
		if _, err := ts.Inspect(tctx, req); err != nil {
			t.Fatalf("before the revoke: %v", err)
		}
		if err := admin.RevokeToken(actx, tok.ID); err != nil {
			t.Fatal(err)
		}
		_, err = ts.Inspect(tctx, req)
		wantCode(t, "a revoked token", err, workspace.CodeUnauthenticated)
	}
}

// byFile: the file a hit names under a render (a citation without
// source_id and path) reads as source_id and path do; a relative path,
// file beside source_id, a path no source holds and another collection's
// file are refused.
func (ce *contentEnv) byFile(t *testing.T) {
	out, err := ce.r.Search(ce.rctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "Step7 says what and why",
		Filters: &query.Filters{Sources: []string{ce.src}}}, Render: "agent@1"})
	if err != nil || len(out.Result.Hits) == 0 {
		t.Fatalf("search: %v %+v", err, out.Result.Hits)
	}
	hit := out.Result.Hits[0]
	if hit.File == "" || hit.SourceID != "" || hit.Path != "" {
		t.Fatalf("a citation under a render: %+v", hit)
	}
	inspect := func(p interfaces.Service, ctx context.Context, req interfaces.InspectRequest) (query.FileContent, error) {
		req.Subject = "content"
		res, err := p.Inspect(ctx, interfaces.InspectArgs{Request: req})
		if err != nil {
			return query.FileContent{}, err
		}
		var fc query.FileContent
		if err := json.Unmarshal(res.Result, &fc); err != nil {
			t.Fatal(err)
		}
		return fc, nil
	}
	span := hit.Span
	got, err := inspect(ce.r, ce.rctx, interfaces.InspectRequest{File: hit.File, StartLine: span.StartLine, EndLine: span.EndLine})
	if err != nil {
		t.Fatalf("content by file %s: %v", hit.File, err)
	}
	want, err := ce.content(t, interfaces.InspectRequest{Path: "steps.go", StartLine: span.StartLine, EndLine: span.EndLine})
	if err != nil || got.Text != want.Text || got.Text == "" || got.File != hit.File || got.Path != "steps.go" {
		t.Fatalf("by file %+v, by source and path %+v (%v)", got, want, err)
	}
	_, err = inspect(ce.r, ce.rctx, interfaces.InspectRequest{File: "content-me/steps.go"})
	wantCode(t, "a relative file", err, workspace.CodeInvalidArgument)
	_, err = inspect(ce.r, ce.rctx, interfaces.InspectRequest{File: hit.File, SourceID: ce.src, Path: "steps.go"})
	wantCode(t, "file beside source_id and path", err, workspace.CodeInvalidArgument)
	_, err = inspect(ce.r, ce.rctx, interfaces.InspectRequest{File: filepath.Join(filepath.Dir(ce.root), "elsewhere.go")})
	wantCode(t, "a file no source holds", err, workspace.CodeNotFound)
	_, err = inspect(ce.r, ce.rctx, interfaces.InspectRequest{File: filepath.Join(ce.root, "..", filepath.Base(ce.root)+"x", "steps.go")})
	wantCode(t, "a sibling folder whose name starts like the root", err, workspace.CodeNotFound)
	other, octx := ce.h.As(t, workspace.GrantRead, []string{"b"})
	_, err = inspect(other, octx, interfaces.InspectRequest{File: hit.File})
	wantCode(t, "another collection's file", err, workspace.CodeNotFound)
}

// changed: a file changed since indexing answers the indexed lines,
// marked stale.
func (ce *contentEnv) changed(t *testing.T) {
	// Changed since indexing: the indexed ce.lines, marked stale.
	if err := os.WriteFile(filepath.Join(ce.dir, "steps.go"), []byte("package content // rewritten\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := ce.content(t, interfaces.InspectRequest{Path: "steps.go", StartLine: 1, EndLine: 3})
	if err != nil || !changed.Stale || changed.Text != strings.Join(ce.lines[:3], "") {
		t.Fatalf("after a change: %+v %v", changed, err)
	}
}
