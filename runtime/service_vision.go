package runtime

import (
	"context"
	"database/sql"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// addSelection queues the text seen in an image selection (the selection
// form of SourceInput). What can be told at once is answered at once and
// creates no job: a bad form (INVALID_ARGUMENT), a collection named
// outside the grant (PERMISSION_DENIED), a selection the caller
// cannot see or that is not where the form says (NOT_FOUND), an image
// that changed since it was listed (CONFLICT). The job checks again when
// it runs, against the index of that moment.
func (s *Local) addSelection(ctx context.Context, p workspace.Principal, in sources.SourceInput) (interfaces.JobResult, error) {
	if err := sources.ValidateSelection(in); err != nil {
		return interfaces.JobResult{}, err
	}
	if in.CollectionID != "" {
		// Naming a collection outside the grant is PERMISSION_DENIED, as
		// for the path form.
		if _, err := p.ResolveCollection(in.CollectionID); err != nil {
			return interfaces.JobResult{}, err
		}
	}
	own := s.owner
	sel, err := sources.GetSelection(ctx, own.db.R, in.SelectionID)
	if err == nil && !p.CanSee(sel.CollectionID) {
		err = workspace.Errorf(workspace.CodeNotFound, "no selection with that id (inspect source_selections lists a source's selections)")
	}
	if err != nil {
		return interfaces.JobResult{}, err
	}
	if err := sources.CheckSelection(ctx, own.db.R, sel, in); err != nil {
		return interfaces.JobResult{}, err
	}
	j, err := own.queue.EnqueueSelection(ctx, sel.SourceID, sel.CollectionID, p.ID, sel.ID,
		func(ctx context.Context, tx *sql.Tx, jobID string) error {
			return sources.RecordSelectionRequest(ctx, tx, jobID, p.ID, sel, in)
		})
	if err != nil {
		return interfaces.JobResult{}, err
	}
	own.startJobs()
	return interfaces.JobResult{Job: j}, nil
}

// runSelection applies the submission job j carries; done is false when
// j carries none (an add or a sync of a path).
func (r syncRunner) runSelection(ctx context.Context, j jobs.Job, report func(jobs.Progress)) (done bool, err error) {
	out, ok, err := r.ix().ApplySelectionText(ctx, j.ID)
	if !ok && err == nil {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	report(jobs.Progress{FilesSeen: 1, Indexed: 1, Bytes: out.Bytes})
	if r.applied != nil {
		r.applied()
	}
	return true, nil
}
