package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// mergeEnv is a real index with a folder source whose syncs leave changed
// leaves to merge (OptimizeMinChurn 1).
type mergeEnv struct {
	t    *testing.T
	db   *workspace.DB
	ix   *sources.Indexer
	root string
	src  string
}

func newMergeEnv(t *testing.T) *mergeEnv {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, root := filepath.Join(base, "ws"), filepath.Join(base, "root")
	for _, d := range []string{ws, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := workspace.OpenDB(context.Background(), filepath.Join(ws, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	policy, err := sources.NewPolicy([]string{root}, ws)
	if err != nil {
		t.Fatal(err)
	}
	ix := sources.NewIndexer(db, policy, sources.NewAssets(filepath.Join(ws, "assets")),
		sources.Options{Workers: 1, TempDir: t.TempDir(), OptimizeMinChurn: 1})
	e := &mergeEnv{t: t, db: db, ix: ix, root: root}
	e.write("a.md", "first")
	src, _, err := ix.Add(context.Background(), sources.SourceInput{Path: root})
	if err != nil {
		t.Fatal(err)
	}
	e.src = src.ID
	return e
}

func (e *mergeEnv) write(name, word string) {
	e.t.Helper()
	text := "# " + word + "\n\n" + strings.Repeat(word+" text ", 40) + "\n"
	if err := os.WriteFile(filepath.Join(e.root, name), []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// sync applies a revision that changes leaves (a new file each time).
func (e *mergeEnv) sync(name string) {
	e.t.Helper()
	e.write(name, strings.TrimSuffix(name, ".md"))
	if _, err := e.ix.Sync(context.Background(), e.src, sources.SyncOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// unmerged reports whether changed leaves wait for a merge.
func (e *mergeEnv) unmerged() bool {
	e.t.Helper()
	var n int
	if err := e.db.R.QueryRow(`SELECT count(*) FROM meta WHERE key = 'fts_churn'`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n > 0
}

// waitMerged waits until m has nothing pending and says whether the
// index was merged.
func (e *mergeEnv) waitMerged(m *merger) bool {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for m.pending() {
		if time.Now().After(deadline) {
			e.t.Fatal("the merge is still pending after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return !e.unmerged()
}

// TestMergerWaitsForQuiet: the merge runs once the last job has ended and
// the quiet time has passed; not while a job runs, not after a job that
// applied nothing; and close stops it from starting.
func TestMergerWaitsForQuiet(t *testing.T) {
	e := newMergeEnv(t)
	m := &merger{ix: func() *sources.Indexer { return e.ix }, quiet: 50 * time.Millisecond}

	// A job that applied a revision: merged after the quiet time.
	m.begin()
	e.sync("b.md")
	if !e.unmerged() {
		t.Fatal("a sync left nothing to merge (OptimizeMinChurn 1)")
	}
	m.end(true)
	if !m.pending() {
		t.Fatal("no merge pending after a job that applied a revision")
	}
	if !e.waitMerged(m) {
		t.Fatal("the index was not merged after the quiet time")
	}

	// Two jobs in a row: while the second runs nothing is merged, however
	// long it takes; its end arms the quiet time again.
	m.begin()
	e.sync("c.md")
	m.begin()
	m.end(true)
	if !m.pending() {
		t.Fatal("the first job's revision is not pending while the second runs")
	}
	m.merge() // what a quiet time that ran out would do: a job runs, so nothing
	if !e.unmerged() {
		t.Fatal("merged while a job ran")
	}
	m.end(false)
	if !e.waitMerged(m) {
		t.Fatal("not merged after the last job ended")
	}

	// A job that applied nothing arms no merge.
	m.begin()
	m.end(false)
	if m.pending() {
		t.Fatal("a merge is pending after a job that applied nothing")
	}

	// Closed: a revision applied before close is not merged by it.
	m.begin()
	e.sync("d.md")
	m.end(true)
	m.close()
	if m.pending() {
		t.Fatal("a merge is pending after close")
	}
	m.merge()
	if !e.unmerged() {
		t.Fatal("merged after close")
	}
}
