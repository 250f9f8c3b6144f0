package query

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"hash/maphash"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tychora/tychora/workspace"
)

// The file index: the term counts kept with every indexed file
// (file_terms, sources/file_terms.go), held in memory as postings per
// stem, so that a search scores every file that holds a word of the
// question exactly, in one pass over those words' postings, instead of
// asking the whole-file FTS5 index for its best files (bm25() reads each
// matching file's column sizes) and then reading the kept counts of each
// file it ranks.
//
// Every file is then scored by the same fileScore the final ranking adds
// to its units, so the best files whose units are completed
// (completeBestFiles) are the true best of the scope, not the best of the
// pool and a probe.
//
// The index follows the lexical index's generations. It is built whole at
// the first search of a generation it has never seen; at each later
// generation only the files whose fingerprint (extraction, content hash,
// counts' length, role, size) changed are read again, into a delta beside
// the base, and the base's old versions of them are marked dead. When the
// delta holds more than 1/fileDeltaShare of the base's files, the index is
// built whole again. An index is never changed once a search has it:
// each generation is a new value sharing the unchanged parts.
//
// Stems are held as 64-bit hashes (maphash, one seed per process): two
// stems that collide would share postings and count as one word, which
// at a few million stems happens with a chance of about 10⁻⁶.

// maxFileIndexBytes bounds the encoded counts (sum of file_terms
// lengths) a file index is built from: Go's source tree without its
// testdata (7,401 files) has 27 MB of them, which the index holds in 53 MB
// of memory (BenchmarkFileIndexBuild, bench/README.md). A
// larger workspace is searched without the index (the whole-file FTS5
// probe, kept counts read per file).
const maxFileIndexBytes = 64 << 20

// fileDeltaShare: a delta of more than 1/fileDeltaShare of the base's files
// rebuilds the index whole.
const fileDeltaShare = 8

// maxFilePostingsWalked bounds the postings one search walks in the file
// index; a question whose words hold more (hundreds of very common words)
// is ranked as without the index.
const maxFilePostingsWalked = 4 << 20

// stemSeed hashes stems for the file index.
var stemSeed = maphash.MakeSeed()

func stemHash(stem []byte) uint64 { return maphash.Bytes(stemSeed, stem) }

// filePosting is one file's counts of one stem: in its units' titles,
// texts and code terms, and in its path.
type filePosting struct {
	file                    int32
	title, text, code, path uint16
}

// fileEntry is one file of the index.
type fileEntry struct {
	sourceID, collectionID, path string
	role, kind, language         string
	bytes                        int64
	// prior is the role's prior (rolePriors), 1 for a role without one:
	// looked up once here, not at every search for every file.
	prior float64
	print string // what changes when its counts may have
	// first and last are the range of rows (evidence seq) of its units;
	// 0, 0 when it has none.
	first, last int64
	// pathLen is the path's length in tokens (the scorer's path column).
	pathLen int32
	// facts are the path's (rank_paths.go).
	facts *pathFacts
}

// filePart is the base of a file index or its delta.
type filePart struct {
	files []fileEntry
	byKey map[string]int32
	stems map[uint64][]filePosting
	// bytes is the encoded counts read into it.
	bytes int64

	// The unit index of the part's files (rank_unit_index.go): their
	// leaf units, each stem's postings over them, and each file's units
	// [lo, hi) in units. unitsOK: every unit of the files is held.
	units     []unitEntry
	unitFiles []int32 // the units' files, apart: what a walk of postings reads
	ustems    map[uint64][]unitPosting
	fileUnits [][2]int32
	unitsOK   bool
	// titles are the units' titles folded as titleNames folds them (lower
	// case, no underscores), one after the other; titleEnds[i] is where
	// unit i's ends. Stage B's bound of the named-test boost reads them
	// (unitWalk.titleNames).
	titles    []byte
	titleEnds []uint32

	// names, kept while a base is built to be saved, are its stems by
	// their hashes (rank_file_index_saved.go): the hashes are this
	// process's alone.
	names map[uint64]string
}

