package sources

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tychora/tychora/workspace"
)

// ErrConcurrentSync means another sync of the same source applied a
// revision while this one ran; nothing was written, and a retry starts from
// the new revision. It is wrapped in a CONFLICT *workspace.Error.
var ErrConcurrentSync = errors.New("another sync of this source applied a revision first")

// Options configure an Indexer. The zero value works.
type Options struct {
	// MaxFileBytes is the largest text file indexed (max_file_bytes);
	// 0 means workspace.DefaultMaxFileBytes. Images have their own limit,
	// MaxAssetBytes.
	MaxFileBytes int64
	// Workers is how many goroutines read and extract files; 0 means
	// min(GOMAXPROCS, 4).
	Workers int
	// TempDir holds the spool of a large sync (extracted evidence waiting
	// for the apply transaction); "" means os.TempDir(). The spool file is
	// unlinked as soon as it is created.
	TempDir string
	// SpoolMemory is how many bytes of extracted evidence stay in memory
	// before the spool moves to a file; 0 means 16 MiB.
	SpoolMemory int
	// OptimizeMinChurn is the fewest changed leaves that make Optimize
	// merge the index; 0 means OptimizeMinChurn.
	OptimizeMinChurn int64
	// DefaultExcludes names the directories a walk leaves out by name, at
	// any depth below the source root (default_excludes); nil means
	// workspace.DefaultExcludes(). .git is always left out.
	DefaultExcludes []string
	// Logger receives debug records; nil is silent.
	Logger *slog.Logger
	// Publish, when set, is called inside each transaction that changes
	// the lexical index (a sync's apply of a revision, a merge), just
	// before it commits, with that transaction; the function it returns,
	// when not nil, is called with the outcome: after the commit with
	// whether it succeeded. The owner builds the search's file index of
	// the new generation there (query.Engine.PrepareCommit), holding the
	// writer's lock while it does.
	Publish func(ctx context.Context, tx *sql.Tx) (done func(committed bool))
	// Yield, when set, is called between the small steps of a sync
	// (before each file's extraction and each file's rows in the apply,
	// and every few rows the indexing statements write), and waits while
	// searches run (workspace.Foreground.Yield): the owner's searches
	// come first. Its error (ctx's) ends the sync.
	Yield func(ctx context.Context) error
}

// Indexer turns sources into evidence: it registers sources, walks them,
// extracts what changed and applies each revision in one transaction. It is
// safe for concurrent use; syncs of one source must not run concurrently
// (the job queue guarantees it, and a second one fails with CONFLICT rather
// than corrupt anything).
type Indexer struct {
	db       *workspace.DB
	policy   *Policy
	assets   *Assets
	opts     Options
	defaults map[string]bool // the directory names of Options.DefaultExcludes, and .git
	log      *slog.Logger

	extractCalls atomic.Int64
}

// NewIndexer returns an Indexer writing to db, admitting paths through
// policy and storing images in assets.
func NewIndexer(db *workspace.DB, policy *Policy, assets *Assets, opts Options) *Indexer {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = workspace.DefaultMaxFileBytes
	}
	if opts.Workers <= 0 {
		opts.Workers = min(runtime.GOMAXPROCS(0), 4)
	}
	if opts.OptimizeMinChurn <= 0 {
		opts.OptimizeMinChurn = OptimizeMinChurn
	}
	if opts.SpoolMemory <= 0 {
		opts.SpoolMemory = 16 << 20
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.DefaultExcludes == nil {
		opts.DefaultExcludes = workspace.DefaultExcludes()
	}
	defaults := map[string]bool{workspace.GitDir: true}
	for _, n := range opts.DefaultExcludes {
		defaults[n] = true
	}
	return &Indexer{db: db, policy: policy, assets: assets, opts: opts, defaults: defaults, log: log}
}

// Policy returns the indexer's path policy.
func (ix *Indexer) Policy() *Policy { return ix.policy }

// ExtractCalls returns how many times the indexer has run an extractor (or
// stored an image) since it was created: a sync of an unchanged source adds
// nothing.
func (ix *Indexer) ExtractCalls() int64 { return ix.extractCalls.Load() }

