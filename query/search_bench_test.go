package query

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// BenchmarkSearchGoSrc measures search latency over an index of Go's own
// source tree ($(go env GOROOT)/src, testdata excluded) with the developer
// queries of bench/queries/go-src.txt, 10 hits each, in process. The index
// is built once per benchmark run (through the real Indexer) into a
// temporary directory; set TYCHORA_GOSRC_INDEX to a directory to keep it
// there and reuse it on the next run. With TYCHORA_GOSRC_OPTIMIZE=1 the
// FTS5 index is merged into one segment ('optimize') before measuring, to
// show what that maintenance step buys (the indexer does not run it). It
// reports the latency percentiles over every search it ran (p50-ms,
// p90-ms, p99-ms, max-ms). TYCHORA_BENCH_QUERIES names another question
// file of bench/queries (distinct.txt: the 2,000 cold questions of
// bench/load.sh). TYCHORA_BENCH_ROWS=1 adds bm25-rows/q, the rows
// bm25() ranks per question (stage A's main cost); counting them takes
// time of its own, so the latencies of such a run mean nothing.
// TYCHORA_BENCH_NO_FILE_INDEX=1 searches without the file index, as a
// facet-filtered search, a CLI process without an owner and the first
// seconds of an owner do (the whole-file probe, rank_file_best.go).
// TYCHORA_BENCH_LIMIT sets each search's limit (default 10). It also
// reports units/q, the units stage B read per search the unit index
// served.
//
//	go test -run '^$' -bench SearchGoSrc -benchtime 20x ./query/
func BenchmarkSearchGoSrc(b *testing.B) {
	e, n := goSrcEngine(b)
	e.fileIdx.mu.Lock()
	e.fileIdx.off = os.Getenv("TYCHORA_BENCH_NO_FILE_INDEX") == "1"
	e.fileIdx.mu.Unlock()
	queries := loadBenchQueries(b)
	b.Logf("index: %d leaf evidence units; %d queries", n, len(queries))
	ctx := context.Background()
	p := workspace.Principal{ID: "bench", Grant: workspace.GrantRead}
	// Warm the statement cache, the page cache and the statistics cache
	// once, as a running owner would be.
	for _, q := range queries {
		if _, err := e.Search(ctx, p, QueryRequest{Question: q}); err != nil {
			b.Fatalf("%q: %v", q, err)
		}
	}
	// TYCHORA_BENCH_ROWS=1 also reports the rows bm25() ranks per
	// question (counted apart, outside the timings' meaning).
	var rows int64
	if os.Getenv("TYCHORA_BENCH_ROWS") == "1" {
		rankedHook = func(match, from, where string, args []any) {
			var n int64
			q := "SELECT count(*) FROM " + from + " WHERE evidence_fts MATCH ?" + where
			if err := e.DB.R.QueryRowContext(ctx, q, append([]any{match}, args...)...).Scan(&n); err != nil {
				b.Error(err)
			}
			rows += n
		}
		defer func() { rankedHook = nil }()
	}
	limit := 10
	if v, err := strconv.Atoi(os.Getenv("TYCHORA_BENCH_LIMIT")); err == nil && v > 0 {
		limit = v
	}
	served, read := e.unitServed.Load(), e.unitsRead.Load()
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range queries {
			t0 := time.Now()
			res, err := e.Search(ctx, p, QueryRequest{Question: q, Limit: limit})
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatalf("%q: %v", q, err)
			}
			if len(res.Hits) == 0 {
				b.Fatalf("%q: no hits", q)
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.90), "p90-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	if n := e.unitServed.Load() - served; n > 0 {
		b.ReportMetric(float64(e.unitsRead.Load()-read)/float64(n), "units/q")
	}
	if rankedHook != nil {
		b.ReportMetric(float64(rows)/float64(len(lat)), "bm25-rows/q")
	}
	b.ReportMetric(0, "ns/op")
}

var goSrc struct {
	once   sync.Once
	engine *Engine
	units  int
	err    error
	skip   string
	dir    string
	temp   bool
}

// goSrcEngine builds (once per process) an index of GOROOT/src.
func goSrcEngine(b *testing.B) (*Engine, int) {
	goSrc.once.Do(func() {
		src := filepath.Join(goroot(), "src")
		if fi, err := os.Stat(src); goroot() == "" || err != nil || !fi.IsDir() {
			goSrc.skip = fmt.Sprintf("no Go source tree at %s", src)
			return
		}
		dir := os.Getenv("TYCHORA_GOSRC_INDEX")
		if dir == "" {
			d, err := os.MkdirTemp("", "tychora-gosrc-")
			if err != nil {
				goSrc.err = err
				return
			}
			dir, goSrc.temp = d, true
		}
		goSrc.dir = dir
		goSrc.engine, goSrc.units, goSrc.err = buildGoSrcIndex(src, dir)
	})
	if goSrc.skip != "" {
		b.Skip(goSrc.skip)
	}
	if goSrc.err != nil {
		b.Fatal(goSrc.err)
	}
	return goSrc.engine, goSrc.units
}

