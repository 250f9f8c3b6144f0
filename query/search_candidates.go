package query

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Candidate generation (stage A).
//
// FTS5 finds the evidence that matches; stage B (rank.go) scores a bounded
// pool of it in Go. What costs time in FTS5 is proportional to the
// postings it walks: bm25() walks every posting of every phrase in the
// expression once per statement (for its idf) and then costs about a
// microsecond for each matching row, so an OR of common words over a large
// index is slow (about 1 s for a 200-word ArguAna question with every
// term). Stage A therefore plans a short list of probes from the terms'
// document frequencies (rank_stats.go), cheapest first, and stops as soon
// as the pool is full:
//
//  1. When the document frequencies of all terms sum to at most
//     rankBudget, one probe ranks the OR of all terms with bm25: the
//     exhaustive case (most questions on small and medium corpora).
//  2. Otherwise, for 2..maxAndTerms terms: the AND of all terms, then "at
//     least two of them" (an OR of ANDs of pairs, for up to 5 terms). These
//     are driven by the rarest term and cost little; a probe that finds
//     more rows than the pool holds is ranked with bm25.
//  3. Then the OR of the best terms by weight × idf whose document
//     frequencies fit in rankBudget (at most maxTermsA terms), ranked with
//     bm25: the IDF pruning of long questions. Terms left out still count
//     in stage B for every candidate.
//  4. When even the rarest term is too common to rank (a lone "error" in
//     a large code base), the OR of the terms restricted to the title,
//     heading_path and path columns is ranked instead, and the rest of the
//     pool is filled in index order.
//
// Quoted phrases are required: every probe is AND-ed with them.
//
// This is top-k pruning: a unit that matches only terms pruned in step 3,
// or only common terms past a full pool, can be missed. docs/search.md
// says so, and the evaluation measures what it costs.

// maxAndTerms is the most terms for which the conjunctive probes run.
const maxAndTerms = 8

// probe is one FTS5 query of stage A.
type probe struct {
	match string
	// ranked orders by bm25 (with the profile's column weights); otherwise
	// rows come in index order.
	ranked bool
	// overflowRanked: run unranked first and, if more rows than the pool
	// match, run again ranked.
	overflowRanked bool
}

// planProbes lists the probes for the scoring terms (with df) and the
// phrases of a query, in the order they run.
func planProbes(prof *profile, terms []sterm, tokens []string, phrases [][]string) []probe {
	var ph []string
	for _, p := range phrases {
		ph = append(ph, ftsString(p...))
	}
	withPhrases := func(expr string) string {
		if len(ph) == 0 {
			return expr
		}
		if expr == "" {
			return strings.Join(ph, " AND ")
		}
		return "(" + expr + ") AND " + strings.Join(ph, " AND ")
	}
	// Scoring terms by df ascending (idf descending), ties by token.
	idx := make([]int, 0, len(terms))
	var sum int64
	for i, t := range terms {
		if t.weight > 0 {
			idx = append(idx, i)
			sum += t.df
		}
	}
	if len(idx) == 0 {
		if len(ph) == 0 {
			return nil
		}
		return []probe{{match: withPhrases(""), overflowRanked: true}}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if terms[a].df != terms[b].df {
			return int(terms[a].df - terms[b].df)
		}
		return strings.Compare(tokens[a], tokens[b])
	})
	or := func(ids []int) string {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = ftsString(tokens[id])
		}
		return strings.Join(parts, " OR ")
	}
	and := func(ids []int) string {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = ftsString(tokens[id])
		}
		return strings.Join(parts, " AND ")
	}
	if sum <= prof.rankBudget && len(idx) <= prof.maxTermsA {
		return []probe{{match: withPhrases(or(idx)), ranked: true}}
	}
	var out []probe
	if len(idx) >= 2 && len(idx) <= maxAndTerms {
		out = append(out, probe{match: withPhrases(and(idx)), overflowRanked: true})
		if len(idx) >= 3 && len(idx) <= 5 {
			var pairs []string
			for i := 0; i < len(idx); i++ {
				for j := i + 1; j < len(idx); j++ {
					pairs = append(pairs, "("+and([]int{idx[i], idx[j]})+")")
				}
			}
			out = append(out, probe{match: withPhrases(strings.Join(pairs, " OR ")), overflowRanked: true})
		}
	}
	// The best terms by weight × idf that fit the budget.
	best := slices.Clone(idx)
	slices.SortStableFunc(best, func(a, b int) int {
		wa, wb := terms[a].weight*terms[a].idf, terms[b].weight*terms[b].idf
		switch {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return 0
	})
	var chosen []int
	var budget int64
	for _, i := range best {
		if len(chosen) >= prof.maxTermsA {
			break
		}
		if budget+terms[i].df <= prof.rankBudget {
			chosen = append(chosen, i)
			budget += terms[i].df
		}
	}
	if len(chosen) > 0 {
		out = append(out, probe{match: withPhrases(or(chosen)), ranked: true})
	}
	if len(chosen) == 0 || budget < prof.rankBudget/4 {
		// Too common to rank everywhere: rank the short columns, then fill.
		few := idx[:min(len(idx), 4)]
		out = append(out,
			probe{match: withPhrases("{title heading_path path} : (" + or(few) + ")"), overflowRanked: true},
			probe{match: withPhrases(or(few))})
	}
	return out
}

