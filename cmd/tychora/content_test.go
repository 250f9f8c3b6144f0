package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
)

func TestParseFileRange(t *testing.T) {
	for _, c := range []struct {
		arg        string
		path       string
		start, end int
		bad        bool
	}{
		{"a/b.go", "a/b.go", 0, 0, false},
		{"a/b.go:3-9", "a/b.go", 3, 9, false},
		{"a/b.go:7", "a/b.go", 7, 0, false},
		{"c:/x.go", "c:/x.go", 0, 0, false},
		{"we:ird:2-2", "we:ird", 2, 2, false},
		{"a.go:x-2", "a.go:x-2", 0, 0, false},
		{"a.go:0-2", "", 0, 0, true},
		{"a.go:9-2", "", 0, 0, true},
		{"a.go:1234567890", "", 0, 0, true},
		{":5", ":5", 0, 0, false},
	} {
		path, start, end, err := parseFileRange(c.arg)
		if (err != nil) != c.bad || (!c.bad && (path != c.path || start != c.start || end != c.end)) {
			t.Errorf("%q: %q %d %d %v", c.arg, path, start, end, err)
		}
	}
}

func FuzzParseFileRange(f *testing.F) {
	for _, s := range []string{"a/b.go:3-9", "x:1", "c:/x", "a:0-0", ":", "a:-", "a:1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		path, start, end, err := parseFileRange(arg)
		if err != nil {
			return
		}
		if start < 0 || end < 0 || (end > 0 && end < start) || (start == 0 && end != 0) {
			t.Fatalf("%q: range %d-%d", arg, start, end)
		}
		if start == 0 && path != arg || start > 0 && !strings.HasPrefix(arg, path+":") {
			t.Fatalf("%q: path %q", arg, path)
		}
	})
}

// TestInspectContentCLI: `inspect content SOURCE_ID PATH[:START-END]`
// prints the indexed lines, pages by --budget, and the list view of
// search says what the budget left out.
func TestInspectContentCLI(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "func Budgeted%d() string { return \"the budget left this out %d\" }\n", i, i)
	}
	code := "package tree\n" + b.String()
	if err := os.WriteFile(filepath.Join(tree, "budget.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	r := tychora(t, ws, "add", "--json", "--wait", tree)
	if r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	var added interfaces.JobResult
	if err := json.Unmarshal([]byte(r.stdout), &added); err != nil {
		t.Fatal(err)
	}
	src := added.Job.SourceID
	lines := strings.SplitAfter(code, "\n")
	if r := tychora(t, ws, "inspect", "content", src, "budget.go:2-4"); r.code != 0 || r.stdout != strings.Join(lines[1:4], "") {
		t.Fatalf("range: %+v", r)
	}
	if r := tychora(t, ws, "inspect", "content", src, "budget.go"); r.code != 0 || r.stdout != code || !strings.Contains(r.stderr, "lines 1-61 of 61") {
		t.Fatalf("whole: %+v", r)
	}
	small := tychora(t, ws, "inspect", "content", "--budget", "300", src, "budget.go")
	if small.code != 0 || !strings.HasPrefix(code, small.stdout) || len(small.stdout) >= len(code) || !strings.Contains(small.stderr, "--cursor") {
		t.Fatalf("budget 300: %+v", small)
	}
	if r := tychora(t, ws, "inspect", "content", src, "budget.go:99-100"); r.code == 0 || !strings.Contains(r.stderr, "past the end") {
		t.Fatalf("past the end: %+v", r)
	}
	if r := tychora(t, ws, "inspect", "content", src); r.code != 2 {
		t.Fatalf("no path: %+v", r)
	}
	// By the absolute path a hit's file names, as under a render.
	real, err := filepath.EvalSymlinks(tree)
	if err != nil {
		t.Fatal(err)
	}
	if r := tychora(t, ws, "inspect", "content", filepath.Join(real, "budget.go")+":2-4"); r.code != 0 || r.stdout != strings.Join(lines[1:4], "") {
		t.Fatalf("by file: %+v", r)
	}
	if r := tychora(t, ws, "inspect", "content", filepath.Join(root, "elsewhere.go")); r.code == 0 || !strings.Contains(r.stderr, "NOT_FOUND") {
		t.Fatalf("a file no source holds: %+v", r)
	}
	// The list view: a budget that holds some of the hits says how many it
	// left out, never "no matches".
	list := tychora(t, ws, "search", "--budget", "700", "budget left out")
	if list.code != 0 || strings.Contains(list.stdout, "no matches") || !strings.Contains(list.stdout, "left out by the token budget") ||
		!strings.Contains(list.stdout, filepath.Join(tree, "budget.go")) && !strings.Contains(list.stdout, "budget.go:") {
		t.Fatalf("list view: %+v", list)
	}
	if none := tychora(t, ws, "search", "--budget", "300", "budget left out"); none.code != 0 || !strings.Contains(none.stdout, "no hit fits the token budget: 4 left out") {
		t.Fatalf("list view, nothing fits: %+v", none)
	}
}
