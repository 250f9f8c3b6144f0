package query

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"runtime"
	"sync/atomic"
)

// Reading the best files beside stage A. The file index scores every file
// and chooses the best ones without stage A (planBest), so that work and
// the reading of their units can run on a helper, with a second read
// connection, while stage A's probes run on the search's own:
// the search then waits for the longer of the two, not for their sum
// (bench/README.md, "Best files beside stage A").
//
// The helper is only ever an offer. It runs when a helper slot is free
// (helperSlots, so that under load a search keeps to one connection and
// one core), reads within a snapshot of the same index generation as the
// search (or gives its work back), and is taken back by the search when it
// has not got its connection by the time the search needs its units: the
// search then reads them itself, in its own transaction, as it would
// without a helper. So a search never waits on a connection for its
// helper, and never ranks units of another generation.

// errOtherGeneration: the helper's snapshot saw another index generation
// than the search's.
var errOtherGeneration = errors.New("search: index changed under the search")

// bestFetch is the scoring of every file in scope, the choice of the best
// files and the reading of their units: on a helper beside stage A, or in
// the search's own transaction.
type bestFetch struct {
	e     *Engine
	q     *preparedQuery
	sf    *scopeFilter
	ix    *fileIndex
	named [][2]string

	// fs and plan are the files' scores (nil when the index cannot serve
	// the search) and the best files: the helper's, read once it ended.
	fs   *fileScores
	plan bestPlan

	// state: 0 the helper has not started reading; 1 it reads (the search
	// waits for it); 2 the search took the work back.
	state  atomic.Int32
	cancel context.CancelFunc
	done   chan struct{}
	units  []*candidate
	err    error
}

// helperSlots bounds the helpers running at once, across searches.
func helperSlots(procs int) int { return max(1, procs/2) }

// choose scores every file in scope and plans the best files.
func (b *bestFetch) choose() {
	if b.fs = b.ix.score(b.q, b.sf); b.fs != nil {
		b.plan = planBest(b.q, b.fs, b.named)
	}
}

// startBest starts scoring the files and reading the best files' units
// on a helper when a helper slot is free; else the search does it when
// it needs them.
func (e *Engine) startBest(ctx context.Context, q *preparedQuery, sf *scopeFilter, ix *fileIndex, named [][2]string) *bestFetch {
	b := &bestFetch{e: e, q: q, sf: sf, ix: ix, named: named}
	e.helperOnce.Do(func() { e.helpers = make(chan struct{}, helperSlots(runtime.GOMAXPROCS(0))) })
	select {
	case e.helpers <- struct{}{}:
	default:
		b.state.Store(2)
		return b
	}
	hctx, cancel := context.WithCancel(ctx)
	b.cancel, b.done = cancel, make(chan struct{})
	gen := q.stats.generation
	go func() {
		defer close(b.done)
		defer func() { <-e.helpers }()
		b.choose()
		if b.plan.empty() {
			return
		}
		tx, release, err := e.begin(hctx)
		if err != nil {
			return // taken back, or the search's context ended
		}
		defer release()
		if !b.state.CompareAndSwap(0, 1) {
			return
		}
		now, _, err := readGeneration(hctx, e, tx)
		switch {
		case err != nil:
			b.err = err
		case !bytes.Equal(now, gen):
			b.err = errOtherGeneration
		default:
			if b.units, b.err = e.bestUnits(hctx, tx, q, sf, b.plan, nil); b.err == nil {
				e.helped.Add(1)
			}
		}
	}()
	return b
}

// wait returns the files' scores (nil: the index cannot serve the search)
// and the best files' units: the helper's, or read in tx when the helper
// had not started reading, failed, or saw another generation; then the
// units of cands (the pool) are not read again.
func (b *bestFetch) wait(ctx context.Context, tx *sql.Tx, cands []*candidate) (*fileScores, []*candidate, error) {
	inline := func() (*fileScores, []*candidate, error) {
		units, err := b.e.bestUnits(ctx, tx, b.q, b.sf, b.plan, seqSet(cands))
		return b.fs, units, err
	}
	if b.done == nil { // no helper
		b.choose()
		return inline()
	}
	if b.state.CompareAndSwap(0, 2) {
		b.stop() // the helper has chosen the files when it ends
		return inline()
	}
	<-b.done
	b.cancel()
	if b.err != nil {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		return inline()
	}
	return b.fs, b.units, nil
}

// stop ends the helper, if any, and waits for it: a search that fails or
// returns early leaves nothing running.
func (b *bestFetch) stop() {
	if b == nil || b.done == nil {
		return
	}
	b.cancel()
	<-b.done
}
