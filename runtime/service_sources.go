package runtime

import (
	"context"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// RemoveSource removes a source of the caller's collections (write grant):
// it is no longer watched, its active job is cancelled (and waited for),
// and its evidence, revisions, files, coverage and the assets no other
// source holds leave the index in one transaction. A source outside the
// caller's collections is NOT_FOUND, as one that does not exist.
func (s *Local) RemoveSource(ctx context.Context, id string) (interfaces.RemovedSource, error) {
	p, err := caller(ctx, workspace.GrantWrite)
	if err != nil {
		return interfaces.RemovedSource{}, err
	}
	src, err := s.visibleSource(ctx, p, id)
	if err != nil {
		return interfaces.RemovedSource{}, err
	}
	ctx = carryOut(ctx)
	own := s.owner
	if w := own.watch(); w != nil {
		w.Unwatch(src.ID)
	}
	out := interfaces.RemovedSource{ID: src.ID, Name: src.Name, Path: src.Path, CollectionID: src.CollectionID, Removed: true}
	// The active job ends first: a sync that applied its revision after
	// the removal would bring the source's rows back.
	owner := workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}
	list, _, err := own.queue.List(ctx, owner, jobs.ListOptions{Source: src.ID, Limit: 10})
	if err != nil {
		return interfaces.RemovedSource{}, err
	}
	for _, j := range list {
		if j.Final() {
			continue
		}
		if _, err := own.queue.Cancel(ctx, owner, j.ID); err != nil && workspace.ErrorCode(err) != workspace.CodeConflict {
			return interfaces.RemovedSource{}, err
		}
		jid := j.ID
		out.CancelledJob = &jid
	}
	if err := sources.RemoveSource(ctx, own.db, src.ID); err != nil {
		return interfaces.RemovedSource{}, err
	}
	own.searcher.IndexChanged() // cached rankings may hold its evidence
	own.log.Info("source removed", workspace.LogSourceID, src.ID, workspace.LogPath, src.Path)
	return out, nil
}
