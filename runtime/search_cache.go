package runtime

import (
	"container/list"
	"context"
	"sync"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// searchCache keeps recent rankings with the token cost of each hit and
// the index's record of each hit's file, keyed by the index generation,
// the caller's scope and the normalized request. What is sent is never
// cached whole: each answer gets its own run id and fresh stale flags
// (the files on disk are checked against the kept records at every
// answer), and is fitted exactly (with the cached costs and the owner's
// render.Memo, which makes that cheap). Any applied revision moves the
// generation, so neither a ranking nor a file record outlives the index it
// came from.
type searchCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
	hits  uint64
	miss  uint64
}

type cacheEntry struct {
	key    string
	ranked query.Ranked

	mu     sync.Mutex
	costs  map[render.Format]map[string][]render.HitCost // format → counter → per-hit costs
	states []*query.FileState                            // per hit; nil until first asked
}

func newSearchCache(max int) *searchCache {
	return &searchCache{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *searchCache) get(key string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.ll.MoveToFront(el)
		c.hits++
		return el.Value.(*cacheEntry)
	}
	c.miss++
	return nil
}

// peek is get without counting a hit or a miss.
func (c *searchCache) peek(key string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.ll.MoveToFront(el)
		return el.Value.(*cacheEntry)
	}
	return nil
}

// put caches r under key and returns its entry, or the entry another
// search put there first (inserted false).
func (c *searchCache) put(key string, r query.Ranked) (e *cacheEntry, inserted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		return el.Value.(*cacheEntry), false
	}
	e = &cacheEntry{key: key, ranked: r, costs: map[render.Format]map[string][]render.HitCost{}}
	c.items[key] = c.ll.PushFront(e)
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*cacheEntry).key)
	}
	return e, true
}

// stats returns the cache's hit and miss counts.
func (c *searchCache) stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.miss
}

func (e *cacheEntry) costsFor(f render.Format, counter string) []render.HitCost {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.costs[f][counter]
}

func (e *cacheEntry) keepCosts(f render.Format, counter string, costs []render.HitCost) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.costs[f]
	if m == nil {
		m = map[string][]render.HitCost{}
		e.costs[f] = m
	}
	merged := append([]render.HitCost(nil), m[counter]...)
	for len(merged) < len(costs) {
		merged = append(merged, render.HitCost{})
	}
	for i, c := range costs {
		if c.Counter != "" {
			merged[i] = c
		}
	}
	m[counter] = merged
}

// fileStates returns the index's record of each hit's file
// (query.FileStates), read once per entry: the records change only with a
// new revision, which moves the generation and so the key.
func (e *cacheEntry) fileStates(ctx context.Context, db *workspace.DB) ([]*query.FileState, error) {
	e.mu.Lock()
	states := e.states
	e.mu.Unlock()
	if states != nil || len(e.ranked.Hits) == 0 {
		return states, nil
	}
	states, err := query.FileStates(ctx, db, e.ranked.Hits)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.states = states
	e.mu.Unlock()
	return states, nil
}
