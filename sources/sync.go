package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"

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
	Extracted       int64            `json:"extracted"` // extractor runs (and images stored)
	Touched         int64            `json:"touched"`   // modified time changed, content identical
	Units           int64            `json:"units"`     // evidence units written
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
	start := time.Now()
	src, err := getSource(ctx, ix.db.R, sourceID)
	if err != nil {
		return Stats{}, err
	}
	real, err := ix.policy.RealPath(src.Path)
	if err != nil {
		return Stats{}, err
	}
	if real != src.Path {
		return Stats{}, workspace.Errorf(workspace.CodeConflict, "source %s: its path now resolves elsewhere (a symlink replaced it); add the path again", src.ID)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return Stats{}, workspace.Wrap(workspace.CodeUnavailable, err, fmt.Sprintf("source %s cannot be read", src.ID))
	}
	if fi.IsDir() != (src.Kind != KindFile) {
		return Stats{}, workspace.Errorf(workspace.CodeConflict, "source %s: its path no longer holds a %s; add the path again", src.ID, src.Kind)
	}
	stats := Stats{SkippedByReason: map[string]int64{}}
	if src.Kind == KindRepository {
		head, err := ReadHead(src.Path)
		if err != nil {
			stats.GitError = err.Error()
		}
		stats.Commit, stats.Ref = head.Commit, head.Ref
	}
	pr := &progressReporter{fn: opts.Progress}
	var sc *scan
	if opts.Paths != nil && !opts.Force && src.Kind != KindFile {
		// nil when in doubt: the whole source is walked instead.
		if sc, err = ix.scanPaths(ctx, src, opts.Paths, &stats); err != nil {
			if ctx.Err() != nil {
				return Stats{}, ctx.Err()
			}
			return Stats{}, err
		}
	}
	if sc == nil {
		if sc, err = ix.scanAll(ctx, src, opts, &stats, pr); err != nil {
			if ctx.Err() != nil {
				return Stats{}, ctx.Err()
			}
			return Stats{}, err
		}
	}
	stats.WalkMS = time.Since(start).Milliseconds()
	st, tasks, skips, deleted := sc.state, sc.tasks, sc.skips, sc.deleted

	stats.Skipped = int64(len(skips))
	plan := &applyPlan{src: src, base: st.revisionID, deleted: deleted, extractions: map[string]*extractionRow{}}
	sp := newSpool(ix.opts.TempDir, ix.opts.SpoolMemory)
	defer sp.close()
	if err := ix.runTasks(ctx, src, opts.Force, tasks, plan, sp, &stats, &skips, pr); err != nil {
		if ctx.Err() != nil {
			return Stats{}, ctx.Err()
		}
		return Stats{}, err
	}
	plan.spool = sp
	stats.ExtractMS = time.Since(start).Milliseconds() - stats.WalkMS

	// Coverage: every skip, sorted, its digest and counts.
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
	stats.DurationMS = time.Since(start).Milliseconds()
	applyStart := time.Now()
	if err := ix.apply(ctx, plan, &stats); err != nil {
		if ctx.Err() != nil {
			return Stats{}, ctx.Err()
		}
		return Stats{}, err
	}
	stats.ApplyMS = time.Since(applyStart).Milliseconds()
	stats.DurationMS = time.Since(start).Milliseconds()
	pr.report(stats.Progress, true)
	ix.log.Debug("sync applied", slog.String("source_id", src.ID), slog.String("revision_id", stats.RevisionID),
		slog.Int64("indexed", stats.Indexed), slog.Int64("unchanged", stats.Unchanged), slog.Int64("deleted", stats.Deleted),
		slog.Int64("walk_ms", stats.WalkMS), slog.Int64("extract_ms", stats.ExtractMS), slog.Int64("apply_ms", stats.ApplyMS))
	return stats, nil
}

