package runtime

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// Settings without a restart (docs/ingest.md, "Settings reload").
//
// The owner watches tychora.json and, a moment after it changes, loads it
// again. ingest_roots, collections, default_excludes, watch,
// max_file_bytes, token_counter and default_max_tokens take effect at
// once: the next request and the next sync use them, and a change of the
// roots, the excludes or max_file_bytes queues a sync of every source so
// that the index follows. listen, workers, max_request_bytes and
// query_history are set up when the owner starts: a change of one of them
// is named in status ("settings": {"restart_needed": [...]}) and in the
// log until the owner restarts. A file that does not load (a typo, an
// unknown key) changes nothing and is reported the same way.

// restartKeys are the settings that only a restart applies.
var restartKeys = []string{"listen", "workers", "max_request_bytes", "query_history"}

// settingsDebounce is the quiet time after a change of tychora.json
// before it is loaded (an editor's save is several events).
const settingsDebounce = 150 * time.Millisecond

// reloadState is what the last reload of tychora.json found.
type reloadState struct {
	mu            sync.Mutex
	reloadedAt    *time.Time
	restartNeeded []string
	err           string
	fsw           *fsnotify.Watcher
	done          chan struct{}
}

// hasCollection reports whether the settings in force name collection c.
func (own *Owner) hasCollection(c string) bool {
	s := own.cfg()
	return s.HasCollection(c)
}

// watchSettings starts watching tychora.json (its directory, since an
// atomic save replaces the file).
func (own *Owner) watchSettings() {
	fsw, err := fsnotify.NewWatcher()
	if err == nil {
		err = fsw.Add(own.layout.Dir)
	}
	if err != nil {
		own.log.Warn("tychora.json is not watched: a change applies at the next start", workspace.LogErr, err)
		if fsw != nil {
			_ = fsw.Close()
		}
		return
	}
	own.reload.fsw = fsw
	own.reload.done = make(chan struct{})
	go func() {
		defer close(own.reload.done)
		var timer *time.Timer
		fire := make(chan struct{}, 1)
		for {
			select {
			case ev, ok := <-fsw.Events:
				if !ok {
					if timer != nil {
						timer.Stop()
					}
					return
				}
				if filepath.Clean(ev.Name) != filepath.Clean(own.layout.Settings) || ev.Op == fsnotify.Chmod {
					continue
				}
				if timer == nil {
					timer = time.AfterFunc(settingsDebounce, func() {
						select {
						case fire <- struct{}{}:
						default:
						}
					})
				} else {
					timer.Reset(settingsDebounce)
				}
			case <-fire:
				own.reloadSettings(own.life)
			case _, ok := <-fsw.Errors:
				if !ok {
					return
				}
			}
		}
	}()
}

// stopSettingsWatch ends the watch of tychora.json.
func (own *Owner) stopSettingsWatch() {
	if own.reload.fsw != nil {
		_ = own.reload.fsw.Close()
		<-own.reload.done
	}
}

