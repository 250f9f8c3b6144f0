package jobs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tychora/tychora/workspace"
)

// stepRunner is a Runner whose jobs take steps until told to finish, so
// that tests can observe running jobs. It does real, observable work: each
// step is counted per job.
type stepRunner struct {
	mu      sync.Mutex
	release map[string]chan error // source id → outcome
	runs    atomic.Int64
	started chan string
}

func newStepRunner() *stepRunner {
	return &stepRunner{release: map[string]chan error{}, started: make(chan string, 64)}
}

func (r *stepRunner) outcome(source string) chan error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch, ok := r.release[source]
	if !ok {
		ch = make(chan error, 1)
		r.release[source] = ch
	}
	return ch
}

func (r *stepRunner) Run(ctx context.Context, j Job, report func(Progress)) error {
	r.runs.Add(1)
	r.started <- j.SourceID
	out := r.outcome(j.SourceID)
	var p Progress
	for {
		p.FilesSeen++
		p.Indexed++
		p.Bytes += 10
		report(p)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-out:
			return err
		case <-time.After(5 * time.Millisecond):
		}
	}
}

var all = workspace.Principal{ID: "t", Grant: workspace.GrantManage}

func openQueue(t *testing.T, path string, r Runner) (*workspace.DB, *Queue) {
	t.Helper()
	db, err := workspace.OpenDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Open(context.Background(), db, r, Options{Workers: 2, ProgressEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	return db, q
}

func waitState(t *testing.T, q *Queue, id, state string) Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := q.Get(context.Background(), all, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == state {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s, want %s", id, j.State, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	r := newStepRunner()
	db, q := openQueue(t, filepath.Join(t.TempDir(), "index.db"), r)
	defer db.Close()
	defer q.Close(ctx)

	j, existing, err := q.Enqueue(ctx, KindAdd, "src1", "default", "t")
	if err != nil || existing || j.State != StateQueued || j.Attempt != 1 || j.StartedAt != nil || j.FinishedAt != nil || j.Error != nil {
		t.Fatalf("enqueue: %+v %v %v", j, existing, err)
	}
	<-r.started
	waitState(t, q, j.ID, StateRunning)

	// A second request for the same source returns the active job.
	again, existing, err := q.Enqueue(ctx, KindSync, "src1", "default", "t")
	if err != nil || !existing || again.ID != j.ID {
		t.Fatalf("second enqueue: %+v %v %v", again, existing, err)
	}
	// Retrying a running job is a conflict.
	if _, err := q.Retry(ctx, all, j.ID); workspace.ErrorCode(err) != workspace.CodeConflict {
		t.Fatalf("retry running: %v", err)
	}
	r.outcome("src1") <- nil
	done := waitState(t, q, j.ID, StateSucceeded)
	if done.Progress.FilesSeen == 0 || done.Progress.Bytes == 0 || done.StartedAt == nil || done.FinishedAt == nil {
		t.Fatalf("finished job %+v", done)
	}
	if _, err := q.Cancel(ctx, all, j.ID); workspace.ErrorCode(err) != workspace.CodeConflict {
		t.Fatalf("cancel finished: %v", err)
	}
	if _, err := q.Retry(ctx, all, j.ID); workspace.ErrorCode(err) != workspace.CodeConflict {
		t.Fatalf("retry succeeded: %v", err)
	}

	// Failure, then retry under the same id.
	f, _, _ := q.Enqueue(ctx, KindSync, "src2", "default", "t")
	<-r.started
	r.outcome("src2") <- workspace.Errorf(workspace.CodeOutOfRoots, "the source left the ingest roots")
	failed := waitState(t, q, f.ID, StateFailed)
	if failed.Error == nil || failed.Error.Code != workspace.CodeOutOfRoots {
		t.Fatalf("failed job %+v", failed)
	}
	// An internal error is sanitized.
	g, _, _ := q.Enqueue(ctx, KindSync, "src3", "default", "t")
	<-r.started
	r.outcome("src3") <- errors.New("disk I/O error at /secret/path")
	gf := waitState(t, q, g.ID, StateFailed)
	if gf.Error == nil || gf.Error.Code != workspace.CodeInternal || gf.Error.Message != "internal error" {
		t.Fatalf("internal failure leaked: %+v", gf.Error)
	}
	retried, err := q.Retry(ctx, all, f.ID)
	if err != nil || retried.ID != f.ID || retried.Attempt != 2 || retried.Error != nil {
		t.Fatalf("retry: %+v %v", retried, err)
	}
	<-r.started
	r.outcome("src2") <- nil
	if j := waitState(t, q, f.ID, StateSucceeded); j.Attempt != 2 {
		t.Fatalf("attempt %d", j.Attempt)
	}
}

func TestCancel(t *testing.T) {
	ctx := context.Background()
	r := newStepRunner()
	db, q := openQueue(t, filepath.Join(t.TempDir(), "index.db"), r)
	defer db.Close()
	defer q.Close(ctx)

	j, _, _ := q.Enqueue(ctx, KindAdd, "s", "default", "t")
	<-r.started
	waitState(t, q, j.ID, StateRunning)
	c, err := q.Cancel(ctx, all, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != StateCancelled || c.FinishedAt == nil {
		t.Fatalf("cancel answered %+v", c)
	}
	// A cancelled job can be retried.
	rj, err := q.Retry(ctx, all, j.ID)
	if err != nil || rj.Attempt != 2 {
		t.Fatalf("retry cancelled: %+v %v", rj, err)
	}
	<-r.started
	r.outcome("s") <- nil
	waitState(t, q, j.ID, StateSucceeded)
}

func TestCancelQueued(t *testing.T) {
	ctx := context.Background()
	db, err := workspace.OpenDB(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, _ := Open(ctx, db, newStepRunner(), Options{}) // never started
	j, _, _ := q.Enqueue(ctx, KindAdd, "s", "default", "t")
	c, err := q.Cancel(ctx, all, j.ID)
	if err != nil || c.State != StateCancelled {
		t.Fatalf("%+v %v", c, err)
	}
	q.Close(ctx)
}

// TestResumeAfterCrash: a job left running by a dead process is queued
// again when the next queue opens, and runs.
func TestResumeAfterCrash(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := workspace.OpenDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := Open(ctx, db, newStepRunner(), Options{})
	j, _, _ := q.Enqueue(ctx, KindAdd, "s", "default", "t")
	// The crash: the row says running, and no process runs it.
	if _, err := db.W.Exec(`UPDATE jobs SET state = 'running', started_at = 'x' WHERE id = ?`, j.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r := newStepRunner()
	db2, q2 := openQueue(t, path, r)
	defer db2.Close()
	defer q2.Close(ctx)
	<-r.started
	r.outcome("s") <- nil
	done := waitState(t, q2, j.ID, StateSucceeded)
	if done.Attempt != 1 {
		t.Errorf("resume changed attempt to %d", done.Attempt)
	}
}

// TestCloseCheckpoints: shutting down puts a running job back in the queue.
func TestCloseCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	r := newStepRunner()
	db, q := openQueue(t, path, r)
	j, _, _ := q.Enqueue(ctx, KindSync, "s", "default", "t")
	<-r.started
	waitState(t, q, j.ID, StateRunning)
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := q.Get(ctx, all, j.ID)
	if got.State != StateQueued {
		t.Fatalf("after close: %s", got.State)
	}
	if _, _, err := q.Enqueue(ctx, KindSync, "t", "default", "t"); workspace.ErrorCode(err) != workspace.CodeUnavailable {
		t.Fatalf("enqueue after close: %v", err)
	}
	db.Close()
}

func TestCollectionIsolation(t *testing.T) {
	ctx := context.Background()
	r := newStepRunner()
	db, q := openQueue(t, filepath.Join(t.TempDir(), "index.db"), r)
	defer db.Close()
	defer q.Close(ctx)
	ja, _, _ := q.Enqueue(ctx, KindAdd, "sa", "a", "t")
	jb, _, _ := q.Enqueue(ctx, KindAdd, "sb", "b", "t")
	<-r.started
	<-r.started
	onlyA := workspace.Principal{ID: "w", Grant: workspace.GrantWrite, Collections: []string{"a"}}
	if _, err := q.Get(ctx, onlyA, jb.ID); workspace.ErrorCode(err) != workspace.CodeNotFound {
		t.Fatalf("get b: %v", err)
	}
	if _, err := q.Cancel(ctx, onlyA, jb.ID); workspace.ErrorCode(err) != workspace.CodeNotFound {
		t.Fatalf("cancel b: %v", err)
	}
	if _, err := q.Retry(ctx, onlyA, jb.ID); workspace.ErrorCode(err) != workspace.CodeNotFound {
		t.Fatalf("retry b: %v", err)
	}
	list, _, err := q.List(ctx, onlyA, ListOptions{Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID != ja.ID {
		t.Fatalf("list for a: %+v %v", list, err)
	}
	r.outcome("sa") <- nil
	r.outcome("sb") <- nil
	waitState(t, q, jb.ID, StateSucceeded)
}

func TestListPaging(t *testing.T) {
	ctx := context.Background()
	db, err := workspace.OpenDB(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, _ := Open(ctx, db, newStepRunner(), Options{})
	defer q.Close(ctx)
	var ids []string
	for i := 0; i < 7; i++ {
		j, _, _ := q.Enqueue(ctx, KindAdd, string(rune('a'+i)), "default", "t")
		ids = append(ids, j.ID)
	}
	var got []string
	var after int64
	for pages := 0; pages < 10; pages++ {
		page, next, err := q.List(ctx, all, ListOptions{Limit: 3, After: after, State: StateQueued})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page {
			got = append(got, j.ID)
		}
		if next == 0 {
			break
		}
		after = next
	}
	if len(got) != 7 {
		t.Fatalf("paged %d jobs, want 7", len(got))
	}
	for i := range got {
		if got[i] != ids[6-i] {
			t.Fatalf("order: %v vs %v", got, ids)
		}
	}
}

// TestCountsScope: the queued and running counts a caller gets are those of
// its collections.
func TestCountsScope(t *testing.T) {
	ctx := context.Background()
	r := newStepRunner()
	db, q := openQueue(t, filepath.Join(t.TempDir(), "index.db"), r)
	defer db.Close()
	defer q.Close(ctx)
	var ids []string
	for i, c := range []string{"a", "b", "a"} {
		j, _, err := q.Enqueue(ctx, "add", "src"+string(rune('1'+i)), c, "t")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	<-r.started
	<-r.started // both workers busy: the third job stays queued
	want := map[string][2]int{}
	for _, id := range ids {
		j, err := q.Get(ctx, all, id)
		if err != nil {
			t.Fatal(err)
		}
		w := want[j.CollectionID]
		switch j.State {
		case "queued":
			w[0]++
		case "running":
			w[1]++
		}
		want[j.CollectionID] = w
	}
	check := func(p workspace.Principal, q0, r0 int) {
		t.Helper()
		queued, running, err := q.Counts(ctx, p)
		if err != nil || queued != q0 || running != r0 {
			t.Errorf("%v: %d queued, %d running (%v), want %d, %d", p.Collections, queued, running, err, q0, r0)
		}
	}
	check(all, want["a"][0]+want["b"][0], want["a"][1]+want["b"][1])
	check(workspace.Principal{ID: "x", Grant: workspace.GrantRead, Collections: []string{"a"}}, want["a"][0], want["a"][1])
	check(workspace.Principal{ID: "x", Grant: workspace.GrantRead, Collections: []string{"b"}}, want["b"][0], want["b"][1])
	check(workspace.Principal{ID: "x", Grant: workspace.GrantRead, Collections: []string{"c"}}, 0, 0)
	if want["a"][0]+want["b"][0] != 1 {
		t.Fatalf("states %v: want one job queued", want)
	}
	for _, s := range []string{"src1", "src2", "src3"} {
		r.outcome(s) <- nil
	}
}

// txRunner holds the writer connection in a transaction, as a sync's apply
// does, until its job is cancelled.
type txRunner struct {
	db      *workspace.DB
	started chan struct{}
}

func (r *txRunner) Run(ctx context.Context, j Job, report func(Progress)) error {
	tx, err := r.db.W.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE jobs SET attempt = attempt WHERE id = ?`, j.ID); err != nil {
		return err
	}
	close(r.started)
	<-ctx.Done()
	return ctx.Err()
}

// TestCancelDuringWrite: cancelling a job whose work holds the writer (a
// sync's apply transaction) is prompt and ends the job cancelled; it does
// not wait for the transaction to commit.
func TestCancelDuringWrite(t *testing.T) {
	ctx := context.Background()
	r := &txRunner{started: make(chan struct{})}
	db, q := openQueue(t, filepath.Join(t.TempDir(), "index.db"), r)
	defer db.Close()
	defer q.Close(ctx)
	r.db = db
	j, _, err := q.Enqueue(ctx, "sync", "src1", "a", "t")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the job never started")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got, err := q.Cancel(cctx, all, j.ID)
	if err != nil || got.State != StateCancelled {
		t.Fatalf("cancel during the write: %+v %v", got, err)
	}
}

// instantRunner finishes every job at once.
type instantRunner struct{}

func (instantRunner) Run(context.Context, Job, func(Progress)) error { return nil }

// Enqueue yields to the source's active job, which may end before it is
// read; the caller then gets a new job, never an error.
func TestEnqueueWhileTheActiveJobEnds(t *testing.T) {
	_, q := openQueue(t, filepath.Join(t.TempDir(), "index.db"), instantRunner{})
	defer q.Close(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				if _, _, err := q.Enqueue(context.Background(), KindSync, "src", "default", "t"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("enqueue: %v", err)
	}
}

// TestEnqueuePaths: a path-limited sync takes in the paths of the
// requests that find it queued, becomes a sync of everything when one of
// them asks for it, and keeps its paths across a restart; a retry, an add
// and too many paths sync everything.
func TestEnqueuePaths(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := workspace.OpenDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Open(ctx, db, newStepRunner(), Options{}) // not started: jobs stay queued
	if err != nil {
		t.Fatal(err)
	}
	enqueue := func(kind, src string, paths []string) Job {
		t.Helper()
		j, _, err := q.EnqueuePaths(ctx, kind, src, "default", "t", paths)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	want := func(j Job, limited bool, paths ...string) {
		t.Helper()
		got, lim := j.Paths()
		if lim != limited || (limited && !slices.Equal(got, paths)) {
			t.Fatalf("job %s paths %q (limited %v), want %q (limited %v)", j.ID, got, lim, paths, limited)
		}
	}
	j := enqueue(KindSync, "s1", []string{"b.md"})
	want(j, true, "b.md")
	if k := enqueue(KindSync, "s1", []string{"a.md", "b.md"}); k.ID != j.ID {
		t.Fatalf("a second request made job %s beside %s", k.ID, j.ID)
	} else {
		want(k, true, "a.md", "b.md")
	}
	want(enqueue(KindSync, "s1", []string{"a.md"}), true, "a.md", "b.md")
	g, err := q.Get(ctx, all, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	want(g, true, "a.md", "b.md")
	if k, _, err := q.Enqueue(ctx, KindSync, "s1", "default", "t"); err != nil {
		t.Fatal(err)
	} else {
		want(k, false)
	}
	want(enqueue(KindSync, "s1", []string{"c.md"}), false)

	want(enqueue(KindAdd, "s2", []string{"a.md"}), false)
	many := make([]string, MaxPaths+1)
	for i := range many {
		many[i] = fmt.Sprintf("f%04d.md", i)
	}
	want(enqueue(KindSync, "s3", many), false)
	j4 := enqueue(KindSync, "s4", []string{"x.md"})
	if _, err := q.Cancel(ctx, all, j4.ID); err != nil {
		t.Fatal(err)
	}
	r, err := q.Retry(ctx, all, j4.ID)
	if err != nil {
		t.Fatal(err)
	}
	want(r, false)
	j5 := enqueue(KindSync, "s5", []string{"y.md"})

	// A restart keeps the queued job's paths.
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := workspace.OpenDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	q2, err := Open(ctx, db2, newStepRunner(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close(ctx)
	g, err = q2.Get(ctx, all, j5.ID)
	if err != nil {
		t.Fatal(err)
	}
	want(g, true, "y.md")
}
