package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestRunsDiff: identical runs exit 0, the same hits re-scored exit 1,
// other hits exit 2, errors exit 3.
func TestRunsDiff(t *testing.T) {
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(docs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "# Alpha one\n\nalpha appears here once.\n")
	write("b.md", "# Beta\n\nalpha alpha appears twice in this one.\n")
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	if r := tychora(t, ws, "add", "--json", docs); r.code != 0 {
		t.Fatal(r)
	}
	src := ""
	runID := func() string {
		t.Helper()
		r := tychora(t, ws, "search", "--json", "alpha")
		if r.code != 0 {
			t.Fatalf("search: %+v", r)
		}
		var res struct {
			RunID string `json:"run_id"`
			Hits  []struct {
				SourceID string `json:"source_id"`
			} `json:"hits"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) > 0 {
			src = res.Hits[0].SourceID
		}
		return res.RunID
	}
	diff := func(a, b string) int {
		t.Helper()
		return tychora(t, ws, "runs", "diff", a, b).code
	}
	r1, r2 := runID(), runID()
	if code := diff(r1, r2); code != 0 {
		t.Fatalf("identical runs: exit %d", code)
	}
	// A document without "alpha" changes the statistics, not the hits.
	for _, n := range []string{"c.md", "d.md", "e.md"} {
		write(n, "# Gamma\n\nnothing to see in "+n+".\n")
	}
	if r := tychora(t, ws, "sync", "--json", src); r.code != 0 {
		t.Fatal(r)
	}
	r3 := runID()
	if code := diff(r1, r3); code != 1 {
		t.Fatalf("re-scored runs: exit %d", code)
	}
	// A new matching document changes the set.
	write("f.md", "# Alpha again\n\nalpha, alpha and alpha.\n")
	if r := tychora(t, ws, "sync", "--json", src); r.code != 0 {
		t.Fatal(r)
	}
	r4 := runID()
	if code := diff(r1, r4); code != 2 {
		t.Fatalf("runs with other hits: exit %d", code)
	}
	if code := diff(r1, "run_nope"); code != 3 {
		t.Fatalf("unknown run: exit %d", code)
	}
	if code := tychora(t, ws, "runs", "diff", r1).code; code != 3 {
		t.Fatalf("one argument: exit %d", code)
	}
	if r := tychora(t, ws, "runs", "list", "--json"); r.code != 0 {
		t.Fatalf("runs list: %+v", r)
	}
}
