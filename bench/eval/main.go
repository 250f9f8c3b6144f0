// Command eval measures search quality and latency on the BEIR test
// collections in shared/eval (SciFact for development, ArguAna held out),
// and on code questions over Go's source tree (-set code, code.go).
//
// Each collection goes through the normal ingest pipeline: one markdown
// file per document ("# title\n\ntext", named <id>.md) is written to a
// temporary folder, added as a folder source with the real Indexer and
// synced. Every test query then runs through query.Engine.Search, the
// public search path, in process. Hits are mapped back to documents by
// path and aggregated per document by their best (highest) score; nDCG@10
// and Recall@100 follow trec_eval (see metrics.go).
//
// On SciFact it also reports, per token budget (-budgets), the share of
// queries whose first relevant document — the best-ranked relevant one of
// that ranking — is in the agent@1 answer a client gets with that budget,
// fitted by render.Fit as the service does (see budget.go).
//
//	go run ./bench/eval                      # both sets, default profile
//	go run ./bench/eval -set scifact -profile balanced
//	go run ./bench/eval -data /path/to/shared/eval -keep /tmp/evalidx
//	go run ./bench/eval -set scifact -budgets 1000,4000   # the default budgets
//	go run ./bench/eval -set code -v         # code questions, index cached
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

func main() {
	set := flag.String("set", "all", "scifact, arguana, all (both) or code")
	profile := flag.String("profile", "", "ranking profile (default: the engine's default)")
	data := flag.String("data", "", "directory holding scifact/ and arguana/ (default: shared/eval beside the repository)")
	keep := flag.String("keep", "", "keep the indexes in this directory and reuse them on the next run")
	depth := flag.Int("limit", 0, "hits per search call (default 100; the eval pages until 100 documents, or 10 files for code)")
	l10 := flag.Bool("latency10", true, "also time every query with the default limit of 10 (code: and score it)")
	baseline := flag.Bool("baseline", false, "also run the plain FTS5 baseline (OR of every quoted word, bm25()) on the same index; slow on long questions")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the searches to this file")
	budgetList := flag.String("budgets", "1000,4000", "SciFact and code: token budgets of the rendered answers checked for a relevant document or acceptable file (\"\" to skip)")
	renderFlag := flag.String("render", string(render.FormatAgent), "render of the budgeted answers: agent@1, markdown@1 or hierarchical-evidence@1")
	budgetReps := flag.Int("budgetreps", 5, "answers fitted per SciFact query and budget, each with a new run id (its length moves the room for hits)")
	questions := flag.String("questions", "", "code: the question file (default: code/go-dev.tsv of the data directory)")
	indexDir := flag.String("index", "", "code: cache directory of the Go-tree index (default: "+defaultCodeIndexDir()+")")
	reindex := flag.Bool("reindex", false, "code: build the index again even when the cached one is current")
	flag.StringVar(&showQueries, "show", "", "BEIR sets: comma-separated query ids whose top 10 documents (score, grade) and judged documents' ranks are printed")
	flag.StringVar(&perQueryFile, "perquery", "", "BEIR sets: write each query's nDCG@10 (and the baseline's, with -baseline) to this file, one tab-separated line per query (the set's name is added before the extension)")
	flag.StringVar(&docFormat, "format", "md", "BEIR sets: write each document as md (\"# title\", blank line, text) or txt (the title line, blank line, text)")
	agree := flag.Bool("agree", false, "also rank every matching unit (no pool): its quality, and how often the pooled first page is the same")
	verbose := flag.Bool("v", false, "code: print each question's ranks, acceptable files and tychora's top 3")
	flag.Parse()
	if docFormat != "md" && docFormat != "txt" {
		log.Fatalf("-format %q: use md or txt", docFormat)
	}
	log.SetFlags(0)
	if *budgetReps < 1 {
		log.Fatal("-budgetreps must be at least 1")
	}
	budgets, err := parseBudgets(*budgetList)
	if err != nil {
		log.Fatal(err)
	}
	if budgetFormat, err = render.ParseFormat(*renderFlag); err != nil || budgetFormat == render.FormatNone {
		log.Fatalf("-render %q: use %s", *renderFlag, strings.Join(render.Formats(), ", "))
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	dir, err := dataDir(*data)
	if err != nil {
		log.Fatal(err)
	}
	if err := verifySums(dir); err != nil {
		log.Fatal(err)
	}
	var sets []string
	switch *set {
	case "all":
		sets = []string{"scifact", "arguana"}
	case "scifact", "arguana":
		sets = []string{*set}
	case "code":
	default:
		log.Fatalf("-set %q: use scifact, arguana, all or code", *set)
	}
	ctx := context.Background()
	fmt.Printf("date %s  go %s  GOMAXPROCS %d  data %s\n", time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.GOMAXPROCS(0), dir)
	if *set == "code" {
		limit := *depth
		if limit == 0 {
			limit = 100
		}
		cfg := codeConfig{dataDir: dir, questions: *questions, index: *indexDir, reindex: *reindex, profile: *profile, limit: limit, limit10: *l10, verbose: *verbose, agree: *agree, budgets: budgets}
		if err := runCode(ctx, cfg); err != nil {
			pprof.StopCPUProfile()
			log.Fatalf("code: %v", err)
		}
		return
	}
	if *depth == 0 {
		*depth = 100
	}
	for _, name := range sets {
		if err := runSet(ctx, dir, name, *profile, *keep, *depth, *l10, *baseline, *agree, budgets, *budgetReps); err != nil {
			pprof.StopCPUProfile()
			log.Fatalf("%s: %v", name, err)
		}
	}
}

// dataDir finds shared/eval: the flag, $TYCHORA_EVAL_DATA, or shared/eval
// beside the repository root (repoRoot).
func dataDir(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if env := os.Getenv("TYCHORA_EVAL_DATA"); env != "" {
		return env, nil
	}
	d, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("%w: pass -data", err)
	}
	for _, cand := range []string{filepath.Join(d, "..", "shared", "eval"), filepath.Join(d, "shared", "eval")} {
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			return filepath.Clean(cand), nil
		}
	}
	return "", fmt.Errorf("no shared/eval beside the repository at %s: pass -data", d)
}