// scan is what a sync found before reading any file: the current
// revision's state (of the paths it looked at), the files to read, the
// paths left out and the indexed paths that are gone.
type scan struct {
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
	sc := &scan{state: st, skips: walked.skips}
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
	stale := old != nil && (old.staleExtraction(f.rel) || old.roleMissing() || old.termsMissing() || old.verdictChanged(f, ix.opts.MaxFileBytes))
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
// spools the results in walk order, so that what is written does not
// depend on scheduling.
func (ix *Indexer) runTasks(ctx context.Context, src Source, force bool, tasks []*task, plan *applyPlan, sp *spool,
	stats *Stats, skips *[]Skip, pr *progressReporter) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *task)
	order := make(chan *task, ix.opts.Workers*4)
	var wg sync.WaitGroup
	for range ix.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &processor{ix: ix, src: src, force: force}
			for t := range work {
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
		r := &t.res
		if r.err != nil {
			return fail(r.err)
		}
		stats.Bytes += r.bytesRead
		switch r.status {
		case statusIndexed, statusAsset:
			stats.Indexed++
			stats.Extracted++
			stats.Units += int64(len(r.units))
			plan.changed++
			plan.noteExtraction(r)
			if r.status == statusAsset {
				plan.assets = append(plan.assets, assetRow{id: r.assetID, mime: r.mime, size: r.size})
			}
			if r.existed {
				plan.replaced = append(plan.replaced, r.rel)
			}
			if err := sp.write(r); err != nil {
				return fail(err)
			}
		case statusTouched:
			stats.Unchanged++
			stats.Touched++
			plan.touched = append(plan.touched, touch{rel: r.rel, size: r.size, mtimeNs: r.mtimeNs})
		case statusSkipped:
			*skips = append(*skips, Skip{Path: r.rel, Reason: r.reason, Detail: r.detail})
			if t.old != nil && t.old.status == statusSkipped && t.old.reason == r.reason {
				// Same verdict as before: only the stat changed.
				plan.touched = append(plan.touched, touch{rel: r.rel, size: r.size, mtimeNs: r.mtimeNs})
				break
			}
			plan.changed++
			if r.existed {
				plan.replaced = append(plan.replaced, r.rel)
			}
			if err := sp.write(r); err != nil {
				return fail(err)
			}
		case statusUnreadable:
			*skips = append(*skips, Skip{Path: r.rel, Reason: SkipUnreadable, Detail: r.detail})
			if t.old != nil {
				plan.deleted = append(plan.deleted, r.rel)
			}
		case statusVanished:
			stats.FilesSeen--
			if t.old != nil {
				plan.deleted = append(plan.deleted, r.rel)
			}
		}
		stats.Skipped = int64(len(*skips))
		pr.report(stats.Progress, false)
		t.res = fileResult{} // release the text
	}
	return ctx.Err()
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

// File statuses of a processed file.
const (
	statusIndexed    = "indexed"    // text extracted into evidence
	statusAsset      = "asset"      // an image stored as an asset
	statusSkipped    = "skipped"    // kept in files with a skip reason
	statusTouched    = "touched"    // modified time changed, content identical
	statusUnreadable = "unreadable" // could not be read now; not kept in files
	statusVanished   = "vanished"   // deleted between the walk and the read
)

// Pseudo-extractor that records image assets.
const (
	imageExtractorName    = "image"
	imageExtractorVersion = "2" // 2: the format facet
)

// openFile opens a file to process; tests replace it to simulate errors
// that root cannot meet (permissions) and races (a file deleted after the
// walk).
var openFile = os.Open

// headBytes is how much of a file decides binary or text and the language.
const headBytes = 8 << 10

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// fileResult is what processing one file produced.
type fileResult struct {
	rel       string
	existed   bool
	size      int64
	mtimeNs   int64
	sha       string // hex SHA-256 of the raw bytes, "" when not read whole
	status    string
	reason    string
	detail    string
	kind      string
	language  string
	title     string
	facets    string // JSON object or ""
	role      Role   // "" for a skipped file
	extractor string
	version   string
	channels  []string
	assetID   string
	mime      string
	units     []evRow
	terms     []byte // FileTerms of the units' leaves
	bytesRead int64
	err       error // fatal: stops the sync
}

// evRow is one evidence unit ready to insert.
type evRow struct {
	id        string
	parentID  string
	ordinal   int
	level     string
	leaf      bool
	title     string
	heading   string // JSON array
	startLine int
	endLine   int
	channel   string
	sha       string
	text      string
	codeTerms string
	tokens    int
}

// processor reads and extracts files for one worker goroutine.
type processor struct {
	ix    *Indexer
	src   Source
	force bool // re-extract even when the content hash is unchanged
	buf   []byte
}

