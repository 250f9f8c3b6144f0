package render

import (
	"strings"
	"sync"
)

// Memo remembers exact token counts and token ends across fits. A ranking
// served again from a cache is fitted again for every answer (each has its
// own run id and stale flags), and such fits count mostly the same strings:
// the hits, the lines of the cut hit, the tails with their widest numbers.
// A count is a function of the counter and the exact string alone, so a
// Memo saves tokenizing without changing a single byte of any answer.
//
// A Memo is safe for concurrent use and bounded: it keeps two generations
// of about limit/2 bytes of strings each, and drops the older one when the
// newer fills. The zero value is not usable; get one with NewMemo.
type Memo struct {
	half int
	mu   sync.RWMutex
	cur  memoGen
	old  memoGen
}

type memoKey struct {
	c *Counter
	s string
}

type memoGen struct {
	counts map[memoKey]int
	ends   map[memoKey][]int
	size   int
}

func newMemoGen() memoGen {
	return memoGen{counts: map[memoKey]int{}, ends: map[memoKey][]int{}}
}

// memoOverhead approximates what an entry costs beyond its string.
const memoOverhead = 64

// NewMemo returns a Memo that holds about limit bytes.
func NewMemo(limit int) *Memo {
	return &Memo{half: max(limit/2, 1), cur: newMemoGen(), old: newMemoGen()}
}

// add accounts n more bytes to the current generation, turning
// generations over when it is full. m.mu is held.
func (m *Memo) add(n int) {
	m.cur.size += n
	if m.cur.size > m.half {
		m.old, m.cur = m.cur, newMemoGen()
	}
}

func (m *Memo) count(c *Counter, s string) (int, bool) {
	k := memoKey{c, s}
	m.mu.RLock()
	n, ok := m.cur.counts[k]
	if ok {
		m.mu.RUnlock()
		return n, true
	}
	n, ok = m.old.counts[k]
	m.mu.RUnlock()
	if ok {
		// Still in use: keep it through the next turn.
		m.putCount(c, s, n)
	}
	return n, ok
}

func (m *Memo) putCount(c *Counter, s string, n int) {
	s = strings.Clone(s) // s may share a larger string's bytes
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur.counts[memoKey{c, s}] = n
	m.add(len(s) + memoOverhead)
}

// tokenEnds is c.tokenEnds(s), remembered.
func (m *Memo) tokenEnds(c *Counter, s string) []int {
	k := memoKey{c, s}
	m.mu.RLock()
	e, ok := m.cur.ends[k]
	if ok {
		m.mu.RUnlock()
		return e
	}
	e, ok = m.old.ends[k]
	m.mu.RUnlock()
	if !ok {
		if e = c.tokenEnds(s); e == nil {
			return nil
		}
	}
	k.s = strings.Clone(s)
	m.mu.Lock()
	m.cur.ends[k] = e
	m.add(len(s) + 8*len(e) + memoOverhead)
	m.mu.Unlock()
	return e
}
