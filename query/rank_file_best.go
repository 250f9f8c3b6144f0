package query

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tychora/tychora/sources"
)

// Completing the best files. Whole-file evidence lifts every unit of a
// file about the topic, also units whose own score kept them out of the
// pool. The files that score best by their kept terms, of those the pool
// holds and of those the file index (or, without it, the probe of the
// units' index by file) ranks first for the question, get every unit that
// matches the question, found in the lexical index within the file's
// range of rows: the page is then the one an exhaustive ranking would give
// (bench/eval -agree).

// bestFiles is how many files, best by whole-file score and role, have
// their matching units completed.
const bestFiles = 8

// Without the file index (a facet filter, a process that searches once,
// the first seconds of an owner: rank_file_index.go), the probe
// (probeFiles) proposes probedFiles files, best by the bm25 of their
// matching units times their role prior, and the probedBestFiles best of
// them and of the pool's files by fileScore have their matching units
// completed. More than the file index's bestFiles: the probe sees fewer
// files (those its bm25 ranks first) than the file index scores (all),
// and a wider completion makes up for it (bench/README.md, "Searches
// without the file index").
const (
	probedFiles     = 32
	probedBestFiles = 16
)

// smallBestFiles is how many of the best files are looked at when the file
// index scores every file: of these, the files of fewer than smallFileRows
// units are read whole (cheaply: a few rows, no FTS5 statement), and the
// first bestFiles of the others have their matching units found by FTS5.
const (
	smallBestFiles = 32
	smallFileRows  = 4
)

// maxBestFileUnits bounds the units one best file adds: the first that
// match, in the file's order (docs/search.md).
const maxBestFileUnits = 64

// fileProbeRows bounds the units the whole-file probe may score, counted
// by the clauses' document frequencies: its clauses are the question's
// best by weight × idf that fit. Each unit scored costs a bm25() and a
// lookup of its file: over bench/other-repos.sh's questions, 20,000
// gave MRR@10 0.859 and a p99 of 71–79 ms on Go's tree, 8,000 0.860 and
// 43 ms, 4,000 0.854 and 38 ms (bench/README.md, "Searches without the
// file index").
const fileProbeRows = 8000

// keptFile is what the index keeps of one file for ranking: the weighted
// term frequencies of each query term (keptFileTF), its size and role.
type keptFile struct {
	tf    []float64
	bytes int64
	role  string
}

// sqlFileTerms reads the kept term counts of the given files (JSON pairs
// [source_id, path]).
const sqlFileTerms = `SELECT f.source_id, f.path, t.terms, f.size, coalesce(f.role, '') FROM json_each(?) j
	JOIN files f ON f.source_id = j.value ->> 0 AND f.path = j.value ->> 1
	JOIN file_terms t ON t.source_id = f.source_id AND t.path = f.path`

// sqlFileRanges is the range of rows (evidence seq) of each given file's
// units (JSON pairs [source_id, path]), by the pair's index in the list.
const sqlFileRanges = `SELECT j.key, min(e.seq), max(e.seq) FROM json_each(?) j
	JOIN evidence e ON e.source_id = j.value ->> 0 AND e.path = j.value ->> 1 GROUP BY j.key`

// fileKeyOf is the key of a file in the maps of this file.
func fileKeyOf(sourceID, p string) string { return sourceID + "\x00" + p }

// filesOf lists the files of the candidates, once each.
func filesOf(cands []*candidate) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	for _, c := range cands {
		if k := fileKeyOf(c.sourceID, c.path); !seen[k] {
			seen[k] = true
			out = append(out, [2]string{c.sourceID, c.path})
		}
	}
	return out
}