// Add resolves the input through the policy and registers the source (see
// CreateSource); it does not sync. Policy errors come back at once.
func (ix *Indexer) Add(ctx context.Context, in SourceInput) (src Source, created bool, err error) {
	rs, err := ix.policy.Resolve(in)
	if err != nil {
		return Source{}, false, err
	}
	return CreateSource(ctx, ix.db, rs)
}

// Progress is a sync's running count, as a JobHandle reports it.
type Progress struct {
	// Once a sync is done, FilesSeen = Indexed + Unchanged + Skipped.
	FilesSeen int64 `json:"files_seen"` // paths the walk met: regular files, and the paths it left out
	Indexed   int64 `json:"indexed"`    // files (re-)extracted or stored as assets
	Unchanged int64 `json:"unchanged"`  // indexed files whose content had not changed
	Skipped   int64 `json:"skipped"`    // paths left out (every skip reason)
	Deleted   int64 `json:"deleted"`    // files that left the index (known once the walk is done)
	Bytes     int64 `json:"bytes"`      // bytes read from changed files
}

// Stats describe a finished sync.
type Stats struct {
	Progress
	Extracted       int64            `json:"extracted"`            // extractor runs (and images stored)
	Touched         int64            `json:"touched"`              // modified time changed, content identical
	Units           int64            `json:"units"`                // evidence units of the indexed files
	KeptUnits       int64            `json:"kept_units,omitempty"` // of Units, kept as they were with their index entries (keep.go)
	SkippedByReason map[string]int64 `json:"skipped_by_reason"`
	RevisionID      string           `json:"revision_id"`
	RevisionNumber  int              `json:"revision_number"`
	NewRevision     bool             `json:"new_revision"` // false when nothing changed
	Commit          string           `json:"commit,omitempty"`
	Ref             string           `json:"ref,omitempty"`
	GitError        string           `json:"git_error,omitempty"`
	CoverageSHA256  string           `json:"coverage_sha256"`
	DurationMS      int64            `json:"duration_ms"`
	WalkMS          int64            `json:"walk_ms"`    // walking the tree
	ExtractMS       int64            `json:"extract_ms"` // reading, hashing, extracting (outside the transaction)
	ApplyMS         int64            `json:"apply_ms"`   // the write transaction
	// Paths counts the paths a path-limited sync looked at; 0 when it
	// walked the whole source.
	Paths int64 `json:"paths,omitempty"`
	// Dirs are the directories the walk entered (absolute, the root
	// first): what a watcher of the source watches. Not stored.
	Dirs []string `json:"-"`
}

// SyncOptions tune one sync.
type SyncOptions struct {
	// Progress, when set, is called from the syncing goroutine (never
	// concurrently) as work advances, at most every 100 ms, and once at the
	// end.
	Progress func(Progress)
	// Force re-extracts every file, changed or not (after an extractor
	// upgrade, say).
	Force bool
	// Paths, when not nil, limits the sync to these paths of a folder or
	// repository (relative to its root, slash-separated; what a watcher
	// saw change): only they are looked at, and every other file of the
	// current revision is carried over as it is. When a path is a
	// directory, was one, is a .gitignore, or anything else leaves doubt
	// (docs/ingest.md, "Path-limited syncs"), the whole source is walked
	// instead.
	Paths []string
}

// task is one file to read and maybe extract.
type task struct {
	f         walkFile
	old       *fileState
	reextract bool // its extractor changed: extract even if the content did not
	res       fileResult
	done      chan struct{}
}

// progressReporter throttles Progress callbacks.
type progressReporter struct {
	fn   func(Progress)
	last time.Time
}

func (p *progressReporter) report(pr Progress, final bool) {
	if p.fn == nil {
		return
	}
	if t := time.Now(); final || t.Sub(p.last) >= 100*time.Millisecond {
		p.last = t
		p.fn(pr)
	}
}

