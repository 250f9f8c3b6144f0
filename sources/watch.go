package sources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tychora/tychora/workspace"
)

// Watching (docs/ingest.md, "Watching").
//
// A Watcher turns changes on disk into calls of WatchOptions.Changed, one
// per burst: the owner makes each call a durable sync job. Every folder
// and repository source gets its own inotify instance watching exactly
// the directories its last walk entered (Stats.Dirs), so an ignored,
// excluded or default-excluded directory is never watched; a repository
// also has its git directory watched for HEAD and ref changes. A new
// directory is watched once a sync has walked it (EndSync), and a sync
// that adds watches is followed by one more, which sees what was written
// into the new directory before its watch existed. When the system's
// watch limit runs out, the source falls back to a rescan every
// WatchOptions.Rescan and says so in its WatchState.

// Watch modes of a source, as WatchState.Mode shows them.
const (
	WatchWatching = "watching" // changes are seen as they happen
	WatchPolling  = "polling"  // rescanned periodically: see Reason
	WatchOff      = "off"      // not watched (the watch setting, or the source's own)
)

// WatchState is how a source is watched.
type WatchState struct {
	Mode   string `json:"mode"`
	Reason string `json:"reason,omitempty"`
	// PendingChanges counts the paths changed on disk that no finished
	// sync has taken in yet (0 when polling: nothing is known between
	// rescans).
	PendingChanges int `json:"pending_changes"`
}

// WatchView is how a workspace's sources are watched, as status and
// discover sources show it: the watch setting, the process's watcher and
// whether its first watches are set up, taken when a call begins.
type WatchView struct {
	// Enabled is the watch setting of tychora.json.
	Enabled bool
	// Watcher is the process's watcher, nil in a process that holds the
	// workspace for one command.
	Watcher *Watcher
	// Ready is true once the owner has set up its first watches.
	Ready bool
}

// Of is how src is watched.
func (v WatchView) Of(src Source) WatchState {
	off := func(reason string) WatchState {
		return WatchState{Mode: WatchOff, Reason: reason}
	}
	switch {
	case !v.Enabled:
		return off("watch is false in tychora.json")
	case v.Watcher == nil:
		return off("this process holds the workspace for one command and watches nothing")
	case !src.Watch:
		return off("the source opted out (watch false)")
	}
	if st, ok := v.Watcher.State(src.ID); ok {
		return st
	}
	if !v.Ready {
		return off("the owner is setting up its watches")
	}
	return off("not watched yet: a source is watched from its first sync on")
}

// WatchOptions configure a Watcher; zero values work.
type WatchOptions struct {
	// Debounce is the quiet time after a change before Changed is called
	// (default 100ms); MaxDelay bounds the wait in a stream of changes
	// that never goes quiet (default 1s).
	Debounce time.Duration
	MaxDelay time.Duration
	// Rescan is the period of a source that fell back to polling
	// (default 30s).
	Rescan time.Duration
	// RetryMin and RetryMax bound the wait before a failed sync's changes
	// are asked for again: RetryMin after the first failure (default
	// 1s), twice as long after each further one, at most RetryMax
	// (default 5m).
	RetryMin, RetryMax time.Duration
	// GitWait bounds how long a repository's changes wait for the git
	// command that holds its index lock (a checkout, a merge, a rebase
	// writing the work tree) to finish (default 10s).
	GitWait time.Duration
	// MaxWatches, when positive, is a limit of watched directories over
	// every source, which runs out like the system's own
	// (max_user_watches).
	MaxWatches int
	// DefaultExcludes are directory names never watched (Options.DefaultExcludes).
	DefaultExcludes []string
	// Changed asks for a sync of the source: of the paths that changed
	// (relative to its root, slash-separated), or of the whole source when
	// paths is nil. It reports whether the job it got was already running
	// (then the change may need another sync after it, which the Watcher
	// asks for), or why no job could be queued (then the Watcher asks
	// again later, as after a failed sync).
	Changed func(sourceID string, paths []string) (running bool, err error)
	Logger  *slog.Logger
}