// reloadSettings loads tychora.json again and applies what changed.
func (own *Owner) reloadSettings(ctx context.Context) {
	next, err := workspace.LoadSettings(own.layout)
	r := &own.reload
	if err != nil {
		r.mu.Lock()
		r.err = workspace.ErrorMessage(err)
		r.mu.Unlock()
		own.log.Warn("tychora.json changed but does not load: the settings in force stay", workspace.LogErr, workspace.ErrorMessage(err))
		return
	}
	if own.opts.Listen != "" {
		next.Listen = own.opts.Listen // the command line's, as at the start
	}
	prev := own.cfg()
	policyChanged := !slices.Equal(prev.IngestRoots, next.IngestRoots)
	indexChanged := policyChanged || !slices.Equal(prev.DefaultExcludes, next.DefaultExcludes) || prev.MaxFileBytes != next.MaxFileBytes
	var ix *sources.Indexer
	if indexChanged {
		policy, err := sources.NewPolicy(next.IngestRoots, own.layout.Dir)
		if err != nil {
			r.mu.Lock()
			r.err = workspace.ErrorMessage(err)
			r.mu.Unlock()
			own.log.Warn("tychora.json changed but its ingest roots are refused: the settings in force stay", workspace.LogErr, workspace.ErrorMessage(err))
			return
		}
		ix = sources.NewIndexer(own.db, policy, own.assets, sources.Options{
			MaxFileBytes:    next.MaxFileBytes,
			DefaultExcludes: next.DefaultExcludes,
			Logger:          own.log,
			Publish:         own.prepareCommit,
			Yield:           own.fg.Yield,
		})
	}
	// What only a restart applies keeps its value in force.
	var restart []string
	for _, k := range restartKeys {
		if !reflect.DeepEqual(settingValue(prev, k), settingValue(next, k)) {
			restart = append(restart, k)
		}
	}
	applied := next
	applied.Listen, applied.Workers, applied.MaxRequestBytes, applied.QueryHistory = prev.Listen, prev.Workers, prev.MaxRequestBytes, prev.QueryHistory
	if ix != nil {
		own.ixp.Store(ix)
	}
	own.conf.Store(&applied)
	own.searcher.IndexChanged() // collections may have changed what a ranking may see
	now := time.Now().UTC()
	r.mu.Lock()
	r.reloadedAt, r.err = &now, ""
	r.restartNeeded = mergeKeys(r.restartNeeded, restart)
	needed := slices.Clone(r.restartNeeded)
	r.mu.Unlock()
	own.log.Info("tychora.json reloaded", workspace.LogRestartNeeded, needed)
	if len(needed) > 0 {
		own.log.Warn("tychora.json changed settings that apply only after a restart (tychora stop, then serve)", workspace.LogRestartNeeded, needed)
	}
	// Watching follows the new setting and excludes.
	watchChanged := prev.Watching() != applied.Watching() || !slices.Equal(prev.DefaultExcludes, applied.DefaultExcludes) || policyChanged
	if watchChanged && !own.opts.NoWatch {
		own.stopWatching()
		if applied.Watching() {
			own.startWatching()
		}
	}
	if indexChanged {
		own.syncEverySource(ctx)
	}
}

// settingValue is the value of a restart key.
func settingValue(s workspace.Settings, key string) any {
	switch key {
	case "listen":
		return s.Listen
	case "workers":
		return s.Workers
	case "max_request_bytes":
		return s.MaxRequestBytes
	case "query_history":
		return s.QueryHistory
	}
	return nil
}

func mergeKeys(a, b []string) []string {
	for _, k := range b {
		if !slices.Contains(a, k) {
			a = append(a, k)
		}
	}
	slices.Sort(a)
	return a
}

// stopWatching ends every watch (the watch setting went off, or the
// watcher is made again).
func (own *Owner) stopWatching() {
	own.watchSetup.Wait()
	if w := own.watcherp.Swap(nil); w != nil {
		w.Close()
	}
	own.watchReady.Store(false)
}

// syncEverySource queues a sync of every source: the settings that decide
// what is indexed changed.
func (own *Owner) syncEverySource(ctx context.Context) {
	srcs, err := sources.ListSources(ctx, own.db, nil)
	if err != nil {
		own.log.Warn("sources not synced after the settings changed", workspace.LogErr, err)
		return
	}
	for _, s := range srcs {
		if _, _, err := own.queue.Enqueue(ctx, jobs.KindSync, s.ID, s.CollectionID, WatchPrincipal); err != nil {
			own.log.Warn("source not synced after the settings changed", workspace.LogSourceID, s.ID, workspace.LogErr, err)
		}
	}
	own.startJobs()
}

// settingsStatus is the settings part of status: when tychora.json was
// last reloaded, what waits for a restart, and why the last change did
// not load.
func (own *Owner) settingsStatus() *interfaces.SettingsStatus {
	r := &own.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	return &interfaces.SettingsStatus{ReloadedAt: r.reloadedAt, RestartNeeded: append([]string{}, r.restartNeeded...), Error: r.err}
}