// Sync brings the index of a source up to date with the disk and applies
// the result as one revision, atomically: a concurrent reader sees the old
// or the new revision, never a mix. Unchanged files (same size and modified
// time, or else the same SHA-256) are not re-extracted; deleted files leave
// the index. Reading, hashing and extraction happen before the write
// transaction; a cancelled ctx stops the work promptly and leaves the
// previous revision as it was, and so does a crash. When nothing changed no
// revision is created and Stats.NewRevision is false.
func (ix *Indexer) Sync(ctx context.Context, sourceID string, opts SyncOptions) (Stats, error) {
	run, err := ix.newSyncRun(ctx, sourceID, opts)
	if err != nil {
		return Stats{}, err
	}
	defer run.spool.close()
	if err := run.run(ctx); err != nil {
		if ctx.Err() != nil {
			return Stats{}, ctx.Err()
		}
		return Stats{}, err
	}
	return run.stats, nil
}

// syncRun is the state of one sync: the source, what the scan found,
// the plan of what the apply will write, the running counts and the
// progress callback.
type syncRun struct {
	ix    *Indexer
	src   Source
	opts  SyncOptions
	start time.Time
	stats Stats
	pr    *progressReporter
	skips []Skip
	plan  *applyPlan
	spool *spool
}

// newSyncRun reads the source and checks that its path still holds what
// it held when it was added.
func (ix *Indexer) newSyncRun(ctx context.Context, sourceID string, opts SyncOptions) (*syncRun, error) {
	start := time.Now()
	src, err := getSource(ctx, ix.db.R, sourceID)
	if err != nil {
		return nil, err
	}
	real, err := ix.policy.RealPath(src.Path)
	if err != nil {
		return nil, err
	}
	if real != src.Path {
		return nil, workspace.Errorf(workspace.CodeConflict, "source %s: its path now resolves elsewhere (a symlink replaced it); add the path again", src.ID)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, workspace.Wrap(workspace.CodeUnavailable, err, fmt.Sprintf("source %s cannot be read", src.ID))
	}
	if fi.IsDir() != (src.Kind != KindFile) {
		return nil, workspace.Errorf(workspace.CodeConflict, "source %s: its path no longer holds a %s; add the path again", src.ID, src.Kind)
	}
	return &syncRun{
		ix: ix, src: src, opts: opts, start: start,
		stats: Stats{SkippedByReason: map[string]int64{}},
		pr:    &progressReporter{fn: opts.Progress},
		spool: newSpool(ix.opts.TempDir, ix.opts.SpoolMemory),
	}, nil
}

// run scans the source, reads and extracts what changed, and applies the
// result.
func (r *syncRun) run(ctx context.Context) error {
	if r.src.Kind == KindRepository {
		head, err := ReadHead(r.src.Path)
		if err != nil {
			r.stats.GitError = err.Error()
		}
		r.stats.Commit, r.stats.Ref = head.Commit, head.Ref
	}
	sc, err := r.scan(ctx)
	if err != nil {
		return err
	}
	r.stats.WalkMS = time.Since(r.start).Milliseconds()
	r.skips = sc.skips
	r.stats.Skipped = int64(len(r.skips))
	r.plan = &applyPlan{src: r.src, base: sc.state.revisionID, deleted: sc.deleted, extractions: map[string]*extractionRow{},
		roleRules: sc.full && sc.state.rolesOutdated}
	if err := r.runTasks(ctx, sc.tasks); err != nil {
		return err
	}
	r.plan.spool = r.spool
	r.stats.ExtractMS = time.Since(r.start).Milliseconds() - r.stats.WalkMS
	r.finishPlan(sc.state)
	stats := &r.stats
	stats.DurationMS = time.Since(r.start).Milliseconds()
	applyStart := time.Now()
	if err := r.ix.apply(ctx, r.plan, stats); err != nil {
		return err
	}
	stats.ApplyMS = time.Since(applyStart).Milliseconds()
	stats.DurationMS = time.Since(r.start).Milliseconds()
	r.pr.report(stats.Progress, true)
	src := r.src
	r.ix.log.Debug("sync applied", slog.String(workspace.LogSourceID, src.ID), slog.String(workspace.LogRevisionID, stats.RevisionID),
		slog.Int64(workspace.LogIndexed, stats.Indexed), slog.Int64(workspace.LogUnchanged, stats.Unchanged), slog.Int64(workspace.LogDeleted, stats.Deleted),
		slog.Int64(workspace.LogWalkMS, stats.WalkMS), slog.Int64(workspace.LogExtractMS, stats.ExtractMS), slog.Int64(workspace.LogApplyMS, stats.ApplyMS))
	return nil
}