// Watcher watches sources for changes. Its methods are safe for
// concurrent use.
type Watcher struct {
	opts     WatchOptions
	defaults map[string]bool
	log      *slog.Logger

	mu      sync.Mutex
	srcs    map[string]*watched
	watches int // directories watched, over every source
	closed  bool
	wg      sync.WaitGroup
}

// watched is one source's watch. Its fields are guarded by Watcher.mu.
type watched struct {
	id, root          string
	collection        string
	kind              Kind
	gitDir, commonDir string
	fsw               *fsnotify.Watcher
	dirs              map[string]bool
	mode, reason      string
	pending, inflight map[string]bool
	// full is a pending change that names no path (a HEAD move, lost
	// events, a directory watched only now): the next sync walks the
	// whole source. inflightFull is full as the running sync took it.
	full, inflightFull bool
	gen, startedGen    uint64 // changes seen; gen when the running sync began
	syncing            bool
	failures           int       // syncs failed in a row
	gitBusy            time.Time // when git took the index lock; zero when it holds none
	retryAt            time.Time // no sync is asked for before it (after a failure)
	asking             bool      // fire is asking for a sync
	timer              *time.Timer
	first              time.Time // the first change of the burst the timer waits on
	stop               chan struct{}
}

// NewWatcher returns a Watcher that watches nothing yet.
func NewWatcher(o WatchOptions) *Watcher {
	if o.Debounce <= 0 {
		o.Debounce = 100 * time.Millisecond
	}
	if o.MaxDelay < o.Debounce {
		o.MaxDelay = max(time.Second, o.Debounce)
	}
	if o.Rescan <= 0 {
		o.Rescan = 30 * time.Second
	}
	if o.RetryMin <= 0 {
		o.RetryMin = time.Second
	}
	if o.GitWait <= 0 {
		o.GitWait = 10 * time.Second
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(5*time.Minute, o.RetryMin)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Changed == nil {
		o.Changed = func(string, []string) (bool, error) { return false, nil }
	}
	d := map[string]bool{}
	for _, n := range o.DefaultExcludes {
		d[n] = true
	}
	return &Watcher{opts: o, defaults: d, log: o.Logger, srcs: map[string]*watched{}}
}

// ErrWatchLimit is the cause of a fallback to polling: no more watches.
var ErrWatchLimit = errors.New("the system's limit on watched directories ran out (fs.inotify.max_user_watches)")

// Watch starts watching src's directories dirs (from WatchDirs or a sync's
// Stats.Dirs), replacing any earlier watch of it. A source whose watches
// cannot all be set up falls back to polling and asks for a sync at once,
// since changes may have been missed.
func (w *Watcher) Watch(src Source, dirs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watchLocked(src, dirs)
}

// WatchNew is Watch for a source not watched yet; it leaves a source
// that is watched already as it is (and reports false).
func (w *Watcher) WatchNew(src Source, dirs []string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srcs[src.ID] != nil {
		return false
	}
	w.watchLocked(src, dirs)
	return true
}

func (w *Watcher) watchLocked(src Source, dirs []string) {
	if w.closed {
		return
	}
	// Events that reached the watch being replaced are lost with it: the
	// new watch starts with a sync.
	replaced := w.srcs[src.ID] != nil
	w.unwatchLocked(src.ID)
	s := &watched{id: src.ID, root: src.Path, collection: src.CollectionID, kind: src.Kind, dirs: map[string]bool{},
		pending: map[string]bool{}, inflight: map[string]bool{}, stop: make(chan struct{}), mode: WatchWatching}
	w.srcs[src.ID] = s
	if src.Kind == KindFile {
		dirs = []string{filepath.Dir(src.Path)}
	}
	if src.Kind == KindRepository {
		if g, c, err := gitDirs(src.Path); err == nil {
			s.gitDir, s.commonDir = g, c
		}
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		w.pollLocked(s, fmt.Errorf("no watcher could be made: %w", err))
		return
	}
	s.fsw = fsw
	for _, d := range append(dirs, s.gitWatchDirs()...) {
		if err := w.addLocked(s, d); err != nil {
			w.pollLocked(s, err)
			return
		}
	}
	w.wg.Add(1)
	go w.events(s, fsw)
	if replaced {
		w.bumpLocked(s, "")
	}
}

// gitWatchDirs are the git directories whose changes move HEAD: the git
// directory (HEAD), the common one (packed-refs) and its refs/heads.
func (s *watched) gitWatchDirs() []string {
	if s.gitDir == "" {
		return nil
	}
	out := []string{s.gitDir}
	if s.commonDir != s.gitDir {
		out = append(out, s.commonDir)
	}
	heads := filepath.Join(s.commonDir, "refs", "heads")
	_ = filepath.WalkDir(heads, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// addLocked watches one directory of s.
func (w *Watcher) addLocked(s *watched, dir string) error {
	if s.dirs[dir] {
		return nil
	}
	if w.opts.MaxWatches > 0 && w.watches >= w.opts.MaxWatches {
		return ErrWatchLimit
	}
	if err := s.fsw.Add(dir); err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
			return ErrWatchLimit
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil // gone since the walk: its parent's events tell
		}
		return fmt.Errorf("watch a directory: %w", err)
	}
	s.dirs[dir] = true
	w.watches++
	return nil
}

// pollLocked makes s a polling source: its watches go, and a rescan is
// asked for now and every Rescan.
func (w *Watcher) pollLocked(s *watched, cause error) {
	w.closeWatchLocked(s)
	s.mode = WatchPolling
	s.reason = fmt.Sprintf("%v; rescanned every %s", cause, w.opts.Rescan)
	w.log.Warn("source falls back to periodic rescans", workspace.LogSourceID, s.id, workspace.LogErr, cause, workspace.LogEvery, w.opts.Rescan)
	w.wg.Add(1)
	go w.poll(s)
}

func (w *Watcher) poll(s *watched) {
	defer w.wg.Done()
	t := time.NewTicker(w.opts.Rescan)
	defer t.Stop()
	_, _ = w.opts.Changed(s.id, nil) // one that fails is asked for at the next rescan
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			_, _ = w.opts.Changed(s.id, nil)
		}
	}
}