func newFilePart() *filePart {
	return &filePart{byKey: map[string]int32{}, stems: map[uint64][]filePosting{}, unitsOK: true}
}

// fileIndex is the file index of one generation. Immutable.
type fileIndex struct {
	base, delta *filePart
	dead        []bool // base files changed or removed since the base was built
	// norms caches the units' length normalizations per profile.
	norms unitNormCache
}

// fileIndexCache holds the file index of the last generation searched.
type fileIndexCache struct {
	mu         sync.Mutex
	generation []byte
	index      *fileIndex // nil with a generation set: none for it (too large)

	// life, set by StartWarm, is the serving engine's lifetime: with it, a
	// large index is refreshed behind the searches (refreshBehind), not by
	// the first search of a generation while every other one waits.
	life context.Context
	// behind: a refresh runs in the background; behindAt is when the last
	// one started, before it read anything; closed: Close was called, no
	// refresh starts any more; done waits for the running one.
	behind   bool
	behindAt time.Time
	closed   bool
	done     sync.WaitGroup
	// inlineFiles overrides inlineRefreshFiles (tests).
	inlineFiles int
	// off, set by benchmarks, makes every search go without the index,
	// as a facet-filtered one does.
	off bool
	// hold, when set (tests), is received from before a refresh behind
	// the searches reads anything.
	hold chan struct{}

	// next is the index of the generation a writer is committing
	// (PrepareCommit); epoch counts the indexes the cache was given, so
	// that a refresh behind the searches that one given meanwhile made
	// stale keeps nothing.
	next  *pendingIndex
	epoch uint64

	// A base being saved (rank_file_index_saved.go): saving while one is
	// written, saveNext the one to write after it; saves waits for them.
	saveMu     sync.Mutex
	saving     bool
	saveNext   *filePart
	saveClosed bool // close was called: no save starts any more
	saves      sync.WaitGroup
	// loaded counts the saved bases read (tests).
	loaded atomic.Int64
}

// inlineRefreshFiles: an index of fewer files is refreshed by the first
// search of a new generation, which the searches of that generation wait
// for; it takes a few milliseconds. A larger one is refreshed behind the
// searches when the engine serves (StartWarm): refreshing Go's tree
// took 77 ms when no file changed and 0.6 s when all did (a full
// re-sync) before the unit index, 3.6 s with it (BenchmarkFileIndexBuild,
// 2026-12-06), and every search of the generation waited that long
// (bench/README.md, "Searches during a sync"). Meanwhile its searches run
// without the file index, as a facet-filtered search does: the
// whole-file FTS5 probe proposes the best files and their kept counts are
// read per file (rank_file_best.go).
const inlineRefreshFiles = 1000

// get returns the file index of generation gen, which a search's snapshot
// read at read (after its snapshot began); nil when the workspace is too
// large for one, or when a serving engine builds or refreshes a large
// index behind the searches: the search goes without it. A search whose
// snapshot is older than the refresh running or last started starts none:
// that refresh sees its generation or a later one.
func (c *fileIndexCache) get(ctx context.Context, e *Engine, tx *sql.Tx, gen []byte, read time.Time) (*fileIndex, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return nil, nil
	}
	if c.generation != nil && bytes.Equal(c.generation, gen) || c.promote(gen) {
		return c.index, nil
	}
	if c.life != nil && (c.behind || c.generation != nil && !c.small()) {
		if !c.behind && !c.closed && c.life.Err() == nil && read.After(c.behindAt) {
			c.startBehind(e, c.index)
		}
		return nil, nil
	}
	ix, err := refreshFileIndex(ctx, e, tx, c.index, false)
	if err != nil {
		return nil, err
	}
	c.generation, c.index = slices.Clone(gen), ix
	c.epoch++
	return ix, nil
}

