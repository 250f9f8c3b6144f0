package query

import (
	"bytes"
	"context"
	"database/sql"
	"time"
)

// A generation published with its file index.
//
// A serving engine refreshes a large file index behind the searches
// (refreshBehind): the searches of a new generation go without it until
// the refresh is done, and each costs about three and a half times one
// with it (bench/README.md, "Searches during a sync"). After a sync that
// rewrote every file of Go's tree that refresh is a whole build, seconds
// long, and every search of those seconds paid it.
//
// PrepareCommit moves that work before the commit: the writer's
// transaction that is about to change the index (a sync's apply, a
// merge) builds the index of the generation it holds and leaves it
// beside the cache's, as the next; the first search that sees that
// generation, or the writer once it committed, makes it the cache's.
// The searches that run meanwhile see the old generation, with its
// index. The writer holds its lock while it builds
// (sources.Options.Publish).

// pendingIndex is the index of a generation a writer is committing.
type pendingIndex struct {
	generation []byte
	index      *fileIndex
}

// PrepareCommit builds, inside tx (a writer's transaction about to
// commit), the file index of the generation tx holds, and returns the
// function to call with the transaction's outcome: before a rollback
// with false, after a commit with true (or false when it failed). It
// returns nil, and does nothing, unless the engine serves (StartWarm)
// and holds an index already (the first is built behind the searches),
// or when the build fails or the workspace is too large for an index:
// the searches then refresh it behind them as before.
func (e *Engine) PrepareCommit(ctx context.Context, tx *sql.Tx) func(committed bool) {
	c := &e.fileIdx
	c.mu.Lock()
	old := c.index
	serving := c.life != nil && !c.closed && c.generation != nil && old != nil
	c.mu.Unlock()
	if !serving {
		return nil
	}
	// The engine's prepared statements belong to the readers' pool: tx
	// runs them unprepared.
	e.writer.Store(tx)
	gen, _, err := readGeneration(ctx, e, tx)
	var ix *fileIndex
	if err == nil {
		ix, err = refreshFileIndex(ctx, e, tx, old, true)
	}
	e.writer.Store(nil)
	if err != nil || ix == nil {
		return nil
	}
	p := &pendingIndex{generation: gen, index: ix}
	c.mu.Lock()
	c.next = p
	c.mu.Unlock()
	return func(committed bool) {
		c.mu.Lock()
		if c.next == p {
			c.next = nil
			if committed && !c.closed {
				c.install(p)
			}
		}
		c.mu.Unlock()
	}
}

// promote makes the next index the cache's when gen is its generation:
// the writer committed it. c.mu is held.
func (c *fileIndexCache) promote(gen []byte) bool {
	if c.next == nil || !bytes.Equal(c.next.generation, gen) || c.closed {
		return false
	}
	c.install(c.next)
	c.next = nil
	return true
}

// install makes p the cache's index. The searches whose snapshot began
// before it are of an older generation: they start no refresh (get);
// a refresh running behind them keeps what it builds to itself
// (refreshBehind). c.mu is held.
func (c *fileIndexCache) install(p *pendingIndex) {
	c.generation, c.index = p.generation, p.index
	c.epoch++
	c.behindAt = time.Now()
}
