package query

import (
	"container/list"
	"context"
	"sync"

	"github.com/tychora/tychora/workspace"
)

// searchCache keeps recent rankings with what their fits keep (C: the
// token cost of each hit) and the index's record of each hit's file,
// keyed by the index generation, the caller's scope and the normalized
// request. What is sent is never cached whole: each answer gets its own
// run id and fresh stale flags (the files on disk are checked against the
// kept records at every answer), and is fitted exactly (with the kept
// costs and the owner's render.Memo, which makes that cheap). Any applied revision moves the
// generation, so neither a ranking nor a file record outlives the index it
// came from.
type searchCache[C any] struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
	hits  uint64
	miss  uint64
}

type cacheEntry[C any] struct {
	key    string
	ranked Ranked

	mu     sync.Mutex
	fits   map[string]C // what fits kept, by the name the Fitter gives (format and counter)
	states []*FileState // per hit; nil until first asked
	// The last answer a Reuser left, and its key (Searcher.Search): one,
	// so that an entry holds at most one answer's bytes.
	answerKey string
	answerVal any
}

func newSearchCache[C any](max int) *searchCache[C] {
	return &searchCache[C]{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *searchCache[C]) get(key string) *cacheEntry[C] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.ll.MoveToFront(el)
		c.hits++
		return el.Value.(*cacheEntry[C])
	}
	c.miss++
	return nil
}

// peek is get without counting a hit or a miss.
func (c *searchCache[C]) peek(key string) *cacheEntry[C] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.ll.MoveToFront(el)
		return el.Value.(*cacheEntry[C])
	}
	return nil
}

// put caches r under key and returns its entry, or the entry another
// search put there first (inserted false).
func (c *searchCache[C]) put(key string, r Ranked) (e *cacheEntry[C], inserted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		return el.Value.(*cacheEntry[C]), false
	}
	e = &cacheEntry[C]{key: key, ranked: r, fits: map[string]C{}}
	c.items[key] = c.ll.PushFront(e)
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*cacheEntry[C]).key)
	}
	return e, true
}

// stats returns the cache's hit and miss counts.
func (c *searchCache[C]) stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.miss
}

// kept is what the fits named keep kept with this ranking.
func (e *cacheEntry[C]) kept(keep string) C {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fits[keep]
}

// keep merges what a fit counted into what fits named keep kept.
func (e *cacheEntry[C]) keep(keep string, fresh C, merge func(kept, fresh C) C) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fits[keep] = merge(e.fits[keep], fresh)
}

// answer returns the answer kept under key, nil when none is.
func (e *cacheEntry[C]) answer(key string) any {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.answerKey != key {
		return nil
	}
	return e.answerVal
}

// keepAnswer keeps answer under key, in place of the one kept before.
func (e *cacheEntry[C]) keepAnswer(key string, answer any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answerKey, e.answerVal = key, answer
}

// fileStates returns the index's record of each hit's file
// (FileStates), read once per entry: the records change only with a
// new revision, which moves the generation and so the key.
func (e *cacheEntry[C]) fileStates(ctx context.Context, db *workspace.DB) ([]*FileState, error) {
	e.mu.Lock()
	states := e.states
	e.mu.Unlock()
	if states != nil || len(e.ranked.Hits) == 0 {
		return states, nil
	}
	states, err := FileStates(ctx, db, e.ranked.Hits)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.states = states
	e.mu.Unlock()
	return states, nil
}
