package query

import (
	"cmp"
	"slices"
)

// unitWalk walks unit postings of an index within a scope.
type unitWalk struct {
	ix    *fileIndex
	sf    *scopeFilter
	keys  map[string]bool
	scope []int8 // per file ref: 1 in scope, -1 out, 0 not yet known
	nbF   int32  // base files
	nbU   int32  // base units
}

func newUnitWalk(ix *fileIndex, sf *scopeFilter) *unitWalk {
	w := &unitWalk{ix: ix, sf: sf, nbF: int32(len(ix.base.files)), nbU: int32(len(ix.base.units))}
	w.scope = make([]int8, len(ix.base.files)+len(ix.delta.files))
	if sf.pathKeys != nil {
		w.keys = make(map[string]bool, len(sf.pathKeys))
		for _, k := range sf.pathKeys {
			w.keys[k] = true
		}
	}
	return w
}

func (w *unitWalk) inScope(fref int32) bool {
	switch w.scope[fref] {
	case 1:
		return true
	case -1:
		return false
	}
	if int(fref) < int(w.nbF) && w.ix.dead[fref] || !w.sf.holdsFile(w.ix.entry(fref), w.keys) {
		w.scope[fref] = -1
		return false
	}
	w.scope[fref] = 1
	return true
}

// part returns part i (0 base, 1 delta) with the offsets of its file and
// unit refs.
func (w *unitWalk) part(i int) (p *filePart, fileOff, unitOff int32) {
	if i == 0 {
		return w.ix.base, 0, 0
	}
	return w.ix.delta, w.nbF, w.nbU
}

// unit returns the unit of a unit ref.
func (w *unitWalk) unit(uref int32) *unitEntry {
	if uref >= w.nbU {
		return &w.ix.delta.units[uref-w.nbU]
	}
	return &w.ix.base.units[uref]
}

// titleNames reports whether the title of unit uref holds one of names
// (foldedNames), as titleNames does a candidate's; true when its part
// keeps no titles, or only the start of this one (addTitle).
func (w *unitWalk) titleNames(uref int32, names [][]byte) bool {
	p, i := w.ix.base, uref
	if uref >= w.nbU {
		p, i = w.ix.delta, uref-w.nbU
	}
	if len(p.titleEnds) != len(p.units) {
		return true
	}
	lo := uint32(0)
	if i > 0 {
		lo = p.titleEnds[i-1]
	}
	t := p.titles[lo:p.titleEnds[i]]
	return len(t) >= maxKeptTitle || holdsFoldedName(t, names)
}

// fileOf returns the file ref of a unit ref.
func (w *unitWalk) fileOf(uref int32) int32 {
	if uref >= w.nbU {
		return w.nbF + w.ix.delta.units[uref-w.nbU].file
	}
	return w.ix.base.units[uref].file
}

// each calls fn with every posting of stem h in scope.
func (w *unitWalk) each(h uint64, fn func(uref, fref int32, u *unitEntry, p unitPosting)) {
	for i := range 2 {
		part, fo, uo := w.part(i)
		for _, p := range part.ustems[h] {
			u := &part.units[p.unit]
			fref := fo + u.file
			if !w.inScope(fref) {
				continue
			}
			fn(uo+p.unit, fref, u, p)
		}
	}
}

// join calls fn for every unit in scope that holds each of the stems,
// with its postings of them in order. The shortest list leads; the
// others are searched forward from where they stood (seekUnit), so a
// rare word beside a common one costs about its own postings.
func (w *unitWalk) join(hs []uint64, fn func(uref, fref int32, u *unitEntry, ps []unitPosting)) {
	ps := make([]unitPosting, len(hs))
	lists := make([][]unitPosting, len(hs))
	at := make([]int, len(hs))
	for i := range 2 {
		part, fo, uo := w.part(i)
		d := 0
		for k, h := range hs {
			if lists[k] = part.ustems[h]; len(lists[k]) < len(lists[d]) {
				d = k
			}
		}
		if len(lists[d]) == 0 {
			continue
		}
		clear(at)
	next:
		for _, p := range lists[d] {
			target := p.unit
			for k, l := range lists {
				if k == d {
					continue
				}
				at[k] = seekUnit(l, at[k], target)
				if at[k] == len(l) {
					break next
				}
				if l[at[k]].unit != target {
					continue next
				}
				ps[k] = l[at[k]]
			}
			ps[d] = p
			u := &part.units[target]
			fref := fo + u.file
			if w.inScope(fref) {
				fn(uo+target, fref, u, ps)
			}
		}
	}
}

// seekUnit returns the first index at or after i of postings l (in unit
// order) whose unit is at least target, or len(l): a galloping search,
// about log₂ of the distance moved.
func seekUnit(l []unitPosting, i int, target int32) int {
	if i >= len(l) || l[i].unit >= target {
		return i
	}
	// l[lo].unit < target throughout.
	lo, step := i, 1
	for lo+step < len(l) && l[lo+step].unit < target {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(l))
	j, _ := slices.BinarySearchFunc(l[lo+1:hi], target, func(p unitPosting, t int32) int { return cmp.Compare(p.unit, t) })
	return lo + 1 + j
}

// fileUnitRange returns a file's units [lo, hi) within its part and the
// part's unit offset.
func (w *unitWalk) fileUnitRange(fref int32) (lo, hi, off int32) {
	if fref >= w.nbF {
		r := w.ix.delta.fileUnits[fref-w.nbF]
		return r[0], r[1], w.nbU
	}
	r := w.ix.base.fileUnits[fref]
	return r[0], r[1], 0
}
