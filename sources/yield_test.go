package sources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// writeYieldFiles writes n Go files of several units each, every one with a
// word of its own (uniqN) and one they share.
func writeYieldFiles(e *env, n int) {
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "package p\n\n// F%d holds uniq%d.\n", i, i)
		for j := range 4 {
			fmt.Fprintf(&b, "\n// F%dx%d is shared work.\nfunc F%dx%d() int {\n\treturn %d\n}\n", i, j, i, j, j)
		}
		e.write(fmt.Sprintf("proj/f%03d.go", i), b.String())
	}
}

// TestSyncYields: a sync with Options.Yield gives way before each
// file's extraction and each file's rows, and every few rows it indexes
// (inside the one statement that indexes them), and the index it commits
// is whole: every leaf in the units' index, in the segments a sync that
// does not yield leaves.
func TestSyncYields(t *testing.T) {
	var calls atomic.Int64
	e := newEnv(t, func(o *Options) {
		o.Yield = func(ctx context.Context) error {
			calls.Add(1)
			return ctx.Err()
		}
	})
	const files = 60
	writeYieldFiles(e, files)
	src := e.add(SourceInput{Path: "proj"})
	e.sync(src.ID)
	leaves := e.count(`SELECT count(*) FROM evidence WHERE leaf = 1`)
	if leaves <= 2*yieldLeaves {
		t.Fatalf("%d leaves: too few to yield while indexing them", leaves)
	}
	// Extraction and apply, each file; the leaves indexed.
	if n, want := calls.Load(), int64(2*files+leaves/yieldLeaves); n != want {
		t.Errorf("the sync yielded %d times, want %d", n, want)
	}
	for i := range files {
		word := fmt.Sprintf("uniq%d", i)
		if n := e.count(`SELECT count(*) FROM evidence_fts WHERE evidence_fts MATCH ?`, word); n != 1 {
			t.Errorf("%s: %d units found, want 1", word, n)
		}
	}
	// The same files synced without yielding: the indexes' segments are
	// the same.
	plain := newEnv(t)
	writeYieldFiles(plain, files)
	plain.sync(plain.add(SourceInput{Path: "proj"}).ID)
	for _, table := range []string{"evidence_fts_idx", "evidence_fts_data"} {
		q := `SELECT count(*) FROM ` + table
		if got, want := e.count(q), plain.count(q); got != want {
			t.Errorf("%s: %d rows, %d without yielding", table, got, want)
		}
	}
}

// TestSyncYieldEnds: a Yield that fails (its context ended) ends the
// sync with its error at any step (60 files: calls 1–60 come before
// the extractions, 61–120 before each file's rows, 121 within the
// statement that indexes the leaves), and the index keeps what it had.
func TestSyncYieldEnds(t *testing.T) {
	errStop := errors.New("stopped")
	for _, after := range []int64{0, 30, 61, 120} {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			var calls atomic.Int64
			e := newEnv(t, func(o *Options) {
				o.Yield = func(ctx context.Context) error {
					if calls.Add(1) > after {
						return errStop
					}
					return ctx.Err()
				}
			})
			writeYieldFiles(e, 60)
			src := e.add(SourceInput{Path: "proj"})
			if _, err := e.ix.Sync(context.Background(), src.ID, SyncOptions{}); !errors.Is(err, errStop) {
				t.Fatalf("Sync: %v, want the yield's error", err)
			}
			if n := e.count(`SELECT count(*) FROM evidence`); n != 0 {
				t.Errorf("%d evidence rows after a sync that ended", n)
			}
			if n := e.count(`SELECT count(*) FROM revisions`); n != 0 {
				t.Errorf("%d revisions after a sync that ended", n)
			}
			e.checkFTS()
		})
	}
}