// startBehind starts refreshing old (nil: building the index) behind the
// searches. c.mu is held.
func (c *fileIndexCache) startBehind(e *Engine, old *fileIndex) {
	c.behind, c.behindAt = true, time.Now()
	c.done.Add(1)
	go c.refreshBehind(e, old, c.epoch)
}

// small reports whether the cached index is refreshed inline: it has
// fewer than inlineRefreshFiles files (none when the workspace was too
// large for one).
func (c *fileIndexCache) small() bool {
	return c.index != nil && len(c.index.base.files)+len(c.index.delta.files) < c.inlineLimit()
}

// inlineLimit is inlineRefreshFiles, or the tests' inlineFiles.
func (c *fileIndexCache) inlineLimit() int {
	if c.inlineFiles > 0 {
		return c.inlineFiles
	}
	return inlineRefreshFiles
}

// refreshBehind refreshes old to the generation a new read transaction
// sees, and keeps it unless the engine closed meanwhile or the cache was
// given another index since it started (epoch: PrepareCommit's).
func (c *fileIndexCache) refreshBehind(e *Engine, old *fileIndex, epoch uint64) {
	defer c.done.Done()
	gen, ix, err := func() ([]byte, *fileIndex, error) {
		if c.hold != nil {
			<-c.hold
		}
		tx, release, err := e.begin(c.life)
		if err != nil {
			return nil, nil, err
		}
		defer release()
		gen, _, err := readGeneration(c.life, e, tx)
		if err != nil {
			return nil, nil, err
		}
		// It does not give way to the searches: they are the dearer
		// without it (three and a half times a search with it).
		ix, err := refreshFileIndex(c.life, e, tx, old, false)
		return gen, ix, err
	}()
	c.mu.Lock()
	c.behind = false
	// A failed refresh leaves the cache as it was: the next search of a
	// new generation tries again.
	kept := err == nil && !c.closed && c.epoch == epoch
	if kept {
		c.generation, c.index = gen, ix
		c.epoch++
	}
	c.mu.Unlock()
	if kept && ix != nil && (old == nil || ix.base != old.base) {
		// Building a base whole leaves about twice its size in garbage
		// (the postings' growth, the tokens' memo): give it back to the
		// system now rather than keep it until the heap is scavenged.
		debug.FreeOSMemory()
	}
}

// close stops refreshes from starting and waits for the running one.
func (c *fileIndexCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.done.Wait()
	c.saveMu.Lock()
	c.saveClosed = true
	c.saveMu.Unlock()
	c.saves.Wait()
}

// StartWarm builds the file index of the index's current generation in
// the background and lets later generations' indexes be refreshed behind
// the searches (inlineRefreshFiles). The build of a large workspace's
// index (3.6 s over Go's tree) runs behind the searches too: those that
// come meanwhile go without it, as during a refresh, instead of waiting.
// A small one is built under the cache's lock, so a search that comes
// first waits the few milliseconds it takes and every ranking of a small
// workspace is made with the index. Cancel ctx to stop both; Close waits
// for them. A failure is left to the next search, which builds the index
// itself.
func (e *Engine) StartWarm(ctx context.Context) {
	e.fileIdx.mu.Lock()
	e.fileIdx.life = ctx
	e.fileIdx.mu.Unlock()
	e.warming.Add(1)
	go func() {
		defer e.warming.Done()
		_ = e.warm(ctx)
	}()
}

// BuildsBehind reports whether the engine builds and refreshes a large
// workspace's file index behind its searches (StartWarm was called); an
// engine that does not builds it in the first search that needs it.
func (e *Engine) BuildsBehind() bool {
	e.fileIdx.mu.Lock()
	defer e.fileIdx.mu.Unlock()
	return e.fileIdx.life != nil
}

// sqlIndexedFiles counts the files the file index would hold, at most.
const sqlIndexedFiles = `SELECT count(*) FROM files WHERE status = 'indexed'`