// keptFileTF reads the term counts kept at ingest (sources/file_terms.go)
// of the given files into kept, weighed by column as keepFileTF weighs a
// unit's. A file indexed before counts were kept stays out of the map;
// ranking sums its pooled units instead.
func (e *Engine) keptFileTF(ctx context.Context, tx *sql.Tx, q *preparedQuery, files [][2]string, kept map[string]*keptFile) error {
	var pairs [][2]string
	for _, f := range files {
		if _, ok := kept[fileKeyOf(f[0], f[1])]; !ok {
			pairs = append(pairs, f)
		}
	}
	if len(pairs) == 0 || len(q.terms) == 0 {
		return nil
	}
	// The stems to look up, sorted and unique, and the terms of each.
	byStem := map[string][]int{}
	for t, st := range q.terms {
		if st.weight > 0 {
			byStem[st.stem] = append(byStem[st.stem], t)
		}
	}
	want := make([]string, 0, len(byStem))
	for st := range byStem {
		want = append(want, st)
	}
	slices.Sort(want)
	list, err := json.Marshal(pairs)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	rows, err := e.query(ctx, tx, sqlFileTerms, string(list))
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	w := &q.prof.fields
	for rows.Next() {
		var src, p string
		var blob []byte
		kf := &keptFile{tf: make([]float64, len(q.terms))}
		if err := rows.Scan(&src, &p, &blob, &kf.bytes, &kf.role); err != nil {
			return fmt.Errorf("search: %w", err)
		}
		ok := sources.LookupTerms(blob, want, func(i int, n sources.TermCounts) {
			x := w[fieldTitle].weight*float64(n.Title) + w[fieldBody].weight*float64(n.Text) + w[fieldCode].weight*float64(n.Code)
			for _, t := range byStem[want[i]] {
				kf.tf[t] = x
			}
		})
		if ok {
			kept[fileKeyOf(src, p)] = kf
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	return nil
}

// keepFiles fills kept with the counts of files: from the file index's
// scores fs when there are some, else read from the files table (and
// from fs for files it lacks, which then read nothing).
func (e *Engine) keepFiles(ctx context.Context, tx *sql.Tx, q *preparedQuery, fs *fileScores, files [][2]string, kept map[string]*keptFile) error {
	if fs != nil {
		fs.keep(files, kept)
	}
	return e.keptFileTF(ctx, tx, q, files, kept)
}

// pathTF is the weighted term frequency of each query term in a path, as
// the scorer counts the path column.
func (s *scorer) pathTF(p string) []float64 {
	out := make([]float64, len(s.terms))
	hits, _ := s.m.scan(p, nil)
	for _, h := range hits {
		out[h.term] += s.prof.fields[fieldPath].weight
	}
	return out
}

// probeFiles lists the files in scope that rank first for the question
// as wholes: the units that match the OR of its best clauses by weight ×
// idf, as many as fit fileProbeRows, each scored by bm25() with the
// profile's weights, summed by file and times the file's role prior
// (rolePriorSQL). A file about the topic has many units that match; a
// whole-file FTS5 index ranked files the same way and cost a quarter of
// every sync (bench/README.md, "Searches without the file index").
func (e *Engine) probeFiles(ctx context.Context, tx *sql.Tx, q *preparedQuery, sf *scopeFilter) ([][2]string, error) {
	idx := make([]int, 0, len(q.clauses))
	for i, c := range q.clauses {
		if !deadClause(c) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return -cmp.Compare(q.clauses[a].prio, q.clauses[b].prio) })
	var parts []string
	var rows int64
	for _, i := range idx {
		c := q.clauses[i]
		if len(parts) >= q.prof.maxTermsA || rows+c.df > fileProbeRows {
			continue
		}
		parts = append(parts, c.match)
		rows += c.df
	}
	if len(parts) == 0 {
		return nil, nil
	}
	where, args := sf.sql()
	// bm25() cannot be an aggregate's argument: the subquery scores each
	// unit (LIMIT -1 keeps it from being flattened into the grouping).
	stmt := "SELECT source_id, path FROM (SELECT e.source_id, e.path, e.role, " + bm25Expr(q.prof) + " AS s, f.rowid AS r" +
		" FROM evidence_fts f JOIN evidence e ON e.seq = f.rowid WHERE evidence_fts MATCH ?" + where + " LIMIT -1) e" +
		" GROUP BY source_id, path ORDER BY sum(s)" + rolePriorSQL(q) + ", min(r) LIMIT ?"
	args = append(append([]any{strings.Join(parts, " OR ")}, args...), probedFiles)
	res, err := e.query(ctx, tx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer res.Close()
	var out [][2]string
	for res.Next() {
		var f [2]string
		if err := res.Scan(&f[0], &f[1]); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		out = append(out, f)
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

// rolePriorSQL scales the probe's bm25 (negative: the lower, the better)
// by the role prior of each file (e.role: every unit carries its file's
// role), as fileScore's files are, unless the question asks for roles:
// else a file's tests and examples, which hold its words as often as it
// does, fill the probe before it.
func rolePriorSQL(q *preparedQuery) string {
	if len(q.asked) > 0 {
		return ""
	}
	return rolePriorCase
}

// rolePriorCase is rolePriors as an SQL factor of e.role.
var rolePriorCase = func() string {
	roles := make([]string, 0, len(rolePriors))
	for r := range rolePriors {
		roles = append(roles, r)
	}
	slices.Sort(roles)
	var b strings.Builder
	b.WriteString(" * CASE e.role")
	for _, r := range roles {
		b.WriteString(" WHEN '" + r + "' THEN " + num(rolePriors[r]))
	}
	b.WriteString(" ELSE 1 END")
	return b.String()
}()

// completeBestFiles adds to the pool the units of the best files (by
// fileScore of their kept terms, times their role prior), of the pool's
// and of probed, that match the question and are not in it yet; done
// lists files whose units were read whole already (the named files). It
// serves a search without the file index; with one, planBest chooses the
// files before stage A and bestFetch reads them beside it.
func (e *Engine) completeBestFiles(ctx context.Context, tx *sql.Tx, q *preparedQuery, sf *scopeFilter, kept map[string]*keptFile, probed, done [][2]string, cands []*candidate) ([]*candidate, error) {
	if len(q.clauses) == 0 {
		return cands, nil
	}
	if err := e.keptFileTF(ctx, tx, q, probed, kept); err != nil {
		return nil, err
	}
	skip := map[string]bool{}
	for _, d := range done {
		skip[fileKeyOf(d[0], d[1])] = true
	}
	sc := newScorer(q.prof, q.stats, q.terms, q.phrases, q.qualified, q.seq)
	var files []bestFile
	for _, f := range append(filesOf(cands), probed...) {
		k := fileKeyOf(f[0], f[1])
		kf, ok := kept[k]
		if !ok || skip[k] {
			continue
		}
		skip[k] = true
		score := q.fileScore(kf.tf, sc.pathTF(f[1]), kf.bytes)
		if len(q.asked) == 0 {
			score *= rolePrior(kf.role)
		}
		files = append(files, bestFile{k, f[0], f[1], score})
	}
	slices.SortFunc(files, func(a, b bestFile) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	files = files[:min(len(files), probedBestFiles)]
	if len(files) == 0 {
		return cands, nil
	}
	ranges, err := e.fileRanges(ctx, tx, files)
	if err != nil {
		return nil, err
	}
	more, err := e.bestUnits(ctx, tx, q, sf, bestPlan{ranges: ranges}, seqSet(cands))
	if err != nil {
		return nil, err
	}
	return mergeUnits(cands, more), nil
}

// bestPlan is what completing the best files reads: the ranges of rows of
// the small files, read whole (a few rows, no FTS5 statement), and of the
// others, whose matching units FTS5 finds.
type bestPlan struct {
	small, ranges [][2]int64
	// matches, when set, is the MATCH of each range's file (fileMatch);
	// else every range takes every clause of the question.
	matches []string
}

func (p bestPlan) empty() bool { return len(p.small) == 0 && len(p.ranges) == 0 }

// planBest chooses the best files from the file index's scores of every
// file in scope: of the smallBestFiles best (the named files left out:
// completeFiles reads them whole), those of fewer than smallFileRows rows
// are read whole, and the first bestFiles of the others completed. It
// needs nothing of stage A, so the reading can run beside it.
func planBest(q *preparedQuery, fs *fileScores, named [][2]string) bestPlan {
	var plan bestPlan
	if len(q.clauses) == 0 {
		return plan
	}
	skip := make(map[string]bool, len(named))
	for _, d := range named {
		skip[fileKeyOf(d[0], d[1])] = true
	}
	i := 0
	for _, f := range fs.best(q, smallBestFiles+len(named)) {
		k := fileKeyOf(f[0], f[1])
		if skip[k] || i >= smallBestFiles {
			continue
		}
		r, ok := fs.rangeOf(k)
		switch {
		case !ok:
		case r[1]-r[0] < smallFileRows:
			plan.small = append(plan.small, r)
		case i < bestFiles:
			if m := fileMatch(q, fs, k); m != "" {
				plan.ranges = append(plan.ranges, r)
				plan.matches = append(plan.matches, m)
			}
		}
		i++
	}
	return plan
}

// fileMatch is the MATCH of the units of the file with key k: the
// question's clauses but the single words the file holds nowhere, by its
// kept counts and its path, which are all the scorer counts of it. FTS5
// looks each word up in its posting list, and a best file seldom holds
// every word of a question: a word it lacks would be looked up for no
// unit, or only for units it scores nothing for. "" when the file holds
// no word of any clause.
func fileMatch(q *preparedQuery, fs *fileScores, k string) string {
	ref, ok := fs.ix.lookup(k)
	if !ok {
		return matchAll(q, nil)
	}
	row := int(fs.slots[ref]) - 1
	if row < 0 {
		return matchAll(q, nil)
	}
	return matchAll(q, func(term int) bool {
		// A stem's path count is credited to one of its terms: look at
		// every term of the same stem.
		st := q.terms[term].stem
		for j := range q.terms {
			if q.terms[j].stem == st && (fs.tf(row, j) > 0 || fs.w[fieldPath].weight*float64(fs.counts[row*fs.nt+j].path) > 0) {
				return true
			}
		}
		return false
	})
}

// bestUnits reads the units of the plan's files that match the question,
// scored by a scorer of its own (it may run beside stage A). A unit read
// whole from a small file is a match as FTS5 would have found it, or none.
// Units in have been read already (the pool, when the search reads them
// itself; nil on a helper, which runs before the pool is known) and are
// neither read nor scored again.
func (e *Engine) bestUnits(ctx context.Context, tx *sql.Tx, q *preparedQuery, sf *scopeFilter, plan bestPlan, in map[int64]bool) ([]*candidate, error) {
	if plan.empty() {
		return nil, nil
	}
	leaves, err := e.leavesIn(ctx, tx, plan.small)
	if err != nil {
		return nil, err
	}
	direct := make(map[int64]bool, len(leaves))
	var seqs []int64
	for _, id := range leaves {
		if !in[id] {
			direct[id] = true
			seqs = append(seqs, id)
		}
	}
	if len(plan.ranges) > 0 {
		from, where, fargs := sf.ftsFrom()
		// One statement for every file: its text is the same for each.
		st, err := e.prepareIn(ctx, tx, rangeSQL(from, where))
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		defer st.Close()
		var match string
		if plan.matches == nil {
			match = matchAll(q, nil)
		}
		for i, r := range plan.ranges {
			if plan.matches != nil {
				match = plan.matches[i]
			}
			args := append(append([]any{match, r[0], r[1]}, fargs...), maxBestFileUnits)
			ids, err := scanIDs(st.QueryContext(ctx, args...))
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if !in[id] {
					seqs = append(seqs, id)
				}
			}
		}
	}
	if len(seqs) == 0 {
		return nil, nil
	}
	more, err := e.fetchCandidates(ctx, tx, seqs)
	if err != nil {
		return nil, err
	}
	sc := newScorer(q.prof, q.stats, q.terms, q.phrases, q.qualified, q.seq)
	out := more[:0]
	for i, c := range more {
		if i%scoreCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if c.score = sc.score(c); c.score > 0 && (!direct[c.seq] || sc.matchesQuery(q.pq)) {
			out = append(out, c)
		}
	}
	return out, nil
}

// seqSet is the set of the candidates' units.
func seqSet(cands []*candidate) map[int64]bool {
	in := make(map[int64]bool, len(cands))
	for _, c := range cands {
		in[c.seq] = true
	}
	return in
}

// mergeUnits adds to the pool the units it lacks.
func mergeUnits(cands, more []*candidate) []*candidate {
	if len(more) == 0 {
		return cands
	}
	in := seqSet(cands)
	for _, c := range more {
		if !in[c.seq] {
			in[c.seq] = true
			cands = append(cands, c)
		}
	}
	return cands
}

// sqlFileSizes reads the sizes of the given files (JSON pairs
// [source_id, path]).
const sqlFileSizes = `SELECT f.source_id, f.path, f.size FROM json_each(?) j
	JOIN files f ON f.source_id = j.value ->> 0 AND f.path = j.value ->> 1`

// fileSizes sets the file size of the candidates whose file has no kept
// counts (a file's kept counts hold its size): rerankFiles normalizes the
// sum of such a file's pooled units by it. Usually there are none.
func (e *Engine) fileSizes(ctx context.Context, tx *sql.Tx, kept map[string]*keptFile, cands []*candidate) error {
	var pairs [][2]string
	seen := map[string]bool{}
	for _, c := range cands {
		k := fileKeyOf(c.sourceID, c.path)
		if _, ok := kept[k]; !ok && !seen[k] {
			seen[k] = true
			pairs = append(pairs, [2]string{c.sourceID, c.path})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	list, err := json.Marshal(pairs)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	rows, err := e.query(ctx, tx, sqlFileSizes, string(list))
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	sizes := make(map[string]int64, len(pairs))
	for rows.Next() {
		var src, p string
		var n int64
		if err := rows.Scan(&src, &p, &n); err != nil {
			return fmt.Errorf("search: %w", err)
		}
		sizes[fileKeyOf(src, p)] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	for _, c := range cands {
		if n, ok := sizes[fileKeyOf(c.sourceID, c.path)]; ok {
			c.fileBytes = n
		}
	}
	return nil
}

// sqlLeavesIn lists the leaf units (evidence seq) within the given ranges
// of rows (JSON pairs [first, last]).
const sqlLeavesIn = `SELECT e.seq FROM json_each(?) j JOIN evidence e ON e.seq BETWEEN j.value ->> 0 AND j.value ->> 1 WHERE e.leaf = 1`

// leavesIn lists the leaf units within the ranges of rows.
func (e *Engine) leavesIn(ctx context.Context, tx *sql.Tx, ranges [][2]int64) ([]int64, error) {
	if len(ranges) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(ranges)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return scanIDs(e.query(ctx, tx, sqlLeavesIn, string(list)))
}

// scanIDs reads the one integer column of a query's rows (evidence seqs)
// and closes them.
func scanIDs(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

// bestFile is a file whose matching units completeBestFiles adds.
type bestFile struct {
	key, src, path string
	score          float64
}

// fileRanges gives the range of rows [first, last] of each file's units,
// in the files' order; a file with no unit has none.
func (e *Engine) fileRanges(ctx context.Context, tx *sql.Tx, files []bestFile) ([][2]int64, error) {
	pairs := make([][2]string, len(files))
	for i, f := range files {
		pairs[i] = [2]string{f.src, f.path}
	}
	list, err := json.Marshal(pairs)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	rows, err := e.query(ctx, tx, sqlFileRanges, string(list))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	byIndex := make([]*[2]int64, len(files))
	for rows.Next() {
		var i int
		var lo, hi sql.NullInt64
		if err := rows.Scan(&i, &lo, &hi); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if lo.Valid && hi.Valid && i >= 0 && i < len(files) {
			byIndex[i] = &[2]int64{lo.Int64, hi.Int64}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var out [][2]int64
	for _, r := range byIndex {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, nil
}
