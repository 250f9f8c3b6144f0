package query

import (
	"context"
	"encoding/json"
	"math"
	"testing"
)

// The term counts kept at ingest are the counts the scorer makes: for
// each file, the weighted term frequencies read from file_terms equal
// the sum of keepFileTF over every leaf unit of the file, scored one by
// one. Titles with identifiers (parts count), text, code terms and
// words that are stems of others are all in the tree.
func TestKeptFileTermsMatchScorer(t *testing.T) {
	env := newSearchEnv(t)
	tree := map[string]string{
		"notes/README.md": "# Parsing addresses\n\nParseIP parses addresses; parsing an address twice parses it again.\n\n## Zones\n\nA zone follows the address.\n",
		"notes/plain.txt": "Address book\n\nThe addresses of the readers, parsed by hand.\n",
	}
	for k, v := range definitionTree {
		tree[k] = v
	}
	src := env.folder("go", "default", tree)
	ctx := context.Background()
	for _, question := range []string{"ParseIP parse address", "mutex lock state", "read request readers", "zone"} {
		tx, release, err := env.engine.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pq := parseQuestion(question)
		prof, _ := profileByName(DefaultProfile)
		q, err := env.engine.prepareQuery(ctx, tx, prof, &pq, &scopeFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var pairs [][2]string
		for p := range tree {
			pairs = append(pairs, [2]string{src, p})
		}
		list, _ := json.Marshal(pairs)
		rows, err := tx.QueryContext(ctx, sqlFileUnits, string(list))
		if err != nil {
			t.Fatal(err)
		}
		sc := newScorer(q.prof, q.stats, q.terms, q.phrases, q.qualified, q.seq)
		summed := map[string][]float64{}
		var cands []*candidate
		for rows.Next() {
			c := &candidate{}
			if err := c.scan(rows); err != nil {
				t.Fatal(err)
			}
			sc.score(c)
			k := c.sourceID + "\x00" + c.path
			if summed[k] == nil {
				summed[k] = make([]float64, len(q.terms))
			}
			for i, x := range c.fileTF {
				summed[k][i] += x
			}
			cands = append(cands, c)
		}
		rows.Close()
		kept := map[string]*keptFile{}
		err = env.engine.keptFileTF(ctx, tx, q, filesOf(cands), kept)
		release()
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) != len(tree) {
			t.Fatalf("%q: kept counts for %d files, want %d", question, len(kept), len(tree))
		}
		nonzero := 0
		for k, want := range summed {
			got := kept[k].tf
			for i := range q.terms {
				if q.terms[i].weight == 0 {
					continue
				}
				if math.Abs(got[i]-want[i]) > 1e-9 {
					t.Errorf("%q: file %q term %q: kept %.3f, scorer %.3f", question, k, q.terms[i].stem, got[i], want[i])
				}
				if want[i] > 0 {
					nonzero++
				}
			}
		}
		if nonzero == 0 {
			t.Errorf("%q: no file holds a term: the test checks nothing", question)
		}
	}
}
