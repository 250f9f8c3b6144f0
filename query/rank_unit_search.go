package query

import (
	"math"
	"slices"
	"sync"

	"github.com/tychora/tychora/sources"
)

// Choosing stage B's units from the unit index (rank_unit_index.go).
//
// Every unit in scope that holds a word of the question gets two bounds
// of its final score (rerankFiles before same-file saturation):
//
//	L = (T + fileWeight·F + N·nameBoost·best⁻) · R · C
//	U = (T + P + fileWeight·F + D + N·nameBoost·best⁺) · R · C
//
// T is its exact BM25F term score, P bounds what its phrases and
// proximity pairs can add (an occurrence of a phrase needs each of its
// words; in a pair's 1/d² sum an occurrence of one word meets at most
// two of the other at each distance), F is its file's exact whole-file
// score, N the file name's share of the question (namedShare: with
// nameCovered when the question names the file whole and R is 1), R and
// C the role and convention priors, D the definition boost when the
// unit's title holds a name of the question; best⁻ and best⁺ bound the
// best BM25F score of the pool.
//
// Saturation only lowers a score, and a file's j-th unit scores at least
// the j-th largest L of the file times saturationʲ; so the k-th largest
// of those products, τ, is at most the score of the k-th hit, and a unit
// whose U is below τ cannot be among the first k. Nor can one whose U
// times saturationⁿ is, n being the units of its file whose L is above
// its U (saturateBounds). With k the end of the page asked for (offset +
// limit), stage B reads every unit whose U so saturated reaches τ and
// every unit that may hold the best BM25F score (T+P ≥ best⁻): each page
// is the exhaustive ranking's, so a later page continues an earlier one
// exactly.

// maxUnitCandidates bounds the units stage B reads from the unit index.
const maxUnitCandidates = 1000

// unitScratch holds a search's accumulators per unit, kept for the next
// search.
type unitScratch struct {
	t, extra            []float64
	held                []uint64 // the question's terms (bit t) each unit holds
	stamp               []uint32
	titled, spelled, in []bool
	touched             []int32
	tick                uint32
	// files holds per file ref what unitCandidates works out once;
	// filesSet the refs it set.
	files    []unitFile
	filesSet []int32
	// pathTick and pathC: per file ref, the count of the term walked
	// (stamped with its tick) in its path.
	pathTick []uint32
	pathC    []uint16
	// allow marks, with allowTick, the units a narrowed walk scores
	// (narrowUnits); pathBits, per file ref, the terms its path holds,
	// set for the refs in pathSet.
	allow     []uint32
	allowTick uint32
	pathBits  []uint64
	pathSet   []int32
	his, los  []float64
	above     []float64
	heap      []float64
	keep      []int32
}

var unitScratchPool sync.Pool

func getUnitScratch(n int) *unitScratch {
	s, _ := unitScratchPool.Get().(*unitScratch)
	if s == nil || len(s.t) != n {
		s = &unitScratch{t: make([]float64, n), extra: make([]float64, n), held: make([]uint64, n), stamp: make([]uint32, n), titled: make([]bool, n), spelled: make([]bool, n), in: make([]bool, n)}
	}
	return s
}

func (s *unitScratch) release() {
	for _, u := range s.touched {
		s.t[u], s.extra[u], s.held[u], s.titled[u], s.spelled[u], s.in[u] = 0, 0, 0, false, false, false
	}
	s.touched = s.touched[:0]
	for _, f := range s.filesSet {
		s.files[f] = unitFile{}
	}
	s.filesSet = s.filesSet[:0]
	unitScratchPool.Put(s)
}

// nextTick returns a new stamp value (clearing the stamps when it wraps).
func (s *unitScratch) nextTick() uint32 {
	s.tick++
	if s.tick == 0 {
		clear(s.stamp)
		clear(s.pathTick)
		s.tick = 1
	}
	return s.tick
}

// unitNormCache holds the length normalizations of an index's units
// and files for the profiles searched: the same for every search of a
// generation and profile.
type unitNormCache struct {
	mu sync.Mutex
	m  map[string]*unitNormSet
}

// unitNormSet are the normalizations of one profile and generation's
// averages, as field weight / normalization: units by unit ref and unit
// column (ucBody's raw normalization last, for proximity), paths by file
// ref.
type unitNormSet struct {
	avg   [numFields]float64
	units [][5]float32
	paths []float64
}

