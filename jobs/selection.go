package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tychora/tychora/workspace"
)

// EnqueueSelection creates an add job for sourceID that carries a request
// of its own about one selection of the source (the text seen in an
// image): attach writes that request, keyed by the new job's id, in the
// same transaction as the job. Unlike Enqueue it never answers with the
// source's active job, whose handle would not carry the request; a job
// that names a selection may run beside a sync of its source.
func (q *Queue) EnqueueSelection(ctx context.Context, sourceID, collection, principal, selectionID string,
	attach func(ctx context.Context, tx *sql.Tx, jobID string) error) (Job, error) {
	if selectionID == "" {
		return Job{}, workspace.Errorf(workspace.CodeInvalidArgument, "a selection job needs a selection id")
	}
	if q.isClosed() {
		return Job{}, workspace.Errorf(workspace.CodeUnavailable, "the owner is shutting down")
	}
	tx, err := q.db.W.BeginTx(ctx, nil)
	if err != nil {
		return Job{}, fmt.Errorf("enqueue: %w", err)
	}
	defer tx.Rollback()
	id := uuid.NewString()
	j, err := scanJob(tx.QueryRowContext(ctx, `INSERT INTO jobs(id, kind, state, source_id, collection_id, principal, created_at, selection_id)
		VALUES(?, ?, 'queued', ?, ?, ?, ?, ?) RETURNING `+jobColumns,
		id, KindAdd, sourceID, collection, principal, stamp(time.Now()), selectionID))
	if err != nil {
		return Job{}, fmt.Errorf("enqueue: %w", err)
	}
	if err := attach(ctx, tx, id); err != nil {
		return Job{}, err
	}
	if err := tx.Commit(); err != nil {
		return Job{}, fmt.Errorf("enqueue: %w", err)
	}
	q.poke()
	return j, nil
}