// scan finds what to read: only the given paths when the sync is limited
// to them and nothing leaves doubt, else the whole source.
func (r *syncRun) scan(ctx context.Context) (*scan, error) {
	ix, src, opts := r.ix, r.src, r.opts
	if opts.Paths != nil && !opts.Force && src.Kind != KindFile {
		// nil when in doubt: the whole source is walked instead.
		sc, err := ix.scanPaths(ctx, src, opts.Paths, &r.stats)
		if sc != nil || err != nil {
			return sc, err
		}
	}
	return ix.scanAll(ctx, src, opts, &r.stats, r.pr)
}

// finishPlan sorts and counts the coverage, and decides whether the sync
// makes a revision: when anything changed since the current one st.
func (r *syncRun) finishPlan(st baseState) {
	stats, plan, skips := &r.stats, r.plan, r.skips
	sort.Slice(skips, func(i, j int) bool { return skips[i].Path < skips[j].Path })
	stats.Skipped = int64(len(skips))
	for _, s := range skips {
		stats.SkippedByReason[s.Reason]++
	}
	stats.CoverageSHA256 = coverageDigest(skips)
	plan.skips = capSkips(skips)
	stats.Deleted = int64(len(plan.deleted))

	plan.newRevision = st.revisionID == nil || plan.changed > 0 || len(plan.deleted) > 0 ||
		stats.Commit != st.commit || stats.Ref != st.ref || stats.CoverageSHA256 != st.coverage
	stats.NewRevision = plan.newRevision
	if plan.newRevision {
		plan.revisionID = newID("rev_")
		plan.commit, plan.ref = stats.Commit, stats.Ref
	} else {
		stats.RevisionID = *st.revisionID
		stats.RevisionNumber = st.number
	}
}

// scan is what a sync found before reading any file: the current
// revision's state (of the paths it looked at), the files to read, the
// paths left out and the indexed paths that are gone.
type scan struct {
	// full: every file of the source was looked at (scanAll).
	full    bool
	state   baseState
	tasks   []*task
	skips   []Skip
	deleted []string
}

// scanAll walks the whole source and sorts what it found against the
// current revision.
func (ix *Indexer) scanAll(ctx context.Context, src Source, opts SyncOptions, stats *Stats, pr *progressReporter) (*scan, error) {
	st, err := ix.loadState(ctx, src.ID)
	if err != nil {
		return nil, err
	}
	walked, err := walkSource(ctx, ix.policy, src, ix.defaults, func(n int) {
		pr.report(Progress{FilesSeen: int64(n)}, false)
	})
	if err != nil {
		return nil, err
	}
	stats.FilesSeen = int64(len(walked.files) + len(walked.skips))
	stats.Dirs = walked.dirs
	sc := &scan{full: true, state: st, skips: walked.skips}
	seen := make(map[string]bool, len(walked.files))
	for _, f := range walked.files {
		seen[f.rel] = true
		sc.sortFile(ix, f, opts.Force, stats)
	}
	for p := range st.files {
		if !seen[p] {
			sc.deleted = append(sc.deleted, p)
		}
	}
	sort.Strings(sc.deleted)
	return sc, nil
}

// sortFile counts a walked file that has not changed since the current
// revision (same size and modified time, and nothing else that asks for
// another look), or makes it a task.
func (sc *scan) sortFile(ix *Indexer, f walkFile, force bool, stats *Stats) {
	old := sc.state.files[f.rel]
	stale := old != nil && (old.staleExtraction(f.rel) || old.roleMissing() || old.termsMissing() || old.verdictChanged(f, ix.opts.MaxFileBytes) ||
		sc.state.rolesOutdated && old.status == statusIndexed)
	if old != nil && !force && !stale && old.size == f.size && old.mtimeNs == f.mtimeNs {
		if old.status == statusSkipped {
			sc.skips = append(sc.skips, Skip{Path: f.rel, Reason: old.reason, Detail: old.detail})
		} else {
			stats.Unchanged++
		}
		return
	}
	sc.tasks = append(sc.tasks, &task{f: f, old: old, reextract: stale, done: make(chan struct{})})
}