// runProbes runs the probes until the pool holds poolSize candidates and
// returns their rowids (evidence seq), best first within each probe.
func (e *Engine) runProbes(ctx context.Context, tx *sql.Tx, prof *profile, probes []probe, sf *scopeFilter, poolSize int) ([]int64, error) {
	where, fargs := sf.sql()
	join := ""
	if where != "" {
		join = " JOIN evidence e ON e.seq = f.rowid"
	}
	w := prof.fields
	bm25 := fmt.Sprintf("bm25(evidence_fts, %s, %s, %s, %s, %s)",
		num(w[fieldTitle].weight), num(w[fieldHeading].weight), num(w[fieldPath].weight),
		num(w[fieldBody].weight), num(w[fieldCode].weight))
	seen := make(map[int64]bool, poolSize)
	var pool []int64
	run := func(match string, ranked bool, limit int) (int, error) {
		q := "SELECT f.rowid FROM evidence_fts f" + join + " WHERE evidence_fts MATCH ?" + where
		if ranked {
			q += " ORDER BY " + bm25 + ", f.rowid"
		}
		q += " LIMIT " + strconv.Itoa(limit)
		args := append([]any{match}, fargs...)
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return 0, fmt.Errorf("search: %w", err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return 0, fmt.Errorf("search: %w", err)
			}
			n++
			if !seen[id] && len(pool) < poolSize {
				seen[id] = true
				pool = append(pool, id)
			}
		}
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("search: %w", err)
		}
		return n, nil
	}
	for _, p := range probes {
		if len(pool) >= poolSize {
			break
		}
		want := poolSize - len(pool)
		switch {
		case p.ranked:
			if _, err := run(p.match, true, poolSize); err != nil {
				return nil, err
			}
		case p.overflowRanked:
			// Unranked first; if the probe holds more than the room left,
			// take the best of it instead.
			mark := len(pool)
			n, err := run(p.match, false, want+1)
			if err != nil {
				return nil, err
			}
			if n > want {
				for _, id := range pool[mark:] {
					delete(seen, id)
				}
				pool = pool[:mark]
				if _, err := run(p.match, true, poolSize); err != nil {
					return nil, err
				}
			}
		default:
			if _, err := run(p.match, false, poolSize); err != nil {
				return nil, err
			}
		}
	}
	return pool, nil
}

// num formats a weight for SQL.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// maxCountedMatches caps total_matches: counting stops there.
const maxCountedMatches = 10000

// countMatches counts the evidence in scope that matches expr, up to
// maxCountedMatches.
func countMatches(ctx context.Context, tx *sql.Tx, expr string, sf *scopeFilter) (int, error) {
	where, fargs := sf.sql()
	join := ""
	if where != "" {
		join = " JOIN evidence e ON e.seq = f.rowid"
	}
	q := "SELECT count(*) FROM (SELECT 1 FROM evidence_fts f" + join + " WHERE evidence_fts MATCH ?" + where +
		" LIMIT " + strconv.Itoa(maxCountedMatches) + ")"
	var n int
	if err := tx.QueryRowContext(ctx, q, append([]any{expr}, fargs...)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("search: %w", err)
	}
	return n, nil
}