// process reads one file and decides what it becomes. Only a failure to
// store an asset is fatal (res.err); anything wrong with the file itself
// is a skip.
func (p *processor) process(ctx context.Context, f walkFile, old *fileState, reextract bool) (res fileResult) {
	res = fileResult{rel: f.rel, existed: old != nil, size: f.size, mtimeNs: f.mtimeNs}
	if ctx.Err() != nil {
		res.err = ctx.Err()
		return res
	}
	maxText := p.ix.opts.MaxFileBytes
	if f.size > max(maxText, MaxAssetBytes) {
		return res.skip(SkipTooLarge, fmt.Sprintf("%d bytes", f.size))
	}
	fh, err := openFile(f.abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			res.status = statusVanished
			return res
		}
		res.status, res.detail = statusUnreadable, errDetail(err)
		return res
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil {
		if !fi.Mode().IsRegular() {
			return res.skip(SkipSpecial, specialKind(fi.Mode()))
		}
		res.size, res.mtimeNs = fi.Size(), fi.ModTime().UnixNano()
	}
	limit := max(maxText, MaxAssetBytes)
	if cap(p.buf) < int(min(res.size, limit))+1 {
		p.buf = make([]byte, 0, int(min(res.size, limit))+1)
	}
	// Read the head first: a binary file is judged without reading it whole.
	buf := p.buf[:0]
	n, err := io.ReadFull(fh, buf[:min(headBytes, cap(buf))])
	buf = buf[:n]
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		res.status, res.detail = statusUnreadable, errDetail(err)
		return res
	}
	res.bytesRead = int64(n)
	mime := imageMIME(f.rel, buf)
	limit = maxText
	if mime != "" {
		limit = MaxAssetBytes
	}
	if res.size > limit {
		return res.skip(SkipTooLarge, fmt.Sprintf("%d bytes", res.size))
	}
	if mime == "" && bytes.IndexByte(buf, 0) >= 0 && utf16Order(buf) == nil {
		return res.skip(SkipBinary, "")
	}
	// The rest, bounded: the file may have grown since the stat.
	for {
		if int64(len(buf)) > limit {
			return res.skip(SkipTooLarge, fmt.Sprintf("more than %d bytes", limit))
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := fh.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		res.bytesRead += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			res.status, res.detail = statusUnreadable, errDetail(err)
			return res
		}
		if err := ctx.Err(); err != nil {
			res.err = err
			return res
		}
	}
	p.buf = buf[:0]
	if cap(p.buf) > 1<<20 {
		p.buf = nil // keep big buffers no longer than one file
	}
	res.size = int64(len(buf))
	sum := sha256.Sum256(buf)
	res.sha = hex.EncodeToString(sum[:])
	if !p.force && !reextract && old != nil && old.sha == res.sha && (old.status == statusIndexed || old.status == statusAsset) {
		res.status = statusTouched
		return res
	}
	if mime != "" {
		return p.image(res, buf, mime)
	}
	return p.text(res, buf)
}

func (r fileResult) skip(reason, detail string) fileResult {
	r.status, r.reason, r.detail = statusSkipped, reason, detail
	return r
}

// image stores an image as an asset and describes it with one evidence
// unit (kind image, channel image, no text) so that its name and path are
// searchable.
func (p *processor) image(res fileResult, data []byte, mime string) fileResult {
	p.ix.extractCalls.Add(1)
	if err := p.ix.assets.put(res.sha, data); err != nil {
		res.err = err
		return res
	}
	name := path.Base(res.rel)
	res.status, res.assetID, res.mime = statusAsset, res.sha, mime
	res.kind, res.title = KindImage, name
	res.extractor, res.version = imageExtractorName, imageExtractorVersion
	res.channels = []string{ChannelImage}
	res.role = DetectRole(res.rel, nil, "")
	facets, _ := json.Marshal(map[string]string{"format": imageFormat(mime), "mime": mime, "asset_id": res.sha,
		FacetRole: string(res.role)})
	res.facets = string(facets)
	ids := newIDMaker(p.src.ID, res.rel)
	u := Unit{Level: LevelDocument, Parent: -1, Title: name, Channel: ChannelImage}
	row := ids.row(u, 0, "", true, encodeHeading(nil), CodeTerms(name+"\n"+res.rel))
	// An image unit has no text: its hash is the asset's (the bytes'), so
	// that a hit, a run and its diff tell one image from another.
	row.sha = res.sha
	res.units = []evRow{row}
	res.terms = leafTerms(res.units)
	return res
}

