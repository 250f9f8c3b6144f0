package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/sources"
)

// The unit index gives every unit the scorer scores above 0, and only
// those, a term score at most the scorer's BM25F score and a bound (with
// phrases and proximity) at least that score; for a question of one word
// (no phrase, no pair) the two are the scorer's score.
func TestUnitIndexMatchesScorer(t *testing.T) {
	env := newSearchEnv(t)
	tree := fileIndexTree()
	tree["docs/guide.md"] = "# Guide\n\n## Parsing\n\nParse the address, then parse the zone; the address parser reads zones.\n\n## Locks\n\nA mutex lock guards the state. Lock, then unlock the mutex.\n"
	tree["net/ipaddr.go"] = "package net\n\n// ParseIP parses s as an IP address.\nfunc ParseIP(s string) IP { return parseIP(s) }\n\n// parseIP parses the address and its zone.\nfunc parseIP(s string) IP { return nil }\n"
	src := env.folder("go", "default", tree)
	ctx := context.Background()
	questions := []string{"address", "zone", "mutex", "parses", "ParseIP", "ParseIP parse address", "mutex lock state", `"parses addresses"`, "sync.Mutex", "read request readers", "zone of an address"}
	for _, question := range questions {
		q, ix, tx, release := indexedQueryTx(t, env, question)
		if !ix.unitsReady() {
			release()
			t.Fatal("the unit index is not ready")
		}
		sf := &scopeFilter{}
		fs := ix.score(q, sf)
		w := newUnitWalk(ix, sf)
		sc := getUnitScratch(len(ix.base.units) + len(ix.delta.units))
		ix.unitWalkTerms(q, fs, w, sc, nil)
		type bounds struct{ t, b float64 }
		got := map[int64]bounds{}
		for _, uref := range sc.touched {
			got[w.unit(uref).seq] = bounds{sc.t[uref], sc.t[uref] + sc.extra[uref]}
		}
		sc.release()

		var pairs [][2]string
		for p := range tree {
			pairs = append(pairs, [2]string{src, p})
		}
		list, _ := json.Marshal(pairs)
		rows, err := tx.QueryContext(ctx, sqlFileUnits, string(list))
		if err != nil {
			release()
			t.Fatal(err)
		}
		s := newScorer(q.prof, q.stats, q.terms, q.phrases, q.qualified, q.seq)
		oneWord := len(q.phrases) == 0 && len(s.pairs) == 0
		scored := 0
		for rows.Next() {
			c := &candidate{}
			if err := c.scan(rows); err != nil {
				t.Fatal(err)
			}
			want := s.score(c)
			b, ok := got[c.seq]
			if want == 0 {
				if ok && b.t > 0 {
					t.Errorf("%q: %s %q scores 0, the unit index %v", question, c.path, c.title, b)
				}
				continue
			}
			scored++
			if !ok {
				t.Errorf("%q: %s %q scores %v, the unit index lacks it", question, c.path, c.title, want)
				continue
			}
			const tol = 1e-6
			if b.t > want*(1+tol) || want > b.b*(1+tol) {
				t.Errorf("%q: %s %q scores %v, outside the unit index's [%v, %v]", question, c.path, c.title, want, b.t, b.b)
			}
			if oneWord && math.Abs(b.t-want) > tol*want {
				t.Errorf("%q: %s %q scores %v, the unit index %v", question, c.path, c.title, want, b.t)
			}
		}
		rows.Close()
		release()
		if scored == 0 {
			t.Errorf("%q: no unit scored", question)
		}
	}
}

