package query

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Counting a part's units beside its reading.
//
// Counting a unit (tokenizing, folding and stemming its text) is most of
// what building the unit index costs; reading the units' rows is most of
// the rest. A large part is counted by workers, one unitCounter each,
// while the rows are read: the reader hands them batches of consecutive
// units, in order, so each worker's postings of a stem are in unit order
// and packUnits merges the workers' lists of a stem into the one list a
// single counter would have made. The part is the same either way
// (TestUnitCountingParallel).
//
// Only a build that does not give way to the searches counts with
// workers: one a search or command waits for (a CLI search without an
// owner, the saved base an add or sync prepares, an inline refresh) and
// the refresh behind a serving owner's searches, which go without the
// index until it is done. A build that gives way (bg: the one before a
// sync's commit, while the searches keep the old generation's index) is
// counted by the reader alone, yielding to them, so that it takes no more
// from a busy owner than before.

// unitBatchUnits is how many consecutive units one batch holds.
var unitBatchUnits = 128

// unitWorkersFor is how many workers count a part of files files: one
// (the reader counts) below parallelUnitFiles files or on one processor.
var unitWorkersFor = func(files int) int {
	if files < parallelUnitFiles {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), maxUnitWorkers)
}

const (
	parallelUnitFiles = 512
	maxUnitWorkers    = 4
)

// unitBatch is consecutive units for a worker to count: from the unit
// numbered first, each candidate with its file.
type unitBatch struct {
	first   int32
	cands   []candidate
	files   []int32
	entries []unitEntry // the worker's
}

// unitCounting counts the units readUnits reads into its part.
type unitCounting struct {
	ctx      context.Context
	e        *Engine
	p        *filePart
	bg       bool
	counters []*unitCounter
	n        int32 // the units added
	postings atomic.Int64

	// With workers:
	jobs    chan *unitBatch
	batches []*unitBatch
	cur     *unitBatch
	wg      sync.WaitGroup
	cancel  context.CancelFunc
}

func newUnitCounting(ctx context.Context, e *Engine, p *filePart, bg bool) *unitCounting {
	w := 1
	if !bg {
		w = max(1, unitWorkersFor(len(p.files)))
	}
	uc := &unitCounting{ctx: ctx, e: e, p: p, bg: bg}
	for range w {
		c := newUnitCounter()
		if p.names != nil {
			c.names = []string{}
		}
		uc.counters = append(uc.counters, c)
	}
	if w == 1 {
		return uc
	}
	uc.ctx, uc.cancel = context.WithCancel(ctx)
	uc.jobs = make(chan *unitBatch, w)
	for _, c := range uc.counters {
		uc.wg.Add(1)
		go uc.work(c, uc.jobs)
	}
	return uc
}

// add counts c, the next unit, of file.
func (uc *unitCounting) add(c candidate, file int32) error {
	id := uc.n
	uc.n++
	uc.p.addTitle(c.title)
	if uc.jobs == nil {
		u, n := countUnit(uc.counters[0], uc.p.files, &c, file, id)
		uc.p.units = append(uc.p.units, u)
		uc.p.unitFiles = append(uc.p.unitFiles, file)
		uc.postings.Add(int64(n))
		if uc.bg && len(uc.p.units)%yieldUnits == 0 {
			return uc.e.Foreground.Yield(uc.ctx)
		}
		return nil
	}
	if uc.cur == nil {
		uc.cur = &unitBatch{first: id, cands: make([]candidate, 0, unitBatchUnits), files: make([]int32, 0, unitBatchUnits)}
	}
	uc.cur.cands = append(uc.cur.cands, c)
	uc.cur.files = append(uc.cur.files, file)
	if len(uc.cur.cands) == unitBatchUnits {
		return uc.send()
	}
	return nil
}

// send hands the batch being filled to the workers.
func (uc *unitCounting) send() error {
	b := uc.cur
	uc.cur = nil
	uc.batches = append(uc.batches, b)
	select {
	case uc.jobs <- b:
		return nil
	case <-uc.ctx.Done():
		return uc.failed()
	}
}

// over reports whether the units counted so far hold more postings than a
// part may.
func (uc *unitCounting) over() bool { return uc.postings.Load() > int64(maxUnitPostings) }

// work counts the batches it receives, in the order it receives them.
func (uc *unitCounting) work(c *unitCounter, jobs <-chan *unitBatch) {
	defer uc.wg.Done()
	for b := range jobs {
		if uc.ctx.Err() != nil {
			continue
		}
		b.entries = make([]unitEntry, len(b.cands))
		total := 0
		for i := range b.cands {
			u, n := countUnit(c, uc.p.files, &b.cands[i], b.files[i], b.first+int32(i))
			b.entries[i] = u
			total += n
		}
		b.cands = nil
		if uc.postings.Add(int64(total)) > int64(maxUnitPostings) {
			// The part keeps no units: the rest need no counting.
			uc.cancel()
		}
	}
}

// failed is what ended the counting: nil when the part went over its
// bound, else ctx's error.
func (uc *unitCounting) failed() error {
	if uc.over() {
		return nil
	}
	return uc.ctx.Err()
}

// finish waits for the workers and sets the part's units in order.
func (uc *unitCounting) finish() error {
	if uc.jobs == nil {
		return nil // counted as read
	}
	if uc.cur != nil {
		if err := uc.send(); err != nil {
			return err
		}
	}
	close(uc.jobs)
	uc.jobs = nil
	uc.wg.Wait()
	if uc.ctx.Err() != nil {
		return uc.failed()
	}
	uc.cancel()
	p := uc.p
	p.units = make([]unitEntry, 0, uc.n)
	p.unitFiles = make([]int32, 0, uc.n)
	for i, b := range uc.batches {
		p.units = append(p.units, b.entries...)
		p.unitFiles = append(p.unitFiles, b.files...)
		uc.batches[i] = nil
	}
	uc.batches = nil
	return nil
}

// stop ends the workers of a counting that did not finish.
func (uc *unitCounting) stop() {
	if uc.jobs == nil {
		return
	}
	uc.cancel()
	close(uc.jobs)
	uc.jobs = nil
	uc.wg.Wait()
}
