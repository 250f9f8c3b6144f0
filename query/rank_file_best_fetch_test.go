package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// bestFetchTree is a tree where completing the best files changes the
// page: forty files about glaciers, of several sections each.
func bestFetchTree() map[string]string {
	files := fileIndexTree()
	words := []string{"glacier", "moraine", "crevasse", "serac", "firn", "ablation"}
	for i := range 40 {
		a, b := words[i%len(words)], words[(i/len(words))%len(words)]
		files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("# The %s, note %d\n\n## Ice\n\nThe %s and the %s of the ice, %d.\n\n## Rock\n\nA %s over rock, %s again.\n\n## Water\n\nMelt water under the %s.\n\n## Air\n\nCold air over the %s.\n", a, i, a, b, i, b, a, a, b)
	}
	return files
}

// glacierSetup is a search's state before its best files are read: the
// files indexed, "glacier moraine crevasse" prepared in an open read
// transaction (released when the test ends), the files scored and the
// best ones planned.
type glacierSetup struct {
	env  *searchEnv
	src  string
	q    *preparedQuery
	ix   *fileIndex
	fs   *fileScores
	tx   *sql.Tx
	sf   *scopeFilter
	plan bestPlan
}

func glacierPlan(t *testing.T, files map[string]string) glacierSetup {
	t.Helper()
	g := glacierSetup{env: newSearchEnv(t), sf: &scopeFilter{}}
	g.src = g.env.folder("d", "default", files)
	var release func()
	g.q, g.ix, g.tx, release = indexedQueryTx(t, g.env, "glacier moraine crevasse")
	t.Cleanup(release)
	g.fs = g.ix.score(g.q, g.sf)
	g.plan = planBest(g.q, g.fs, nil)
	return g
}

// The best files read beside stage A, on a helper connection, give the
// page the search gives when it reads them itself.
func TestBestFilesBesideStageA(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("d", "default", bestFetchTree())
	// The helper reads the best files for stage A's probes: without the
	// unit index.
	env.engine.noUnits = true
	alone := &Engine{DB: env.engine.DB, Cursors: env.engine.Cursors, Collections: env.engine.Collections, noUnits: true}
	alone.helperOnce.Do(func() { alone.helpers = make(chan struct{}) }) // no helper slot: always inline
	ctx := context.Background()
	compared := 0
	for _, question := range []string{"glacier moraine crevasse", "serac firn ablation ice", "melt water under the firn", "ParseIP addresses"} {
		req := QueryRequest{Question: question}
		want, err := alone.Search(ctx, env.all, req)
		if err != nil {
			t.Fatal(err)
		}
		if alone.helped.Load() != 0 {
			t.Fatalf("%q: a helper ran without a slot", question)
		}
		// A search takes its helper's work back when it needs the units
		// before the helper has a connection: try until one helps.
		for range 20 {
			helped := env.engine.helped.Load()
			got := env.search(env.all, req)
			if env.engine.helped.Load() == helped {
				continue
			}
			compared++
			if len(got.Hits) == 0 || len(got.Hits) != len(want.Hits) {
				t.Fatalf("%q: %d hits beside stage A, %d alone", question, len(got.Hits), len(want.Hits))
			}
			for i := range got.Hits {
				if g, w := got.Hits[i], want.Hits[i]; g.EvidenceID != w.EvidenceID || g.Score != w.Score {
					t.Errorf("%q: hit %d is %s (%v) beside stage A, %s (%v) alone", question, i, g.EvidenceID, g.Score, w.EvidenceID, w.Score)
				}
			}
			if got.TotalMatches != want.TotalMatches {
				t.Errorf("%q: total_matches %d beside stage A, %d alone", question, got.TotalMatches, want.TotalMatches)
			}
			break
		}
	}
	if compared == 0 {
		t.Fatal("no helper read the best files of any search")
	}
}

func seqsOf(cs []*candidate) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.seq
	}
	slices.Sort(out)
	return out
}

// A helper whose snapshot is of another index generation gives its work
// back, and the search reads the units itself.
func TestBestFetchOtherGeneration(t *testing.T) {
	g := glacierPlan(t, bestFetchTree())
	env, q, ix, tx, sf, plan := g.env, g.q, g.ix, g.tx, g.sf, g.plan
	ctx := context.Background()
	if len(plan.ranges) == 0 {
		t.Fatalf("no best file to complete: %+v", plan)
	}
	want, err := env.engine.bestUnits(ctx, tx, q, sf, plan, nil)
	if err != nil || len(want) == 0 {
		t.Fatalf("best units: %d, %v", len(want), err)
	}
	other := *q
	other.stats.generation = []byte("another generation")
	b := env.engine.startBest(ctx, &other, sf, ix, nil)
	<-b.done // let the helper see the other generation
	if !errors.Is(b.err, errOtherGeneration) {
		t.Fatalf("helper error %v, want errOtherGeneration", b.err)
	}
	fs, got, err := b.wait(ctx, tx, nil)
	if err != nil || fs == nil {
		t.Fatal(err)
	}
	if g, w := seqsOf(got), seqsOf(want); !slices.Equal(g, w) {
		t.Errorf("units %v after the helper gave back, want %v", g, w)
	}
}

