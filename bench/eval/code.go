package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// The code set: natural-language questions over Go's source tree, scored
// at file level.
//
// Each question of the file (-questions; `question<TAB>file,file…`, paths
// relative to GOROOT/src, `#` lines are comments) goes through
// Engine.Search in process with -limit hits per call, paging on until the
// hits name 10 distinct files or the pool ends. Its ranking is the
// distinct files of the hits in order of first appearance; its rank is
// that of the first acceptable file in it. success@k counts the questions
// ranked 1..k; MRR@10 is the mean of 1/rank over the questions, 0 beyond
// 10. The baselines of code_baseline.go are scored the same way, in the
// same run.

// codeFiles is how many distinct files a question's ranking is paged to.
const codeFiles = 10

type codeQuestion struct {
	text string
	want map[string]bool
	line int
}

// loadCodeQuestions reads a question file.
func loadCodeQuestions(name string) ([]codeQuestion, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseCodeQuestions(f, name)
}

// parseCodeQuestions reads `question<TAB>file,file…` lines; blank lines
// and lines starting with # are skipped. name is for errors.
func parseCodeQuestions(r io.Reader, name string) ([]codeQuestion, error) {
	var qs []codeQuestion
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, files, ok := strings.Cut(line, "\t")
		q, files = strings.TrimSpace(q), strings.TrimSpace(files)
		cq := codeQuestion{text: q, want: map[string]bool{}, line: n}
		for _, p := range strings.Split(files, ",") {
			if p = strings.TrimSpace(p); p != "" {
				cq.want[p] = true
			}
		}
		if !ok || q == "" || len(cq.want) == 0 {
			return nil, fmt.Errorf("%s:%d: want question<TAB>file,file…", name, n)
		}
		qs = append(qs, cq)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no questions", name)
	}
	return qs, nil
}

// fileRank is the 1-based rank of the first acceptable file, 0 if none.
func fileRank(files []string, want map[string]bool) int {
	for i, f := range files {
		if want[f] {
			return i + 1
		}
	}
	return 0
}

// fileScores are success@1, success@5 and MRR@10 over ranks.
type fileScores struct {
	n, at1, at5 int
	mrr         float64
}

func scoreRanks(ranks []int) fileScores {
	s := fileScores{n: len(ranks)}
	for _, r := range ranks {
		if r < 1 || r > 10 {
			continue
		}
		s.mrr += 1 / float64(r)
		if r == 1 {
			s.at1++
		}
		if r <= 5 {
			s.at5++
		}
	}
	if s.n > 0 {
		s.mrr /= float64(s.n)
	}
	return s
}

func (s fileScores) String() string {
	return fmt.Sprintf("%5d/%d   %5d/%d   %.3f", s.at1, s.n, s.at5, s.n, s.mrr)
}

type codeConfig struct {
	dataDir   string
	questions string
	index     string
	reindex   bool
	profile   string
	limit     int
	limit10   bool // also rank with the default limit of 10
	verbose   bool
	agree     bool // also rank every matching unit and compare (agree.go)
	budgets   []int
}

