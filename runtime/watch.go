package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// WatchPrincipal is the principal recorded on the sync jobs that watching
// queues.
const WatchPrincipal = "watch"

// startWatching makes the owner's watcher and, beside the start, watches
// every source that has not opted out (docs/ingest.md, "Watching").
func (own *Owner) startWatching() {
	w := sources.NewWatcher(sources.WatchOptions{
		Debounce:        own.opts.WatchDebounce,
		MaxDelay:        own.opts.WatchMaxDelay,
		MaxWatches:      own.opts.MaxWatches,
		Rescan:          own.opts.WatchRescan,
		DefaultExcludes: own.cfg().DefaultExcludes,
		Changed:         own.watchChanged,
		Logger:          own.log,
	})
	own.watcherp.Store(w)
	own.watchSetup.Add(1)
	go func() {
		defer own.watchSetup.Done()
		start := time.Now()
		srcs, err := sources.ListSources(own.life, own.db, nil)
		if err != nil {
			own.log.Warn("sources not watched", workspace.LogErr, err)
			return
		}
		n := 0
		for _, s := range srcs {
			if !s.Watch {
				continue
			}
			src, dirs, err := own.idx().WatchDirs(own.life, s.ID)
			if err != nil {
				if own.life.Err() != nil {
					return
				}
				own.log.Warn("source not watched", workspace.LogSourceID, s.ID, workspace.LogErr, err)
				continue
			}
			if w.WatchNew(src, dirs) {
				// What changed while nothing watched is taken in now.
				w.Touch(src.ID)
				n++
			}
		}
		own.watchReady.Store(true)
		own.log.Info("watching sources", workspace.LogSources, n, workspace.LogMS, time.Since(start).Milliseconds())
	}()
}

// watchChanged queues a sync of a source that changed on disk (of the
// paths that changed, or of all of it when paths is nil), and says
// whether the job it got was already running, or why none was queued.
func (own *Owner) watchChanged(id string, paths []string) (bool, error) {
	src, err := sources.GetSource(own.life, own.db, id)
	if workspace.ErrorCode(err) == workspace.CodeNotFound {
		if w := own.watch(); w != nil {
			w.Unwatch(id)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	j, _, err := own.queue.EnqueuePaths(own.life, jobs.KindSync, src.ID, src.CollectionID, WatchPrincipal, paths)
	if err != nil {
		if own.life.Err() != nil {
			return false, nil // stopping: the start's catch-up takes the changes in
		}
		return false, err
	}
	own.startJobs()
	return j.State == jobs.StateRunning, nil
}

// syncBegan and syncEnded tell the watcher about a sync job's run: what
// changed while it ran gets another sync, its walk is what is watched
// next, and a source's first sync starts its watch. syncBegan returns
// the changes the watcher saw (all: one that names no path).
func (own *Owner) syncBegan(id string) (paths []string, all bool) {
	if w := own.watch(); w != nil {
		return w.BeginSync(id)
	}
	return nil, true // nothing watched here: the job's paths may not be all that changed
}

func (own *Owner) syncEnded(ctx context.Context, id string, err error, dirs []string) {
	w := own.watch()
	if w == nil {
		return
	}
	outcome := syncOutcome(ctx, own.life, err)
	if _, watched := w.State(id); watched || outcome != sources.SyncDone {
		w.EndSync(id, outcome, dirs)
		return
	}
	if dirs == nil {
		// A path-limited sync walked nothing: the source is watched from
		// its next walk, or by the owner's set-up at start.
		return
	}
	src, err := sources.GetSource(context.WithoutCancel(ctx), own.db, id)
	if err == nil && src.Watch {
		w.Watch(src, dirs)
	}
}

// syncOutcome is how a sync job that ended with err went, for the
// watcher: a sync whose source lies outside the ingest roots (they were
// edited after it was added) is refused, and is not asked for again
// until the source changes.
func syncOutcome(ctx, life context.Context, err error) sources.SyncOutcome {
	switch {
	case err == nil:
		return sources.SyncDone
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || life.Err() != nil:
		return sources.SyncCancelled
	case workspace.ErrorCode(err) == workspace.CodeOutOfRoots:
		return sources.SyncRefused
	default:
		return sources.SyncFailed
	}
}

// watchView is how the sources are watched now, as status and discover
// sources show it.
func (own *Owner) watchView() *sources.WatchView {
	return &sources.WatchView{Enabled: own.cfg().Watching(), Watcher: own.watch(), Ready: own.watchReady.Load()}
}

// watchStatus is the watch part of status: every source of the caller's
// collections with how it is watched.
func (own *Owner) watchStatus(ctx context.Context, p workspace.Principal) (*interfaces.WatchStatus, error) {
	srcs, err := sources.ListSources(ctx, own.db, visibleCollections(p, own.cfg().Collections))
	if err != nil {
		return nil, err
	}
	view := own.watchView()
	ws := &interfaces.WatchStatus{Enabled: view.Enabled && view.Watcher != nil, Sources: []interfaces.SourceWatch{}}
	for _, s := range srcs {
		st := view.Of(s)
		ws.PendingChanges += st.PendingChanges
		ws.Sources = append(ws.Sources, interfaces.SourceWatch{SourceID: s.ID, Name: s.Name, Path: s.Path, WatchState: st})
	}
	return ws, nil
}

// visibleCollections are the collections of cs that p may see.
func visibleCollections(p workspace.Principal, cs []string) []string {
	out := []string{}
	for _, c := range cs {
		if p.CanSee(c) {
			out = append(out, c)
		}
	}
	return out
}
