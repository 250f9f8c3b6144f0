package query

import (
	"context"
	"testing"
)

// Without the file index, the whole-file probe orders files by the bm25
// of their units times their role prior: a file's test, which holds its
// words more often, no longer comes before it, unless the question asks
// for tests.
func TestProbeFilesRolePrior(t *testing.T) {
	env := newSearchEnv(t)
	tree := fileIndexTree()
	tree["spin/spin.go"] = "package spin\n\n// Spinlock spins until the lock is free.\nfunc Spinlock() {}\n"
	tree["spin/spin_test.go"] = "package spin\n\n// The lock spins: spin, spin, lock, lock.\nfunc TestSpinlock(t *testing.T) { Spinlock() }\n"
	env.folder("go", "default", tree)
	ctx := context.Background()

	probe := func(question string) [][2]string {
		t.Helper()
		tx, release, err := env.engine.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		pq := parseQuestion(question)
		prof, _ := profileByName(DefaultProfile)
		q, err := env.engine.prepareQuery(ctx, tx, prof, &pq, &scopeFilter{})
		if err != nil {
			t.Fatal(err)
		}
		q.asked = rolesAsked(&pq, nil)
		files, err := env.engine.probeFiles(ctx, tx, q, &scopeFilter{})
		if err != nil {
			t.Fatal(err)
		}
		// The order bm25 alone gives.
		var first string
		if err := tx.QueryRowContext(ctx, `SELECT path FROM (SELECT e.path, `+bm25Expr(prof)+` AS s
			FROM evidence_fts f JOIN evidence e ON e.seq = f.rowid WHERE evidence_fts MATCH 'spin OR lock' LIMIT -1)
			GROUP BY path ORDER BY sum(s) LIMIT 1`).Scan(&first); err != nil {
			t.Fatal(err)
		}
		if first != "spin/spin_test.go" {
			t.Fatalf("bm25 alone ranks %s first: the test needs the test file first", first)
		}
		return files
	}
	files := probe("spin lock")
	if len(files) < 2 || files[0][1] != "spin/spin.go" || files[1][1] != "spin/spin_test.go" {
		t.Errorf("probe of %q = %v, want spin/spin.go, then its test", "spin lock", files)
	}
	files = probe("tests that spin the lock")
	if len(files) < 2 || files[0][1] != "spin/spin_test.go" {
		t.Errorf("probe of a question asking for tests = %v, want the test first", files)
	}
}
