package query

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSearchIdentifierSplitting(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("src", "default", map[string]string{
		"server.go": "package server\n\n// parseHTTPRequest reads one request from the wire.\nfunc parseHTTPRequest(b []byte) (*Request, error) {\n\treturn nil, nil\n}\n",
		"client.py": "def parse_http_request(data):\n    \"\"\"Decode the bytes of one message.\"\"\"\n    return None\n",
		"notes.md":  "# Notes\n\nNothing about networking here, only cooking recipes.\n",
	})
	for _, q := range []string{"parse http request", "ParseHTTPRequest", "parse_http_request", "parseHTTPRequest"} {
		res := env.search(env.all, QueryRequest{Question: q})
		if !hasPath(res.Hits, "server.go") || !hasPath(res.Hits, "client.py") {
			t.Errorf("%q: hits %v, want server.go and client.py", q, paths(res.Hits))
		}
		if hasPath(res.Hits, "notes.md") {
			t.Errorf("%q: notes.md should not match", q)
		}
	}
	// The exact identifier ranks first.
	if res := env.search(env.all, QueryRequest{Question: "parseHTTPRequest"}); res.Hits[0].Path != "server.go" {
		t.Errorf("parseHTTPRequest: first hit %s, want server.go", res.Hits[0].Path)
	}
	if res := env.search(env.all, QueryRequest{Question: "parse_http_request"}); res.Hits[0].Path != "client.py" {
		t.Errorf("parse_http_request: first hit %s, want client.py", res.Hits[0].Path)
	}
}

func TestSearchQualifiedIdentifier(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("src", "default", map[string]string{
		"use.go":   "package main\n\nimport \"os\"\n\nfunc load() ([]byte, error) {\n\treturn os.ReadFile(\"config.json\")\n}\n",
		"other.go": "package main\n\n// The operating system reads each file lazily.\nfunc other() {}\n",
	})
	res := env.search(env.all, QueryRequest{Question: "os.ReadFile"})
	if len(res.Hits) == 0 || res.Hits[0].Path != "use.go" {
		t.Fatalf("os.ReadFile: hits %v, want use.go first", paths(res.Hits))
	}
}

func TestSearchPhrase(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{
		// The same length in bytes and in words: only the order and the
		// distance of the two words differ.
		"adjacent.md":  "# Timeouts\n\nWhen the read deadline passes, the call fails.\n",
		"apart.md":     "# Planning\n\nWe read the manual hours before the deadlines.\n",
		"reversed.md":  "# Reversed\n\nThe deadline to read their reports is Fridays.\n",
		"unrelated.md": "# Unrelated\n\nNothing to see.\n",
	})
	res := env.search(env.all, QueryRequest{Question: `"read deadline"`})
	if got := paths(res.Hits); !slices.Equal(got, []string{"adjacent.md"}) {
		t.Fatalf(`"read deadline": hits %v, want only adjacent.md`, got)
	}
	if res.TotalMatches != 1 {
		t.Errorf("total_matches %d, want 1", res.TotalMatches)
	}
	// Without quotes the words are alternatives; the adjacent ones rank
	// first.
	res = env.search(env.all, QueryRequest{Question: "read deadline"})
	if len(res.Hits) != 3 || res.Hits[0].Path != "adjacent.md" {
		t.Errorf("read deadline: hits %v, want adjacent.md first of 3", paths(res.Hits))
	}
	// A phrase with other words: the phrase or the words.
	res = env.search(env.all, QueryRequest{Question: `"read deadline" friday`})
	if got := paths(res.Hits); len(got) != 2 || !hasPath(res.Hits, "adjacent.md") || !hasPath(res.Hits, "reversed.md") {
		t.Errorf(`"read deadline" friday: hits %v, want adjacent.md and reversed.md`, got)
	}
	// An unclosed quote is ignored: the words stay free.
	res = env.search(env.all, QueryRequest{Question: `"read deadline`})
	want := paths(env.search(env.all, QueryRequest{Question: `read deadline`}).Hits)
	if got := paths(res.Hits); !slices.Equal(got, want) || len(got) < 2 {
		t.Errorf(`"read deadline (unclosed): hits %v, want those of read deadline: %v`, got, want)
	}
	res = env.search(env.all, QueryRequest{Question: `"read deadline" friday "deadline`})
	if got := paths(res.Hits); len(got) < 2 || !hasPath(res.Hits, "adjacent.md") {
		t.Errorf(`a phrase then an unclosed quote: hits %v`, got)
	}
	// Stop words inside a phrase must be there.
	res = env.search(env.all, QueryRequest{Question: `"read the manual"`})
	if got := paths(res.Hits); !slices.Equal(got, []string{"apart.md"}) {
		t.Errorf(`"read the manual": hits %v`, got)
	}
}

