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

// TestRunsScope: a run is seen only by callers whose collections hold every
// collection it searched — its own principal, or a manager — and lists page
// by run number, so runs recorded meanwhile shift nothing.
func TestRunsScope(t *testing.T) {
	ctx := context.Background()
	db := openRunsDB(t)
	r := NewRecorder(db, true, nil)
	defer r.Close()
	type rec struct {
		name, principal string
		colls           []string
	}
	recs := []rec{
		{"owner-all", "owner", nil},
		{"owner-a", "owner", []string{"a"}},
		{"owner-b", "owner", []string{"b"}},
		{"owner-ab", "owner", []string{"a", "b"}},
		{"tok-a", "tok", []string{"a"}},
		{"tok-b", "tok", []string{"b"}},
	}
	ids := map[string]string{}
	for _, x := range recs {
		id := NewRunID()
		ids[x.name] = id
		r.Record(Run{ID: id, CreatedAt: time.Now(), Principal: x.principal, RequestHash: "h", Collections: x.colls})
	}
	cases := []struct {
		who  workspace.Principal
		sees []string
	}{
		{workspace.Principal{ID: "root", Grant: workspace.GrantManage}, []string{"owner-all", "owner-a", "owner-b", "owner-ab", "tok-a", "tok-b"}},
		{workspace.Principal{ID: "m", Grant: workspace.GrantManage, Collections: []string{"a"}}, []string{"owner-a", "tok-a"}},
		{workspace.Principal{ID: "m", Grant: workspace.GrantManage, Collections: []string{"a", "b"}}, []string{"owner-a", "owner-b", "owner-ab", "tok-a", "tok-b"}},
		{workspace.Principal{ID: "owner", Grant: workspace.GrantRead, Collections: []string{"b"}}, []string{"owner-b"}},
		{workspace.Principal{ID: "owner", Grant: workspace.GrantManage}, []string{"owner-all", "owner-a", "owner-b", "owner-ab", "tok-a", "tok-b"}},
		{workspace.Principal{ID: "tok", Grant: workspace.GrantWrite}, []string{"tok-a", "tok-b"}},
		{workspace.Principal{ID: "tok", Grant: workspace.GrantRead, Collections: []string{"a"}}, []string{"tok-a"}},
	}
	for _, tc := range cases {
		want := map[string]bool{}
		for _, n := range tc.sees {
			want[ids[n]] = true
		}
		list, next, err := r.ListRuns(ctx, tc.who, 0, 100)
		if err != nil || next != 0 {
			t.Fatal(err, next)
		}
		got := map[string]bool{}
		for _, run := range list {
			got[run.ID] = true
		}
		for name, id := range ids {
			if got[id] != want[id] {
				t.Errorf("%+v lists %s: %v, want %v", tc.who, name, got[id], want[id])
			}
			_, err := r.GetRun(ctx, tc.who, id)
			if (err == nil) != want[id] || (err != nil && workspace.ErrorCode(err) != workspace.CodeNotFound) {
				t.Errorf("%+v gets %s: %v, want seen %v", tc.who, name, err, want[id])
			}
		}
	}

	// Pages by run number: runs recorded between pages do not shift them.
	root := workspace.Principal{ID: "root", Grant: workspace.GrantManage}
	var seen []string
	var before int64
	for page := 0; ; page++ {
		list, next, err := r.ListRuns(ctx, root, before, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range list {
			seen = append(seen, run.ID)
		}
		r.Record(Run{ID: NewRunID(), CreatedAt: time.Now(), Principal: "owner", RequestHash: "h"})
		if next == 0 {
			break
		}
		before = next
	}
	if len(seen) != len(recs) {
		t.Fatalf("paged %d runs, want the %d recorded before paging began", len(seen), len(recs))
	}
	for i := range recs {
		if seen[len(recs)-1-i] != ids[recs[i].name] {
			t.Fatalf("run %d of the pages is not %s: newest first broken", len(recs)-1-i, recs[i].name)
		}
	}
}

// TestRunsScopeEdges: a run that searched no collection, or whose
// collections cannot be read, is seen only by callers of every collection.
func TestRunsScopeEdges(t *testing.T) {
	ctx := context.Background()
	db := openRunsDB(t)
	r := NewRecorder(db, false, nil)
	defer r.Close()
	none := workspace.Principal{ID: "tok", Grant: workspace.GrantRead, Collections: []string{}}
	id := NewRunID()
	r.Record(Run{ID: id, CreatedAt: time.Now(), Principal: "tok", RequestHash: "h", Collections: RunCollections(none, QueryRequest{})})
	bad := NewRunID()
	r.Record(Run{ID: bad, CreatedAt: time.Now(), Principal: "tok", RequestHash: "h", Collections: []string{"a"}})
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`UPDATE runs SET collections = '[]' WHERE id = ?`, bad); err != nil {
		t.Fatal(err)
	}
	narrowed := workspace.Principal{ID: "tok", Grant: workspace.GrantRead, Collections: []string{"a"}}
	list, _, err := r.ListRuns(ctx, narrowed, 0, 10)
	if err != nil || len(list) != 0 {
		t.Fatalf("a caller of a lists %d runs (%v), want none", len(list), err)
	}
	for _, x := range []string{id, bad} {
		if _, err := r.GetRun(ctx, narrowed, x); workspace.ErrorCode(err) != workspace.CodeNotFound {
			t.Errorf("a caller of a gets run %s: %v", x, err)
		}
		if _, err := r.GetRun(ctx, workspace.Principal{ID: "tok", Grant: workspace.GrantRead}, x); err != nil {
			t.Errorf("a caller of every collection: %v", err)
		}
	}
}
