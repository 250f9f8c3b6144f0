package query

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tychora/tychora/workspace"
)

func TestDiffRuns(t *testing.T) {
	h := func(id, hash string, score float64) RunHit { return RunHit{EvidenceID: id, Hash: hash, Score: score} }
	base := Run{Hits: []RunHit{h("a", "1", 3), h("b", "2", 2), h("c", "3", 1)}}
	cases := []struct {
		name    string
		other   []RunHit
		outcome int
		first   int
	}{
		{"identical", []RunHit{h("a", "1", 3), h("b", "2", 2), h("c", "3", 1)}, DiffSame, 0},
		{"reordered", []RunHit{h("a", "1", 3), h("c", "3", 2), h("b", "2", 1)}, DiffReordered, 2},
		{"rescored", []RunHit{h("a", "1", 3), h("b", "2", 2.5), h("c", "3", 1)}, DiffReordered, 2},
		{"rehashed", []RunHit{h("a", "1", 3), h("b", "2", 2), h("c", "9", 1)}, DiffReordered, 3},
		{"other set", []RunHit{h("a", "1", 3), h("b", "2", 2), h("d", "4", 1)}, DiffChanged, 3},
		{"shorter", []RunHit{h("a", "1", 3), h("b", "2", 2)}, DiffChanged, 3},
		{"empty", nil, DiffChanged, 1},
	}
	for _, tc := range cases {
		d := DiffRuns(base, Run{Hits: tc.other})
		if d.Outcome != tc.outcome || d.FirstDrift != tc.first {
			t.Errorf("%s: outcome %d first %d, want %d %d (%s)", tc.name, d.Outcome, d.FirstDrift, tc.outcome, tc.first, d.Reason)
		}
	}
}

// openRunsDB opens a fresh index for the recorder tests.
func openRunsDB(t *testing.T) *workspace.DB {
	t.Helper()
	db, err := workspace.OpenDB(context.Background(), filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestRecorder(t *testing.T) {
	ctx := context.Background()
	db := openRunsDB(t)
	for _, full := range []bool{false, true} {
		r := NewRecorder(db, full, nil)
		req := QueryRequest{Question: "hello world", Limit: 10}
		id := NewRunID()
		r.Record(Run{ID: id, CreatedAt: time.Now(), Principal: "alice", RequestHash: RequestHash(req), Request: &req,
			Hits: []RunHit{{EvidenceID: "e1", Hash: "h", Score: 1.5}}, TotalMatches: 7})
		alice := workspace.Principal{ID: "alice", Grant: workspace.GrantRead}
		bob := workspace.Principal{ID: "bob", Grant: workspace.GrantRead}
		admin := workspace.Principal{ID: "root", Grant: workspace.GrantManage}
		got, err := r.GetRun(ctx, alice, id) // visible at once: reads flush
		if err != nil {
			t.Fatal(err)
		}
		if got.Retained != full || (got.Request != nil) != full || got.TotalMatches != 7 || len(got.Hits) != 1 || got.Hits[0].Score != 1.5 {
			t.Fatalf("full=%v: %+v", full, got)
		}
		if _, err := r.GetRun(ctx, bob, id); workspace.ErrorCode(err) != workspace.CodeNotFound {
			t.Fatalf("bob sees alice's run: %v", err)
		}
		if _, err := r.GetRun(ctx, admin, id); err != nil {
			t.Fatalf("manage cannot see: %v", err)
		}
		list, _, err := r.ListRuns(ctx, bob, 0, 10)
		if err != nil || len(list) != 0 {
			t.Fatalf("bob's list: %v %v", list, err)
		}
		r.Close()
	}
}

// TestRecorderKeepsTheNewest: the table is cut back to the newest keep
// runs every trimEvery runs, and the newest stay readable.
func TestRecorderKeepsTheNewest(t *testing.T) {
	ctx := context.Background()
	db := openRunsDB(t)
	r := NewRecorder(db, false, nil)
	defer r.Close()
	r.flushMu.Lock()
	r.keep = 50
	r.flushMu.Unlock()
	alice := workspace.Principal{ID: "alice", Grant: workspace.GrantRead}
	var ids []string
	for i := range 2500 {
		id := NewRunID()
		ids = append(ids, id)
		r.Record(Run{ID: id, CreatedAt: time.Now(), Principal: "alice", RequestHash: "h"})
		if i%100 == 99 {
			if err := r.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var n int
	if err := db.R.QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// Trims fall where the flushes (the test's and the recorder's own
	// ticker) put them: at most trimEvery runs are written past keep.
	if n < 50 || n > 50+trimEvery {
		t.Fatalf("%d runs kept, want between 50 and %d", n, 50+trimEvery)
	}
	// Exactly: once trimEvery runs are written, the next flush cuts back
	// to keep; the flushes after it do not, until trimEvery more.
	count := func() int {
		t.Helper()
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.R.QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	record := func(k int) {
		for range k {
			id := NewRunID()
			ids = append(ids, id)
			r.Record(Run{ID: id, CreatedAt: time.Now(), Principal: "alice", RequestHash: "h"})
		}
	}
	r.flushMu.Lock()
	r.sinceTrim = trimEvery
	r.flushMu.Unlock()
	record(1)
	if n := count(); n != 50 {
		t.Fatalf("%d runs after a trim, want 50", n)
	}
	record(10)
	if n := count(); n != 60 {
		t.Fatalf("%d runs ten runs after a trim, want 60", n)
	}
	if _, err := r.GetRun(ctx, alice, ids[len(ids)-1]); err != nil {
		t.Fatalf("the newest run: %v", err)
	}
	if _, err := r.GetRun(ctx, alice, ids[0]); workspace.ErrorCode(err) != workspace.CodeNotFound {
		t.Fatalf("the oldest run: %v, want NOT_FOUND", err)
	}
}