// runTasks reads and extracts the tasks on ix.opts.Workers goroutines and
// takes in the results in walk order, so that what is written does not
// depend on scheduling.
func (r *syncRun) runTasks(ctx context.Context, tasks []*task) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *task)
	order := make(chan *task, r.ix.opts.Workers*4)
	var wg sync.WaitGroup
	for range r.ix.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &processor{ix: r.ix, src: r.src, force: r.opts.Force}
			defer p.close()
			for t := range work {
				if err := r.ix.yield(ctx); err != nil {
					t.res = fileResult{err: err} // fatal: stops the sync
					close(t.done)
					continue
				}
				t.res = p.process(ctx, t.f, t.old, t.reextract)
				close(t.done)
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(work)
		for _, t := range tasks {
			select {
			case order <- t:
			case <-ctx.Done():
				return
			}
			select {
			case work <- t:
			case <-ctx.Done():
				close(t.done) // never processed; the collector sees ctx
				return
			}
		}
	}()
	defer wg.Wait()
	fail := func(err error) error {
		cancel()
		for range order { // drain so the feeder can stop
		}
		return err
	}
	for t := range order {
		<-t.done
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := r.take(t); err != nil {
			return fail(err)
		}
		t.res = fileResult{} // release the text
	}
	return ctx.Err()
}

// take counts the result of one task into the stats and the plan, and
// spools what the apply writes.
func (r *syncRun) take(t *task) error {
	res, stats, plan := &t.res, &r.stats, r.plan
	if res.err != nil {
		return res.err
	}
	stats.Bytes += res.bytesRead
	switch res.status {
	case statusIndexed, statusAsset:
		stats.Indexed++
		stats.Extracted++
		stats.Units += int64(len(res.units))
		plan.changed++
		plan.noteExtraction(res)
		if res.status == statusAsset {
			plan.assets = append(plan.assets, assetRow{id: res.assetID, mime: res.mime, size: res.size})
		}
		switch {
		case res.keep.doc != 0:
			plan.keeps = append(plan.keeps, keptFile{keepPlan: res.keep, units: len(res.units)})
			stats.KeptUnits += int64(res.keep.kept)
		case res.existed:
			plan.replaced = append(plan.replaced, res.rel)
		}
		if err := r.spool.write(res); err != nil {
			return err
		}
	case statusTouched:
		stats.Unchanged++
		stats.Touched++
		plan.touched = append(plan.touched, touch{rel: res.rel, size: res.size, mtimeNs: res.mtimeNs})
	case statusSkipped:
		r.skips = append(r.skips, Skip{Path: res.rel, Reason: res.reason, Detail: res.detail})
		if t.old != nil && t.old.status == statusSkipped && t.old.reason == res.reason {
			// Same verdict as before: only the stat changed.
			plan.touched = append(plan.touched, touch{rel: res.rel, size: res.size, mtimeNs: res.mtimeNs})
			break
		}
		plan.changed++
		if res.existed {
			plan.replaced = append(plan.replaced, res.rel)
		}
		if err := r.spool.write(res); err != nil {
			return err
		}
	case statusUnreadable:
		r.skips = append(r.skips, Skip{Path: res.rel, Reason: SkipUnreadable, Detail: res.detail})
		if t.old != nil {
			plan.deleted = append(plan.deleted, res.rel)
		}
	case statusVanished:
		stats.FilesSeen--
		if t.old != nil {
			plan.deleted = append(plan.deleted, res.rel)
		}
	}
	stats.Skipped = int64(len(r.skips))
	r.pr.report(stats.Progress, false)
	return nil
}

// capSkips keeps at most MaxListedSkips paths per reason (they are sorted
// by path); the counts in the revision's stats stay exact.
func capSkips(skips []Skip) []Skip {
	n := map[string]int{}
	out := skips[:0:0]
	for _, s := range skips {
		if n[s.Reason] < MaxListedSkips {
			out = append(out, s)
		}
		n[s.Reason]++
	}
	return out
}

// MaxListedSkips is how many skipped paths per reason coverage lists.
const MaxListedSkips = 1000