// norms returns the normalizations for q's profile and averages.
func (ix *fileIndex) unitNorms(q *preparedQuery) *unitNormSet {
	c := &ix.norms
	c.mu.Lock()
	defer c.mu.Unlock()
	if ns := c.m[q.prof.name]; ns != nil && ns.avg == q.stats.avgLen {
		return ns
	}
	ns := &unitNormSet{avg: q.stats.avgLen}
	for _, part := range []*filePart{ix.base, ix.delta} {
		for i := range part.units {
			u := &part.units[i]
			var n [5]float32
			for c, f := range unitFields {
				if w := q.prof.fields[f].weight; w > 0 {
					n[c] = float32(w / normOf(q, f, int(u.lens[c])))
				}
			}
			n[4] = float32(normOf(q, fieldBody, int(u.lens[ucBody])))
			ns.units = append(ns.units, n)
		}
	}
	for _, part := range []*filePart{ix.base, ix.delta} {
		for i := range part.files {
			ns.paths = append(ns.paths, q.prof.fields[fieldPath].weight/normOf(q, fieldPath, int(part.files[i].pathLen)))
		}
	}
	if c.m == nil {
		c.m = map[string]*unitNormSet{}
	}
	c.m[q.prof.name] = ns
	return ns
}

// normOf is scorer.norm.
func normOf(q *preparedQuery, f, n int) float64 {
	fp := q.prof.fields[f]
	avg := q.stats.avgLen[f]
	if avg <= 0 {
		return 1
	}
	return (1 - fp.b) + fp.b*float64(n)/avg
}

// postingX is the weighted, normalized frequency of a posting's counts
// (without the path); r is the unit's unitNormSet row.
func postingX(p unitPosting, r *[5]float32) float64 {
	return float64(p.th>>4)*float64(r[ucTitle]) + float64(p.th&15)*float64(r[ucHeading]) +
		float64(p.body)*float64(r[ucBody]) + float64(p.code)*float64(r[ucCode])
}

// sat is BM25's saturation of x with weight wi (weight × idf).
func sat(k1, wi, x float64) float64 {
	if x <= 0 {
		return 0
	}
	return wi * x * (k1 + 1) / (k1 + x)
}

// unitCands is what the unit index chose for stage B.
type unitCands struct {
	seqs  []int64
	total int // the units in scope that match the question; -1: unknown
}

// unitCandidates chooses the units stage B ranks (see above); ok false
// when the index cannot serve the search.
func (ix *fileIndex) unitCandidates(q *preparedQuery, sf *scopeFilter, fs *fileScores, k int) (out unitCands, ok bool) {
	if !ix.unitsReady() || fs == nil {
		return out, false
	}
	w := newUnitWalk(ix, sf)
	sc := getUnitScratch(len(ix.base.units) + len(ix.delta.units))
	defer sc.release()
	mm := newMatchMasks(q)
	ix.unitWalkTerms(q, fs, w, sc, mm)
	if len(sc.touched) == 0 {
		return out, true
	}
	return ix.chooseUnits(q, fs, w, sc, mm, k), true
}

// maxUnitPostingsWalked bounds the unit postings one search walks; a
// question whose words hold more (many common words over a large tree)
// is ranked with stage A's probes.
const maxUnitPostingsWalked = 4 << 20

// unitsServe reports whether the unit index can choose the question's
// units: its words' postings are at most maxUnitPostingsWalked, and every
// word the lexical index holds the unit index holds too. (The index's
// tokenizer and the Go copy the unit index counts with may fold a rare
// letter otherwise: TestSearchDiacriticsOutsideLatin1. Such a question
// is ranked with stage A's probes.)
func (ix *fileIndex) unitsServe(q *preparedQuery) bool {
	if !ix.unitsReady() || len(q.terms) > 64 {
		return false
	}
	n := 0
	seen := map[string]bool{}
	for _, st := range q.terms {
		if (st.weight > 0 || st.phrase) && !seen[st.stem] {
			seen[st.stem] = true
			h := stemHash([]byte(st.stem))
			k := len(ix.base.ustems[h]) + len(ix.delta.ustems[h])
			if k == 0 && st.df > 0 && len(ix.base.stems[h])+len(ix.delta.stems[h]) == 0 {
				return false
			}
			n += k
		}
	}
	return n <= maxUnitPostingsWalked
}