// repoRoot is the directory with this module's go.mod, searched upwards
// from the working directory.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/tychora/tychora") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("not inside the tychora repository")
		}
	}
}

// verifySums checks the files listed in SHA256SUMS, when there is one.
func verifySums(dir string) error {
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		g, err := os.Open(filepath.Join(dir, fields[1]))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, g)
		g.Close()
		if err != nil {
			return err
		}
		if hex.EncodeToString(h.Sum(nil)) != fields[0] {
			return fmt.Errorf("%s: checksum differs from SHA256SUMS", fields[1])
		}
	}
	return sc.Err()
}

type evalQuery struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

type corpusDoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// index is an ingested collection.
type index struct {
	db     *workspace.DB
	engine *query.Engine
	docs   int
	units  int64
	took   time.Duration
}

// docFormat is how a BEIR document is written to disk: "md" or "txt".
var docFormat = "md"

// rankedRuns runs every query with limit depth and pages on until 100
// documents, timing each first call into lat when it is not nil.
func rankedRuns(ctx context.Context, e *query.Engine, p workspace.Principal, queries []evalQuery, profile string, depth int, ignoreSelf bool, lat *[]time.Duration) ([]queryRun, error) {
	var runs []queryRun
	for _, q := range queries {
		req := query.QueryRequest{Question: q.Text, Profile: profile, Limit: depth}
		t0 := time.Now()
		res, err := e.Search(ctx, p, req)
		if lat != nil {
			*lat = append(*lat, time.Since(t0))
		}
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		docs := collect(nil, res.Hits)
		// Page on until 100 documents (chunks of one document aggregate).
		for pages := 1; res.NextCursor != nil && distinct(docs, q.ID, ignoreSelf) < 100 && pages < 10; pages++ {
			req.Cursor = *res.NextCursor
			if res, err = e.Search(ctx, p, req); err != nil {
				return nil, fmt.Errorf("query %s: %w", q.ID, err)
			}
			docs = collect(docs, res.Hits)
		}
		runs = append(runs, queryRun{id: q.ID, hits: docs})
	}
	return runs, nil
}