func runCode(ctx context.Context, cfg codeConfig) error {
	qfile := cfg.questions
	if qfile == "" {
		qfile = filepath.Join(cfg.dataDir, "code", "go-dev.tsv")
	}
	qs, err := loadCodeQuestions(qfile)
	if err != nil {
		return err
	}
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	goroot, goVersion, err := goEnv()
	if err != nil {
		return err
	}
	srcRoot, err := filepath.EvalSymlinks(filepath.Join(goroot, "src"))
	if err != nil {
		return err
	}
	key, err := codeIndexKey(repo, srcRoot, goVersion)
	if err != nil {
		return fmt.Errorf("index key: %w", err)
	}
	base := cfg.index
	if base == "" {
		base = defaultCodeIndexDir()
	}
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	ix, err := openCodeIndex(ctx, base, goVersion+"-"+key, srcRoot, cfg.reindex, logf)
	if err != nil {
		return err
	}
	defer ix.Close()
	fdb, err := sql.Open("sqlite", "file:"+filepath.Join(ix.dir, "files.db")+"?mode=ro")
	if err != nil {
		return err
	}
	defer fdb.Close()

	prof := cfg.profile
	if prof == "" {
		prof = query.DefaultProfile
	}
	how := "reused"
	if ix.built {
		how = "built, sync " + ix.took.Round(time.Second).String()
	}
	fmt.Printf("\ncode  %s  profile=%s  limit=%d  %s: %d files, %d units\n", filepath.Base(qfile), prof, cfg.limit, srcRoot, ix.files, ix.units)
	fmt.Printf("  index %s (%s)\n", ix.dir, how)

	limits := []int{cfg.limit}
	if cfg.limit10 && cfg.limit != query.DefaultLimit {
		limits = append(limits, query.DefaultLimit)
	}
	m, err := measureCode(ctx, ix.engine, fdb, qs, cfg.profile, limits)
	if err != nil {
		return fmt.Errorf("%s:%w", qfile, err)
	}
	var agree agreement
	var rx []int
	if cfg.agree {
		if agree, rx, err = measureAgreement(ctx, ix.engine, qs, cfg.profile, cfg.limit); err != nil {
			return fmt.Errorf("%s:%w", qfile, err)
		}
	}
	if cfg.verbose {
		printCodeRanks(qs, m)
	}
	fmt.Printf("  %-46s %9s   %9s   %s\n", "file level", "success@1", "success@5", "MRR@10")
	for j, limit := range limits {
		fmt.Printf("  %-46s %s\n", fmt.Sprintf("tychora, limit %d, paged", limit), scoreRanks(m.tychora[j].ranks))
	}
	if cfg.agree {
		fmt.Printf("  %-46s %s\n", "tychora, every matching unit ranked", scoreRanks(rx))
	}
	fmt.Printf("  %-46s %s\n", "plain FTS5, whole files (OR, bm25)", scoreRanks(m.plain))
	fmt.Printf("  %-46s %s\n", "plain FTS5 + path prior", scoreRanks(m.prior))
	for j, limit := range limits {
		fmt.Printf("  latency tychora limit %-3d first page  %s\n", limit, latencies(m.tychora[j].first))
		fmt.Printf("  latency tychora limit %-3d every call  %s   (%d calls)\n", limit, latencies(m.tychora[j].all), len(m.tychora[j].all))
	}
	fmt.Printf("  latency plain FTS5, every file ranked  %s\n", latencies(m.latPlain))
	if cfg.agree {
		fmt.Printf("  rank safety, limit 10 against every match ranked: %s\n", agree)
	}
	return codeBudgets(ctx, ix.engine, qs, cfg.profile, cfg.budgets)
}

// codeBudgets asks every question with a budget only, as an agent does,
// and reports how often the fitted answer holds an acceptable file, and
// how many places (hits) and files an answer holds.
func codeBudgets(ctx context.Context, e *query.Engine, qs []codeQuestion, profile string, budgets []int) error {
	if len(budgets) == 0 {
		return nil
	}
	p := workspace.Principal{ID: "eval", Grant: workspace.GrantRead}
	memo := render.NewMemo(32 << 20)
	fmt.Printf("  %s answers under a token budget (request = question + budget.max_tokens, packed as the service does):\n", budgetFormat)
	fmt.Printf("    %-7s  %-22s  %-14s  %-14s  %s\n", "budget", "acceptable file", "places mean", "files mean", "used mean/max")
	for _, b := range budgets {
		found, places, files, used, usedMax := 0, 0, 0, 0, 0
		for _, q := range qs {
			fit, err := fitBudgeted(ctx, e, p, q.text, profile, b, memo)
			if err != nil {
				return fmt.Errorf("%d: %w", q.line, err)
			}
			seen := map[string]bool{}
			for _, h := range fit.Result.Hits {
				seen[h.Path] = true
			}
			for f := range seen {
				if q.want[f] {
					found++
					break
				}
			}
			places += len(fit.Result.Hits)
			files += len(seen)
			used += fit.Result.Budget.UsedTokens
			usedMax = max(usedMax, fit.Result.Budget.UsedTokens)
		}
		n := len(qs)
		fmt.Printf("    %-7d  %-22s  %-14.2f  %-14.2f  %d/%d\n", b, fmt.Sprintf("%.3f (%d/%d)", float64(found)/float64(n), found, n),
			float64(places)/float64(n), float64(files)/float64(n), used/n, usedMax)
	}
	return nil
}