// warm readies the file index (warmIndex), then ranks warmQuestion once
// and drops the answer: what the first search of a process makes once
// (the read statements, the profile's normalizations of every unit, the
// generation's statistics) is made before a caller waits on it. Without
// it the first searches of a fresh owner under 32 clients answered at p99
// 360–405 ms against 295–323 ms with it (bench/README.md, "A fresh
// owner's first searches").
//
// A large workspace whose index is built behind the searches is not
// warmed so: the question would be ranked without the index, beside its
// build, and warm nothing the index's first searches need.
func (e *Engine) warm(ctx context.Context) error {
	ready, err := e.warmIndex(ctx)
	if err != nil || !ready {
		return err
	}
	_, err = e.Search(ctx, workspace.Principal{ID: "warm", Grant: workspace.GrantRead}, QueryRequest{Question: warmQuestion, Limit: 10})
	return err
}

// warmQuestion is the question warm ranks: common words of code and prose.
const warmQuestion = "how is an error returned to the caller"

// warmIndex builds the file index of the current generation: a small
// workspace's before any search ranks, a large one's from a saved base
// that needs no whole build likewise, else behind the searches. It
// reports whether the index is ready when it returns.
func (e *Engine) warmIndex(ctx context.Context) (ready bool, err error) {
	tx, release, err := e.begin(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	gen, _, err := readGeneration(ctx, e, tx)
	if err != nil {
		return false, err
	}
	var files int
	if err := tx.QueryRowContext(ctx, sqlIndexedFiles).Scan(&files); err != nil {
		return false, fmt.Errorf("search: file index: %w", err)
	}
	c := &e.fileIdx
	if files >= c.inlineLimit() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.generation != nil || c.behind || c.closed {
			return c.generation != nil && !c.behind && !c.closed, nil
		}
		// A saved base that needs no whole build is read before any
		// search ranks (a fraction of a second; the searches that come
		// meanwhile wait for it), as a small index is built.
		var saved *fileIndex
		if e.SavedIndex != "" {
			var ix *fileIndex
			ix, saved, err = refreshFromSaved(ctx, e, tx)
			if err == nil && ix != nil {
				c.generation, c.index = slices.Clone(gen), ix
				c.epoch++
				return true, nil
			}
		}
		c.startBehind(e, saved)
		return false, nil
	}
	ix, err := c.get(ctx, e, tx, gen, time.Now())
	return ix != nil, err
}

// fileRef is a file of an index: its part's index with the delta's after
// the base's.
type fileRef = int32

// entry returns the file ref refers to.
func (ix *fileIndex) entry(ref fileRef) *fileEntry {
	if n := int32(len(ix.base.files)); ref >= n {
		return &ix.delta.files[ref-n]
	}
	return &ix.base.files[ref]
}

// lookup returns the ref of a live file.
func (ix *fileIndex) lookup(key string) (fileRef, bool) {
	if id, ok := ix.delta.byKey[key]; ok {
		return int32(len(ix.base.files)) + id, true
	}
	if id, ok := ix.base.byKey[key]; ok && !ix.dead[id] {
		return id, true
	}
	return 0, false
}

// fileScores are the files of a scope that hold a word of a question,
// with their counts of each term.
type fileScores struct {
	ix *fileIndex
	nt int
	// w is the profile's field weights the counts are weighed by.
	w    *[numFields]fieldParams
	refs []fileRef
	// counts is [row*nt + term]: the file's counts of the term's stem in
	// its units' titles, texts and code terms, weighed into tf as
	// keptFileTF weighs them, and in its path (the stem's first term
	// only), as scorer.pathTF counts it. Counts, not weighed floats: half
	// the memory (the largest allocation of a search), and the weighing
	// is done in float64 where it is read, as before.
	counts []termCounts
	slots  []int32 // ref → row+1; 0: the file holds no word of the question
}

// termCounts are a file's counts of one term (filePosting's, without the
// file).
type termCounts struct {
	title, text, code, path uint16
}

