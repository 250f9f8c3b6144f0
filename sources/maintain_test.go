package sources

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// TestOptimize: the merge runs once enough of the index changed, leaves
// the index whole (integrity check, same matches), and resets the count;
// in one statement, or in steps of one page with a yield between them
// when the sync yields.
func TestOptimize(t *testing.T) {
	t.Run("whole", func(t *testing.T) { testOptimize(t, false) })
	t.Run("steps", func(t *testing.T) {
		defer func(n int) { mergePages = n }(mergePages)
		mergePages = 1
		testOptimize(t, true)
	})
}

func testOptimize(t *testing.T, steps bool) {
	var yields atomic.Int64 // the sync's workers yield at once
	e := newEnv(t, func(o *Options) {
		o.OptimizeMinChurn = 20
		if steps {
			o.Yield = func(ctx context.Context) error {
				yields.Add(1)
				return ctx.Err()
			}
		}
	})
	ctx := context.Background()
	for i := range 30 {
		// Words of their own: the index spans several pages, so that a
		// merge in steps of one page takes more than one.
		var own strings.Builder
		for j := range 60 {
			fmt.Fprintf(&own, " buoy%dx%d", i, j)
		}
		e.write(fmt.Sprintf("notes/n%02d.md", i), fmt.Sprintf("# Note %d\n\nThe harbour pilot %d reads the tide table.%s\n", i, i, own.String()))
	}
	src := e.add(SourceInput{Path: "notes"})
	e.sync(src.ID)
	// A second revision in its own segment.
	e.write("notes/n00.md", "# Note 0\n\nThe harbour pilot reads the moon.\n")
	e.sync(src.ID)

	churn := func() int {
		return e.count(`SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'fts_churn'), 0)`)
	}
	if c := churn(); c < 30 {
		t.Fatalf("churn %d after 30 new files and one edit, want >= 30", c)
	}
	before := map[string]int{}
	for _, q := range []string{"harbour", "tide", "moon", "pilot AND tide"} {
		before[q] = e.match(q)
	}
	segments := func() int { return e.count(`SELECT count(DISTINCT segid) FROM evidence_fts_idx`) }
	if n := segments(); n < 2 {
		t.Fatalf("%d segments before the merge, want two or more", n)
	}
	synced := yields.Load()
	ran, err := e.ix.Optimize(ctx)
	if err != nil || !ran {
		t.Fatalf("Optimize = %v, %v; want a merge", ran, err)
	}
	if n := yields.Load() - synced; steps && n < 2 {
		t.Errorf("the merge in steps of a page yielded %d times", n)
	}
	if n := segments(); n != 1 {
		t.Errorf("%d segments after the merge, want 1", n)
	}
	e.checkFTS()
	for q, n := range before {
		if got := e.match(q); got != n {
			t.Errorf("%q matches %d after the merge, %d before", q, got, n)
		}
	}
	if c := churn(); c != 0 {
		t.Errorf("churn %d after the merge", c)
	}
	if ran, err := e.ix.Optimize(ctx); err != nil || ran {
		t.Errorf("second Optimize = %v, %v; want nothing to do", ran, err)
	}

	// One edited file is a small change: counted, not merged.
	e.write("notes/n01.md", "# Note 1\n\nThe harbour pilot reads the stars.\n")
	e.sync(src.ID)
	if c := churn(); c == 0 || c >= 20 {
		t.Fatalf("churn %d after one edit", c)
	}
	if ran, err := e.ix.Optimize(ctx); err != nil || ran {
		t.Errorf("Optimize after one edit = %v, %v; want no merge", ran, err)
	}

	// Removing the source counts its leaves.
	if err := RemoveSource(ctx, e.db, src.ID); err != nil {
		t.Fatal(err)
	}
	if c := churn(); c < 30 {
		t.Errorf("churn %d after removing the source", c)
	}
	if ran, err := e.ix.Optimize(ctx); err != nil || !ran {
		t.Errorf("Optimize after the removal = %v, %v; want a merge", ran, err)
	}
	e.checkFTS()
	if n := e.match("harbour"); n != 0 {
		t.Errorf("%d matches after the removal", n)
	}
}

// TestOptimizeCancelled: Optimize under a context already cancelled
// merges nothing and keeps the count. (A merge cut short midway rolls
// back with its transaction; no test reaches that point.)
func TestOptimizeCancelled(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.OptimizeMinChurn = 1 })
	e.write("a.md", "# A\n\n"+strings.Repeat("word ", 50)+"\n")
	src := e.add(SourceInput{Path: "a.md"})
	e.sync(src.ID)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ran, err := e.ix.Optimize(ctx); err == nil || ran {
		t.Fatalf("Optimize with a cancelled context = %v, %v", ran, err)
	}
	e.checkFTS()
	if n := e.count(`SELECT count(*) FROM meta WHERE key = 'fts_churn'`); n != 1 {
		t.Errorf("the churn count is gone after a cancelled merge")
	}
}