// closeWatchLocked ends s's inotify instance and its watches.
func (w *Watcher) closeWatchLocked(s *watched) {
	if s.fsw != nil {
		_ = s.fsw.Close()
		s.fsw = nil
	}
	w.watches -= len(s.dirs)
	s.dirs = map[string]bool{}
}

// Touch counts a change of the source that no event told: what changed
// while nothing watched it (before the owner started, or while the watch
// setting was off). It gets a sync like any change.
func (w *Watcher) Touch(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.srcs[id]; s != nil && s.mode == WatchWatching {
		w.bumpLocked(s, "")
	}
}

// Unwatch stops watching the source.
func (w *Watcher) Unwatch(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unwatchLocked(id)
}

func (w *Watcher) unwatchLocked(id string) {
	s := w.srcs[id]
	if s == nil {
		return
	}
	delete(w.srcs, id)
	close(s.stop)
	if s.timer != nil {
		s.timer.Stop()
	}
	w.closeWatchLocked(s)
}

// Close stops every watch and waits for the Watcher's goroutines.
func (w *Watcher) Close() {
	w.mu.Lock()
	w.closed = true
	for id := range w.srcs {
		w.unwatchLocked(id)
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// State is how the source is watched; ok is false for a source not
// watched by w.
func (w *Watcher) State(id string) (WatchState, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.srcs[id]
	if s == nil {
		return WatchState{}, false
	}
	st := WatchState{Mode: s.mode, Reason: s.reason}
	if s.mode == WatchWatching {
		st.PendingChanges = len(s.pending)
		for p := range s.inflight {
			if !s.pending[p] {
				st.PendingChanges++
			}
		}
	}
	return st, true
}

// Quiet reports whether the watcher has nothing waiting for the source:
// no change that no sync has taken in (with a path or without one), no
// sync it asked for about to be asked, and none running.
func (w *Watcher) Quiet(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.srcs[id]
	if s == nil {
		return true
	}
	return len(s.pending) == 0 && len(s.inflight) == 0 && !s.full && !s.inflightFull && s.timer == nil && !s.syncing && !s.asking
}

// Watched lists the directories watched for the source, sorted.
func (w *Watcher) Watched(id string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.srcs[id]
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.dirs))
	for d := range s.dirs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// Pending sums the pending changes of the watched sources that keep
// selects (by id and collection).
func (w *Watcher) Pending(keep func(id, collection string) bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for id, s := range w.srcs {
		if s.mode != WatchWatching || !keep(id, s.collection) {
			continue
		}
		n += len(s.pending)
		for p := range s.inflight {
			if !s.pending[p] {
				n++
			}
		}
	}
	return n
}

// BeginSync tells w that a sync of the source starts: the changes seen so
// far are what it takes in. It returns them: the paths that changed, and
// all = true when a change names no path, so that the sync must look at
// the whole source. A source w does not watch has all = true.
func (w *Watcher) BeginSync(id string) (paths []string, all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.srcs[id]
	if s == nil {
		return nil, true
	}
	s.syncing = true
	s.startedGen = s.gen
	paths = make([]string, 0, len(s.pending))
	for p := range s.pending {
		s.inflight[p] = true
		paths = append(paths, p)
	}
	slices.Sort(paths)
	s.pending = map[string]bool{}
	s.inflightFull, s.full = s.full, false
	return paths, s.inflightFull || s.mode != WatchWatching
}

// SyncOutcome is how a sync of a watched source ended.
type SyncOutcome int

const (
	SyncDone      SyncOutcome = iota // it succeeded
	SyncCancelled                    // it was cancelled, or the owner is stopping
	SyncFailed                       // it failed
	// SyncRefused: it failed for a reason that asking again cannot
	// change (the source's path is outside the ingest roots): its changes
	// wait for the next change, as a cancelled sync's do, instead of being
	// asked for again every RetryMax forever.
	SyncRefused
)

// EndSync tells w that the sync of the source ended, with the directories
// it walked when it succeeded. The watch set follows the walk, and a
// change seen while the sync ran (or a directory watched only now) gets
// one more sync. The changes a failed sync took are asked for again after
// a wait that doubles with each failure in a row (RetryMin to RetryMax);
// a cancelled sync's changes wait for the next change.
func (w *Watcher) EndSync(id string, outcome SyncOutcome, dirs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.srcs[id]
	if s == nil {
		return
	}
	s.syncing = false
	ok := outcome == SyncDone
	if !ok {
		for p := range s.inflight {
			s.pending[p] = true
		}
		s.full = s.full || s.inflightFull
	}
	s.inflight = map[string]bool{}
	s.inflightFull = false
	switch outcome {
	case SyncDone:
		s.failures, s.retryAt = 0, time.Time{}
	case SyncFailed:
		w.backOffLocked(s, "sync of a watched source failed", nil) // the job holds its error
	case SyncRefused:
		w.log.Warn("sync of a watched source refused; asking again at its next change", workspace.LogSourceID, s.id)
	}
	if ok && s.fsw != nil && s.kind != KindFile && dirs != nil {
		if w.followWalkLocked(s, dirs) {
			// What was written into a new directory before its watch
			// existed: only a walk finds it.
			s.gen++
			s.full = true
		}
	}
	if (s.gen > s.startedGen || outcome == SyncFailed) && s.mode == WatchWatching {
		w.armLocked(s)
	}
}

// followWalkLocked makes s watch exactly dirs (and its git directories);
// it reports whether a directory was added.
func (w *Watcher) followWalkLocked(s *watched, dirs []string) bool {
	want := map[string]bool{}
	for _, d := range append(dirs, s.gitWatchDirs()...) {
		want[d] = true
	}
	for d := range s.dirs {
		if !want[d] {
			_ = s.fsw.Remove(d)
			delete(s.dirs, d)
			w.watches--
		}
	}
	added := false
	for d := range want {
		if s.dirs[d] {
			continue
		}
		if err := w.addLocked(s, d); err != nil {
			w.pollLocked(s, err)
			return false
		}
		added = added || s.dirs[d]
	}
	return added
}

// events reads one source's inotify events until its watch ends.
func (w *Watcher) events(s *watched, fsw *fsnotify.Watcher) {
	defer w.wg.Done()
	for {
		select {
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			w.event(s, ev)
		case err, ok := <-fsw.Errors:
			if !ok {
				return
			}
			w.mu.Lock()
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: a sync finds what they said.
				w.bumpLocked(s, "")
			} else if w.srcs[s.id] == s {
				w.log.Warn("watch error", workspace.LogSourceID, s.id, workspace.LogErr, err)
			}
			w.mu.Unlock()
		}
	}
}