// text decodes and extracts a text file. The raw bytes are hashed as they
// are on disk; the text handed to the extractor has its UTF-8 BOM removed
// and CRLF line ends turned into LF (line numbers do not change).
func (p *processor) text(res fileResult, data []byte) fileResult {
	if order := utf16Order(data); order != nil {
		// UTF-16 with its byte order mark (what Windows tools write):
		// decoded to UTF-8, line numbers unchanged.
		text, ok := decodeUTF16(data[2:], order)
		if !ok {
			return res.skip(SkipUndecodable, "not valid UTF-16")
		}
		if bytes.IndexByte(text, 0) >= 0 {
			// U+0000 is no text character: binary data that happens to
			// start with the bytes of a mark.
			return res.skip(SkipBinary, "")
		}
		data = text
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		return res.skip(SkipUndecodable, "not valid UTF-8")
	}
	head := data[:min(len(data), headBytes)]
	lang := DetectLanguage(res.rel, head)
	ex := ExtractorFor(res.rel, lang)
	if ex == nil {
		return res.skip(SkipUnsupported, "")
	}
	var text string
	if bytes.Contains(data, []byte("\r\n")) {
		text = string(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")))
	} else {
		text = string(data)
	}
	p.ix.extractCalls.Add(1)
	out, err := safeExtract(ex, res.rel, text)
	if err != nil {
		return res.skip(SkipExtractError, truncate(err.Error(), 200))
	}
	res.status = statusIndexed
	res.extractor, res.version = ex.Name(), ex.Version()
	res.kind, res.language, res.title = out.Kind, out.Language, out.Title
	if res.kind == "" {
		res.kind = "text"
	}
	if res.language == "" {
		res.language = lang
	}
	res.role = DetectRole(res.rel, head, res.language)
	facets := make(map[string]string, len(out.Facets)+1)
	for k, v := range out.Facets {
		facets[k] = v
	}
	facets[FacetRole] = string(res.role)
	b, _ := json.Marshal(facets)
	res.facets = string(b)
	units := out.Units
	if len(units) == 0 {
		units = []Unit{{Level: LevelDocument, Parent: -1, Title: res.title, StartLine: 1,
			EndLine: max(1, strings.Count(text, "\n")), Channel: ChannelText, Text: text}}
	}
	res.units = buildRows(p.src.ID, res.rel, units)
	res.terms = leafTerms(res.units)
	res.channels = channelsOf(res.units)
	return res
}

// safeExtract runs an extractor, turning a panic into an error.
func safeExtract(ex Extractor, rel, text string) (out Extracted, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("extractor %s panicked: %v", ex.Name(), r)
		}
	}()
	return ex.Extract(rel, text)
}

// imageFormat names an image MIME type's format as the kind registry does
// (png, jpeg, svg, ico, tiff, ...): the subtype without "x-", "+xml" or a
// vendor tree.
func imageFormat(mime string) string {
	sub := strings.ToLower(strings.TrimPrefix(mime, "image/"))
	switch sub {
	case "vnd.microsoft.icon", "x-icon":
		return "ico"
	case "jpg", "pjpeg":
		return "jpeg"
	case "tif":
		return "tiff"
	}
	sub = strings.TrimPrefix(sub, "x-")
	sub = strings.TrimSuffix(sub, "+xml")
	if i := strings.IndexByte(sub, ';'); i >= 0 {
		sub = strings.TrimSpace(sub[:i])
	}
	return sub
}

// utf16Order returns the byte order a UTF-16 byte order mark at the start of
// data announces, or nil.
func utf16Order(data []byte) binary.ByteOrder {
	if len(data) < 2 {
		return nil
	}
	switch {
	case data[0] == 0xFF && data[1] == 0xFE:
		return binary.LittleEndian
	case data[0] == 0xFE && data[1] == 0xFF:
		return binary.BigEndian
	}
	return nil
}

// decodeUTF16 decodes UTF-16 code units in the given order to UTF-8; false
// for an odd number of bytes or an unpaired surrogate.
func decodeUTF16(data []byte, order binary.ByteOrder) ([]byte, bool) {
	if len(data)%2 != 0 {
		return nil, false
	}
	units := make([]uint16, len(data)/2)
	for i := range units {
		units[i] = order.Uint16(data[2*i:])
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case utf16.IsSurrogate(rune(u)):
			if i+1 >= len(units) {
				return nil, false
			}
			r := utf16.DecodeRune(rune(u), rune(units[i+1]))
			if r == utf8.RuneError {
				return nil, false
			}
			out = utf8.AppendRune(out, r)
			i++
		default:
			out = utf8.AppendRune(out, rune(u))
		}
	}
	return out, true
}