// tf is the file's weighted term frequency of term t in row (keptFileTF's).
func (fs *fileScores) tf(row, t int) float64 {
	c := &fs.counts[row*fs.nt+t]
	return fs.w[fieldTitle].weight*float64(c.title) + fs.w[fieldBody].weight*float64(c.text) + fs.w[fieldCode].weight*float64(c.code)
}

// rowTF fills tf and path with the weighted frequencies of every term of
// the file in row.
func (fs *fileScores) rowTF(row int, tf, path []float64) {
	for t := range fs.nt {
		tf[t] = fs.tf(row, t)
		path[t] = fs.w[fieldPath].weight * float64(fs.counts[row*fs.nt+t].path)
	}
}

// fileIndexable reports whether the file index can apply the filter:
// every filter but facets.
func (sf *scopeFilter) fileIndexable() bool { return len(sf.facets) == 0 }

// holdsFile reports whether the file is in the scope; keys is the set of
// pathKeys (nil: no path filter).
func (sf *scopeFilter) holdsFile(f *fileEntry, keys map[string]bool) bool {
	switch {
	case sf.collections != nil && !slices.Contains(sf.collections, f.collectionID),
		len(sf.sources) > 0 && !slices.Contains(sf.sources, f.sourceID),
		len(sf.kinds) > 0 && !slices.Contains(sf.kinds, f.kind),
		len(sf.languages) > 0 && !slices.Contains(sf.languages, f.language),
		len(sf.roles) > 0 && !slices.Contains(sf.roles, f.role),
		len(sf.exclude) > 0 && slices.Contains(sf.exclude, f.role),
		keys != nil && !keys[fileKeyOf(f.sourceID, f.path)]:
		return false
	}
	return true
}

// score gathers the files in scope that hold a term of q; nil when the
// index cannot serve the search (a facet filter, too many postings).
func (ix *fileIndex) score(q *preparedQuery, sf *scopeFilter) *fileScores {
	if ix == nil || !sf.fileIndexable() {
		return nil
	}
	nt := len(q.terms)
	// Each stem once: the terms it weighs (as keptFileTF credits them) and
	// the term the path credits (the matcher's first).
	type stemTerms struct {
		stem  string
		terms []int
		path  int
	}
	var stems []stemTerms
	at := map[string]int{}
	for t, st := range q.terms {
		if st.weight <= 0 && !st.phrase {
			continue
		}
		i, ok := at[st.stem]
		if !ok {
			i = len(stems)
			at[st.stem] = i
			stems = append(stems, stemTerms{stem: st.stem, path: t})
		}
		if st.weight > 0 {
			stems[i].terms = append(stems[i].terms, t)
		}
	}
	walked := 0
	lists := make([][2][]filePosting, len(stems))
	for i, s := range stems {
		h := stemHash([]byte(s.stem))
		lists[i] = [2][]filePosting{ix.base.stems[h], ix.delta.stems[h]}
		walked += len(lists[i][0]) + len(lists[i][1])
	}
	if walked > maxFilePostingsWalked {
		return nil
	}
	var keys map[string]bool
	if sf.pathKeys != nil {
		keys = make(map[string]bool, len(sf.pathKeys))
		for _, k := range sf.pathKeys {
			keys[k] = true
		}
	}
	nb := int32(len(ix.base.files))
	fs := &fileScores{ix: ix, nt: nt, w: &q.prof.fields, slots: make([]int32, int(nb)+len(ix.delta.files))}
	// Room for a row of each file that may hold a word, zeroed once: a
	// new row is the next nt of it.
	rows := min(walked, len(fs.slots))
	fs.counts = make([]termCounts, 0, rows*nt)
	// inScope caches the scope test: 1 in, -1 out.
	inScope := make([]int8, len(fs.slots))
	for i, s := range stems {
		for part, ps := range lists[i] {
			off := int32(0)
			if part == 1 {
				off = nb
			}
			for _, p := range ps {
				ref := off + p.file
				if part == 0 && ix.dead[p.file] {
					continue
				}
				switch inScope[ref] {
				case 0:
					inScope[ref] = -1
					if sf.holdsFile(ix.entry(ref), keys) {
						inScope[ref] = 1
					}
					if inScope[ref] < 0 {
						continue
					}
				case -1:
					continue
				}
				row := fs.slots[ref] - 1
				if row < 0 {
					row = int32(len(fs.refs))
					fs.slots[ref] = row + 1
					fs.refs = append(fs.refs, ref)
					fs.counts = fs.counts[:len(fs.counts)+nt]
				}
				base := int(row) * nt
				for _, t := range s.terms {
					c := &fs.counts[base+t]
					c.title, c.text, c.code = p.title, p.text, p.code
				}
				if p.path > 0 {
					fs.counts[base+s.path].path = p.path
				}
			}
		}
	}
	return fs
}