// event turns one inotify event into a change of s, or nothing.
func (w *Watcher) event(s *watched, ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return // attributes only: the content is what a sync reads
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srcs[s.id] != s || s.fsw == nil {
		return
	}
	if s.gitDir != "" && (within(ev.Name, s.gitDir) || within(ev.Name, s.commonDir)) {
		if ev.Name == filepath.Join(s.gitDir, "index.lock") {
			w.gitLockLocked(s, ev.Has(fsnotify.Create))
			return
		}
		if gitHeadChange(s, ev.Name) {
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					_ = w.addLocked(s, ev.Name) // a new refs/heads/ folder
				}
			}
			w.bumpLocked(s, "")
		}
		return
	}
	if s.kind == KindFile {
		if ev.Name == s.root {
			w.bumpLocked(s, filepath.Base(s.root))
		}
		return
	}
	rel, err := filepath.Rel(s.root, ev.Name)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		// Reached through a symlinked directory: still this source's,
		// but only a walk knows under which path.
		rel = ev.Name
		s.full = true
	}
	if w.defaults[filepath.Base(ev.Name)] {
		return // a node_modules/ or .git appearing: never walked, so no change
	}
	if ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Remove) {
		// A watched directory moved or went: its watches (and those below
		// it) name a path that is no longer it. A sync's walk sets up the
		// watches of where it went.
		for d := range s.dirs {
			if d == ev.Name || within(d, ev.Name) {
				_ = s.fsw.Remove(d)
				delete(s.dirs, d)
				w.watches--
			}
		}
	}
	w.bumpLocked(s, filepath.ToSlash(rel))
}

