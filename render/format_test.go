package render

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./render -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./render -update to accept):\n%s", file, got)
	}
}

func str(s string) *string { return &s }

// goldenHits exercise every renderer feature: grouping by document and
// section, a cut hit, a stale hit, no text and empty text, markup and
// backticks in the text, multi-byte text, invalid UTF-8.
func goldenHits() []query.Hit {
	return []query.Hit{
		{EvidenceID: "ev_01", SourceID: "src_1", RevisionID: "rev_7", Kind: "markdown", Path: "docs/guide.md",
			File: "/srv/site/docs/guide.md", Title: "Guide", HeadingPath: []string{"Guide", "Budgets"}, Span: query.Span{StartLine: 12, EndLine: 15},
			Score: 9.5, Snippet: "budget", Hash: "sha256:1111",
			Text: str("The budget counts **what travels**: `<json>` & text.\n\n```sh\ntychora search --max-tokens 4000\n```\n")},
		{EvidenceID: "ev_02", SourceID: "src_1", RevisionID: "rev_7", Kind: "code", Path: "render/fit.go",
			File: "/srv/site/render/fit.go", HeadingPath: []string{"func Fit"}, Span: query.Span{StartLine: 80, EndLine: 83}, Score: 7.25,
			Snippet: "func Fit", Hash: "sha256:2222", Stale: true, StaleReason: str("changed"),
			Text: str("func Fit(ctx context.Context, in FitInput) (*FitOutput, error) {\n\tif in.MaxTokens <= 0 {\n\t\treturn nil, errBudget\n\t}")},
		{EvidenceID: "ev_03", SourceID: "src_1", RevisionID: "rev_7", Kind: "markdown", Path: "docs/guide.md",
			File: "/srv/site/docs/guide.md", Title: "Guide", HeadingPath: []string{"Guide", "Renderers"}, Span: query.Span{StartLine: 40, EndLine: 41},
			Score: 6, Snippet: "render", Hash: "sha256:3333", Text: str("Three renderers: markdown@1, agent@1 and hierarchical-evidence@1 — naïve café 漢字 🎉.\nBad byte: \xff.\n")},
		{EvidenceID: "ev_04", SourceID: "src_1", RevisionID: "rev_7", Kind: "markdown", Path: "docs/guide.md",
			File: "/srv/site/docs/guide.md", Title: "Guide", HeadingPath: []string{"Guide", "Budgets"}, Span: query.Span{StartLine: 20, EndLine: 20},
			Score: 5.5, Snippet: "empty", Hash: "sha256:4444", Text: str("")},
		{EvidenceID: "ev_05", SourceID: "src_2", RevisionID: "rev_9", Kind: "text", Path: "notes/todo.txt",
			Title: "todo", Span: query.Span{StartLine: 1, EndLine: 1}, Score: 4, Snippet: "todo", Hash: "sha256:5555",
			Stale: true, StaleReason: str("deleted")},
		{EvidenceID: "ev_06", SourceID: "src_2", RevisionID: "rev_9", Kind: "code", Path: "web/app.ts",
			Span: query.Span{StartLine: 3, EndLine: 9}, Score: 3.75, Snippet: "render", Hash: "sha256:6666",
			Truncated: true, Text: str("const html = `<p>${name}</p>`;\nrender(html);\n")},
	}
}

func TestRenderGolden(t *testing.T) {
	hits := goldenHits()
	for _, f := range formats[1:] {
		golden(t, strings.ReplaceAll(string(f), "@", "_")+".golden", renderHits(f, hits))
	}
	if renderHits(FormatNone, hits) != "" {
		t.Error("FormatNone renders text")
	}
	for _, f := range formats[1:] {
		if got := renderHits(f, nil); got == "" || !strings.HasSuffix(got, "\n") {
			t.Errorf("%s: empty render %q", f, got)
		}
	}
}