func buildGoSrcIndex(src, dir string) (*Engine, int, error) {
	ctx := context.Background()
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, 0, err
	}
	wsDir := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(wsDir, 0o755); err != nil {
		return nil, 0, err
	}
	dbPath := filepath.Join(wsDir, "index.db")
	_, statErr := os.Stat(dbPath)
	db, err := workspace.OpenDB(ctx, dbPath)
	if err != nil {
		return nil, 0, err
	}
	if statErr != nil { // a new index: ingest
		policy, err := sources.NewPolicy([]string{filepath.Dir(real)}, wsDir)
		if err != nil {
			return nil, 0, err
		}
		ix := sources.NewIndexer(db, policy, sources.NewAssets(filepath.Join(wsDir, "assets")), sources.Options{TempDir: dir})
		s, _, err := ix.Add(ctx, sources.SourceInput{Path: real, CollectionID: workspace.DefaultCollection, Exclude: []string{"**/testdata/**"}})
		if err != nil {
			return nil, 0, err
		}
		if _, err := ix.Sync(ctx, s.ID, sources.SyncOptions{}); err != nil {
			return nil, 0, err
		}
	}
	if os.Getenv("TYCHORA_GOSRC_OPTIMIZE") == "1" {
		if _, err := db.W.ExecContext(ctx, `INSERT INTO evidence_fts(evidence_fts) VALUES('optimize')`); err != nil {
			return nil, 0, err
		}
	}
	var n int
	if err := db.R.QueryRowContext(ctx, `SELECT count(*) FROM evidence WHERE leaf = 1`).Scan(&n); err != nil {
		return nil, 0, err
	}
	var key [32]byte
	_, _ = rand.Read(key[:])
	return &Engine{DB: db, Cursors: workspace.NewCursorsWithKey(key[:])}, n, nil
}

// goroot is $(go env GOROOT), or "" when the go command cannot say.
func goroot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// loadBenchQueries reads bench/queries/go-src.txt.
func loadBenchQueries(tb testing.TB) []string {
	name := "go-src.txt"
	if v := os.Getenv("TYCHORA_BENCH_QUERIES"); v != "" {
		name = v // another file of bench/queries, e.g. distinct.txt
	}
	f, err := os.Open(filepath.Join("..", "bench", "queries", name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestMain removes the temporary Go-tree index after the benchmarks.
func TestMain(m *testing.M) {
	code := m.Run()
	if goSrc.engine != nil {
		goSrc.engine.DB.Close()
	}
	if goSrc.temp {
		os.RemoveAll(goSrc.dir)
	}
	os.Exit(code)
}

// BenchmarkFileIndexBuild measures building the file index
// (rank_file_index_build.go) whole over the index of Go's tree that
// BenchmarkSearchGoSrc uses (TYCHORA_GOSRC_INDEX to keep it), and reports
// its files, postings and the heap it holds (heap-MB: live heap after a
// collection, with the index held, less before).
//
//	TYCHORA_GOSRC_INDEX=/tmp/gs go test -run '^$' -bench FileIndexBuild -benchtime 3x ./query/
func BenchmarkFileIndexBuild(b *testing.B) {
	e, _ := goSrcEngine(b)
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var ix *fileIndex
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix = nil
		tx, err := e.DB.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		ix, err = refreshFileIndex(ctx, e, tx, nil, false)
		tx.Rollback()
		if err != nil || ix == nil {
			b.Fatalf("no file index: %v", err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	postings := 0
	for _, ps := range ix.base.stems {
		postings += len(ps)
	}
	upostings := 0
	for _, ps := range ix.base.ustems {
		upostings += len(ps)
	}
	b.ReportMetric(float64(len(ix.base.files)), "files")
	b.ReportMetric(float64(postings), "postings")
	b.ReportMetric(float64(len(ix.base.units)), "units")
	b.ReportMetric(float64(upostings), "unit-postings")
	b.ReportMetric(float64(len(ix.base.stems)), "stems")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "heap-MB")
	runtime.KeepAlive(ix)
}

// BenchmarkSavedFileIndexLoad measures reading the saved base of the file
// index of Go's tree (rank_file_index_saved.go) instead of building it
// (BenchmarkFileIndexBuild), and reports the saved file's size.
//
//	TYCHORA_GOSRC_INDEX=/tmp/gs go test -run '^$' -bench SavedFileIndexLoad -benchtime 5x ./query/
func BenchmarkSavedFileIndexLoad(b *testing.B) {
	goSrcEngine(b)
	e := &Engine{DB: goSrc.engine.DB, Cursors: goSrc.engine.Cursors, SavedIndex: filepath.Join(b.TempDir(), "file-index")}
	defer e.Close()
	ctx := context.Background()
	tx, err := e.DB.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	ix, err := refreshFileIndex(ctx, e, tx, nil, false)
	tx.Rollback()
	if err != nil || ix == nil {
		b.Fatalf("no file index: %v", err)
	}
	e.fileIdx.saves.Wait()
	st, err := os.Stat(e.SavedIndex)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if e.loadSaved() == nil {
			b.Fatal("the saved base was not read")
		}
	}
	b.ReportMetric(float64(st.Size())/(1<<20), "file-MB")
}
