package query

import (
	"container/heap"
	"math"
	"slices"

	"github.com/tychora/tychora/sources"
)

// Choosing stage B's units from the walk's bounds (rank_unit_search.go
// has the bounds' terms and how the walk finds them): which units match,
// τ from the files' lower bounds, saturation, and the units kept.

// chooseUnits bounds the final score of every unit unitWalkTerms found
// and returns the units stage B reads.
func (ix *fileIndex) chooseUnits(q *preparedQuery, fs *fileScores, w *unitWalk, sc *unitScratch, mm *matchMasks, k int) (out unitCands) {
	nt := len(q.terms)
	// Which units match the question as its FTS5 clauses would: surely
	// (a free word, an identifier's parts) or maybe (every word of a
	// phrase, whose order the counts do not tell). Stage B drops those
	// that do not (scorer.matchesQuery); only the sure ones bound the
	// page's last score from below.
	bestLo, bestHi := 0.0, 0.0
	for _, uref := range sc.touched {
		switch mm.match(sc.held[uref]) {
		case matchSure:
			bestLo = math.Max(bestLo, sc.t[uref])
			fallthrough
		case matchMaybe:
			bestHi = math.Max(bestHi, sc.t[uref]+sc.extra[uref])
		}
	}
	nq := q.nameQuery()
	cv := newConventions(q.pq, nq)
	defScale := q.definitionScale()
	var testNames [][]byte // the named-test boost's names, folded
	if len(q.asked) > 0 {
		testNames = foldedNames(q.pq.names)
	}
	tf, ptf := make([]float64, nt), make([]float64, nt)
	factor := func(fref int32) *unitFile {
		ff := &sc.files[fref]
		if ff.set {
			return ff
		}
		sc.filesSet = append(sc.filesSet, fref)
		e := ix.entry(fref)
		*ff = unitFile{set: true, role: 1, testRole: 1}
		if row := fs.slots[fref] - 1; row >= 0 {
			fs.rowTF(int(row), tf, ptf)
			ff.f = q.fileScore(tf, ptf, e.bytes)
		}
		facts := e.facts
		ff.name, ff.named = facts.nameShareSplit(nq)
		role := e.role
		if role == "" {
			role = "source"
		}
		switch {
		case len(q.asked) > 0 && !q.asked[role] && facts.roles&q.askedMask == 0:
			ff.role = otherRoles
		case len(q.asked) == 0:
			ff.role = e.prior * q.docsPrior(role, e.sourceID)
		}
		// Its inline tests (unitTest) rank as tests (candidate.unitRole).
		test := string(sources.RoleTest)
		switch {
		case len(q.asked) > 0 && !q.asked[test] && facts.roles&q.askedMask == 0:
			ff.testRole = otherRoles
		case len(q.asked) == 0:
			ff.testRole = rolePrior(test) * q.docsPrior(test, e.sourceID)
		}
		if q.namedTest(facts) {
			ff.role, ff.testRole = otherRoles, otherRoles
		}
		ff.conv[0] = cv.prior(&candidate{}, facts)
		ff.conv[1] = cv.prior(&candidate{kind: sources.KindCode}, facts)
		return ff
	}
	his := slices.Grow(sc.his[:0], len(sc.touched))[:len(sc.touched)]
	los := slices.Grow(sc.los[:0], len(sc.touched))[:len(sc.touched)]
	sc.his, sc.los = his, los
	lastRef, ff := int32(-1), (*unitFile)(nil)
	for i, uref := range sc.touched {
		// A unit that matches no clause (one part of an identifier the
		// question names, without the others) is out whatever its file:
		// its file's factors are not worked out for it (a file none of
		// whose units match keeps no lower bound, and τ passes it over).
		m := mm.match(sc.held[uref])
		if m == matchNone {
			his[i], los[i] = math.Inf(-1), 0
			continue
		}
		u := w.unit(uref)
		if fref := w.fileOf(uref); fref != lastRef {
			lastRef, ff = fref, factor(fref)
		}
		conv := ff.conv[0]
		if u.flags&unitCode != 0 {
			conv = ff.conv[1]
		}
		role := ff.role
		if u.flags&unitTest != 0 {
			role = ff.testRole
		}
		if u.flags&unitImports != 0 {
			conv *= importsPrior
		}
		t := sc.t[uref]
		name := namedShare(ff.name, ff.named, role)
		lo := (t + fileWeight*ff.f + name*nameBoost*bestLo) * role * conv
		if m == matchMaybe {
			lo = 0
		}
		d := 0.0
		switch {
		case len(q.asked) == 0 && (sc.titled[uref] || sc.spelled[uref]):
			if sc.titled[uref] {
				d = defScale * defBoost * bestHi
			}
			if sc.spelled[uref] {
				d = max(d, spelledDef*bestHi)
			}
		case len(q.asked) > 0 && role == 1 && len(testNames) > 0 && w.titleNames(uref, testNames):
			// Only a unit whose title names a name of the question
			// gains the named-test boost (titleNames), or the definition
			// boost when its title declares the name.
			d = namedTestBoost * bestHi
			if sc.titled[uref] {
				d = max(d, defScale*defBoost*bestHi)
			}
		}
		hi := (t + sc.extra[uref] + fileWeight*ff.f + d + name*nameBoost*bestHi) * role * conv
		if u.flags&unitInexact != 0 {
			hi = math.Inf(1)
		}
		his[i], los[i] = hi, lo
		top := &ff.lo
		for j := range top {
			if lo > top[j] {
				copy(top[j+1:], top[j:len(top)-1])
				top[j] = lo
				break
			}
		}
	}
	// τ: the k-th largest of the files' j-th lower bounds × saturationʲ.
	tau := 0.0
	h := floatHeap(sc.heap[:0])
	for _, fref := range sc.filesSet {
		s := 1.0
		for _, v := range sc.files[fref].lo {
			if v <= 0 {
				break
			}
			x := v * s
			s *= saturation
			if h.Len() < k {
				heap.Push(&h, x)
			} else if x > h[0] {
				h[0] = x
				heap.Fix(&h, 0)
			} else {
				break
			}
		}
	}
	if h.Len() == k {
		tau = h[0]
	}
	sc.heap = h
	saturateBounds(w, sc, his, los, tau)
	// Stage B's units: those whose upper bound, saturated by the units
	// certainly above them in their file, reaches τ, those that may
	// hold the best BM25F score.
	// The normalizations are kept in float32: bounds are compared with
	// room for their rounding.
	const tol = boundTol
	keep := sc.keep[:0]
	for i, uref := range sc.touched {
		x := his[i]
		if x == math.Inf(-1) {
			continue // matches no clause
		}
		if x >= tau*(1-tol) || sc.t[uref]+sc.extra[uref] >= bestLo*(1-tol) {
			keep = append(keep, int32(i))
		}
	}
	if len(keep) > maxUnitCandidates {
		// Past the bound, the units that may hold the best BM25F score
		// first: the pool's best scales the name boost of every hit, and
		// a unit whose priors bring it low (a test for a question that
		// does not ask for tests) may hold it and still have the lowest
		// upper bound. Then the highest upper bounds.
		contender := func(i int32) bool {
			uref := sc.touched[i]
			return sc.t[uref]+sc.extra[uref] >= bestLo*(1-tol)
		}
		slices.SortFunc(keep, func(a, b int32) int {
			if ca, cb := contender(a), contender(b); ca != cb {
				if ca {
					return -1
				}
				return 1
			}
			if his[a] != his[b] {
				if his[a] > his[b] {
					return -1
				}
				return 1
			}
			return int(a - b)
		})
		keep = keep[:maxUnitCandidates]
	}
	sc.keep = keep
	out.seqs = make([]int64, len(keep))
	for j, i := range keep {
		out.seqs[j] = w.unit(sc.touched[i]).seq
	}
	for i, x := range his {
		if x > math.Inf(-1) {
			out.total++
			if mm.match(sc.held[sc.touched[i]]) == matchMaybe {
				// How many of the maybes match, only FTS5 can say.
				out.total = -1
				break
			}
		}
	}
	return out
}

