package query

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tychora/tychora/sources"
)

// Ranking by what a unit is and where it lives (stage B, after BM25F).
//
// An agent asking where something is done wants the code that does it:
// the definition of a name it asks about, in the implementation rather
// than a test, an example or a fixture, in a file about the topic. BM25F
// scores a unit alone; these priors, applied to the whole pool, bring in
// what it cannot see:
//
//   - a unit's file role: tests, examples, fixtures, vendored, generated
//     and minified files count less; a question that asks for a role
//     ("tests for ParseIP", "example config") turns that around: the
//     roles it names count fully and the others less; one that names
//     tests as a purpose ("a fake clock for tests", "a test HTTP
//     server") asks for source and tests alike, and, naming no name,
//     for what serves tests before the tests named for what they test
//     (server_test.go);
//   - definitions: a unit that declares a name the question holds
//     (ParseIP, sync.Mutex, func ReadRequest) gains the pool's best score,
//     more when the qualifier names its package; one that declares a name
//     three or four of its words spell (get_current_context) gains half;
//   - file names: words of the question in the file's name or folder;
//     the files whose names hold the most of them are read whole into
//     the pool (rank_names.go, completeFiles);
//   - whole-file evidence: a BM25 score of the unit's whole file, from
//     the term counts kept with the file at ingest, adds to each unit's
//     own; the best files have all their matching units ranked
//     (rank_file_best.go);
//   - conventions (rank_conventions.go): platform files, change logs,
//     manifests, build recipes, import blocks and hidden files count
//     less unless the question asks for them;
//   - same-file saturation: each further unit of a file already ranked
//     counts half as much, so one file does not fill a page.
//
// docs/search.md ("Files, roles and definitions") gives the reasons and
// the measurements.

// Role priors: how much a unit of each file role counts against the
// implementation (source counts 1; documentation 1, or docsBesideCode in
// a source that holds code: rank_docs.go). A question that asks for a
// role (rolesAsked) takes the priors off.
var rolePriors = map[string]float64{
	"test":      0.5,
	"example":   0.5,
	"testdata":  0.4,
	"vendored":  0.5,
	"generated": 0.5,
	"minified":  0.3,
}

// rolePrior is the prior of a role, 1 for one without.
func rolePrior(role string) float64 {
	if p, ok := rolePriors[role]; ok {
		return p
	}
	return 1
}

const (
	// defBoost is what defining a name of the question adds, in units of
	// the pool's best score; defOtherPackage scales it when the question
	// qualifies the name with a package the unit's path does not hold.
	defBoost        = 1.0
	defOtherPackage = 0.25
	// defDeeperPackage scales it when the qualifier's package is a
	// folder of the unit's path but not the whole of it (internal/sync
	// for sync.Mutex; qualifierIsDir).
	defDeeperPackage = 0.5
	// defOtherCase scales it when the question writes the name with
	// upper-case letters and the title declares it in another case
	// (readByte for ReadByte, appendIndent for AppendIndent).
	defOtherCase = 0.5
	// spelledDef is what defining a name the question spells in words
	// (get_current_context for "get the current context", spelledNames)
	// adds, in units of the pool's best score, when no name written as
	// such is defined: half of defBoost, as words are weaker evidence of
	// a name than the name.
	spelledDef = 0.5
	// nameBoost is what the question's words in the file's name and
	// folder add, at most (all of them), in units of the best score.
	nameBoost = 0.3
	// fileWeight is how much the evidence of a unit's whole file
	// (fileScore) adds to the unit's own score.
	fileWeight = 0.5
	// saturation scales each further unit of a file already ranked.
	saturation = 0.5
	// namedTestBoost is what a unit of a role the question asks for gains
	// when its title names a name of the question (titleNames).
	namedTestBoost = 0.5
	// otherRoles scales the units of the roles a question does not ask
	// for when it asks for some ("tests for ParseIP"): definitions then
	// get no boost either, since the question wants what uses the name.
	otherRoles = 0.7
)

// roleWords maps the words (folded, unstemmed) a question uses to ask for
// a role to that role.
var roleWords = map[string]string{
	"test": "test", "tests": "test", "testing": "test", "unittest": "test", "spec": "test",
	"specs":   "test",
	"example": "example", "examples": "example", "sample": "example", "samples": "example", "demo": "example",
	"testdata": "testdata", "fixture": "testdata", "fixtures": "testdata", "golden": "testdata",
	"vendor": "vendored", "vendored": "vendored",
	"generated": "generated", "minified": "minified",
	"docs": roleDocumentation, "documentation": roleDocumentation, "readme": roleDocumentation,
	"tutorial": roleDocumentation,
}