// unitWalkTerms fills sc with every unit in scope that holds a word of
// the question (touched, sorted by unit ref): its exact term score (t),
// the bound of what its phrases and proximity pairs add (extra), the
// terms it holds (held), and whether its title holds a name of the
// question (titled) or a name the question spells in words (spelled).
// With mm, a question without a free word walks only the units that
// hold every term of one of mm's clauses (narrowUnits): the others match
// none.
func (ix *fileIndex) unitWalkTerms(q *preparedQuery, fs *fileScores, w *unitWalk, sc *unitScratch, mm *matchMasks) {
	n := len(sc.t)
	k1 := q.prof.k1
	nt := len(q.terms)

	// The term each stem's hits carry (the matcher's first).
	first := map[string]int{}
	for t, st := range q.terms {
		if st.weight <= 0 && !st.phrase {
			continue
		}
		if _, ok := first[st.stem]; !ok {
			first[st.stem] = t
		}
	}
	hitTerm := func(t int) bool { return first[q.terms[t].stem] == t && (q.terms[t].weight > 0 || q.terms[t].phrase) }
	pathTF := func(fref int32, t int) uint16 {
		if row := fs.slots[fref] - 1; row >= 0 {
			return fs.counts[int(row)*nt+t].path
		}
		return 0
	}
	ns := ix.unitNorms(q)
	if nf := len(ix.base.files) + len(ix.delta.files); len(sc.files) != nf {
		sc.files, sc.pathTick, sc.pathC = make([]unitFile, nf), make([]uint32, nf), make([]uint16, nf)
	}
	narrow := ix.narrowUnits(q, fs, w, sc, mm)
	skip := func(uref int32) bool { return narrow != 0 && sc.allow[uref] != narrow }
	mark := func(uref int32) {
		if !sc.in[uref] {
			sc.in[uref] = true
			sc.touched = append(sc.touched, uref)
		}
	}
	wPath := q.prof.fields[fieldPath].weight

	// T: every weighed term's postings, and the units of files whose
	// path holds it.
	for t := range q.terms {
		st := &q.terms[t]
		if !hitTerm(t) {
			continue
		}
		bit := uint64(1) << t
		wi := st.weight * st.idf // 0 for a word of phrases only: held, not scored
		tick := sc.nextTick()
		h := stemHash([]byte(st.stem))
		// The files whose path holds the term, and its count there.
		if wPath > 0 {
			for row, fref := range fs.refs {
				if c := fs.counts[row*nt+t].path; c > 0 {
					sc.pathTick[fref], sc.pathC[fref] = tick, c
				}
			}
		}
		for i := range 2 {
			part, fo, uo := w.part(i)
			for _, p := range part.ustems[h] {
				uref := uo + p.unit
				if skip(uref) {
					continue
				}
				fref := fo + part.unitFiles[p.unit]
				if !w.inScope(fref) {
					continue
				}
				if wi > 0 {
					x := postingX(p, &ns.units[uref])
					if sc.pathTick[fref] == tick {
						x += float64(sc.pathC[fref]) * ns.paths[fref]
					}
					sc.t[uref] += wi * x * (k1 + 1) / (k1 + x)
				}
				sc.stamp[uref] = tick
				sc.held[uref] |= bit
				if !sc.in[uref] {
					sc.in[uref] = true
					sc.touched = append(sc.touched, uref)
				}
			}
		}
		if wPath <= 0 {
			continue
		}
		for row, fref := range fs.refs {
			c := fs.counts[row*nt+t].path
			if c == 0 || !w.inScope(fref) {
				continue
			}
			lo, hi, uo := w.fileUnitRange(fref)
			for uref := uo + lo; uref < uo+hi; uref++ {
				if sc.stamp[uref] == tick || skip(uref) {
					continue
				}
				sc.t[uref] += sat(k1, wi, float64(c)*ns.paths[fref])
				sc.held[uref] |= bit
				mark(uref)
			}
		}
	}
	if len(sc.touched) == 0 {
		return
	}

	// P: phrases and proximity pairs.
	if q.prof.phraseWeight > 0 {
		for pi, ph := range q.phrases {
			idf := 0.0
			hs := make([]uint64, len(ph))
			for k, t := range ph {
				idf = math.Max(idf, q.terms[t].idf)
				hs[k] = stemHash([]byte(q.terms[t].stem))
			}
			wi := q.prof.phraseWeight * idf
			if len(ph) > 0 {
				w.join(hs, func(uref, fref int32, u *unitEntry, ps []unitPosting) {
					if skip(uref) {
						return
					}
					mins := ps[0]
					for _, p := range ps[1:] {
						mins.body = min(mins.body, p.body)
						mins.code = min(mins.code, p.code)
						mins.th = min(mins.th>>4, p.th>>4)<<4 | min(mins.th&15, p.th&15)
					}
					sc.extra[uref] += sat(k1, wi, postingX(mins, &ns.units[uref]))
					mark(uref)
				})
				// The phrase in the path: every unit of the file.
				for row, fref := range fs.refs {
					m := uint16(math.MaxUint16)
					for _, t := range ph {
						m = min(m, fs.counts[row*nt+first[q.terms[t].stem]].path)
					}
					if m == 0 || wPath <= 0 || !w.inScope(fref) {
						continue
					}
					x := float64(m) * ns.paths[fref]
					lo, hi, uo := w.fileUnitRange(fref)
					for uref := uo + lo; uref < uo+hi; uref++ {
						if skip(uref) {
							continue
						}
						sc.extra[uref] += sat(k1, wi, x)
						mark(uref)
					}
				}
			}
			if pi < len(q.qualified) && q.qualified[pi] && len(ph) > 1 {
				// A qualified name defined here counts as a title match.
				w.each(hs[len(hs)-1], func(uref, fref int32, u *unitEntry, p unitPosting) {
					if p.th>>4 == 0 || skip(uref) {
						return
					}
					for _, t := range ph[:len(ph)-1] {
						if pathTF(fref, first[q.terms[t].stem]) == 0 {
							return
						}
					}
					sc.extra[uref] += sat(k1, wi, float64(ns.units[uref][ucTitle]))
					mark(uref)
				})
			}
		}
	}
	if q.prof.proximity > 0 {
		pairs := map[uint64]float64{}
		for i := 1; i < len(q.seq); i++ {
			a, b := q.seq[i-1], q.seq[i]
			if a == b || !hitTerm(int(a)) || !hitTerm(int(b)) {
				continue
			}
			pairs[pairKey(a, b)] = math.Min(q.terms[a].idf, q.terms[b].idf)
		}
		// An occurrence of one word has at most two of the other at each
		// distance d: its n nearest add at most g(n) = Σ_{k≤n} 1/⌈k/2⌉²,
		// and the pair's sum at most min(tf_a·g(tf_b), tf_b·g(tf_a)).
		g := make([]float64, 2*q.prof.proxWindow+1)
		for k := 1; k < len(g); k++ {
			d := float64((k + 1) / 2)
			g[k] = g[k-1] + 1/(d*d)
		}
		gOf := func(n uint16) float64 { return g[min(int(n), len(g)-1)] }
		for key, idf := range pairs {
			a, b := int32(key>>32), int32(uint32(key))
			hs := []uint64{stemHash([]byte(q.terms[a].stem)), stemHash([]byte(q.terms[b].stem))}
			wi := q.prof.proximity * idf
			w.join(hs, func(uref, fref int32, u *unitEntry, ps []unitPosting) {
				if skip(uref) {
					return
				}
				na, nb := ps[0].body, ps[1].body
				acc := math.Min(float64(na)*gOf(nb), float64(nb)*gOf(na))
				if acc <= 0 {
					return
				}
				kb := k1 * float64(ns.units[uref][4])
				sc.extra[uref] += wi * acc * (k1 + 1) / (kb + acc)
			})
		}
	}

	// D: units whose title holds a name of the question (or, for a
	// qualified one, its owner's name).
	if len(q.pq.names) > 0 {
		var buf []byte
		for _, nm := range q.pq.names {
			words := []string{nm.name}
			if len(nm.qualifier) > 0 {
				words = append(words, nm.qualifier[len(nm.qualifier)-1])
			}
			for _, wd := range words {
				buf = sources.ForEachToken(wd, buf, func(tok []byte, _, _ int) bool {
					st := append([]byte(nil), tok...)
					w.each(stemHash(sources.PorterStem(st)), func(uref, _ int32, u *unitEntry, p unitPosting) {
						if p.th>>4 > 0 && u.flags&unitCode != 0 && sc.in[uref] {
							sc.titled[uref] = true
						}
					})
					return true
				})
			}
		}
	}

	// D': units whose title holds a name the question spells in words
	// (spelledNames).
	if len(q.pq.spelled) > 0 && len(q.asked) == 0 {
		var buf []byte
		for _, nm := range q.pq.spelled {
			buf = sources.ForEachToken(nm.name, buf, func(tok []byte, _, _ int) bool {
				st := append([]byte(nil), tok...)
				w.each(stemHash(sources.PorterStem(st)), func(uref, _ int32, u *unitEntry, p unitPosting) {
					if p.th>>4 > 0 && u.flags&unitCode != 0 && sc.in[uref] {
						sc.spelled[uref] = true
					}
				})
				return true
			})
		}
	}

	// The units in their order, so that chooseUnits takes their files in
	// turn and reads the accumulators in the order they lie in memory.
	if len(sc.touched)*16 > n {
		sc.touched = sc.touched[:0]
		for u, in := range sc.in {
			if in {
				sc.touched = append(sc.touched, int32(u))
			}
		}
	} else {
		slices.Sort(sc.touched)
	}
}