// codeMeasures are one run's ranks and latencies over the questions.
type codeMeasures struct {
	tychora  []tychoraRun // per limit, in the order asked
	top3     [][]string   // per question: the first limit's top 3 files
	plain    []int        // per question
	prior    []int
	latPlain []time.Duration
}

// measureCode ranks every question with tychora at each limit and with
// both baselines.
func measureCode(ctx context.Context, e *query.Engine, fdb *sql.DB, qs []codeQuestion, profile string, limits []int) (codeMeasures, error) {
	p := workspace.Principal{ID: "eval", Grant: workspace.GrantRead}
	// Warm the page cache and the statement cache once, as a running
	// owner would be, so that the latencies are those of a warm index.
	for _, q := range qs {
		if _, err := e.Search(ctx, p, query.QueryRequest{Question: q.text, Profile: profile, Limit: limits[0]}); err != nil {
			return codeMeasures{}, fmt.Errorf("%d: %w", q.line, err)
		}
	}
	m := codeMeasures{tychora: make([]tychoraRun, len(limits))}
	for _, q := range qs {
		for j, limit := range limits {
			files, lat, err := tychoraFiles(ctx, e, p, query.QueryRequest{Question: q.text, Profile: profile, Limit: limit})
			if err != nil {
				return codeMeasures{}, fmt.Errorf("%d: %w", q.line, err)
			}
			if j == 0 {
				m.top3 = append(m.top3, files[:min(3, len(files))])
			}
			t := &m.tychora[j]
			t.ranks = append(t.ranks, fileRank(files, q.want))
			t.first = append(t.first, lat[0])
			t.all = append(t.all, lat...)
		}
		t0 := time.Now()
		plain, err := plainFiles(ctx, fdb, q.text)
		m.latPlain = append(m.latPlain, time.Since(t0))
		if err != nil {
			return codeMeasures{}, fmt.Errorf("%d: %w", q.line, err)
		}
		m.plain = append(m.plain, fileRank(paths(plain), q.want))
		m.prior = append(m.prior, fileRank(paths(withPrior(q.text, plain)), q.want))
	}
	return m, nil
}

// tychoraRun is one limit's ranks and latencies over the questions.
type tychoraRun struct {
	ranks      []int
	first, all []time.Duration
}

// tychoraFiles pages req until the hits name codeFiles distinct files or
// the pool ends; it returns the files in order of first appearance and
// the latency of each call.
func tychoraFiles(ctx context.Context, e *query.Engine, p workspace.Principal, req query.QueryRequest) ([]string, []time.Duration, error) {
	var files []string
	var lat []time.Duration
	seen := map[string]bool{}
	for {
		t0 := time.Now()
		res, err := e.Search(ctx, p, req)
		lat = append(lat, time.Since(t0))
		if err != nil {
			return nil, nil, err
		}
		for _, h := range res.Hits {
			if !seen[h.Path] && len(files) < codeFiles {
				seen[h.Path] = true
				files = append(files, h.Path)
			}
		}
		if len(files) >= codeFiles || res.NextCursor == nil {
			return files, lat, nil
		}
		req.Cursor = *res.NextCursor
	}
}

func paths(fs []scoredFile) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.path
	}
	return out
}

// printCodeRanks prints each question's ranks (tychora at the first
// limit, plain, prior; "-" when not ranked: beyond the 10 files paged, or
// not matched), the acceptable files and tychora's top 3.
func printCodeRanks(qs []codeQuestion, m codeMeasures) {
	rank := func(r int) string {
		if r == 0 {
			return "-"
		}
		return fmt.Sprint(r)
	}
	fmt.Printf("  %4s %5s %5s  question\n", "tych", "plain", "prior")
	for i, q := range qs {
		fmt.Printf("  %4s %5s %5s  %s\n", rank(m.tychora[0].ranks[i]), rank(m.plain[i]), rank(m.prior[i]), q.text)
		var want []string
		for f := range q.want {
			want = append(want, f)
		}
		slices.Sort(want)
		fmt.Printf("                    want:    %s\n", strings.Join(want, ", "))
		fmt.Printf("                    tychora: %s\n", strings.Join(m.top3[i], ", "))
	}
	fmt.Println()
}