// askableRoles are the roles a question can ask for (roleWords); a
// role's bit in a mask is 1 << its index.
var askableRoles = []string{"test", "example", "testdata", "vendored", "generated", "minified", roleDocumentation}

// roleBit is the bit of role in a mask of askableRoles, 0 for another.
func roleBit(role string) uint8 {
	if i := slices.Index(askableRoles, role); i >= 0 {
		return 1 << i
	}
	return 0
}

// namedRoles is the mask of the roles a name word (folded) of a path
// names: it is a role word, one with an "s" more or less ("testing",
// "fixtures", "vendor", "doc", "tutorials"), or a word written together
// from "test" and more ("testutil", "testhelpers", "testenv"). Such a
// file serves the role from where it is (click/testing.py, Go's testing
// package, a command that vendors modules): a question that asks for the
// role asks for it too. Stems would say too much ("general" and
// "generic" stem as "generated" does), and other role words begin too
// many other words ("special", "sampler", "docstring") to count as
// prefixes.
func namedRoles(w string) uint8 {
	var mask uint8
	for _, v := range [...]string{w, w + "s", strings.TrimSuffix(w, "s")} {
		if r, ok := roleWords[v]; ok {
			mask |= roleBit(r)
		}
	}
	if len(w) > len("test") && strings.HasPrefix(w, "test") {
		mask |= roleBit("test")
	}
	return mask
}

// unitRole is the role a unit ranks as: its file's, or test for a test
// written inside a source file (sources.InlineTest: Rust's #[test]
// functions and #[cfg(test)] modules).
func (c *candidate) unitRole() string {
	switch {
	case c.role == "":
		return string(sources.RoleSource)
	case c.role == string(sources.RoleSource) && c.kind == sources.KindCode && sources.InlineTest(c.language, c.headings, c.text):
		return string(sources.RoleTest)
	}
	return c.role
}

// askedMask is the mask of the roles in asked.
func askedMask(asked map[string]bool) uint8 {
	var m uint8
	for r := range asked {
		m |= roleBit(r)
	}
	return m
}

// rolesAsked lists the roles a question asks for, in its words or by
// its role filter.
func rolesAsked(pq *parsedQuery, f *Filters) map[string]bool {
	asked := map[string]bool{}
	for _, t := range pq.terms {
		if r, ok := roleWords[t.token]; ok {
			asked[r] = true
		}
	}
	// A question that names tests as a purpose ("an in-memory file
	// system for tests") asks for the code that serves them as much as
	// for the tests: both count fully, as the roles asked.
	if pq.forTests {
		asked[string(sources.RoleSource)] = true
	}
	if f != nil {
		for _, r := range f.Roles {
			asked[r] = true
		}
	}
	return asked
}

