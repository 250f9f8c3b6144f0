package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// perQueryFile, when set, receives each query's nDCG@10 (-perquery).
var perQueryFile string

// writePerQuery writes one line per judged query: its id, tychora's
// nDCG@10, the baseline's (empty without one), tychora's first document
// and the question, to path with the set's name before its extension
// (scifact: runs.tsv → runs.scifact.tsv).
func writePerQuery(path, set string, queries []evalQuery, runs, base []queryRun, qrels map[string]map[string]int, ignoreSelf bool) error {
	ext := filepath.Ext(path)
	path = strings.TrimSuffix(path, ext) + "." + set + ext
	byID := func(rs []queryRun) map[string][]scoredDoc {
		m := make(map[string][]scoredDoc, len(rs))
		for _, r := range rs {
			m[r.id] = r.hits
		}
		return m
	}
	ours, theirs := byID(runs), byID(base)
	var b strings.Builder
	b.WriteString("query\tndcg10\tbaseline\tfirst\tquestion\n")
	for _, q := range queries {
		rel := qrels[q.ID]
		if len(rel) == 0 {
			continue
		}
		docs := rankDocs(ours[q.ID], q.ID, ignoreSelf)
		first := ""
		if len(docs) > 0 {
			first = docs[0].doc
		}
		bl := ""
		if base != nil {
			bl = fmt.Sprintf("%.4f", ndcgAt(rankDocs(theirs[q.ID], q.ID, ignoreSelf), rel, 10))
		}
		fmt.Fprintf(&b, "%s\t%.4f\t%s\t%s\t%s\n", q.ID, ndcgAt(docs, rel, 10), bl, first, strings.ReplaceAll(q.Text, "\t", " "))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// showQueries lists the query ids whose rankings showRuns prints (-show).
var showQueries string

// showRuns prints, for each query of -show, its top 10 documents with
// their scores and grades and the rank of every judged document.
func showRuns(queries []evalQuery, runs []queryRun, qrels map[string]map[string]int, ignoreSelf bool) {
	if showQueries == "" {
		return
	}
	want := map[string]bool{}
	for _, id := range strings.Split(showQueries, ",") {
		want[strings.TrimSpace(id)] = true
	}
	hits := map[string][]scoredDoc{}
	for _, r := range runs {
		hits[r.id] = r.hits
	}
	for _, q := range queries {
		if !want[q.ID] {
			continue
		}
		rel := qrels[q.ID]
		docs := rankDocs(hits[q.ID], q.ID, ignoreSelf)
		fmt.Printf("\nquery %s: %s (nDCG@10 %.4f)\n", q.ID, q.Text, ndcgAt(docs, rel, 10))
		for i := 0; i < 10 && i < len(docs); i++ {
			fmt.Printf("  %2d  %8.3f  %-10s grade %d\n", i+1, docs[i].score, docs[i].doc, rel[docs[i].doc])
		}
		for d, g := range rel {
			rank := "not in the run"
			for i, x := range docs {
				if x.doc == d {
					rank = fmt.Sprintf("rank %d, score %.3f", i+1, x.score)
					break
				}
			}
			fmt.Printf("  judged %s (grade %d): %s\n", d, g, rank)
		}
	}
}