// TestSweepAssets: temporary files and payloads no revision recorded go;
// recorded payloads stay readable.
func TestSweepAssets(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.write("img/pixel.png", string(tinyPNG))
	src := e.add(SourceInput{Path: "img"})
	e.sync(src.ID)
	var kept string
	if err := e.db.R.QueryRow(`SELECT id FROM assets`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	// What a killed sync leaves: a payload stored before its apply, and a
	// temporary file of a write cut short.
	orphan, err := e.assets.Put([]byte("payload of a sync that never committed"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(e.assets.Dir, orphan[:2], ".tmp-123456")
	if err := os.WriteFile(tmp, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(e.assets.Dir, orphan[:2], "notes.txt") // not ours: left alone
	if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := SweepAssets(ctx, e.db, e.assets)
	if err != nil || n != 2 {
		t.Fatalf("SweepAssets = %d, %v; want 2 files removed", n, err)
	}
	for _, p := range []string{tmp, e.assets.Path(orphan)} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
	if _, err := os.Stat(stray); err != nil {
		t.Errorf("a file that is no asset was removed: %v", err)
	}
	if b, err := e.assets.Get(kept); err != nil || len(b) != len(tinyPNG) {
		t.Errorf("the recorded asset: %d bytes, %v", len(b), err)
	}
	// An empty or missing store is fine.
	if n, err := SweepAssets(ctx, e.db, NewAssets(filepath.Join(t.TempDir(), "none"))); err != nil || n != 0 {
		t.Errorf("missing store: %d, %v", n, err)
	}
}

// TestContentlessMigration: a workspace indexed under the external-content
// index of migrations 0002–0005 opens with its index rebuilt, contentless,
// finding what it found before, and deletes keep it exact.
func TestContentlessMigration(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := range 12 {
		e.write(fmt.Sprintf("notes/n%02d.md", i), fmt.Sprintf("# Note %d\n\nThe lighthouse keeper %d trims the wick.\n", i, i))
	}
	src := e.add(SourceInput{Path: "notes"})
	e.sync(src.ID)
	// Put the index back as 0002 and 0004 made it, and forget 0006.
	for _, q := range append(append(append([]string(nil), undoFileTerms...), undoVisionMigration...),
		`DROP TRIGGER evidence_fts_delete`, `DROP TRIGGER evidence_fts_update`,
		`DROP TABLE evidence_vocab`, `DROP TABLE evidence_fts`,
		`CREATE VIRTUAL TABLE evidence_fts USING fts5(title, heading_path, path, text, code_terms,
			content = 'evidence_leaves', content_rowid = 'seq', tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'")`,
		`INSERT INTO evidence_fts(evidence_fts) VALUES ('rebuild')`,
		`CREATE VIRTUAL TABLE evidence_vocab USING fts5vocab(evidence_fts, row)`,
		`CREATE TRIGGER evidence_fts_delete AFTER DELETE ON evidence WHEN old.leaf = 1 BEGIN
			INSERT INTO evidence_fts(evidence_fts, rowid, title, heading_path, path, text, code_terms)
			VALUES ('delete', old.seq, old.title, old.heading_path, old.path, old.text, old.code_terms); END`,
		`CREATE TRIGGER evidence_fts_update AFTER UPDATE OF title ON evidence BEGIN SELECT 1; END`,
		`ALTER TABLE files DROP COLUMN terms`, `DROP TRIGGER IF EXISTS file_fts_delete`, `DROP TABLE IF EXISTS file_fts`, // 12_file_index
		`ALTER TABLE runs DROP COLUMN collections`, // undo 7_runs_scope too
		`ALTER TABLE files DROP COLUMN role`,       // and 9_roles
		`ALTER TABLE jobs DROP COLUMN deleted`,     // and the later ones
		`ALTER TABLE jobs DROP COLUMN paths`,
		`ALTER TABLE sources DROP COLUMN watch`,
		`ALTER TABLE evidence DROP COLUMN role`,
		`DELETE FROM schema_migrations WHERE version >= 6`,
	) {
		if _, err := e.db.W.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if n := e.match("lighthouse"); n != 12 {
		t.Fatalf("old index: %d matches", n)
	}
	path := filepath.Join(e.ws, "index.db")
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := workspace.OpenDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	t.Cleanup(func() { db.Close() })
	var opts string
	if err := db.R.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'evidence_fts'`).Scan(&opts); err != nil || !strings.Contains(opts, "contentless_delete") {
		t.Fatalf("evidence_fts after the upgrade: %q, %v", opts, err)
	}
	e.ix = NewIndexer(db, e.policy, e.assets, Options{Workers: 2, TempDir: t.TempDir()})
	if n := e.match("lighthouse"); n != 12 {
		t.Fatalf("upgraded index: %d matches, want 12", n)
	}
	e.checkFTS()
	// A deleted and an edited file leave the index exactly.
	if err := os.Remove(filepath.Join(e.root, "notes", "n00.md")); err != nil {
		t.Fatal(err)
	}
	e.write("notes/n01.md", "# Note 1\n\nThe ferryman waits.\n")
	e.sync(src.ID)
	if n, f := e.match("lighthouse"), e.match("ferryman"); n != 10 || f != 1 {
		t.Fatalf("after a delete and an edit: %d lighthouse, %d ferryman; want 10 and 1", n, f)
	}
}