// rerankFiles adds whole-file evidence and the definition and file-name
// boosts to the scored pool, applies the role priors and same-file
// saturation, and sorts it best first.
func rerankFiles(q *preparedQuery, asked map[string]bool, kept map[string]*keptFile, cands []*candidate) {
	if len(cands) == 0 {
		return
	}
	best := 0.0
	for _, c := range cands {
		best = math.Max(best, c.score)
	}
	if best <= 0 {
		slices.SortFunc(cands, byScore)
		return
	}
	nq := q.nameQuery()
	type fileAgg struct {
		tf, pathTF []float64
		bytes      int64
		score      float64
		facts      *pathFacts
		nameShare  float64
		named      bool // the question names the file whole
	}
	files := map[fileKey]*fileAgg{}
	for _, c := range cands {
		k := fileKey{c.sourceID, c.path}
		a := files[k]
		if a == nil {
			a = &fileAgg{tf: make([]float64, len(q.terms)), pathTF: c.pathTF, bytes: c.fileBytes, facts: factsOf(c.path)}
			a.nameShare, a.named = a.facts.nameShareSplit(nq)
			files[k] = a
		}
		for t, x := range c.fileTF[:min(len(c.fileTF), len(a.tf))] {
			a.tf[t] += x
		}
	}
	for k, a := range files {
		if kf, ok := kept[fileKeyOf(k.source, k.path)]; ok {
			a.tf, a.bytes = kf.tf, kf.bytes
		}
		a.score = q.fileScore(a.tf, a.pathTF, a.bytes)
	}
	defScale := q.definitionScale()
	conv := newConventions(q.pq, nq)
	for _, c := range cands {
		a := files[fileKey{c.sourceID, c.path}]
		s := c.score + fileWeight*a.score
		role := c.unitRole()
		isAsked := asked[role] || a.facts.roles&q.askedMask != 0
		switch {
		case len(asked) == 0:
			if d := definesName(q.pq.names, c); d > 0 {
				s += d * defScale * defBoost * best
			} else if definesName(q.pq.spelled, c) > 0 {
				s += spelledDef * best
			}
		case isAsked && titleNames(q.pq.names, c):
			// "tests for ParseIP": the test named for it (TestParseIP,
			// test_parse_ip, ParseIP.test) is what the question wants;
			// and a test the question names whole ("TestLines") is
			// defined by the unit that declares it, as any name is.
			b := namedTestBoost
			if d := definesName(q.pq.names, c); d > 0 {
				b = max(b, d*defScale*defBoost)
			}
			s += b * best
		}
		mult := 1.0
		switch {
		case len(asked) > 0 && !isAsked, q.namedTest(a.facts):
			mult = otherRoles
		case len(asked) == 0:
			if p, ok := rolePriors[role]; ok {
				mult *= p
			}
			mult *= q.docsPrior(role, c.sourceID)
		}
		s += namedShare(a.nameShare, a.named, mult) * nameBoost * best
		s *= mult
		s *= conv.prior(c, a.facts)
		c.score = s
	}
	slices.SortFunc(cands, byScore)
	saturate(cands)
}

// saturate scales each unit by saturation for every unit of its file
// ranked above it, and sorts again (stably: ties keep their order).
func saturate(cands []*candidate) {
	seen := make(map[fileKey]int, len(cands))
	for _, c := range cands {
		k := fileKey{c.sourceID, c.path}
		if n := seen[k]; n > 0 {
			c.score *= math.Pow(saturation, float64(n))
		}
		seen[k]++
	}
	slices.SortStableFunc(cands, func(a, b *candidate) int { return cmp.Compare(b.score, a.score) })
}

// namedTest reports whether a file is a test named for what it tests
// (pathFacts.testNamed: server_test.go, test_client.py) in the answer to
// a question that names tests as a purpose and no name ("a test HTTP
// server", "a fake clock for tests"). Such a question asks for what
// serves tests, the code (httptest/server.go) or a module named for tests
// alone (Plug's test.ex, click's testing.py); the tests that use it count
// as a role not asked. One that names a name ("where is ParseIP used in
// tests") asks for the tests of it (TestParseIP).
func (q *preparedQuery) namedTest(f *pathFacts) bool {
	return q.pq.forTests && len(q.pq.names) == 0 && f.testNamed
}

// nameStems are the stems of the question's scored words, with their
// share of its weight × idf: what fileNameShare matches file names with.
func (q *preparedQuery) nameStems() map[string]float64 {
	out := map[string]float64{}
	total := 0.0
	for _, t := range q.terms {
		if t.weight <= 0 || t.idf <= 0 {
			continue
		}
		w := t.weight * t.idf
		out[t.stem] += w
		total += w
	}
	if total == 0 {
		return nil
	}
	for k := range out {
		out[k] /= total
	}
	return out
}

// nameQuery is the nameQuery of the question's scored words: stems
// from nameStems, words from the question.
func (q *preparedQuery) nameQuery() *nameQuery {
	stems := q.nameStems()
	if len(stems) == 0 {
		return nil
	}
	words := map[string][]string{}
	var stops []string
	for _, t := range q.pq.terms {
		if _, ok := stems[t.stem]; ok {
			words[t.stem] = append(words[t.stem], t.token)
		} else if t.stop {
			stops = append(stops, t.token)
		}
	}
	nq := newNameQuery(stems, words)
	nq.stops = stops
	if q.pq.forTests {
		// Tests named as a purpose ("a test HTTP server", "for tests"):
		// every test has a test word in its name (server_test.go), and
		// the roles count tests already (rolesAsked). In the name of
		// what serves tests (Plug's test.ex, net/http/httptest, click's
		// testing.py) the word still counts.
		for i := range nq.shares {
			sh := &nq.shares[i]
			sh.purpose = slices.ContainsFunc(sh.words, func(w string) bool { return roleWords[w] == "test" })
		}
	}
	return nq
}