// gitHeadChange reports whether a change at name in a repository's git
// directories can move its HEAD commit.
func gitHeadChange(s *watched, name string) bool {
	for _, dir := range []string{s.gitDir, s.commonDir} {
		rel, err := filepath.Rel(dir, name)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		rel = filepath.ToSlash(rel)
		if rel == "HEAD" || rel == "packed-refs" || rel == "refs/heads" || strings.HasPrefix(rel, "refs/heads/") {
			return !strings.HasSuffix(rel, ".lock")
		}
	}
	return false
}

// bumpLocked records a change (rel "" for one that names no file, which
// needs a walk of the whole source) and arms the debounce timer.
func (w *Watcher) bumpLocked(s *watched, rel string) {
	s.gen++
	if rel != "" {
		s.pending[rel] = true
	} else {
		s.full = true
	}
	w.armLocked(s)
}

// gitLockLocked records git taking (held) or letting go of a repository's
// index lock. While a git command holds it (a checkout writing a
// thousand files takes a second or more) the changes it makes are not
// asked for, up to GitWait: they are one sync once it is done, not one
// of what it wrote by MaxDelay and another of the rest. A lock left
// behind by a git that died stops holding changes back after GitWait.
func (w *Watcher) gitLockLocked(s *watched, held bool) {
	if held {
		s.gitBusy = time.Now()
		return
	}
	if s.gitBusy.IsZero() {
		return
	}
	s.gitBusy = time.Time{}
	if s.timer != nil {
		s.timer.Reset(max(w.opts.Debounce, time.Until(s.retryAt))) // a failure's wait still holds
	}
}

