package query

import "slices"

// Narrowing the walk to the units that can match.
//
// A question without a free word (an identifier, a qualified name, a
// quoted phrase) matches a unit only when the unit holds every term of
// one of its clauses (matchMasks: an identifier's parts less the common
// ones, its whole form, a phrase's words). Its common parts — "write" of
// WriteToken — hold tens of thousands of units that match none, which
// chooseUnits passes over; scoring them was most of the walk.
// narrowUnits finds the units that hold every term of a clause, from each
// clause's rarest term, and the walk scores those alone. They are the
// units that match (surely or maybe) and they get the same scores, so
// stage B reads the same units and every page is the same.

// narrowUnits marks every unit in scope that holds each term of one of
// mm's clauses (sc.allow[uref] == the tick it returns) and returns that
// tick; 0 when the walk cannot be narrowed: mm is nil, or the question
// has a free word (one word makes a match, so every unit of its postings
// may).
func (ix *fileIndex) narrowUnits(q *preparedQuery, fs *fileScores, w *unitWalk, sc *unitScratch, mm *matchMasks) uint32 {
	if mm == nil || mm.any != 0 {
		return 0
	}
	if n := len(sc.t); len(sc.allow) != n {
		sc.allow = make([]uint32, n)
	}
	sc.allowTick++
	if sc.allowTick == 0 {
		clear(sc.allow)
		sc.allowTick = 1
	}
	tick := sc.allowTick
	nt := len(q.terms)

	// The terms each file's path holds, as the walk holds them: the
	// stem's first term, when the path is weighed.
	wPath := q.prof.fields[fieldPath].weight > 0
	if nf := len(ix.base.files) + len(ix.delta.files); len(sc.pathBits) != nf {
		sc.pathBits = make([]uint64, nf)
	}
	defer func() {
		for _, fref := range sc.pathSet {
			sc.pathBits[fref] = 0
		}
		sc.pathSet = sc.pathSet[:0]
	}()
	if wPath {
		for row, fref := range fs.refs {
			var bits uint64
			for t := range min(nt, 64) {
				if fs.counts[row*nt+t].path > 0 {
					bits |= 1 << t
				}
			}
			if bits != 0 {
				sc.pathBits[fref] = bits
				sc.pathSet = append(sc.pathSet, fref)
			}
		}
	}

	masks := slices.Clone(mm.all)
	for _, m := range mm.maybe {
		masks = append(masks, m.mask)
	}
	var ts []int
	var hs []uint64
	var at []int
	for _, m := range masks {
		ts, hs = ts[:0], hs[:0]
		for t := range min(nt, 64) {
			if m&(1<<t) != 0 {
				ts = append(ts, t)
				hs = append(hs, stemHash([]byte(q.terms[t].stem)))
			}
		}
		if len(ts) == 0 {
			continue
		}
		// The driver: the term of the fewest units.
		size := func(k int) int {
			n := len(ix.base.ustems[hs[k]]) + len(ix.delta.ustems[hs[k]])
			if wPath {
				bit := uint64(1) << ts[k]
				for _, fref := range sc.pathSet {
					if sc.pathBits[fref]&bit != 0 {
						lo, hi, _ := w.fileUnitRange(fref)
						n += int(hi - lo)
					}
				}
			}
			return n
		}
		d, best := 0, size(0)
		for k := 1; k < len(ts); k++ {
			if s := size(k); s < best {
				d, best = k, s
			}
		}
		for i := range 2 {
			part, fo, uo := w.part(i)
			lists := make([][]unitPosting, len(ts))
			for k := range ts {
				lists[k] = part.ustems[hs[k]]
			}
			// holds reports whether unit (of file fref) holds every term
			// of the clause but the driver; seek moves the lists' cursors
			// up to it (the driver's postings come in unit order).
			at = slices.Grow(at[:0], len(ts))[:len(ts)]
			clear(at)
			holds := func(unit, fref int32, seek bool) bool {
				for k, t := range ts {
					if k == d || sc.pathBits[fref]&(1<<t) != 0 {
						continue
					}
					l := lists[k]
					j := 0
					if seek {
						j = at[k]
					}
					j = seekUnit(l, j, unit)
					if seek {
						at[k] = j
					}
					if j == len(l) || l[j].unit != unit {
						return false
					}
				}
				return true
			}
			for _, p := range lists[d] {
				uref := uo + p.unit
				if sc.allow[uref] == tick {
					continue
				}
				fref := fo + part.unitFiles[p.unit]
				if w.inScope(fref) && holds(p.unit, fref, true) {
					sc.allow[uref] = tick
				}
			}
			if !wPath {
				continue
			}
			bit := uint64(1) << ts[d]
			for _, fref := range sc.pathSet {
				if sc.pathBits[fref]&bit == 0 || (fref >= w.nbF) != (i == 1) || !w.inScope(fref) {
					continue
				}
				lo, hi, _ := w.fileUnitRange(fref)
				for unit := lo; unit < hi; unit++ {
					if sc.allow[uo+unit] != tick && holds(unit, fref, false) {
						sc.allow[uo+unit] = tick
					}
				}
			}
		}
	}
	return tick
}