// namedShare is a file's name share with nameCovered added when the
// question names the file whole and the unit's role counts fully (mult,
// its role's prior, is 1): a test, an example or a guide named for the
// topic is the test, example or guide of what is asked, not the place
// that does it, and its prior says so already.
func namedShare(share float64, named bool, mult float64) float64 {
	if named && mult == 1 {
		return share + nameCovered
	}
	return share
}

// fileNameShare is the share of the question's weight whose words are
// parts of the file's name (without extension) or of the folder that
// holds it: "mutex" for sync/mutex.go, "http" and "server" for
// net/http/server.go, "barrier" for runtime/mbarrier.go.
func fileNameShare(nq *nameQuery, p string) float64 {
	return factsOf(p).nameShareOf(nq)
}

// Completing named files. The files whose names hold the question's
// words (nameFiles) get their units read and scored, so that a file the
// probes missed can still rank by what it holds.

// maxCompletedUnits bounds the units completion reads.
const maxCompletedUnits = 150

// completeFiles scores the units of the named files (pairs [source_id,
// path]) that the pool lacks, within the scope sf, and returns the pool
// with those that match the question as stage A's clauses do
// (matchesQuery): a unit that holds only some parts of an identifier is
// no match, here as in FTS5.
func (e *Engine) completeFiles(ctx context.Context, tx *sql.Tx, sc *scorer, q *preparedQuery, sf *scopeFilter, named [][2]string, cands []*candidate) ([]*candidate, error) {
	if len(named) == 0 {
		return cands, nil
	}
	in := make(map[int64]bool, len(cands))
	for _, c := range cands {
		in[c.seq] = true
	}
	list, err := json.Marshal(named)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	where, args := sf.sql()
	args = append(append([]any{string(list)}, args...), maxCompletedUnits)
	rows, err := e.query(ctx, tx, fileUnitsSQL(where), args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c := &candidate{}
		if err := c.scan(rows); err != nil {
			return nil, err
		}
		if in[c.seq] {
			continue
		}
		if c.score = sc.score(c); c.score > 0 && sc.matchesQuery(q.pq) {
			cands = append(cands, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return cands, nil
}

// fileScore is BM25 over a whole file, from the summed term frequencies of
// its matching units (tf, weighted by column) and its path's (pathTF),
// normalized by the file's size against the average file: a file about
// the topic scores high even when no one unit holds every word.
func (q *preparedQuery) fileScore(tf, pathTF []float64, bytes int64) float64 {
	k1 := q.prof.k1
	norm := 1.0
	if avg := q.stats.avgFileBytes; avg > 0 && bytes > 0 {
		norm = (1 - fileB) + fileB*float64(bytes)/avg
	}
	total := 0.0
	for t, x := range tf[:min(len(tf), len(q.terms), len(pathTF))] {
		st := &q.terms[t]
		if st.weight == 0 {
			continue
		}
		x = x/norm + pathTF[t]
		if x > 0 {
			total += st.weight * st.idf * x * (k1 + 1) / (k1 + x)
		}
	}
	return total
}

// fileB is the strength of a file's length normalization.
const fileB = 0.75

// matchesQuery reports whether the unit the scorer scored last matches the
// question as the FTS5 clauses of stage A would (queryClauses): a free
// word, an identifier whole or by all its parts, or a quoted phrase.
func (s *scorer) matchesQuery(pq *parsedQuery) bool {
	has := func(t int) bool {
		for f := 0; f < numFields; f++ {
			if s.tf[t*numFields+f] > 0 {
				return true
			}
		}
		return false
	}
	all := func(ids []int) bool {
		for _, id := range ids {
			if !has(id) {
				return false
			}
		}
		return len(ids) > 0
	}
	phrase := func(pi int) bool {
		for f := 0; f < numFields; f++ {
			if countPhrase(s.hits[f], s.phrases[pi]) > 0 {
				return true
			}
		}
		return false
	}
	for i := range pq.terms {
		if pq.clause(i) && has(i) {
			return true
		}
	}
	for _, g := range pq.groups {
		if all(g.parts) || (g.phrase >= 0 && phrase(g.phrase)) || (g.phrase < 0 && all(g.whole)) {
			return true
		}
	}
	for pi, ph := range pq.phrases {
		if ph.quoted && phrase(pi) {
			return true
		}
	}
	return false
}