func TestSearchQuestion(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{
		"gc.md":    "# Garbage collection\n\nThe collector marks reachable objects concurrently, then sweeps.\n",
		"sched.md": "# Scheduler\n\nGoroutines are preempted by the scheduler with signals.\n",
		"maps.md":  "# Maps\n\nA map grows when its load factor is exceeded.\n",
	})
	res := env.search(env.all, QueryRequest{Question: "How does the scheduler preempt goroutines?"})
	if len(res.Hits) == 0 || res.Hits[0].Path != "sched.md" {
		t.Fatalf("hits %v, want sched.md first", paths(res.Hits))
	}
	// OR semantics: one of the words is enough.
	res = env.search(env.all, QueryRequest{Question: "when does a map grow or the collector sweep"})
	if !hasPath(res.Hits, "gc.md") || !hasPath(res.Hits, "maps.md") {
		t.Errorf("hits %v, want gc.md and maps.md", paths(res.Hits))
	}
	// Only stop words: they are searched for.
	res = env.search(env.all, QueryRequest{Question: "when its then"})
	if len(res.Hits) == 0 {
		t.Errorf("a question of stop words found nothing")
	}
}

func TestSearchHitFields(t *testing.T) {
	env := newSearchEnv(t)
	src := env.folder("docs", "default", map[string]string{
		"guide/install.md": "# Guide\n\nIntro text.\n\n## Install\n\nRun the installer with --prefix to choose the target directory.\n",
	})
	// The path (guide/install.md) matches "installer" too: both sections
	// are hits, the one with the words first.
	res := env.search(env.all, QueryRequest{Question: "installer prefix"})
	if len(res.Hits) != 2 {
		t.Fatalf("hits %v", paths(res.Hits))
	}
	h := res.Hits[0]
	if h.SourceID != src || h.Path != "guide/install.md" || h.Kind != "markdown" || h.Title != "Install" ||
		!slices.Equal(h.HeadingPath, []string{"Guide", "Install"}) || h.Span.StartLine != 5 || h.Span.EndLine != 7 ||
		h.Text == nil || !strings.Contains(*h.Text, "Run the installer") || len(h.Hash) != 64 || h.Stale || h.Score <= 0 ||
		h.EvidenceID == "" || h.RevisionID == "" {
		t.Errorf("hit %+v", h)
	}
	if res.Echo.Question != "installer prefix" || res.Echo.Profile != DefaultProfile || res.Echo.Limit != DefaultLimit ||
		!slices.Equal(res.Echo.Modalities, []string{ModalityLexical}) {
		t.Errorf("echo %+v", res.Echo)
	}
	if res.NextCursor != nil || res.TotalMatches != 2 {
		t.Errorf("next_cursor %v total %d", res.NextCursor, res.TotalMatches)
	}
}

func TestSearchSnippet(t *testing.T) {
	env := newSearchEnv(t)
	var long strings.Builder
	long.WriteString("# Long\n\n")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&long, "Filler line %d with ordinary words about nothing in particular.\n", i)
		if i == 300 {
			long.WriteString("Here the flux capacitor needs exactly one point twenty one gigawatts.\n")
		}
	}
	env.folder("docs", "default", map[string]string{"long.md": long.String()})
	res := env.search(env.all, QueryRequest{Question: "flux capacitor gigawatts"})
	if len(res.Hits) == 0 {
		t.Fatal("no hits")
	}
	sn := res.Hits[0].Snippet
	for _, w := range []string{"flux", "capacitor", "gigawatts"} {
		if !strings.Contains(sn, w) {
			t.Errorf("snippet %q lacks %q", sn, w)
		}
	}
	if len(sn) > snippetBytes+2*len("…") || !strings.HasPrefix(sn, "…") {
		t.Errorf("snippet %q: want at most %d bytes cut from the middle", sn, snippetBytes)
	}
}

