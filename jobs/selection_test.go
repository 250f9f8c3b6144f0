package jobs

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
)

// TestEnqueueSelection: a job that names a selection is queued beside the
// source's active sync (not answered with it), writes its request in the
// same transaction, and leaves the one-active-job rule of syncs as it
// was; a failing attach creates no job.
func TestEnqueueSelection(t *testing.T) {
	ctx := context.Background()
	r := newStepRunner()
	db, q := openQueue(t, filepath.Join(t.TempDir(), "index.db"), r)
	defer q.Close(ctx)
	if _, err := db.W.ExecContext(ctx, `CREATE TABLE attached(job_id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	syncJob, _, err := q.Enqueue(ctx, KindSync, "src", "default", "t")
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, q, syncJob.ID, StateRunning)
	attach := func(ctx context.Context, tx *sql.Tx, id string) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO attached(job_id) VALUES (?)`, id)
		return err
	}
	sel, err := q.EnqueueSelection(ctx, "src", "default", "t", "sel_1", attach)
	if err != nil {
		t.Fatal(err)
	}
	if sel.ID == syncJob.ID || sel.Kind != KindAdd || sel.SourceID != "src" || sel.Principal() != "t" {
		t.Fatalf("selection job %+v beside sync %s", sel, syncJob.ID)
	}
	var n int
	if err := db.R.QueryRowContext(ctx, `SELECT count(*) FROM attached WHERE job_id = ?`, sel.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the request was not written with the job: %d %v", n, err)
	}
	// A second selection job of the same selection is a job of its own.
	again, err := q.EnqueueSelection(ctx, "src", "default", "t", "sel_1", attach)
	if err != nil || again.ID == sel.ID {
		t.Fatalf("a second submission: %+v %v", again, err)
	}
	// A sync asked for meanwhile still answers with the running sync.
	if j, existing, err := q.Enqueue(ctx, KindSync, "src", "default", "t"); err != nil || !existing || j.ID != syncJob.ID {
		t.Fatalf("sync beside selection jobs: %+v %v %v, want the running sync", j, existing, err)
	}
	// An attach that fails leaves no job.
	boom := errors.New("boom")
	if _, err := q.EnqueueSelection(ctx, "src", "default", "t", "sel_2", func(context.Context, *sql.Tx, string) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failing attach: %v", err)
	}
	if err := db.R.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE selection_id = 'sel_2'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a failed attach left %d jobs (%v)", n, err)
	}
	r.outcome("src") <- nil
	r.outcome("src") <- nil
}