// A question without a free word walks only the units that hold every
// term of one of its clauses (narrowUnits): exactly the units of the full
// walk that match, with the same scores, terms and title marks.
func TestUnitWalkNarrowed(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("src", "default", unitTree())
	questions := []string{"ReaderStream", "read_buffer", "BufferReader", "TokenCache", "pkg2.ParseToken", `"reader buffer"`,
		"QueueMerge2", "parse_reader", "buffer reader"}
	narrowed := 0
	for _, question := range questions {
		q, ix, release := indexedQuery(t, env, question)
		sf := &scopeFilter{}
		fs := ix.score(q, sf)
		mm := newMatchMasks(q)
		type unitState struct {
			t, extra        float64
			held            uint64
			titled, spelled bool
		}
		walk := func(mm *matchMasks) map[int32]unitState {
			w := newUnitWalk(ix, sf)
			sc := getUnitScratch(len(ix.base.units) + len(ix.delta.units))
			defer sc.release()
			ix.unitWalkTerms(q, fs, w, sc, mm)
			out := map[int32]unitState{}
			for _, u := range sc.touched {
				out[u] = unitState{sc.t[u], sc.extra[u], sc.held[u], sc.titled[u], sc.spelled[u]}
			}
			return out
		}
		full, narrow := walk(nil), walk(mm)
		release()
		matching := 0
		for u, st := range full {
			got, ok := narrow[u]
			if mm.match(st.held) == matchNone {
				if ok && mm.any == 0 {
					t.Errorf("%q: unit %d matches no clause and was walked", question, u)
				}
				continue
			}
			matching++
			// extra sums the proximity pairs in a map's order: its last
			// bit may differ from one walk to the next.
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if !ok {
				t.Errorf("%q: unit %d matches and was not walked", question, u)
			} else if got.t != st.t || !near(got.extra, st.extra) || got.held != st.held || got.titled != st.titled || got.spelled != st.spelled {
				t.Errorf("%q: unit %d walked as %+v, in the full walk %+v", question, u, got, st)
			}
		}
		if matching == 0 {
			t.Errorf("%q: no unit matches", question)
		}
		if mm.any == 0 && len(narrow) < len(full) {
			narrowed++
		}
		if mm.any != 0 && len(narrow) != len(full) {
			t.Errorf("%q has a free word: %d units walked, %d in the full walk", question, len(narrow), len(full))
		}
	}
	if narrowed == 0 {
		t.Error("no question's walk was narrowed")
	}
}

// unitTree is a tree of many files with shared words: implementation,
// tests, examples, testdata and documentation, long and short units, so
// that a page's ten hits come from a few of many matching units.
func unitTree() map[string]string {
	words := []string{"buffer", "reader", "writer", "parse", "token", "stream", "index", "cache", "lock", "queue", "merge", "segment"}
	tree := map[string]string{}
	for i := range 40 {
		a, b, c := words[i%len(words)], words[(i*5+1)%len(words)], words[(i*7+3)%len(words)]
		name := fmt.Sprintf("pkg%d/%s_%s.go", i%6, a, b)
		var body strings.Builder
		fmt.Fprintf(&body, "package pkg%d\n\n", i%6)
		for j := range 3 + i%4 {
			fmt.Fprintf(&body, "// %s%d reads the %s and the %s of a %s.\nfunc %s%s%d() int {\n\t// %s %s %s\n\treturn %d\n}\n\n",
				strings.ToUpper(a[:1])+a[1:], j, b, c, a, strings.ToUpper(b[:1])+b[1:], c, j, c, a, strings.Repeat(b+" ", j), i*j)
		}
		tree[name] = body.String()
		switch i % 5 {
		case 1:
			tree[fmt.Sprintf("pkg%d/%s_test.go", i%6, a)] = fmt.Sprintf("package pkg%d\n\nfunc Test%s(t *testing.T) { _ = %s%s0() // %s %s\n}\n", i%6, b, b, c, a, c)
		case 2:
			tree[fmt.Sprintf("examples/%s/main.go", a)] = fmt.Sprintf("package main\n\n// An example of the %s %s.\nfunc main() { println(\"%s %s %s\") }\n", a, b, a, b, c)
		case 3:
			tree[fmt.Sprintf("docs/%s-%d.md", a, i)] = fmt.Sprintf("# The %s\n\n## Reading\n\nThe %s reads a %s.\n\n## Writing\n\nThe %s writes the %s to a %s %s.\n", a, a, b, a, c, b, b)
		case 4:
			tree[fmt.Sprintf("pkg%d/testdata/%s.txt", i%6, c)] = fmt.Sprintf("%s %s %s %s\n", c, c, a, b)
		}
	}
	// Rust source with its tests inside (candidate.unitRole).
	var rs strings.Builder
	rs.WriteString("/// Reads the buffer of a reader.\npub fn read_buffer(reader: &[u8]) -> usize {\n    reader.len()\n}\n\n")
	rs.WriteString("#[cfg(test)]\n#[test]\nfn reader_buffer_read() {\n    // reader buffer reader buffer\n    assert_eq!(read_buffer(b\"reader\"), 6);\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n")
	for j := range 12 {
		fmt.Fprintf(&rs, "    #[test]\n    fn reader_%d() {\n        // the reader reads the buffer of the stream %d\n        let buffer = vec![0u8; %d];\n        assert_eq!(read_buffer(&buffer), %d);\n    }\n\n", j, j, j, j)
	}
	rs.WriteString("}\n")
	tree["crates/reader/src/lib.rs"] = rs.String()
	// Source that serves tests, named for them (namedRoles).
	tree["pkg2/testutil.go"] = "package pkg2\n\n// NewReader returns a reader of the buffer for tests.\nfunc NewReader() int { return 1 }\n"
	tree["internal/testing/reader.go"] = "package testing\n\n// Reader reads the stream of a test: the reader of tests.\ntype Reader struct{}\n"
	return tree
}

