package runtime

import (
	"context"

	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/sources"
)

// syncRunner runs source jobs: an add and a sync are both a sync of the
// source's current state into a new revision.
type syncRunner struct {
	ix      *sources.Indexer
	applied func() // called after a sync that applied a revision
}

func (r syncRunner) Run(ctx context.Context, j jobs.Job, report func(jobs.Progress)) error {
	st, err := r.ix.Sync(ctx, j.SourceID, sources.SyncOptions{
		Progress: func(p sources.Progress) { report(jobs.Progress(p)) },
	})
	if err == nil && st.NewRevision && r.applied != nil {
		r.applied()
	}
	return err
}