// TestSearchSnippetIdentifierParts: words that match only as parts of an
// identifier (through code_terms) are what the snippet shows, not the
// unit's first lines.
func TestSearchSnippetIdentifierParts(t *testing.T) {
	env := newSearchEnv(t)
	var src strings.Builder
	src.WriteString("package server\n\nfunc finish(w *response) {\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&src, "\tw.step%d()\n", i)
	}
	src.WriteString("\tif w.req.MultipartForm != nil {\n\t\tw.req.MultipartForm.RemoveAll()\n\t}\n}\n")
	env.folder("code", "default", map[string]string{"server.go": src.String()})
	res := env.search(env.all, QueryRequest{Question: "multipart form"})
	if len(res.Hits) == 0 {
		t.Fatal("no hits")
	}
	if sn := res.Hits[0].Snippet; !strings.Contains(sn, "MultipartForm") {
		t.Errorf("snippet %q does not show MultipartForm", sn)
	}
}

func TestSearchPaging(t *testing.T) {
	env := newSearchEnv(t)
	files := map[string]string{}
	for i := 0; i < 23; i++ {
		files[fmt.Sprintf("doc%02d.md", i)] = fmt.Sprintf("# Doc %d\n\n%s\n", i, strings.Repeat("quantum ", i%5+1)+"entanglement notes")
	}
	env.folder("docs", "default", files)
	req := QueryRequest{Question: "quantum entanglement", Limit: 5}
	full := env.search(env.all, QueryRequest{Question: req.Question, Limit: 100})
	if len(full.Hits) != 23 || full.TotalMatches != 23 {
		t.Fatalf("full: %d hits, total %d", len(full.Hits), full.TotalMatches)
	}
	var got []string
	pages := 0
	for {
		res := env.search(env.all, req)
		pages++
		if res.TotalMatches != 23 {
			t.Errorf("page %d: total %d", pages, res.TotalMatches)
		}
		got = append(got, paths(res.Hits)...)
		if res.NextCursor == nil {
			break
		}
		req.Cursor = *res.NextCursor
		if pages > 10 {
			t.Fatal("paging does not end")
		}
	}
	if pages != 5 {
		t.Errorf("%d pages, want 5", pages)
	}
	// The pages hold every hit once: no duplicates, no gaps. The order may
	// differ from one 100-hit call (a pool of another size), the set not.
	if want := paths(full.Hits); !sameSet(got, want) || len(got) != len(want) {
		t.Errorf("pages %v\nwant %v", got, want)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func TestSearchStale(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{
		"keep.md":    "# Keep\n\nzebra crossing stays as it is\n",
		"edit.md":    "# Edit\n\nzebra stripes will change\n",
		"samelen.md": "# Same\n\nzebra herd of the same size\n",
		"touch.md":   "# Touch\n\nzebra touched but unchanged\n",
		"gone.md":    "# Gone\n\nzebra that will be deleted\n",
	})
	env.write("docs/edit.md", "# Edit\n\nzebra stripes changed, and the file grew longer\n")
	env.write("docs/samelen.md", "# Same\n\nzebra herd of the SAME size\n")
	touch(t, filepath.Join(env.root, "docs/samelen.md"))
	touch(t, filepath.Join(env.root, "docs/touch.md"))
	if err := os.Remove(filepath.Join(env.root, "docs/gone.md")); err != nil {
		t.Fatal(err)
	}
	res := env.search(env.all, QueryRequest{Question: "zebra"})
	want := map[string]bool{"keep.md": false, "edit.md": true, "samelen.md": true, "touch.md": false, "gone.md": true}
	if len(res.Hits) != len(want) {
		t.Fatalf("hits %v", paths(res.Hits))
	}
	for _, h := range res.Hits {
		if h.Stale != want[h.Path] {
			t.Errorf("%s: stale %v, want %v", h.Path, h.Stale, want[h.Path])
		}
	}
}

func TestSearchProfiles(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{
		"a.md": "# Alpha\n\nThe parser reads tokens and builds a tree.\n",
		"b.md": "# Beta\n\nA tree of tokens, read by the parser.\n",
		"c.go": "package c\n\n// ParseTree builds the tree.\nfunc ParseTree() {}\n",
	})
	infos := Profiles()
	if len(infos) < 2 || infos[0].Name != DefaultProfile || !infos[0].Default {
		t.Fatalf("profiles %+v", infos)
	}
	for _, pi := range infos {
		if pi.Description == "" {
			t.Errorf("profile %s has no description", pi.Name)
		}
		res := env.search(env.all, QueryRequest{Question: "parser tree tokens", Profile: pi.Name})
		if len(res.Hits) == 0 || res.Echo.Profile != pi.Name {
			t.Errorf("profile %s: %d hits, echo %q", pi.Name, len(res.Hits), res.Echo.Profile)
		}
	}
}

