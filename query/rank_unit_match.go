package query

import (
	"cmp"
	"slices"
)

// Whether a unit matches the question, from the terms it holds.
const (
	matchNone = iota
	matchMaybe
	matchSure
)

// matchMasks are the question's FTS5 clauses (queryClauses) as sets of
// term bits: any holds the free words, of which one makes a match; each
// of all, the terms of an identifier's parts (the common ones left out
// while a rarer one remains, as its AND leaves them out) or whole form;
// each of maybe, the words of a phrase, with its index.
type matchMasks struct {
	any   uint64
	all   []uint64
	maybe []maybeMask
}

type maybeMask struct {
	mask   uint64
	phrase int
}

func newMatchMasks(q *preparedQuery) *matchMasks {
	first := map[string]int{}
	for t, st := range q.terms {
		if st.weight > 0 || st.phrase {
			if _, ok := first[st.stem]; !ok {
				first[st.stem] = t
			}
		}
	}
	// held reports whether a term can be held (its stem's hits carry it).
	held := func(t int) bool {
		st := &q.terms[t]
		return (st.weight > 0 || st.phrase) && first[st.stem] == t
	}
	mask := func(ids []int) (uint64, bool) {
		var m uint64
		for _, t := range ids {
			if !held(t) {
				return 0, false
			}
			m |= 1 << t
		}
		return m, len(ids) > 0
	}
	mm := &matchMasks{}
	pq := q.pq
	for i, t := range pq.terms {
		if (pq.clause(i) || q.prof.looseParts && t.name && !t.stop && !isStopword(t.token)) && held(i) {
			mm.any |= 1 << i
		}
	}
	phrase := func(pi int) {
		if m, ok := mask(pq.phrases[pi].terms); ok {
			mm.maybe = append(mm.maybe, maybeMask{m, pi})
		}
	}
	common := q.stats.n / commonShare
	for _, g := range pq.groups {
		ids := slices.Clone(g.parts)
		slices.SortStableFunc(ids, func(a, b int) int { return cmp.Compare(q.terms[a].df, q.terms[b].df) })
		for k, id := range ids {
			if k > 0 && q.terms[id].df > common {
				ids = ids[:k]
				break
			}
		}
		if m, ok := mask(ids); ok {
			mm.all = append(mm.all, m)
		}
		if g.phrase >= 0 {
			phrase(g.phrase)
		} else if m, ok := mask(g.whole); ok {
			mm.all = append(mm.all, m)
		}
	}
	for pi, ph := range pq.phrases {
		if ph.quoted {
			phrase(pi)
		}
	}
	return mm
}

func (mm *matchMasks) match(held uint64) int {
	if held&mm.any != 0 {
		return matchSure
	}
	for _, m := range mm.all {
		if held&m == m {
			return matchSure
		}
	}
	for _, m := range mm.maybe {
		if held&m.mask == m.mask {
			return matchMaybe
		}
	}
	return matchNone
}

// matches reports whether the unit the scorer scored last matches the
// clauses: what the unit index's maybe becomes once its text is read.
func (s *scorer) matches(mm *matchMasks) bool {
	var held uint64
	for t := range min(len(s.terms), 64) {
		for f := 0; f < numFields; f++ {
			if s.tf[t*numFields+f] > 0 {
				held |= 1 << t
				break
			}
		}
	}
	switch mm.match(held) {
	case matchSure:
		return true
	case matchNone:
		return false
	}
	for _, m := range mm.maybe {
		if held&m.mask != m.mask {
			continue
		}
		for f := 0; f < numFields; f++ {
			if countPhrase(s.hits[f], s.phrases[m.phrase]) > 0 {
				return true
			}
		}
	}
	return false
}
