package query

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/tychora/tychora/sources"
)

// fileIndexTree is a small tree for the file index: definitions, tests,
// docs and plain text, with words in paths and in titles.
func fileIndexTree() map[string]string {
	tree := map[string]string{
		"notes/README.md":       "# Parsing addresses\n\nParseIP parses addresses; parsing an address twice parses it again.\n\n## Zones\n\nA zone follows the address.\n",
		"notes/plain.txt":       "Address book\n\nThe addresses of the readers, parsed by hand.\n",
		"zone/zone.go":          "package zone\n\n// Zone names the zone of an address.\ntype Zone string\n",
		"address/parse_test.go": "package address\n\nfunc TestParse(t *testing.T) { parse(\"zone\") }\n",
	}
	for k, v := range definitionTree {
		tree[k] = v
	}
	return tree
}

// indexedQuery prepares question within a new read transaction of env,
// and returns the file index of its generation.
func indexedQuery(t *testing.T, env *searchEnv, question string) (*preparedQuery, *fileIndex, func()) {
	q, ix, _, release := indexedQueryTx(t, env, question)
	return q, ix, release
}

func indexedQueryTx(t *testing.T, env *searchEnv, question string) (*preparedQuery, *fileIndex, *sql.Tx, func()) {
	t.Helper()
	ctx := context.Background()
	tx, release, err := env.engine.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pq := parseQuestion(question)
	prof, _ := profileByName(DefaultProfile)
	q, err := env.engine.prepareQuery(ctx, tx, prof, &pq, &scopeFilter{})
	if err != nil {
		release()
		t.Fatal(err)
	}
	ix, err := env.engine.fileIdx.get(ctx, env.engine, tx, q.stats.generation, q.stats.read)
	if err != nil || ix == nil {
		release()
		t.Fatalf("no file index: %v", err)
	}
	return q, ix, tx, release
}