func TestSearchEmptyIndexAndNoMatch(t *testing.T) {
	env := newSearchEnv(t)
	res := env.search(env.all, QueryRequest{Question: "anything at all"})
	if len(res.Hits) != 0 || res.TotalMatches != 0 || res.NextCursor != nil || res.Hits == nil {
		t.Fatalf("empty index: %+v", res)
	}
	env.folder("docs", "default", map[string]string{"a.md": "# A\n\nhello\n"})
	for _, q := range []string{"xylophone", "!!!", `""`, "\"", "-"} {
		res = env.search(env.all, QueryRequest{Question: q})
		if len(res.Hits) != 0 || res.TotalMatches != 0 {
			t.Errorf("%q: %v", q, paths(res.Hits))
		}
	}
}

// TestSearchDiacriticsOutsideLatin1: words whose letters the Go copy of the
// tokenizer may fold otherwise than FTS5 (Vietnamese, Romanian comma
// below) are still found, alone and among other words. (The letters are
// escaped: TestTokenizerMatchesFTS5 reads this file as text, and these are
// the words it would report.)
func TestSearchDiacriticsOutsideLatin1(t *testing.T) {
	const (
		nguyen = "Nguy\u1ec5n"
		thieu  = "Thi\u1ec7u"
		stefan = "\u0218tefan"
	)
	env := newSearchEnv(t)
	env.folder("people", "default", map[string]string{
		"names.md": "# Names\n\n" + nguyen + " V\u0103n " + thieu + " met " + stefan + " at the harbour.\n",
		"other.md": "# Other\n\nNothing to see at the harbour.\n",
	})
	for _, q := range []string{nguyen, thieu, stefan, thieu + " harbour", "nguyen", "stefan"} {
		res := env.search(env.all, QueryRequest{Question: q})
		if !hasPath(res.Hits, "names.md") {
			t.Errorf("%q: hits %v, want names.md", q, paths(res.Hits))
		}
	}
}

// TestSearchIdentifierTitle: a definition whose name is the question's
// words run together ranks above text that only mentions those words.
func TestSearchIdentifierTitle(t *testing.T) {
	env := newSearchEnv(t)
	files := map[string]string{
		"config.py": "class HTTPServerConfig:\n    \"\"\"Settings.\"\"\"\n    port = 8080\n    host = \"localhost\"\n",
	}
	for i := range 12 {
		files[fmt.Sprintf("notes%02d.md", i)] = fmt.Sprintf("# Notes %d\n\nThe http layer answers requests. Logging goes to a file.\n"+
			"The server starts workers on demand. Caches are warmed at start.\nThe config is read once. Item %d.\n", i, i)
	}
	env.folder("code", "default", files)
	res := env.search(env.all, QueryRequest{Question: "http server config"})
	for i, h := range res.Hits {
		if h.Path == "config.py" {
			if i > 1 {
				t.Errorf("class HTTPServerConfig ranks %d: %v", i+1, paths(res.Hits))
			}
			return
		}
	}
	t.Errorf("class HTTPServerConfig not found: %v", paths(res.Hits))
}

// TestSearchFocusIsTheBestLine: a hit's focus is the line that holds the
// most of the question, not the first line of the snippet's densest
// stretch, which repeats one word of it.
func TestSearchFocusIsTheBestLine(t *testing.T) {
	env := newSearchEnv(t)
	doc := "# Locks\n\n" +
		"The latch guards the table.\n" +
		"A shared latch is a reader writer latch for the table.\n" +
		"Filler about nothing in particular, and more of it.\n" +
		"The latch, once the latch is taken, keeps the latch\n" +
		"until the latch holder lets the latch go; latch latch.\n"
	env.folder("docs", "default", map[string]string{"locks.md": doc})
	res := env.search(env.all, QueryRequest{Question: "reader writer latch"})
	if len(res.Hits) == 0 || res.Hits[0].Focus == nil || res.Hits[0].Text == nil {
		t.Fatalf("no hit with a focus: %+v", res.Hits)
	}
	h := res.Hits[0]
	lines := strings.Split(*h.Text, "\n")
	i := h.Focus.StartLine - h.Span.StartLine
	if h.Focus.EndLine != h.Focus.StartLine || i < 0 || i >= len(lines) || !strings.Contains(lines[i], "reader writer latch") {
		t.Fatalf("focus %+v, want the line with \"reader writer latch\":\n%s", *h.Focus, *h.Text)
	}
}
