package workspace

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Foreground counts the requests someone is waiting for (the searches
// being ranked), so that background work gives way to them: a sync's
// extraction and apply, the build of the search's file index before a
// commit or behind the searches. Background work calls Yield between
// small steps; while a foreground request runs, Yield waits until none
// does or for YieldWait, whichever comes first. A busy owner therefore
// keeps most of its CPU for the searches and its syncs still advance,
// by at least one step per YieldWait. docs/architecture.md, "Searches
// before background work".
//
// A nil *Foreground never waits. It is safe for concurrent use.
type Foreground struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while n is 0
	wait time.Duration // the tests' YieldWait; 0: YieldWait
	// waited counts the Yields that waited.
	waited atomic.Int64
}

// YieldWait is the longest one Yield waits for the searches to end.
const YieldWait = 10 * time.Millisecond

// Enter marks a foreground request as running until the returned
// function is called (once; later calls do nothing).
func (f *Foreground) Enter() (leave func()) {
	if f == nil {
		return func() {}
	}
	f.mu.Lock()
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
	f.mu.Unlock()
	return sync.OnceFunc(func() {
		f.mu.Lock()
		f.n--
		if f.n == 0 {
			close(f.idle)
			f.idle = nil
		}
		f.mu.Unlock()
	})
}

// Busy reports how many foreground requests run.
func (f *Foreground) Busy() int {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// Waited reports how many Yields have waited for a foreground request.
func (f *Foreground) Waited() int64 {
	if f == nil {
		return 0
	}
	return f.waited.Load()
}

// Yield returns at once when no foreground request runs; otherwise when
// none does, after YieldWait, or when ctx ends (with its error).
func (f *Foreground) Yield(ctx context.Context) error {
	if f == nil {
		return ctx.Err()
	}
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	if idle == nil {
		return ctx.Err()
	}
	f.waited.Add(1)
	wait := f.wait
	if wait == 0 {
		wait = YieldWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
	return ctx.Err()
}
