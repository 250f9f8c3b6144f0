package query

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/tychora/tychora/sources"
)

// Pseudo-relevance feedback (RM3).
//
// After the first scoring, the prfDocs best candidates are taken as
// relevant. Their relevance model is P(w|R) = Σ_D p(D) · tf(w,D) / |D|
// over the stems of their title and text, with p(D) the candidate's share
// of the summed scores; stop words, numbers and one-letter terms are left
// out. The prfTerms most likely stems are interpolated with the question:
// a stem gains weight W_Q · (1-λ)/λ · P(w|R) / Σ P (λ = 1 - prfWeight,
// W_Q the question's total term weight), so the question keeps its share
// whatever its length. The pool is then scored again with the expanded
// query (the expansion reranks the pool; it does not widen it).

// feedback expands the query from the best candidates and rescores all of
// them.
func (e *Engine) feedback(ctx context.Context, tx *sql.Tx, q *preparedQuery, cands []*candidate) error {
	prof, stats, terms := q.prof, q.stats, q.terms
	if len(cands) == 0 || prof.prfTerms == 0 || prof.prfWeight <= 0 || prof.prfWeight >= 1 {
		return nil
	}
	top := slices.Clone(cands)
	slices.SortFunc(top, byScore)
	top = top[:min(len(top), prof.prfDocs)]
	sum := 0.0
	for _, c := range top {
		sum += c.score
	}
	if sum <= 0 {
		return nil
	}
	model := map[string]float64{}
	counts := map[string]int{}
	var buf, sbuf []byte
	for _, c := range top {
		clear(counts)
		n := 0
		for _, text := range []string{c.title, c.text} {
			if len(text) > maxScanBytes {
				text = text[:maxScanBytes]
			}
			buf = sources.ForEachToken(text, buf, func(tok []byte, _, _ int) bool {
				n++
				if len(tok) < 2 || isStopword(string(tok)) || allDigitsBytes(tok) {
					return true
				}
				sbuf = append(sbuf[:0], tok...)
				counts[string(sources.PorterStem(sbuf))]++
				return true
			})
		}
		if n == 0 {
			continue
		}
		pd := c.score / sum
		for w, k := range counts {
			model[w] += pd * float64(k) / float64(n)
		}
	}
	type wp struct {
		stem string
		p    float64
	}
	var fb []wp
	for w, p := range model {
		fb = append(fb, wp{w, p})
	}
	slices.SortFunc(fb, func(a, b wp) int {
		switch {
		case a.p > b.p:
			return -1
		case a.p < b.p:
			return 1
		}
		return strings.Compare(a.stem, b.stem)
	})
	fb = fb[:min(len(fb), prof.prfTerms)]
	mass := 0.0
	for _, x := range fb {
		mass += x.p
	}
	if mass <= 0 {
		return nil
	}
	wq := 0.0
	for _, t := range terms {
		wq += t.weight
	}
	lambda := 1 - prof.prfWeight
	scale := wq * (1 - lambda) / lambda / mass

	expanded := slices.Clone(terms)
	index := map[string]int{}
	for i, t := range expanded {
		index[t.stem] = i
	}
	var fresh []string
	for _, x := range fb {
		if _, ok := index[x.stem]; !ok {
			fresh = append(fresh, x.stem)
		}
	}
	_, df, err := e.stats.load(ctx, e, tx, fresh)
	if err != nil {
		return err
	}
	for _, x := range fb {
		if i, ok := index[x.stem]; ok {
			expanded[i].weight += scale * x.p
			continue
		}
		d := df[x.stem]
		if d == 0 {
			continue
		}
		index[x.stem] = len(expanded)
		expanded = append(expanded, sterm{stem: x.stem, weight: scale * x.p, df: d, idf: bm25IDF(stats.n, d)})
	}
	sc := newScorer(prof, stats, expanded, q.phrases, q.qualified, q.seq)
	for _, c := range cands {
		c.score = sc.score(c)
	}
	return nil
}

func allDigitsBytes(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