// TestFitGolden keeps whole fitted answers — the exact bytes that travel —
// under review: a budget that cuts the third hit, in every format.
func TestFitGolden(t *testing.T) {
	hits := goldenHits()[:2]
	hits = append(hits, query.Hit{EvidenceID: "ev_07", SourceID: "src_2", RevisionID: "rev_9", Kind: "code",
		Path: "cmd/tychora/main.go", HeadingPath: []string{"func main"}, Span: query.Span{StartLine: 10, EndLine: 16},
		Score: 2.5, Snippet: "main", Hash: "sha256:7777",
		Text: str("func main() {\n\tapp := newApp()\n\tif err := app.Run(os.Args); err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n}\n")})
	for _, f := range formats {
		cursor := "c1.abc"
		in := FitInput{Result: query.QueryResult{RunID: "run_golden",
			Request: query.RequestEcho{Question: "token budget <render>", Modalities: []string{"lexical"}, Profile: "balanced", Limit: 10},
			Hits:    hits, TotalMatches: 7, NextCursor: &cursor}, Format: f, MaxTokens: 1 << 20}
		all, err := Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		in.MaxTokens = all.Result.Budget.UsedTokens - 20
		out, err := Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		checkFit(t, in, out)
		name := "fit_" + strings.ReplaceAll(string(f), "@", "_") + ".golden"
		if f == FormatNone {
			name = "fit_json.golden"
		}
		golden(t, name, string(out.Structured)+"\n--- rendered ---\n"+out.Rendered)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range append(Formats(), "") {
		f, err := ParseFormat(s)
		if err != nil || string(f) != s {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	for _, s := range []string{"markdown", "agent@2", "Markdown@1", "json"} {
		_, err := ParseFormat(s)
		if workspace.ErrorCode(err) != workspace.CodeInvalidArgument || !strings.Contains(workspace.ErrorMessage(err), "agent@1") {
			t.Errorf("ParseFormat(%q) = %v, want INVALID_ARGUMENT listing the formats", s, err)
		}
	}
	if !slices.Equal(Formats(), []string{"markdown@1", "agent@1", "hierarchical-evidence@1"}) {
		t.Errorf("Formats() = %v", Formats())
	}
	if FormatNone.Target() != nil || *FormatAgent.Target() != "agent@1" {
		t.Error("Target")
	}
}

func TestCounters(t *testing.T) {
	infos := Counters()
	if len(infos) != 2 || infos[0].Name != DefaultCounter || !infos[0].Default || infos[1].Default {
		t.Fatalf("Counters() = %+v", infos)
	}
	for _, info := range infos {
		c, err := CounterFor(info.Name)
		if err != nil || c.Name() != info.Name || info.Description == "" {
			t.Fatalf("CounterFor(%q) = %v, %v", info.Name, c, err)
		}
		again, _ := CounterFor(info.Name)
		if again != c {
			t.Errorf("%s: CounterFor builds a new codec each time", info.Name)
		}
		if n := c.Count("hello world"); n != 2 {
			t.Errorf("%s: Count(hello world) = %d", info.Name, n)
		}
		if c.Count("") != 0 || c.CountBytes([]byte("hello world")) != 2 {
			t.Errorf("%s: Count of empty or bytes", info.Name)
		}
	}
	if c, err := CounterFor(""); err != nil || c.Name() != DefaultCounter {
		t.Errorf("CounterFor(\"\") = %v, %v", c, err)
	}
	if _, err := CounterFor("p50k_base"); workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
		t.Errorf("unknown counter: %v", err)
	}
}

// TestCounterConcurrent shares one counter between goroutines (run with
// -race).
func TestCounterConcurrent(t *testing.T) {
	c, err := CounterFor("")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Repeat("func main() { println(\"héllo\") }\n", 50)
	want := c.Count(s)
	done := make(chan int)
	for range 4 {
		go func() { done <- c.Count(s) }()
	}
	for range 4 {
		if got := <-done; got != want {
			t.Errorf("concurrent count %d, want %d", got, want)
		}
	}
}

// TestRenderHeadersOpen: a header names the file by its absolute path, so
// that it opens as it is and the same relative path in two sources renders
// two headers.
func TestRenderHeadersOpen(t *testing.T) {
	text := "# Readme\n"
	hits := []query.Hit{
		{EvidenceID: "ev_a", SourceID: "src_a", Kind: "markdown", Path: "README.md", File: "/home/u/alpha/README.md",
			Span: query.Span{StartLine: 1, EndLine: 1}, Text: &text},
		{EvidenceID: "ev_b", SourceID: "src_b", Kind: "markdown", Path: "README.md", File: "/home/u/beta/README.md",
			Span: query.Span{StartLine: 1, EndLine: 1}, Text: &text},
	}
	for _, f := range formats[1:] {
		out := renderHits(f, hits)
		for _, h := range hits {
			if !strings.Contains(out, h.File+":1\n") && !strings.Contains(out, h.File+":1`") && !strings.Contains(out, `path="`+h.File+`"`) {
				t.Errorf("%s does not name %s:\n%s", f, h.File, out)
			}
		}
		var heads []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "-- ") || strings.HasPrefix(line, "<document ") {
				heads = append(heads, line)
			}
		}
		if len(heads) != 2 || heads[0] == heads[1] {
			t.Errorf("%s: headers %q, want two that differ", f, heads)
		}
	}
}

// TestHeaderSaysATitleOnce: a header leaves out a title its first shown
// line holds as words, and keeps one the line holds only inside a word.
func TestHeaderSaysATitleOnce(t *testing.T) {
	for _, tt := range []struct {
		title, text string
		kept        bool
	}{
		{"func ParseIP", "func ParseIP(s string) IP {\n", false},
		{"Budgets", "# Budgets\n\nThe budget counts.\n", false},
		{"Go", "Google's notes\n", true},
		{"func Parse", "func ParseIP(s string) IP {\n", true},
		{"type Mutex struct", "// A Mutex is a lock.\ntype Mutex struct {\n", true},
	} {
		text := tt.text
		h := query.Hit{Path: "a/b.go", Title: tt.title, Span: query.Span{StartLine: 1, EndLine: 2}, Text: &text}
		head := agentHead(newItem(&h, false))
		if got := strings.Contains(head, tt.title); got != tt.kept {
			t.Errorf("title %q over %q: header %q, title kept %v, want %v", tt.title, tt.text, head, got, tt.kept)
		}
	}
}

// TestHeaderLeavesOutTheFileName: a title that is only the file's name
// (what extraction gives a document without a heading) is not said again
// after the citation that shows it; another title is.
func TestHeaderLeavesOutTheFileName(t *testing.T) {
	text := "Registering blueprints on the app.\n"
	for _, c := range []struct {
		title string
		shown bool
	}{{"blueprints.rst", false}, {"Modular Applications", true}} {
		h := query.Hit{EvidenceID: "ev_a", SourceID: "src_a", Kind: "text", Path: "docs/blueprints.rst",
			File: "/home/u/flask/docs/blueprints.rst", Title: c.title, Span: query.Span{StartLine: 77, EndLine: 77}, Text: &text}
		for _, f := range []Format{FormatAgent, FormatMarkdown} {
			head, _, _ := strings.Cut(renderHits(f, []query.Hit{h}), "\n")
			after := head[strings.Index(head, ":77")+3:]
			if strings.Contains(after, c.title) != c.shown {
				t.Errorf("%s, title %q: header %q", f, c.title, head)
			}
		}
	}
}
