package sources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// syncPaths runs a sync limited to paths.
func (e *env) syncPaths(id string, paths ...string) Stats {
	e.t.Helper()
	st, err := e.ix.Sync(context.Background(), id, SyncOptions{Paths: paths})
	if err != nil {
		e.t.Fatalf("Sync(%s, %q): %v", id, paths, err)
	}
	e.checkFTS()
	return st
}

// sameAsWalk checks that a sync after lim, walking the whole source,
// finds nothing to change, and that lim counted the revision as the walk
// does.
func (e *env) sameAsWalk(id string, lim Stats) {
	e.t.Helper()
	full := e.sync(id)
	if full.NewRevision || full.Indexed != 0 || full.Deleted != 0 {
		e.t.Fatalf("a full sync after the limited one still changed the index: %+v", full.Progress)
	}
	if lim.FilesSeen != full.FilesSeen || lim.Skipped != full.Skipped || lim.Indexed+lim.Unchanged != full.Unchanged ||
		lim.CoverageSHA256 != full.CoverageSHA256 {
		e.t.Fatalf("limited sync counted %+v, the walk %+v", lim.Progress, full.Progress)
	}
	for r, n := range full.SkippedByReason {
		if lim.SkippedByReason[r] != n {
			e.t.Fatalf("limited sync's skips %v, the walk's %v", lim.SkippedByReason, full.SkippedByReason)
		}
	}
}