// boundTol is the room bounds are compared with: the normalizations are
// kept in float32.
const boundTol = 1e-6

// saturateBounds lowers the upper bound (his) of each unit that reaches
// τ by the saturation it cannot escape: the units of its file whose lower
// bound (los) is above its upper bound certainly rank above it, n of them,
// so its final score is at most U·saturationⁿ. That keeps a file of many
// units that all match (one that names the question's words, with a
// large whole-file score) from filling the pool with units only its first
// few can be. Only lower bounds above τ can be above a unit that reaches
// it, so a file without one is passed over. It is rank-safe: a unit the
// rule drops scores below τ in the exhaustive ranking, every unit
// certainly above a kept unit is kept (its bound is larger by more than
// 1/saturation), and a unit kept while one above it was dropped cannot
// score τ in the pool either (docs/search.md, "Saturation in the bound").
func saturateBounds(w *unitWalk, sc *unitScratch, his, los []float64, tau float64) {
	floor := tau * (1 - boundTol)
	if floor <= 0 {
		return
	}
	above := sc.above[:0]
	for a := 0; a < len(sc.touched); {
		f := w.fileOf(sc.touched[a])
		b := a + 1
		for b < len(sc.touched) && w.fileOf(sc.touched[b]) == f {
			b++
		}
		above = above[:0]
		for i := a; i < b; i++ {
			if los[i] > floor {
				above = append(above, los[i])
			}
		}
		if len(above) > 0 && b-a > 1 {
			slices.Sort(above)
			for i := a; i < b; i++ {
				x := his[i]
				if x < floor || math.IsInf(x, 0) {
					continue
				}
				// The lower bounds above x, with room for rounding: from
				// the first at least the next float after lim.
				lim := x * (1 + boundTol)
				j, _ := slices.BinarySearch(above, math.Nextafter(lim, math.Inf(1)))
				if n := len(above) - j; n > 0 {
					his[i] = x * math.Pow(saturation, float64(n))
				}
			}
		}
		a = b
	}
	sc.above = above
}

// unitFile is what unitCandidates works out once per file: its whole-file
// score, the share of the question in its name, its role and convention
// priors (for a unit that is not code, and one that is), and the best
// lower bounds of its units.
type unitFile struct {
	set           bool
	f, name, role float64
	// named: the question names the file whole (namedShare).
	named bool
	// testRole is role for the file's inline tests (unitTest).
	testRole float64
	conv     [2]float64
	lo       [4]float64
}

// floatHeap is a min-heap of float64.
type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
