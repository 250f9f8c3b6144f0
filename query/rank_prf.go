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
	prof := q.prof
	if len(cands) == 0 || prof.prfTerms == 0 || prof.prfWeight <= 0 || prof.prfWeight >= 1 {
		return nil
	}
	fb := relevanceModel(cands, prof)
	mass := 0.0
	for _, x := range fb {
		mass += x.p
	}
	if mass <= 0 {
		return nil
	}
	expanded, err := e.expand(ctx, tx, q, fb, mass)
	if err != nil {
		return err
	}
	sc := newScorer(prof, q.stats, expanded, q.phrases, q.qualified, q.seq)
	for _, c := range cands {
		c.score = sc.score(c)
	}
	return nil
}

// stemProb is one stem of the relevance model and its probability.
type stemProb struct {
	stem string
	p    float64
}

// relevanceModel is P(w|R) over the prfDocs best candidates, its prfTerms
// most likely stems, most likely first (ties by stem).
func relevanceModel(cands []*candidate, prof *profile) []stemProb {
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
	var fb []stemProb
	for w, p := range model {
		fb = append(fb, stemProb{w, p})
	}
	slices.SortFunc(fb, func(a, b stemProb) int {
		switch {
		case a.p > b.p:
			return -1
		case a.p < b.p:
			return 1
		}
		return strings.Compare(a.stem, b.stem)
	})
	return fb[:min(len(fb), prof.prfTerms)]
}

// expand interpolates the relevance model fb (of total probability mass)
// with the question's terms: a stem gains W_Q · (1-λ)/λ · P(w|R) / mass;
// a stem new to the query gets its df and idf (a stem found nowhere is
// left out).
func (e *Engine) expand(ctx context.Context, tx *sql.Tx, q *preparedQuery, fb []stemProb, mass float64) ([]sterm, error) {
	wq := 0.0
	for _, t := range q.terms {
		wq += t.weight
	}
	lambda := 1 - q.prof.prfWeight
	scale := wq * (1 - lambda) / lambda / mass
	expanded := slices.Clone(q.terms)
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
		return nil, err
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
		expanded = append(expanded, sterm{stem: x.stem, weight: scale * x.p, df: d, idf: bm25IDF(q.stats.n, d)})
	}
	return expanded, nil
}

func allDigitsBytes(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