// TestSyncPaths: a sync limited to the paths that changed makes the
// revision a walk of the whole source would, for every kind of change; the
// changes it cannot vouch for (a new or removed directory, a .gitignore
// edit, a HEAD move) are walked.
func TestSyncPaths(t *testing.T) {
	c1, c2 := strings.Repeat("a", 40), strings.Repeat("b", 40)
	cases := []struct {
		name    string
		change  func(e *env)
		paths   []string // what a watcher would name
		walked  bool     // the sync must walk the whole source
		indexed int64
		deleted int64
	}{
		{"edit", func(e *env) { e.write("repo/sub/c.md", "# C\n\nedited words here\n") },
			[]string{"sub/c.md"}, false, 1, 0},
		{"atomic save", func(e *env) {
			p := e.write("repo/sub/.c.md.swp", "# C\n\nsaved atomically\n")
			if err := os.Rename(p, filepath.Join(e.root, "repo", "sub", "c.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"sub/.c.md.swp", "sub/c.md"}, false, 1, 0},
		{"create in an existing directory", func(e *env) {
			e.write("repo/sub/new.md", "# New\n\nfresh words\n")
			e.write("repo/sub/trace.log", "ignored by the root .gitignore\n")
			e.write("repo/sub/blob.bin", "x\x00y")
		}, []string{"sub/blob.bin", "sub/new.md", "sub/trace.log"}, false, 1, 0},
		{"create in a new directory", func(e *env) { e.write("repo/fresh/deep/e.md", "# E\n\nnested\n") },
			[]string{"fresh"}, true, 1, 0},
		{"delete", func(e *env) {
			if err := os.Remove(filepath.Join(e.root, "repo", "b.go")); err != nil {
				t.Fatal(err)
			}
		}, []string{"b.go"}, false, 0, 1},
		{"rename into another directory", func(e *env) {
			if err := os.Rename(filepath.Join(e.root, "repo", "a.md"), filepath.Join(e.root, "repo", "sub", "deep", "a2.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"a.md", "sub/deep/a2.md"}, false, 1, 1},
		{"a file turns binary", func(e *env) { e.write("repo/sub/c.md", "now\x00binary") },
			[]string{"sub/c.md"}, false, 0, 0},
		{"delete a directory", func(e *env) {
			if err := os.RemoveAll(filepath.Join(e.root, "repo", "sub", "deep")); err != nil {
				t.Fatal(err)
			}
		}, []string{"sub/deep/d.md", "sub/deep"}, true, 0, 1},
		{"a directory replaced by a file", func(e *env) {
			if err := os.RemoveAll(filepath.Join(e.root, "repo", "sub", "deep")); err != nil {
				t.Fatal(err)
			}
			e.write("repo/sub/deep", "a file where a directory was\n")
		}, []string{"sub/deep"}, true, 1, 1},
		{".gitignore edit", func(e *env) { e.write("repo/.gitignore", "*.log\nsub/deep/\n") },
			[]string{".gitignore"}, true, 1, 1}, // the .gitignore itself is text, and indexed
		{"HEAD move", func(e *env) {
			e.write("repo/.git/refs/heads/main", c2+"\n")
			e.write("repo/a.md", "# A\n\nchanged by the checkout\n")
		}, []string{"a.md"}, true, 1, 0},
		{"only temporary files", func(e *env) {
			p := e.write("repo/sub/.tmp123", "gone again\n")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}, []string{"sub/.tmp123"}, false, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("repo/.git/HEAD", "ref: refs/heads/main\n")
			e.write("repo/.git/refs/heads/main", c1+"\n")
			e.write("repo/.gitignore", "*.log\n")
			e.write("repo/a.md", "# A\n\nalpha words\n")
			e.write("repo/b.go", "package b\n\nfunc B() {}\n")
			e.write("repo/debug.log", "ignored\n")
			e.write("repo/sub/c.md", "# C\n\ngamma words\n")
			e.write("repo/sub/deep/d.md", "# D\n\ndelta words\n")
			e.write("repo/data.bin", "\x00\x01\x02")
			src := e.add(SourceInput{Path: "repo"})
			e.sync(src.ID)
			c.change(e)
			lim := e.syncPaths(src.ID, c.paths...)
			if walked := lim.Paths == 0; walked != c.walked {
				t.Fatalf("walked the whole source: %v, want %v (%+v)", walked, c.walked, lim)
			}
			if lim.Indexed != c.indexed || lim.Deleted != c.deleted {
				t.Fatalf("indexed %d, deleted %d; want %d, %d", lim.Indexed, lim.Deleted, c.indexed, c.deleted)
			}
			e.sameAsWalk(src.ID, lim)
		})
	}
}

// TestSyncPathsCarriesOver: a limited sync reads only its paths; a change
// elsewhere waits for a sync that looks there.
func TestSyncPathsCarriesOver(t *testing.T) {
	e := newEnv(t)
	e.write("tree/a.md", "# A\n\nalpha\n")
	e.write("tree/b.md", "# B\n\nbeta\n")
	src := e.add(SourceInput{Path: "tree"})
	e.sync(src.ID)
	e.write("tree/a.md", "# A\n\nalpha edited\n")
	e.write("tree/b.md", "# B\n\nbeta edited\n")
	calls := e.ix.ExtractCalls()
	lim := e.syncPaths(src.ID, "a.md")
	if lim.Paths != 1 || lim.Indexed != 1 || lim.Unchanged != 1 || e.ix.ExtractCalls() != calls+1 {
		t.Fatalf("limited sync: %+v, %d extractions", lim, e.ix.ExtractCalls()-calls)
	}
	if e.match("edited") != 1 {
		t.Fatalf("%d matches of the edit, want only a.md's", e.match("edited"))
	}
	if full := e.sync(src.ID); full.Indexed != 1 || full.Paths != 0 {
		t.Fatalf("the walk after it: %+v", full)
	}
}

// TestSyncPathsInDoubt: paths that are not plain relative paths below the
// root, paths below a directory the walk does not enter, and a source
// never synced are walked.
func TestSyncPathsInDoubt(t *testing.T) {
	e := newEnv(t)
	e.write("tree/.gitignore", "out/\n")
	e.write("tree/a.md", "# A\n\nalpha\n")
	e.write("tree/out/x.md", "# X\n")
	e.write("tree/node_modules/m.js", "var m = 1\n")
	src := e.add(SourceInput{Path: "tree", Exclude: []string{"drafts/**"}})
	if st := e.syncPaths(src.ID, "a.md"); st.Paths != 0 || st.Indexed != 2 {
		t.Fatalf("the first sync, limited: %+v", st)
	}
	e.write("tree/drafts/y.md", "# Y\n")
	for _, p := range []string{"/etc/passwd", "../a.md", "./a.md", "a.md/", "", "out/x.md", "node_modules/m.js", "drafts/y.md", ".git/HEAD"} {
		if st := e.syncPaths(src.ID, p); st.Paths != 0 {
			t.Errorf("%q: a limited sync (%+v)", p, st)
		}
	}
}

// FuzzWalkPaths: whatever path a job names, a limited sync reads nothing
// outside the source root, and a file it reads is the path it was named.
func FuzzWalkPaths(f *testing.F) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	root := filepath.Join(base, "tree")
	for rel, body := range map[string]string{"a.md": "# A\n", "sub/b.md": "# B\n", ".gitignore": "*.log\n", "sub/x.log": "x\n"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "secret.md"), []byte("# Secret\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	policy, err := NewPolicy([]string{root}, filepath.Join(base, "ws"))
	if err != nil {
		f.Fatal(err)
	}
	src := Source{Kind: KindFolder, Path: root}
	for _, seed := range []string{"a.md", "sub/b.md", "../secret.md", "sub/../../secret.md", "/etc/passwd", "sub//b.md", "sub/x.log", ".gitignore", "", "."} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		res, ok, err := walkPaths(policy, src, map[string]bool{".git": true}, []string{rel})
		if err != nil || !ok {
			return
		}
		for _, w := range res.files {
			if w.rel != rel {
				t.Fatalf("named %q, read %q", rel, w.rel)
			}
			if r, err := filepath.Rel(root, w.abs); err != nil || r == ".." || strings.HasPrefix(r, "../") {
				t.Fatalf("named %q, read %s outside the root", rel, w.abs)
			}
		}
	})
}