// backOffLocked delays the next sync of s after a failure: RetryMin
// after the first in a row, twice as long after each further one, at
// most RetryMax.
func (w *Watcher) backOffLocked(s *watched, what string, err error) {
	s.failures++
	wait := w.opts.RetryMax
	if n := s.failures - 1; n < 32 && w.opts.RetryMin<<n < w.opts.RetryMax {
		wait = w.opts.RetryMin << n
	}
	s.retryAt = time.Now().Add(wait)
	attrs := []any{workspace.LogSourceID, s.id, workspace.LogFailures, s.failures, workspace.LogRetryIn, wait}
	if err != nil {
		attrs = append(attrs, workspace.LogErr, err)
	}
	w.log.Warn(what+"; asking again later", attrs...)
}

// armLocked (re)starts s's debounce timer: Debounce after the last
// change, and never later than MaxDelay after the first of the burst;
// after a failed sync, not before its retry time.
func (w *Watcher) armLocked(s *watched) {
	now := time.Now()
	retry := s.retryAt.Sub(now)
	if s.timer == nil {
		s.first = now
		s.timer = time.AfterFunc(max(w.opts.Debounce, retry), func() { w.fire(s) })
		return
	}
	wait := min(w.opts.Debounce, s.first.Add(w.opts.MaxDelay).Sub(now))
	s.timer.Reset(max(wait, retry, 0))
}

// fire asks for a sync of s. A job that is running already began before
// this burst ended unless the Watcher saw it begin after the last change;
// in that case it covers the burst, otherwise EndSync asks again, and if
// it ended meanwhile the Watcher asks again shortly.
func (w *Watcher) fire(s *watched) {
	w.mu.Lock()
	if w.srcs[s.id] != s || w.closed {
		w.mu.Unlock()
		return
	}
	s.timer = nil
	if !s.gitBusy.IsZero() {
		if wait := time.Until(s.gitBusy.Add(w.opts.GitWait)); wait > 0 {
			// git is writing the work tree: its changes are one sync,
			// asked for when it lets the lock go (gitLockLocked).
			s.timer = time.AfterFunc(wait, func() { w.fire(s) })
			w.mu.Unlock()
			return
		}
	}
	var paths []string
	if !s.full && s.mode == WatchWatching {
		paths = make([]string, 0, len(s.pending))
		for p := range s.pending {
			paths = append(paths, p)
		}
		slices.Sort(paths)
	}
	s.asking = true
	w.wg.Add(1)
	w.mu.Unlock()
	defer w.wg.Done()
	running, err := w.opts.Changed(s.id, paths)
	w.mu.Lock()
	defer w.mu.Unlock()
	s.asking = false
	if w.srcs[s.id] != s || w.closed {
		return
	}
	switch {
	case err != nil:
		// No job holds the changes (a full disk, a locked index): they
		// stay pending and are asked for again after a wait.
		w.backOffLocked(s, "no sync of a changed source could be queued", err)
		w.armLocked(s)
	case running && !s.syncing:
		w.armLocked(s) // the job ended between its last look and this one
	}
}

// WatchDirs lists the directories a watch of the source covers: those a
// sync's walk enters (never an ignored, excluded or default-excluded
// one), the root first.
func (ix *Indexer) WatchDirs(ctx context.Context, id string) (Source, []string, error) {
	src, err := getSource(ctx, ix.db.R, id)
	if err != nil {
		return Source{}, nil, err
	}
	if src.Kind == KindFile {
		return src, nil, nil
	}
	res, err := walkSource(ctx, ix.policy, src, ix.defaults, nil)
	if err != nil {
		return Source{}, nil, err
	}
	return src, res.dirs, nil
}
