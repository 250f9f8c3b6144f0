package main

import (
	"math"
	"sort"
)

// Metrics with trec_eval semantics.
//
//   - A query's ranking is its documents sorted by score, descending, ties
//     broken by document id, descending (trec_eval sorts that way).
//   - nDCG@10 (ndcg_cut.10): gains are the qrels grades (linear, as
//     trec_eval and pytrec_eval use them), discount log2(rank+1); the ideal
//     ranking is the query's judged documents sorted by grade.
//   - Recall@100: relevant documents (grade > 0) in the top 100, over all
//     relevant documents of the query.
//   - Means are over every query with a judged relevant document; a query
//     that returns nothing counts 0 (trec_eval -c), rather than being left
//     out as pytrec_eval does.
//   - With ignoreSelf (ArguAna), the document whose id equals the query id
//     is removed from the ranking before the cut-offs (BEIR's
//     ignore_identical_ids).

type scoredDoc struct {
	doc   string
	score float64
}

type queryRun struct {
	id   string
	hits []scoredDoc // chunk hits; documents repeat
}

type metrics struct {
	queries   int
	ndcg10    float64
	recall100 float64
}

// rankDocs aggregates hits per document (best score) and sorts them.
func rankDocs(hits []scoredDoc, self string, ignoreSelf bool) []scoredDoc {
	best := map[string]float64{}
	for _, h := range hits {
		if ignoreSelf && h.doc == self {
			continue
		}
		if s, ok := best[h.doc]; !ok || h.score > s {
			best[h.doc] = h.score
		}
	}
	docs := make([]scoredDoc, 0, len(best))
	for d, s := range best {
		docs = append(docs, scoredDoc{d, s})
	}
	sort.Slice(docs, func(i, j int) bool {
		if docs[i].score != docs[j].score {
			return docs[i].score > docs[j].score
		}
		return docs[i].doc > docs[j].doc
	})
	return docs
}

func evaluate(runs []queryRun, qrels map[string]map[string]int, ignoreSelf bool) metrics {
	var m metrics
	byID := map[string][]scoredDoc{}
	for _, r := range runs {
		byID[r.id] = r.hits
	}
	for qid, rel := range qrels {
		nrel := 0
		for _, g := range rel {
			if g > 0 {
				nrel++
			}
		}
		if nrel == 0 {
			continue
		}
		m.queries++
		docs := rankDocs(byID[qid], qid, ignoreSelf)
		m.ndcg10 += ndcgAt(docs, rel, 10)
		found := 0
		for i := 0; i < 100 && i < len(docs); i++ {
			if rel[docs[i].doc] > 0 {
				found++
			}
		}
		m.recall100 += float64(found) / float64(nrel)
	}
	if m.queries > 0 {
		m.ndcg10 /= float64(m.queries)
		m.recall100 /= float64(m.queries)
	}
	return m
}

func ndcgAt(docs []scoredDoc, rel map[string]int, k int) float64 {
	dcg := 0.0
	for i := 0; i < k && i < len(docs); i++ {
		if g := rel[docs[i].doc]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	var grades []int
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	idcg := 0.0
	for i := 0; i < k && i < len(grades); i++ {
		idcg += float64(grades[i]) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}
