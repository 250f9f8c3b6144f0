package main

import (
	"context"
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

func TestParseCodeQuestions(t *testing.T) {
	in := "# comment\n\nfind a thing\ta/b.go, c/d.go\n  second one \t x.go \n"
	qs, err := parseCodeQuestions(strings.NewReader(in), "t.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 {
		t.Fatalf("got %d questions, want 2", len(qs))
	}
	if qs[0].text != "find a thing" || !qs[0].want["a/b.go"] || !qs[0].want["c/d.go"] || len(qs[0].want) != 2 || qs[0].line != 3 {
		t.Errorf("first question: %+v", qs[0])
	}
	if qs[1].text != "second one" || !qs[1].want["x.go"] || qs[1].line != 4 {
		t.Errorf("second question: %+v", qs[1])
	}
	for _, bad := range []string{"", "# only a comment\n", "no tab here\n", "question\t\n", "question\t , ,\n", "\tfile.go\n"} {
		if _, err := parseCodeQuestions(strings.NewReader(bad), "t.tsv"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseCodeQuestions(f *testing.F) {
	f.Add("q\ta.go,b.go\n# c\n")
	f.Add("q\t\n")
	f.Add("\xff\t\xfe,,\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := parseCodeQuestions(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		last := 0
		for _, q := range qs {
			if q.text == "" || len(q.want) == 0 {
				t.Fatalf("empty question or files: %+v", q)
			}
			if q.line <= last {
				t.Fatalf("line %d after %d", q.line, last)
			}
			last = q.line
			for f := range q.want {
				if f == "" || strings.Contains(f, ",") {
					t.Fatalf("bad file %q", f)
				}
			}
		}
	})
}

func TestScoreRanks(t *testing.T) {
	s := scoreRanks([]int{1, 2, 0, 11, 5, 10})
	if s.n != 6 || s.at1 != 1 || s.at5 != 3 {
		t.Errorf("got %+v", s)
	}
	if want := (1 + 0.5 + 0.2 + 0.1) / 6; math.Abs(s.mrr-want) > 1e-12 {
		t.Errorf("MRR@10 %v, want %v", s.mrr, want)
	}
	if r := fileRank([]string{"a", "b", "c"}, map[string]bool{"c": true, "b": true}); r != 2 {
		t.Errorf("fileRank %d, want 2", r)
	}
}

func TestFilePrior(t *testing.T) {
	for p, want := range map[string]float64{
		"net/http/fs.go":                        1,
		"net/http/fs_test.go":                   0.5,
		"net/http/example_test.go":              0.5,
		"cmd/vet/testdata/copylock/copylock.go": 0.5,
		"cmd/vendor/golang.org/x/mod/module.go": 0.5,
		"web/src/app.spec.ts":                   0.5,
		"pkg/tests/helpers.py":                  0.5,
		"pkg/test_parse.py":                     0.5,
		"sync/rwmutex.go":                       1,
		"testing/benchmark.go":                  1,
	} {
		if got := filePrior(p); got != want {
			t.Errorf("filePrior(%q) = %v, want %v", p, got, want)
		}
	}
	if got := nameWords("os/exec/lp_unix.go"); !slices.Equal(got, []string{"lp", "unix"}) {
		t.Errorf("nameWords: %q", got)
	}
}

func TestWithPrior(t *testing.T) {
	ranked := []scoredFile{{"a/heap_test.go", 10}, {"a/other.go", 7}, {"a/heap.go", 6}}
	got := paths(withPrior("heap push and pop", ranked))
	// heap.go 6×1.3 = 7.8; other.go 7; heap_test.go 10×0.5×1.3 = 6.5.
	if want := []string{"a/heap.go", "a/other.go", "a/heap_test.go"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// writeTree writes files (path → text) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCodeIndexKey(t *testing.T) {
	repo := t.TempDir()
	writeTree(t, repo, map[string]string{
		"go.sum":                        "x v1\n",
		"sources/walk.go":               "package sources\n",
		"sources/walk_test.go":          "package sources\n",
		"workspace/db.go":               "package workspace\n",
		"workspace/migrations/0001.sql": "CREATE TABLE t(x);\n",
		"bench/eval/code_index.go":      "package main\n",
		"bench/eval/code_baseline.go":   "package main\n",
		"query/rank.go":                 "package query\n",
	})
	key := func() string {
		k, err := codeIndexKey(repo, "/go/src", "go1.26.8")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	// Ranking code and tests do not shape the index.
	writeTree(t, repo, map[string]string{"query/rank.go": "package query // changed\n", "sources/walk_test.go": "package sources // changed\n"})
	if k := key(); k != k0 {
		t.Errorf("key moved with query/ or a test file")
	}
	for _, p := range []string{"sources/walk.go", "sources/new.go", "workspace/migrations/0002.sql", "workspace/db.go", "go.sum", "bench/eval/code_baseline.go"} {
		writeTree(t, repo, map[string]string{p: "// changed " + p + "\n"})
		k := key()
		if k == k0 {
			t.Errorf("key did not move with %s", p)
		}
		k0 = k
	}
	if k, _ := codeIndexKey(repo, "/go/src", "go1.26.9"); k == k0 {
		t.Error("key did not move with the Go version")
	}
	if k, _ := codeIndexKey(repo, "/other/src", "go1.26.8"); k == k0 {
		t.Error("key did not move with GOROOT")
	}
}

// TestCodeIndex builds a small tree's index and baseline table through the
// real pipeline, reuses it, rebuilds it on request, and ranks it.
func TestCodeIndex(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"sync/rwmutex.go":      "package sync\n\n// RWMutex is a reader writer lock.\ntype RWMutex struct{ w int }\n\nfunc (rw *RWMutex) RLock() {}\n",
		"sync/rwmutex_test.go": "package sync\n\n// reader writer lock reader writer lock reader writer lock\nfunc TestRWMutex() {}\n",
		"sync/mutex.go":        "package sync\n\n// Mutex is a lock.\ntype Mutex struct{ state int }\n",
		"io/pipe.go":           "package io\n\n// Pipe connects a reader and a writer.\nfunc Pipe() {}\n",
	})
	base := t.TempDir()
	var logged int
	logf := func(string, ...any) { logged++ }
	ix, err := openCodeIndex(ctx, base, "k1", src, false, logf)
	if err != nil {
		t.Fatal(err)
	}
	if !ix.built || logged != 1 || ix.files != 4 {
		t.Fatalf("first open: built %v, logged %d, files %d", ix.built, logged, ix.files)
	}
	ix.Close()
	ix, err = openCodeIndex(ctx, base, "k1", src, false, logf)
	if err != nil {
		t.Fatal(err)
	}
	if ix.built || logged != 1 {
		t.Fatalf("second open rebuilt the index")
	}
	ix.Close()
	ix, err = openCodeIndex(ctx, base, "k1", src, true, logf)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !ix.built || logged != 2 {
		t.Fatalf("-reindex did not rebuild")
	}
	if ents, _ := os.ReadDir(base); len(ents) != 1 || ents[0].Name() != "k1" {
		t.Errorf("cache holds %v, want k1 alone", ents)
	}

	fdb, err := sql.Open("sqlite", "file:"+filepath.Join(ix.dir, "files.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer fdb.Close()
	plain, err := plainFiles(ctx, fdb, "reader writer lock")
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(plain); len(got) != 4 || got[0] != "sync/rwmutex_test.go" {
		t.Errorf("plain: %q, want the repeating test first, every file", got)
	}
	if got := paths(withPrior("reader writer lock", plain)); got[0] != "sync/rwmutex.go" {
		t.Errorf("prior: %q, want sync/rwmutex.go first", got)
	}

	p := workspace.Principal{ID: "test", Grant: workspace.GrantRead}
	files, lat, err := tychoraFiles(ctx, ix.engine, p, query.QueryRequest{Question: "reader writer lock", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) < len(files) || len(files) < 2 {
		t.Errorf("paged %d calls for %d files (%q)", len(lat), len(files), files)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] {
			t.Errorf("file %s twice in %q", f, files)
		}
		seen[f] = true
	}
}

func TestPruneCodeIndexes(t *testing.T) {
	base := t.TempDir()
	for i, name := range []string{"a", "b", "c", "d"} {
		writeTree(t, base, map[string]string{name + "/complete": "x", name + "/used": ""})
		when := time.Now().Add(time.Duration(i-10) * time.Hour)
		if err := os.Chtimes(filepath.Join(base, name, "used"), when, when); err != nil {
			t.Fatal(err)
		}
	}
	writeTree(t, base, map[string]string{"unrelated/file": "x", ".build-1/x": "x"})
	if err := pruneCodeIndexes(base, 2); err != nil {
		t.Fatal(err)
	}
	var left []string
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{".build-1", "c", "d", "unrelated"}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
}