func runSet(ctx context.Context, dataRoot, name, profile, keep string, depth int, l10, baseline, agree bool, budgets []int, budgetReps int) error {
	dir := filepath.Join(dataRoot, name)
	queries, qrels, err := loadQueries(dir)
	if err != nil {
		return err
	}
	ix, cleanup, err := buildIndex(ctx, filepath.Join(dir, "corpus.jsonl"), name, keep)
	if err != nil {
		return err
	}
	defer cleanup()
	p := workspace.Principal{ID: "eval", Grant: workspace.GrantRead}
	ignoreSelf := name == "arguana"

	var lat100, lat10 []time.Duration
	runs, err := rankedRuns(ctx, ix.engine, p, queries, profile, depth, ignoreSelf, &lat100)
	if err != nil {
		return err
	}
	// The everyday call: the first page of 10 hits (a smaller pool).
	var runs10 []queryRun
	for _, q := range queries {
		if !l10 {
			break
		}
		t0 := time.Now()
		res, err := ix.engine.Search(ctx, p, query.QueryRequest{Question: q.Text, Profile: profile})
		lat10 = append(lat10, time.Since(t0))
		if err != nil {
			return fmt.Errorf("query %s: %w", q.ID, err)
		}
		runs10 = append(runs10, queryRun{id: q.ID, hits: collect(nil, res.Hits)})
	}
	m := evaluate(runs, qrels, ignoreSelf)
	prof := profile
	if prof == "" {
		prof = query.DefaultProfile
	}
	fmt.Printf("\n%s  profile=%s  docs=%d  units=%d  ingest=%s\n", name, prof, ix.docs, ix.units, ix.took.Round(time.Millisecond))
	fmt.Printf("  queries %d   nDCG@10 %.4f   Recall@100 %.4f\n", m.queries, m.ndcg10, m.recall100)
	fmt.Printf("  latency limit=%-3d  %s\n", depth, latencies(lat100))
	if len(lat10) > 0 {
		m10 := evaluate(runs10, qrels, ignoreSelf)
		fmt.Printf("  latency limit=10   %s   (nDCG@10 of these first pages %.4f)\n", latencies(lat10), m10.ndcg10)
	}
	var runsBase []queryRun
	if baseline {
		var runsB []queryRun
		var latB []time.Duration
		for _, q := range queries {
			t0 := time.Now()
			docs, err := plainFTS5(ctx, ix.db, q.Text, 200)
			latB = append(latB, time.Since(t0))
			if err != nil {
				return fmt.Errorf("query %s: %w", q.ID, err)
			}
			runsB = append(runsB, queryRun{id: q.ID, hits: docs})
		}
		mb := evaluate(runsB, qrels, ignoreSelf)
		runsBase = runsB
		fmt.Printf("  plain FTS5 baseline: nDCG@10 %.4f   Recall@100 %.4f   latency %s\n", mb.ndcg10, mb.recall100, latencies(latB))
	}
	showRuns(queries, runs, qrels, ignoreSelf)
	if perQueryFile != "" {
		if err := writePerQuery(perQueryFile, name, queries, runs, runsBase, qrels, ignoreSelf); err != nil {
			return err
		}
	}
	if agree {
		full := exhaustiveOf(ix.engine)
		var a agreement
		for _, q := range queries {
			x, y, err := firstPages(ctx, ix.engine, full, p, query.QueryRequest{Question: q.Text, Profile: profile})
			if err != nil {
				return fmt.Errorf("query %s: %w", q.ID, err)
			}
			a.add(x, y)
		}
		runsX, err := rankedRuns(ctx, full, p, queries, profile, depth, ignoreSelf, nil)
		if err != nil {
			return err
		}
		mx := evaluate(runsX, qrels, ignoreSelf)
		fmt.Printf("  every matching unit ranked: nDCG@10 %.4f   Recall@100 %.4f\n", mx.ndcg10, mx.recall100)
		fmt.Printf("  rank safety, first page of limit 10: %s\n", a)
	}
	if name == "scifact" && len(budgets) > 0 {
		stats, err := budgetAnswers(ctx, ix.engine, p, queries, runs, qrels, profile, budgets, budgetReps)
		if err != nil {
			return err
		}
		printBudgetStats(stats, query.BudgetPageLimit)
	}
	return nil
}

// collect adds hits to a run: document id from the file's name (a
// citation under a render names the file by File alone), best score.
func collect(docs []scoredDoc, hits []query.Hit) []scoredDoc {
	for _, h := range hits {
		name := h.Path
		if name == "" {
			name = h.File
		}
		id := strings.TrimSuffix(filepath.Base(name), "."+docFormat)
		docs = append(docs, scoredDoc{doc: id, score: h.Score})
	}
	return docs
}

func distinct(docs []scoredDoc, self string, ignoreSelf bool) int {
	seen := map[string]bool{}
	for _, d := range docs {
		if !(ignoreSelf && d.doc == self) {
			seen[d.doc] = true
		}
	}
	return len(seen)
}