// keep fills kept with the counts of the given files that hold a word of
// the question (those that hold none are absent, as keptFileTF leaves
// them).
func (fs *fileScores) keep(files [][2]string, kept map[string]*keptFile) {
	for _, f := range files {
		k := fileKeyOf(f[0], f[1])
		if _, ok := kept[k]; ok {
			continue
		}
		ref, ok := fs.ix.lookup(k)
		if !ok {
			continue
		}
		e := fs.ix.entry(ref)
		kf := &keptFile{tf: make([]float64, fs.nt), bytes: e.bytes, role: e.role}
		if row := fs.slots[ref] - 1; row >= 0 {
			for t := range fs.nt {
				kf.tf[t] = fs.tf(int(row), t)
			}
		}
		kept[k] = kf
	}
}

// best lists the n files of the best whole-file score (fileScore times the
// role prior, as completeBestFiles orders them, ties by key), best first.
func (fs *fileScores) best(q *preparedQuery, n int) [][2]string {
	type scored struct {
		ref   fileRef
		score float64
	}
	key := func(ref fileRef) string {
		e := fs.ix.entry(ref)
		return fileKeyOf(e.sourceID, e.path)
	}
	// worse orders a below b: lower score, or the same score and a later
	// key (keys are built for ties only).
	worse := func(a, b *scored) bool {
		return a.score < b.score || a.score == b.score && key(a.ref) > key(b.ref)
	}
	top := make([]scored, 0, n)
	w := -1 // the worst of top once it is full
	tf, path := make([]float64, fs.nt), make([]float64, fs.nt)
	for row, ref := range fs.refs {
		e := fs.ix.entry(ref)
		fs.rowTF(row, tf, path)
		s := q.fileScore(tf, path, e.bytes)
		if len(q.asked) == 0 {
			s *= e.prior
		}
		if s <= 0 || w >= 0 && s < top[w].score {
			continue
		}
		c := scored{ref, s}
		switch {
		case len(top) < n:
			top = append(top, c)
		case worse(&top[w], &c):
			top[w] = c
		default:
			continue
		}
		if len(top) == n {
			w = 0
			for i := range top {
				if worse(&top[i], &top[w]) {
					w = i
				}
			}
		}
	}
	slices.SortFunc(top, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(key(a.ref), key(b.ref))
	})
	out := make([][2]string, len(top))
	for i, t := range top {
		e := fs.ix.entry(t.ref)
		out[i] = [2]string{e.sourceID, e.path}
	}
	return out
}

// rangeOf gives the range of rows of a file's units; false when the index
// lacks the file or it has no unit.
func (fs *fileScores) rangeOf(key string) ([2]int64, bool) {
	ref, ok := fs.ix.lookup(key)
	if !ok {
		return [2]int64{}, false
	}
	if e := fs.ix.entry(ref); e.last > 0 {
		return [2]int64{e.first, e.last}, true
	}
	return [2]int64{}, false
}
