package runtime

import (
	"context"
	"log/slog"

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
	ended func(ctx context.Context, sourceID string, err error, dirs []string)
	log   *slog.Logger
	// merge, when set, merges the index once no job runs (merge.go).
	merge *merger
}

func (r syncRunner) Run(ctx context.Context, j jobs.Job, report func(jobs.Progress)) error {
	if done, err := r.runSelection(ctx, j, report); done {
		return err
	}
	if r.merge == nil {
		_, err := r.sync(ctx, j, report)
		return err
	}
	r.merge.begin()
	applied, err := r.sync(ctx, j, report)
	r.merge.end(applied)
	return err
}

// sync runs the job's sync and reports whether it applied a revision.
func (r syncRunner) sync(ctx context.Context, j jobs.Job, report func(jobs.Progress)) (bool, error) {
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
		r.ended(ctx, j.SourceID, err, st.Dirs)
	}
	if err != nil || !st.NewRevision {
		return false, err
	}
	if r.applied != nil {
		r.applied()
	}
	return true, nil
}