func latencies(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + "ms"
	}
	return fmt.Sprintf("mean %s  p50 %s  p99 %s  max %s", ms(sum/time.Duration(len(s))), ms(s[len(s)/2]), ms(s[(len(s)*99)/100]), ms(s[len(s)-1]))
}

func loadQueries(dir string) ([]evalQuery, map[string]map[string]int, error) {
	qrels := map[string]map[string]int{}
	f, err := os.Open(filepath.Join(dir, "qrels.tsv"))
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		p := strings.Split(sc.Text(), "\t")
		if len(p) != 3 {
			continue
		}
		g, err := strconv.Atoi(strings.TrimSpace(p[2]))
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("qrels: %w", err)
		}
		if qrels[p[0]] == nil {
			qrels[p[0]] = map[string]int{}
		}
		qrels[p[0]][p[1]] = g
	}
	f.Close()
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	var qs []evalQuery
	err = readJSONL(filepath.Join(dir, "queries.jsonl"), func(b []byte) error {
		var q evalQuery
		if err := json.Unmarshal(b, &q); err != nil {
			return err
		}
		if qrels[q.ID] != nil {
			qs = append(qs, q)
		}
		return nil
	})
	sort.Slice(qs, func(i, j int) bool { return qs[i].ID < qs[j].ID })
	return qs, qrels, err
}

func readJSONL(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
	}
	return sc.Err()
}

// buildIndex ingests a corpus through the normal pipeline, or reopens the
// index kept from a previous run with -keep.
func buildIndex(ctx context.Context, corpus, name, keep string) (*index, func(), error) {
	base := ""
	cleanup := func() {}
	if keep != "" {
		// One kept index per format: a document's path holds its
		// extension, so an index of the other format matches no judgment.
		base = filepath.Join(keep, name)
		if docFormat != "md" {
			base += "-" + docFormat
		}
	} else {
		tmp, err := os.MkdirTemp("", "tychora-eval-")
		if err != nil {
			return nil, nil, err
		}
		base = tmp
		cleanup = func() { os.RemoveAll(tmp) }
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, nil, err
	}
	root := filepath.Join(base, "root")
	docsDir := filepath.Join(root, name)
	wsDir := filepath.Join(base, "workspace")
	dbPath := filepath.Join(wsDir, "index.db")
	_, statErr := os.Stat(dbPath)
	reuse := keep != "" && statErr == nil

	ix := &index{}
	if !reuse {
		for _, d := range []string{docsDir, wsDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, nil, err
			}
		}
		err := readJSONL(corpus, func(b []byte) error {
			var d corpusDoc
			if err := json.Unmarshal(b, &d); err != nil {
				return err
			}
			if d.ID == "" || strings.ContainsAny(d.ID, `/\`) || d.ID == "." || d.ID == ".." {
				return fmt.Errorf("document id %q cannot be a file name", d.ID)
			}
			body := d.Text + "\n"
			if d.Title != "" && docFormat == "txt" {
				body = d.Title + "\n\n" + body
			} else if d.Title != "" {
				body = "# " + d.Title + "\n\n" + body
			}
			return os.WriteFile(filepath.Join(docsDir, d.ID+"."+docFormat), []byte(body), 0o644)
		})
		if err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	db, err := workspace.OpenDB(ctx, dbPath)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	closeAll := func() { db.Close(); cleanup() }
	if !reuse {
		policy, err := sources.NewPolicy([]string{root}, wsDir)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		indexer := sources.NewIndexer(db, policy, sources.NewAssets(filepath.Join(wsDir, "assets")), sources.Options{TempDir: base})
		src, _, err := indexer.Add(ctx, sources.SourceInput{Path: docsDir, CollectionID: workspace.DefaultCollection})
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		t0 := time.Now()
		if _, err := indexer.Sync(ctx, src.ID, sources.SyncOptions{}); err != nil {
			closeAll()
			return nil, nil, err
		}
		ix.took = time.Since(t0)
	}
	if err := db.R.QueryRowContext(ctx, `SELECT count(DISTINCT path), count(*) FROM evidence WHERE leaf = 1`).Scan(&ix.docs, &ix.units); err != nil {
		closeAll()
		return nil, nil, err
	}
	var key [32]byte
	_, _ = rand.Read(key[:])
	ix.db = db
	ix.engine = &query.Engine{DB: db, Cursors: workspace.NewCursorsWithKey(key[:])}
	return ix, closeAll, nil
}