// A search whose caller leaves stops its helper, which frees its slot.
func TestBestFetchStopsWithTheSearch(t *testing.T) {
	g := glacierPlan(t, bestFetchTree())
	env, q, ix, tx, sf := g.env, g.q, g.ix, g.tx, g.sf
	ctx, cancel := context.WithCancel(context.Background())
	b := env.engine.startBest(ctx, q, sf, ix, nil)
	if b.done == nil {
		t.Fatal("no helper started")
	}
	cancel()
	// The helper may have finished before the caller left; else the
	// wait ends with the caller's error.
	if _, _, err := b.wait(ctx, tx, nil); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("wait after the caller left: %v, want context.Canceled", err)
	}
	b.stop()
	select {
	case <-b.done:
	default:
		t.Fatal("the helper runs after stop")
	}
	if n := len(env.engine.helpers); n != 0 {
		t.Errorf("%d helper slots held after the search", n)
	}
}

// A search that reads its best files itself reads and scores again none
// of the units its pool holds.
func TestBestUnitsSkipThePool(t *testing.T) {
	g := glacierPlan(t, bestFetchTree())
	env, q, tx, sf, plan := g.env, g.q, g.tx, g.sf, g.plan
	ctx := context.Background()
	all, err := env.engine.bestUnits(ctx, tx, q, sf, plan, nil)
	if err != nil || len(all) < 2 {
		t.Fatalf("best units: %d, %v", len(all), err)
	}
	pool := all[:len(all)/2]
	rest, err := env.engine.bestUnits(ctx, tx, q, sf, plan, seqSet(pool))
	if err != nil {
		t.Fatal(err)
	}
	if g, w := seqsOf(rest), seqsOf(all[len(all)/2:]); !slices.Equal(g, w) {
		t.Errorf("with half of them pooled: units %v, want %v", g, w)
	}
}

// A best file's units are looked for with the words it holds only, in its
// text or in its path, and that finds every unit the whole question
// finds, with the same scores.
func TestFileMatch(t *testing.T) {
	files := bestFetchTree()
	// A file whose path alone holds a word of the question.
	files["crevasse/field.md"] = "# Field notes\n\n## One\n\nThe glacier, again.\n\n## Two\n\nA glacier over rock.\n\n## Three\n\nMelt water.\n\n## Four\n\nCold air over the glacier.\n"
	g := glacierPlan(t, files)
	env, src, q, fs, tx, sf, plan := g.env, g.src, g.q, g.fs, g.tx, g.sf, g.plan
	ctx := context.Background()
	if len(plan.ranges) == 0 || len(plan.matches) != len(plan.ranges) {
		t.Fatalf("plan: %d ranges, %d matches", len(plan.ranges), len(plan.matches))
	}
	full := exhaustiveProbes(q)[0].match
	narrowed := 0
	for i, m := range plan.matches {
		if m != full {
			narrowed++
		}
		for _, w := range []string{"glacier", "moraine", "crevasse"} {
			if strings.Contains(full, `"`+w+`"`) && !strings.Contains(m, `"`+w+`"`) {
				// Left out: no unit of the range may hold it.
				var n int
				if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM evidence_fts WHERE evidence_fts MATCH ? AND rowid BETWEEN ? AND ?`,
					`"`+w+`"`, plan.ranges[i][0], plan.ranges[i][1]).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					t.Errorf("range %v: %q left out, yet %d of its units hold it", plan.ranges[i], w, n)
				}
			}
		}
	}
	if narrowed == 0 {
		t.Fatalf("no best file's match left a word out: %q", plan.matches)
	}
	if m := fileMatch(q, fs, fileKeyOf(src, "crevasse/field.md")); !strings.Contains(m, `"crevasse"`) {
		t.Errorf("the file whose path holds crevasse is matched by %q", m)
	}
	got, err := env.engine.bestUnits(ctx, tx, q, sf, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	wide := plan
	wide.matches = nil
	want, err := env.engine.bestUnits(ctx, tx, q, sf, wide, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !slices.Equal(seqsOf(got), seqsOf(want)) {
		t.Fatalf("units %v with each file's words, %v with the question's", seqsOf(got), seqsOf(want))
	}
	for i := range got {
		if got[i].score != want[i].score {
			t.Errorf("unit %d: score %v, want %v", got[i].seq, got[i].score, want[i].score)
		}
	}
}
