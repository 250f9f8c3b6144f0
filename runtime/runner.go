package runtime

import (
	"context"
	"log/slog"
	"time"

	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/sources"
)

// syncRunner runs source jobs: an add and a sync are both a sync of the
// source's current state into a new revision.
type syncRunner struct {
	ix      func() *sources.Indexer // the indexer of the settings in force
	applied func()                  // called after a sync that applied a revision
	// began and ended tell the watcher of each run (nil: nothing to tell);
	// began returns the changes the watcher saw since the last run.
	began func(sourceID string) (paths []string, all bool)
	ended func(ctx context.Context, sourceID string, ok bool, dirs []string)
	log   *slog.Logger
}

func (r syncRunner) Run(ctx context.Context, j jobs.Job, report func(jobs.Progress)) error {
	var seen []string
	all := false
	if r.began != nil {
		seen, all = r.began(j.SourceID)
	}
	opts := sources.SyncOptions{Progress: func(p sources.Progress) { report(jobs.Progress(p)) }}
	// A sync that watching asked for looks only at the paths that changed:
	// those the job names, and those the watcher saw since it was queued
	// (docs/ingest.md, "Path-limited syncs").
	if paths, limited := j.Paths(); limited && j.Kind == jobs.KindSync && !all {
		opts.Paths = append(append(make([]string, 0, len(paths)+len(seen)), paths...), seen...)
	}
	ix := r.ix()
	st, err := ix.Sync(ctx, j.SourceID, opts)
	if r.ended != nil {
		r.ended(ctx, j.SourceID, err == nil, st.Dirs)
	}
	if err != nil || !st.NewRevision {
		return err
	}
	if r.applied != nil {
		r.applied()
	}
	// The revision is applied and searchable; merging the index (when
	// enough of it changed) only makes searches faster, so a merge that
	// fails or is cut short by a shutdown does not fail the job: the next
	// revision tries again.
	start := time.Now()
	ran, err := ix.Optimize(ctx)
	switch {
	case err != nil && r.log != nil:
		r.log.Warn("index merge after the sync did not complete", "job_id", j.ID, "err", err)
	case ran && r.log != nil:
		r.log.Info("index merged after the sync", "job_id", j.ID, "ms", time.Since(start).Milliseconds())
	}
	return nil
}