// The file index gives every file the counts keptFileTF reads and the
// path counts the scorer makes, and its best files are the files of the
// best fileScore times role prior, computed the slow way over every file.
func TestFileIndexMatchesKeptCounts(t *testing.T) {
	env := newSearchEnv(t)
	tree := fileIndexTree()
	src := env.folder("go", "default", tree)
	ctx := context.Background()
	for _, question := range []string{"ParseIP parse address", "mutex lock state", "read request readers", "zone", "tests for parse"} {
		q, ix, tx, release := indexedQueryTx(t, env, question)
		q.asked = rolesAsked(q.pq, nil)
		fs := ix.score(q, &scopeFilter{})
		if fs == nil {
			release()
			t.Fatalf("%q: the index refused the search", question)
		}
		var pairs [][2]string
		for p := range tree {
			pairs = append(pairs, [2]string{src, p})
		}
		slowKept := map[string]*keptFile{}
		err := env.engine.keptFileTF(ctx, tx, q, pairs, slowKept)
		var files []bestFile
		for _, f := range pairs {
			files = append(files, bestFile{key: fileKeyOf(f[0], f[1]), src: f[0], path: f[1]})
		}
		var slowRanges [][2]int64
		if err == nil {
			slowRanges, err = env.engine.fileRanges(ctx, tx, files)
		}
		release()
		if err != nil {
			t.Fatal(err)
		}
		// The ranges of rows of the files' units, kept with the index.
		if fast := indexRanges(fs, files); len(fast) != len(tree) || !slices.Equal(fast, slowRanges) {
			t.Errorf("%q: ranges from the index %v, from the table %v", question, fast, slowRanges)
		}
		fastKept := map[string]*keptFile{}
		fs.keep(pairs, fastKept)
		if len(fastKept) != len(tree) || len(slowKept) != len(tree) {
			t.Fatalf("%q: counts for %d files from the index, %d from the table, want %d", question, len(fastKept), len(slowKept), len(tree))
		}
		sc := newScorer(q.prof, q.stats, q.terms, q.phrases, q.qualified, q.seq)
		type scored struct {
			path  string
			score float64
		}
		var all []scored
		matched := 0
		for _, f := range pairs {
			k := fileKeyOf(f[0], f[1])
			slow, fast := slowKept[k], fastKept[k]
			if slow.bytes != fast.bytes || slow.role != fast.role {
				t.Errorf("%q: %s: index has %d bytes, role %q; table %d, %q", question, f[1], fast.bytes, fast.role, slow.bytes, slow.role)
			}
			for i := range q.terms {
				if q.terms[i].weight > 0 && math.Abs(slow.tf[i]-fast.tf[i]) > 1e-9 {
					t.Errorf("%q: %s term %q: index %.3f, table %.3f", question, f[1], q.terms[i].stem, fast.tf[i], slow.tf[i])
				}
			}
			pathTF := sc.pathTF(f[1])
			ref, _ := ix.lookup(k)
			if row := fs.slots[ref] - 1; row >= 0 {
				matched++
				tf, path := make([]float64, fs.nt), make([]float64, fs.nt)
				fs.rowTF(int(row), tf, path)
				for i := range q.terms {
					if q.terms[i].weight > 0 && math.Abs(pathTF[i]-path[i]) > 1e-9 {
						t.Errorf("%q: %s path term %q: index %.3f, scorer %.3f", question, f[1], q.terms[i].stem, path[i], pathTF[i])
					}
				}
			}
			s := q.fileScore(slow.tf, pathTF, slow.bytes)
			if p, ok := rolePriors[slow.role]; ok && len(q.asked) == 0 {
				s *= p
			}
			if s > 0 {
				all = append(all, scored{f[1], s})
			}
		}
		if matched == 0 {
			t.Fatalf("%q: no file holds a word: the test checks nothing", question)
		}
		slices.SortFunc(all, func(a, b scored) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return cmp.Compare(fileKeyOf(src, a.path), fileKeyOf(src, b.path))
		})
		best := fs.best(q, 4)
		if len(best) != min(4, len(all)) {
			t.Fatalf("%q: %d best files, want %d", question, len(best), min(4, len(all)))
		}
		for i, b := range best {
			if b[1] != all[i].path {
				t.Errorf("%q: best file %d is %s, want %s (%v)", question, i, b[1], all[i].path, all[:len(best)])
			}
		}
	}
}