// A page ranked from the unit index is the page of every matching unit
// ranked (Engine.Exhaustive), hit for hit and in order.
func TestUnitPagesAreExhaustive(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("src", "default", unitTree())
	full := &Engine{DB: env.engine.DB, Cursors: env.engine.Cursors, Collections: env.engine.Collections, Exhaustive: true}
	ctx := context.Background()
	questions := []string{"buffer reader", "parse token stream", "merge segment index", "lock the queue", "cache", "tests for the reader",
		"an example of the writer", `"reads the reader"`, "pkg3.ReaderStream0", "segment merge of the index cache lock",
		"the docs on writing a buffer", "ReaderStream", "read_buffer", "BufferReader", "TokenCache", "pkg2.ParseToken", `"reader buffer"`}
	for _, limit := range []int{10, 5} {
		for _, question := range questions {
			req := QueryRequest{Question: question, Limit: limit}
			before := env.engine.unitServed.Load()
			pooled := env.search(env.all, req)
			if env.engine.unitServed.Load() != before+1 {
				t.Fatalf("%q: the unit index did not serve the search", question)
			}
			exhaustive, err := full.Search(ctx, env.all, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(exhaustive.Hits) == 0 {
				t.Fatalf("%q: nothing matches", question)
			}
			ids := func(hs []Hit) []string {
				var out []string
				for _, h := range hs {
					out = append(out, h.EvidenceID+" "+h.Path+" "+h.Title)
				}
				return out
			}
			if a, b := ids(pooled.Hits), ids(exhaustive.Hits); !slices.Equal(a, b) {
				t.Errorf("%q, limit %d: pooled page\n  %v\nexhaustive\n  %v", question, limit, strings.Join(a, "\n  "), strings.Join(b, "\n  "))
			}
		}
	}
}

// The unit index follows syncs as the file index does: a changed file's
// units are read again into the delta, its old units are no longer found.
func TestUnitIndexFollowsSyncs(t *testing.T) {
	env := newSearchEnv(t)
	tree := fileIndexTree()
	for i := range 3 * fileDeltaShare {
		tree[fmt.Sprintf("filler/f%02d.go", i)] = fmt.Sprintf("package filler\n\n// F%d fills.\nvar F%d = %d\n", i, i, i)
	}
	tree["zone/animal.go"] = "package zone\n\n// Wombat digs.\nvar Wombat = 1\n"
	src := env.folder("go", "default", tree)
	ctx := context.Background()
	hitsOf := func(question string) []string {
		t.Helper()
		before := env.engine.unitServed.Load()
		res := env.search(env.all, QueryRequest{Question: question})
		if env.engine.unitServed.Load() != before+1 {
			t.Fatalf("%q: the unit index did not serve the search", question)
		}
		return slices.Compact(paths(res.Hits))
	}
	if got := hitsOf("wombat"); !slices.Equal(got, []string{"zone/animal.go"}) {
		t.Fatalf("before the change: %v", got)
	}
	env.write("go/zone/animal.go", "package zone\n\n// Numbat eats termites.\nvar Numbat = 1\n")
	env.write("go/added/quokka.go", "package added\n\n// Quokka smiles at the numbat.\nvar Quokka = 1\n")
	if _, err := env.ix.Sync(ctx, src, sources.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := hitsOf("wombat"); len(got) != 0 {
		t.Errorf("the old version's word still finds %v", got)
	}
	got := hitsOf("numbat")
	slices.Sort(got)
	if !slices.Equal(got, []string{"added/quokka.go", "zone/animal.go"}) {
		t.Errorf("numbat: %v", got)
	}
	_, ix, release := indexedQuery(t, env, "numbat")
	defer release()
	if len(ix.delta.files) != 2 || len(ix.delta.units) == 0 || !ix.unitsReady() {
		t.Errorf("the change's delta holds %d files and %d units (ready %v), want 2 files and their units", len(ix.delta.files), len(ix.delta.units), ix.unitsReady())
	}
}

// A workspace with more unit postings than the index holds is searched
// with stage A's probes, as before the unit index.
func TestUnitIndexTooLarge(t *testing.T) {
	old := maxUnitPostings
	maxUnitPostings = 10
	defer func() { maxUnitPostings = old }()
	env := newSearchEnv(t)
	env.folder("go", "default", fileIndexTree())
	_, ix, release := indexedQuery(t, env, "address")
	ready := ix.unitsReady()
	release()
	if ready || ix.base.units != nil {
		t.Fatalf("an index over the limit holds units (ready %v, %d units)", ready, len(ix.base.units))
	}
	before := env.engine.unitServed.Load()
	res := env.search(env.all, QueryRequest{Question: "address"})
	if len(res.Hits) == 0 {
		t.Error("no hits without the unit index")
	}
	if env.engine.unitServed.Load() != before {
		t.Error("the unit index served a search it does not hold")
	}
}

// Pages followed by their cursors are the exhaustive ranking's, in
// order: each page reads what the pages up to it need.
func TestUnitPagesFollowTheirCursors(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("src", "default", unitTree())
	full := &Engine{DB: env.engine.DB, Cursors: env.engine.Cursors, Collections: env.engine.Collections, Exhaustive: true}
	ctx := context.Background()
	for _, question := range []string{"buffer reader", "merge segment index", "cache"} {
		got, ids := followedPages(ctx, t, env, full, question)
		if len(ids) < 20 {
			t.Fatalf("%q: %d matches, want 20 or more", question, len(ids))
		}
		if !slices.Equal(got, ids) {
			t.Errorf("%q: four pages of 5\n  %v\nthe exhaustive 20\n  %v", question, got, ids)
		}
	}
}

// followedPages returns the hits of four pages of 5 of question, each
// reached by the cursor of the one before, and the first 20 hits of the
// exhaustive ranking (full).
func followedPages(ctx context.Context, t *testing.T, env *searchEnv, full *Engine, question string) (got, want []string) {
	t.Helper()
	all, err := full.Search(ctx, env.all, QueryRequest{Question: question, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range all.Hits {
		want = append(want, h.EvidenceID)
	}
	req := QueryRequest{Question: question, Limit: 5}
	for range 4 {
		res := env.search(env.all, req)
		for _, h := range res.Hits {
			got = append(got, h.EvidenceID)
		}
		if res.NextCursor == nil {
			break
		}
		req.Cursor = *res.NextCursor
	}
	return got, want
}

// withUnitWorkers counts every part with workers workers, in batches of
// batch units, until the test ends.
func withUnitWorkers(t *testing.T, workers, batch int) {
	oldW, oldB := unitWorkersFor, unitBatchUnits
	unitWorkersFor = func(int) int { return workers }
	unitBatchUnits = batch
	t.Cleanup(func() { unitWorkersFor, unitBatchUnits = oldW, oldB })
}

// unitTreeWide is unitTree with enough files for many batches, and for
// more than one read of units (unitFileBatch).
func unitTreeWide() map[string]string {
	tree := unitTree()
	for i := range unitFileBatch + 20 {
		tree[fmt.Sprintf("wide/w%03d.go", i)] = fmt.Sprintf("package wide\n\n// W%d parses an address of zone %d.\nfunc W%d() string { return \"address\" }\n\n// V%d reads %d readers.\nvar V%d = %d\n", i, i%3, i, i, i, i, i)
	}
	return tree
}

// indexFiles begins a read of env's index and returns the files a part
// of it holds.
func indexFiles(t *testing.T, env *searchEnv) (*sql.Tx, []fileEntry, func()) {
	t.Helper()
	tx, release, err := env.engine.begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := readFilePrints(context.Background(), env.engine, tx)
	if err != nil {
		release()
		t.Fatal(err)
	}
	return tx, files, release
}

// buildPart builds a whole part of env's index, keeping its stems' names.
func buildPart(t *testing.T, env *searchEnv) *filePart {
	t.Helper()
	tx, files, release := indexFiles(t, env)
	defer release()
	p, err := readFilePart(context.Background(), env.engine, tx, files, false, true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Counted by workers beside the reading, in batches that cut files
// apart, a part holds exactly what one counter makes: the same units in
// the same order, the same postings of every stem in unit order, the
// same stems' names.
func TestUnitCountingParallel(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("go", "default", unitTreeWide())
	want := buildPart(t, env)
	if !want.unitsOK || len(want.units) < 40 {
		t.Fatalf("the part holds %d units (ok %v), want a unit index", len(want.units), want.unitsOK)
	}
	for _, c := range []struct{ workers, batch int }{{2, 1}, {3, 3}, {4, 7}, {2, 1000}} {
		withUnitWorkers(t, c.workers, c.batch)
		got := buildPart(t, env)
		if diff := samePart(got, want); diff != "" {
			t.Errorf("%d workers, batches of %d: the part differs in its %s", c.workers, c.batch, diff)
		}
		if !maps.Equal(got.names, want.names) {
			t.Errorf("%d workers, batches of %d: the stems' names differ", c.workers, c.batch)
		}
	}
}

// Counted by workers, a part over the postings bound keeps no units, and
// a build whose context ends returns its error with every worker gone; a
// build that gives way to the searches (bg) is counted by the reader
// alone.
func TestUnitCountingParallelStops(t *testing.T) {
	withUnitWorkers(t, 3, 2)
	env := newSearchEnv(t)
	env.folder("go", "default", unitTreeWide())
	old := maxUnitPostings
	maxUnitPostings = 50
	p := buildPart(t, env)
	maxUnitPostings = old
	if p.unitsOK || p.units != nil || p.ustems != nil {
		t.Errorf("a part over the bound holds %d units (ok %v)", len(p.units), p.unitsOK)
	}

	ctx, cancel := context.WithCancel(context.Background())
	_, files, release := indexFiles(t, env)
	defer release()
	part := newFilePart()
	part.files = files
	if bgc := newUnitCounting(ctx, env.engine, part, true); bgc.jobs != nil || len(bgc.counters) != 1 {
		t.Errorf("a build that gives way counts with %d workers, want the reader alone", len(bgc.counters))
	}
	uc := newUnitCounting(ctx, env.engine, part, false)
	// The workers may not have run yet: wait until they are seen, so
	// that the check after stop can fail.
	for deadline := time.Now().Add(10 * time.Second); countingWorkers() != 3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d counting workers seen, want 3", countingWorkers())
		}
		time.Sleep(time.Millisecond)
	}
	for i := range 10 {
		if err := uc.add(candidate{seq: int64(i), text: "address zone"}, 0); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	var addErr error
	for i := 10; i < 1000 && addErr == nil; i++ {
		addErr = uc.add(candidate{seq: int64(i), text: "address zone"}, 0)
	}
	if addErr == nil {
		addErr = uc.finish()
	}
	uc.stop()
	if !errors.Is(addErr, context.Canceled) {
		t.Errorf("counting after its context ended: %v, want context.Canceled", addErr)
	}
	// stop returns once every worker has signalled that it is done; a
	// worker may still be on its way out of work (its deferred Done ran)
	// for a moment on a busy machine. A worker left running never goes.
	for deadline := time.Now().Add(5 * time.Second); countingWorkers() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d counting workers left after the counting stopped", countingWorkers())
		}
		time.Sleep(time.Millisecond)
	}
}

// countingWorkers is the number of goroutines running a unitCounting's
// work. Other goroutines (the database's, the engine's) come and go on
// their own, so the whole count says nothing.
func countingWorkers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "(*unitCounting).work(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// A file whose many units all match, named by the question and with a
// large whole-file score, sends stage B only the units that can outrank
// the page's last hit after their file's saturation (saturateBounds), and
// the pages, first and followed, stay the exhaustive ranking's.
func TestUnitPoolSaturated(t *testing.T) {
	env := newSearchEnv(t)
	tree := unitTree()
	var zoo strings.Builder
	zoo.WriteString("package zoo\n\n")
	for j := range 30 {
		fmt.Fprintf(&zoo, "// Feed%d feeds the quokka %s.\nfunc Feed%d() int { return %d }\n\n", j, strings.Repeat("and the reader ", j), j, j)
	}
	// Two units that score the same: neither is certainly above the
	// other.
	zoo.WriteString("// Twin feeds the quokka and the reader.\nfunc TwinA() int { return 1 }\n\n")
	zoo.WriteString("// Twin feeds the quokka and the reader.\nfunc TwinB() int { return 1 }\n\n")
	tree["zoo/quokka.go"] = zoo.String()
	for j := range 15 {
		tree[fmt.Sprintf("misc/f%02d.go", j)] = fmt.Sprintf("package misc\n\n// F%d counts a quokka, quokka %d.\nfunc F%d() int { return %d }\n", j, j, j, j)
	}
	env.folder("src", "default", tree)
	samePagesAsExhaustive(t, env, "quokka")

	q, ix, _, release := indexedQueryTx(t, env, "quokka")
	defer release()
	q.asked = rolesAsked(q.pq, nil)
	fs := ix.score(q, &scopeFilter{})
	uc, ok := ix.unitCandidates(q, &scopeFilter{}, fs, 10)
	if !ok {
		t.Fatal("the unit index did not serve the question")
	}
	zooUnits := 0
	for _, seq := range uc.seqs {
		for i := range ix.base.units {
			if u := &ix.base.units[i]; u.seq == seq && ix.base.files[u.file].path == "zoo/quokka.go" {
				zooUnits++
			}
		}
	}
	if zooUnits == 0 || zooUnits > 3 {
		t.Errorf("stage B reads %d of zoo/quokka.go's 32 units (of %d), want the few its saturation lets reach the page", zooUnits, len(uc.seqs))
	}
}

// A question that names a test (TestParseQuokka) asks for tests, and of
// those only the ones whose titles name it gain the named-test boost:
// stage B's bound gives it to them alone (the units' titles,
// filePart.titles), so the many tests that call the name are not read,
// and the pages stay the exhaustive ranking's.
func TestUnitPoolNamedTest(t *testing.T) {
	env := newSearchEnv(t)
	tree := unitTree()
	tree["zoo/quokka.go"] = "package zoo\n\n// ParseQuokka parses a quokka.\nfunc ParseQuokka(s string) int { return len(s) }\n"
	var tests strings.Builder
	tests.WriteString("package zoo\n\nimport \"testing\"\n\n")
	tests.WriteString("func TestParseQuokka(t *testing.T) {\n\tif ParseQuokka(\"q\") != 1 {\n\t\tt.Fatal(\"parse\")\n\t}\n}\n\n")
	for j := range 30 {
		fmt.Fprintf(&tests, "// TestFeed%d feeds a parsed quokka %s.\nfunc TestFeed%d(t *testing.T) {\n\t_ = ParseQuokka(%q)\n}\n\n", j, strings.Repeat("and parses the quokka ", j%7), j, strings.Repeat("q", j))
	}
	tree["zoo/quokka_test.go"] = tests.String()
	env.folder("src", "default", tree)
	const question = "TestParseQuokka"
	samePagesAsExhaustive(t, env, question)
	if first := env.search(env.all, QueryRequest{Question: question, Limit: 1}); len(first.Hits) == 0 || !strings.Contains(first.Hits[0].Title, "TestParseQuokka") {
		t.Errorf("first hit %+v, want func TestParseQuokka", first.Hits)
	}

	q, ix, _, release := indexedQueryTx(t, env, question)
	defer release()
	q.asked = rolesAsked(q.pq, nil)
	if len(q.asked) == 0 {
		t.Fatalf("%q asks for no role", question)
	}
	fs := ix.score(q, &scopeFilter{})
	uc, ok := ix.unitCandidates(q, &scopeFilter{}, fs, 1)
	if !ok {
		t.Fatal("the unit index did not serve the question")
	}
	if len(uc.seqs) == 0 || len(uc.seqs) > 5 {
		t.Errorf("stage B reads %d units for the first hit, want the named test and the few that may outrank it", len(uc.seqs))
	}
}

// samePagesAsExhaustive checks that the first pages of question at
// limits 1, 3 and 10, and four pages of 5 followed by their cursors, are
// the exhaustive ranking's (every matching unit scored).
func samePagesAsExhaustive(t *testing.T, env *searchEnv, question string) {
	t.Helper()
	full := &Engine{DB: env.engine.DB, Cursors: env.engine.Cursors, Collections: env.engine.Collections, Exhaustive: true}
	ids := func(hs []Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.EvidenceID)
		}
		return out
	}
	for _, limit := range []int{1, 3, 10} {
		req := QueryRequest{Question: question, Limit: limit}
		exhaustive, err := full.Search(context.Background(), env.all, req)
		if err != nil {
			t.Fatal(err)
		}
		a, b := ids(env.search(env.all, req).Hits), ids(exhaustive.Hits)
		if !slices.Equal(a, b) || len(a) != limit {
			t.Errorf("limit %d: pooled %v, exhaustive %v", limit, a, b)
		}
	}
	got, want := followedPages(context.Background(), t, env, full, question)
	if len(want) != 20 || !slices.Equal(got, want) {
		t.Errorf("four pages of 5\n  %v\nthe exhaustive 20\n  %v", got, want)
	}
}

// The unit index keeps a unit's title folded as titleNames compares it,
// and a long one cut: a cut title may hold any name.
func TestUnitTitlesKept(t *testing.T) {
	p := newFilePart()
	p.units = make([]unitEntry, 3)
	long := "## " + strings.Repeat("A heading that goes on ", 40)
	for _, title := range []string{"func Test_Parse_Quokka(t *testing.T)", "func TestFeed(t *testing.T)", long} {
		p.addTitle(title)
	}
	if n := len(p.titles) - int(p.titleEnds[1]); n != maxKeptTitle {
		t.Errorf("the long title is kept as %d bytes, want %d", n, maxKeptTitle)
	}
	w := newUnitWalk(&fileIndex{base: p, delta: newFilePart()}, &scopeFilter{})
	names := foldedNames([]qname{{name: "testparsequokka"}})
	for uref, want := range []bool{true, false, true} {
		if got := w.titleNames(int32(uref), names); got != want {
			t.Errorf("unit %d: titleNames %v, want %v", uref, got, want)
		}
		c := &candidate{title: []string{"func Test_Parse_Quokka(t *testing.T)", "func TestFeed(t *testing.T)", long}[uref]}
		if got := titleNames([]qname{{name: "testparsequokka"}}, c); got && !w.titleNames(int32(uref), names) {
			t.Errorf("unit %d: the scorer's titleNames holds where the kept title does not", uref)
		}
	}
}

// seekUnit finds what a linear scan forward finds.
func TestSeekUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 17))
	for range 2000 {
		var l []unitPosting
		u := int32(0)
		for range rng.IntN(40) {
			u += 1 + int32(rng.IntN(5))
			l = append(l, unitPosting{unit: u})
		}
		i := rng.IntN(len(l) + 1)
		target := int32(rng.IntN(int(u) + 3))
		want := i
		for want < len(l) && l[want].unit < target {
			want++
		}
		if got := seekUnit(l, i, target); got != want {
			t.Fatalf("seekUnit(%v, %d, %d) = %d, want %d", l, i, target, got, want)
		}
	}
}