// A sync that changes, adds and deletes files gives the next generation
// an index with the new counts: a delta beside the same base, the old
// versions dead. Changing most files builds it whole again.
func TestFileIndexFollowsSyncs(t *testing.T) {
	env := newSearchEnv(t)
	tree := fileIndexTree()
	// Enough files that two changed ones are a delta (fileDeltaShare).
	for i := range 3 * fileDeltaShare {
		tree[fmt.Sprintf("filler/f%02d.go", i)] = fmt.Sprintf("package filler\n\n// F%d fills.\nvar F%d = %d\n", i, i, i)
	}
	src := env.folder("go", "default", tree)
	ctx := context.Background()
	sync := func() {
		t.Helper()
		if _, err := env.ix.Sync(ctx, src, sources.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bestOf := func(question string) (*fileIndex, []string) {
		t.Helper()
		q, ix, release := indexedQuery(t, env, question)
		defer release()
		fs := ix.score(q, &scopeFilter{})
		var out []string
		for _, b := range fs.best(q, 20) {
			out = append(out, b[1])
		}
		return ix, out
	}
	first, got := bestOf("mutex quokka")
	if !slices.Contains(got, "sync/mutex.go") || slices.Contains(got, "zone/zone.go") {
		t.Fatalf("before the change: %v", got)
	}
	env.write("go/zone/zone.go", "package zone\n\n// Zone keeps a quokka behind a mutex.\ntype Zone struct{ mu Mutex }\n")
	env.write("go/added/quokka.go", "package added\n\n// Quokka is new.\nvar Quokka = 1\n")
	if err := os.Remove(filepath.Join(env.root, "go", "sync", "mutex.go")); err != nil {
		t.Fatal(err)
	}
	sync()
	second, got := bestOf("mutex quokka")
	for _, want := range []string{"zone/zone.go", "added/quokka.go"} {
		if !slices.Contains(got, want) {
			t.Errorf("after the change %s is not among the files: %v", want, got)
		}
	}
	if slices.Contains(got, "sync/mutex.go") {
		t.Errorf("a deleted file is still scored: %v", got)
	}
	if second.base != first.base || len(second.delta.files) != 2 {
		t.Errorf("the change rebuilt the index (delta of %d files, same base %v), want a delta of 2", len(second.delta.files), second.base == first.base)
	}
	// The old version of zone.go counted "zone" in its path and its text,
	// never "quokka": only the new one may.
	_, got = bestOf("quokka")
	if len(got) != 2 {
		t.Errorf("quokka: %v, want the two files that hold it", got)
	}
	for p := range tree {
		if p != "sync/mutex.go" {
			env.write("go/"+p, tree[p]+"\n// rewritten\n")
		}
	}
	sync()
	third, _ := bestOf("rewritten")
	// Units written again have new rows: the index's ranges follow them.
	q, ix, tx, release := indexedQueryTx(t, env, "rewritten")
	var files []bestFile
	for _, f := range ix.base.files {
		files = append(files, bestFile{key: fileKeyOf(f.sourceID, f.path), src: f.sourceID, path: f.path})
	}
	want, err := env.engine.fileRanges(ctx, tx, files)
	release()
	if err != nil {
		t.Fatal(err)
	}
	if got := indexRanges(ix.score(q, &scopeFilter{}), files); !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("after the rewrite the index's ranges are %v, the table's %v", got, want)
	}
	if third.base == first.base || len(third.delta.files) != 0 || slices.Contains(third.dead, true) {
		t.Errorf("rewriting every file kept the old base (delta %d files)", len(third.delta.files))
	}
}

// The index applies the scope: collections, roles left out, path globs;
// it does not serve a facet filter.
func TestFileIndexScope(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("a", "a", map[string]string{"mutex.go": "package a\n\n// Mutex locks.\ntype Mutex struct{}\n", "mutex_test.go": "package a\n\nfunc TestMutex(t *testing.T) { var m Mutex; m.Lock() }\n"})
	env.folder("b", "b", map[string]string{"lock.go": "package b\n\n// Lock a mutex.\nfunc Lock(m *Mutex) {}\n"})
	q, ix, release := indexedQuery(t, env, "mutex lock")
	defer release()
	best := func(sf *scopeFilter) []string {
		t.Helper()
		fs := ix.score(q, sf)
		if fs == nil {
			t.Fatal("the index refused a filter it applies")
		}
		var out []string
		for _, b := range fs.best(q, 10) {
			out = append(out, b[1])
		}
		slices.Sort(out)
		return out
	}
	if got := best(&scopeFilter{}); !slices.Equal(got, []string{"lock.go", "mutex.go", "mutex_test.go"}) {
		t.Errorf("no filter: %v", got)
	}
	if got := best(&scopeFilter{collections: []string{"b"}}); !slices.Equal(got, []string{"lock.go"}) {
		t.Errorf("collection b: %v", got)
	}
	if got := best(&scopeFilter{exclude: []string{"test"}}); !slices.Equal(got, []string{"lock.go", "mutex.go"}) {
		t.Errorf("tests left out: %v", got)
	}
	if got := best(&scopeFilter{roles: []string{"test"}}); !slices.Equal(got, []string{"mutex_test.go"}) {
		t.Errorf("tests only: %v", got)
	}
	var lock string
	for _, f := range ix.base.files {
		if f.path == "lock.go" {
			lock = fileKeyOf(f.sourceID, f.path)
		}
	}
	if got := best(&scopeFilter{pathKeys: []string{lock}}); !slices.Equal(got, []string{"lock.go"}) {
		t.Errorf("one path: %v", got)
	}
	if ix.score(q, &scopeFilter{facets: map[string]string{"x": "y"}}) != nil {
		t.Error("the index served a facet filter")
	}
}

// The small files among the best are read whole: with every matching file
// small and among them, the pooled first page is the exhaustive one, and
// a file's document and section units (the parents of its leaves) never
// come back as hits.
func TestSmallBestFilesReadWhole(t *testing.T) {
	env := newSearchEnv(t)
	files := map[string]string{}
	// 30 files of two sections each (60 leaves match, more than the pool
	// of a first page, 50), and 3 of a title and a paragraph, like a
	// paper's abstract, whose document unit holds the title alone.
	words := []string{"glacier", "moraine", "crevasse", "serac", "firn", "ablation"}
	for i := range 30 {
		a, b := words[i%len(words)], words[(i/len(words))%len(words)]
		files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("# The %s, note %d\n\n## Ice\n\nThe %s and the %s of the ice, %d.\n\n## Rock\n\nA %s over rock, %s again.\n", a, i, a, b, i, b, a)
	}
	for i := range 3 {
		files[fmt.Sprintf("papers/p%02d.md", i)] = fmt.Sprintf("# Glacier moraine crevasse serac study %d\n\nWe measured the glacier and its moraine near a crevasse, %d.\n", i, i)
	}
	env.folder("d", "default", files)
	full := &Engine{DB: env.engine.DB, Cursors: env.engine.Cursors, Collections: env.engine.Collections, Exhaustive: true}
	ctx := context.Background()
	for _, question := range []string{"glacier moraine crevasse", "serac firn ablation ice", "rock"} {
		req := QueryRequest{Question: question}
		pooled := env.search(env.all, req)
		exhaustive, err := full.Search(ctx, env.all, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(pooled.Hits) != DefaultLimit {
			t.Fatalf("%q: %d hits, want a full page", question, len(pooled.Hits))
		}
		ids := func(hs []Hit) []string {
			var out []string
			for _, h := range hs {
				out = append(out, h.EvidenceID)
			}
			slices.Sort(out)
			return out
		}
		if a, b := ids(pooled.Hits), ids(exhaustive.Hits); !slices.Equal(a, b) {
			t.Errorf("%q: pooled page %v, exhaustive %v", question, a, b)
		}
		for _, h := range pooled.Hits {
			var leaf bool
			if err := env.db.R.QueryRowContext(ctx, `SELECT leaf FROM evidence WHERE evidence_id = ?`, h.EvidenceID).Scan(&leaf); err != nil || !leaf {
				t.Errorf("%q: hit %s (%s %q) is no leaf (%v)", question, h.EvidenceID, h.Path, h.Title, err)
			}
		}
	}
}

// indexRanges gives the file index's range of rows of each file, in the
// files' order, as fileRanges reads them from the table: a file the
// index lacks or with no unit has none.
func indexRanges(fs *fileScores, files []bestFile) [][2]int64 {
	var out [][2]int64
	for _, f := range files {
		if r, ok := fs.rangeOf(f.key); ok {
			out = append(out, r)
		}
	}
	return out
}

// TestFileIndexBuiltBehind: a serving engine builds a large workspace's
// file index behind the searches, which answer without it meanwhile; a
// small workspace's is built before any search is ranked, and a first
// question ranked with it.
func TestFileIndexBuiltBehind(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", fileIndexTree())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &env.engine.fileIdx
	c.inlineFiles = 1 // every index is large
	hold := make(chan struct{})
	c.hold = hold
	env.engine.StartWarm(ctx)
	env.engine.warming.Wait()
	searchMeanwhile(ctx, t, env, "parse config", "during the build", func(hs []Hit) bool { return len(hs) > 0 })
	behind, index := c.state()
	if !behind || index != nil {
		t.Fatalf("build running %v, index %v: want the build behind the searches, not done", behind, index != nil)
	}
	close(hold)
	c.done.Wait()
	_, ix, release := indexedQuery(t, env, "parse config")
	release()
	if ix == nil {
		t.Fatal("no file index after the build")
	}

	small := newSearchEnv(t)
	small.folder("go", "default", fileIndexTree())
	sc := &small.engine.fileIdx
	sc.hold = make(chan struct{}) // a build behind the searches would block
	small.engine.StartWarm(ctx)
	small.engine.warming.Wait()
	if behind, index := sc.state(); behind || index == nil {
		t.Fatal("a small workspace's index was not built by the warm-up itself")
	}
	// The warm-up ranked a question with the index: the default
	// profile's normalizations are made before any caller's search.
	sc.index.norms.mu.Lock()
	_, normed := sc.index.norms.m[DefaultProfile]
	sc.index.norms.mu.Unlock()
	if !normed {
		t.Error("the warm-up left the default profile's unit normalizations to the first search")
	}
	small.engine.Close()
	env.engine.Close()
}

// A serving engine refreshes a large file index behind the searches: the
// searches of a new generation neither wait for the refresh nor start a
// second one; they rank without the index, and find what the sync
// added. Once the refresh ran, the generation's searches use its index.
// Close waits for a running refresh, and none starts after it.
func TestFileIndexRefreshedBehind(t *testing.T) {
	env := newSearchEnv(t)
	src := env.folder("go", "default", fileIndexTree())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &env.engine.fileIdx
	c.inlineFiles = 1 // every index is large
	env.engine.StartWarm(ctx)
	env.engine.warming.Wait()
	c.done.Wait() // the build runs behind the searches
	c.mu.Lock()
	first := c.index
	hold := make(chan struct{})
	c.hold = hold
	c.mu.Unlock()
	if first == nil {
		t.Fatal("the warm-up built no file index")
	}
	env.write("go/added/quokka.go", "package added\n\n// Quokka is new.\nvar Quokka = 1\n")
	if _, err := env.ix.Sync(ctx, src, sources.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	// The refresh is held before it reads: every search below would
	// block here if it waited for it.
	searchMeanwhile(ctx, t, env, "quokka", "during the refresh", func(hs []Hit) bool { return hasPath(hs, "added/quokka.go") })
	behind, index := c.state()
	if !behind || index != first {
		t.Fatalf("refresh running %v, index replaced %v: want one refresh behind the searches", behind, index != first)
	}
	close(hold)
	c.done.Wait()
	key := fileKeyOf(src, "added/quokka.go")
	_, ix, release := indexedQuery(t, env, "quokka")
	release()
	if ix == first {
		t.Fatal("the refresh left the old index")
	}
	if _, ok := ix.lookup(key); !ok {
		t.Error("the refreshed index lacks the added file")
	}
	if r := env.search(env.all, QueryRequest{Question: "quokka"}); !hasPath(r.Hits, "added/quokka.go") {
		t.Errorf("after the refresh: %v", paths(r.Hits))
	}
	// After Close no refresh starts, and searches still work.
	env.engine.Close()
	env.write("go/added/wombat.go", "package added\n\n// Wombat is newer.\nvar Wombat = 2\n")
	if _, err := env.ix.Sync(ctx, src, sources.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := env.search(env.all, QueryRequest{Question: "wombat"}); !hasPath(r.Hits, "added/wombat.go") {
		t.Errorf("after Close: %v", paths(r.Hits))
	}
	c.mu.Lock()
	behind = c.behind
	c.mu.Unlock()
	if behind {
		t.Error("a refresh started after Close")
	}
}

// searchMeanwhile runs four searches for question at once and fails the
// test unless each answers, with hits for which ok holds.
func searchMeanwhile(ctx context.Context, t *testing.T, env *searchEnv, question, when string, ok func([]Hit) bool) {
	t.Helper()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			r, err := env.engine.Search(ctx, env.all, QueryRequest{Question: question})
			if err != nil || !ok(r.Hits) {
				t.Errorf("%s: %v, %v", when, paths(r.Hits), err)
			}
		})
	}
	wg.Wait()
}

// state reports whether a build or refresh runs behind the searches, and
// the index the cache holds.
func (c *fileIndexCache) state() (behind bool, index *fileIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.behind, c.index
}
