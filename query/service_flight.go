package query

import (
	"context"
	"sync"
)

// flightResult is what a shared ranking gives each of its callers: the
// cache entry, and whether this ranking put it there (its stale flags are
// then as fresh as the ranking).
type flightResult[C any] struct {
	entry    *cacheEntry[C]
	inserted bool
}

// rankFlights shares one ranking between the callers that ask the same
// question at once (an agent's parallel calls, clients of one team). The
// ranking runs on a context of its own, derived from the owner's life: a
// caller who gives up leaves it without failing the others, and when the
// last caller has left (or the owner stops) it is cancelled, so that no
// ranking goes on for nobody.
type rankFlights[C any] struct {
	mu      sync.Mutex
	flights map[string]*rankFlight[C]
}

type rankFlight[C any] struct {
	done    chan struct{} // closed when res and err are set
	res     flightResult[C]
	err     error
	callers int
	cancel  context.CancelFunc
}

// do returns the result of fn for key, run once for every caller that
// asks while it runs. fn runs on its own goroutine with a context of life
// that ends when every caller's ctx has.
func (f *rankFlights[C]) do(ctx, life context.Context, key string, fn func(context.Context) (flightResult[C], error)) (flightResult[C], error) {
	f.mu.Lock()
	if f.flights == nil {
		f.flights = map[string]*rankFlight[C]{}
	}
	fl := f.flights[key]
	if fl == nil {
		fctx, cancel := context.WithCancel(life)
		fl = &rankFlight[C]{done: make(chan struct{}), cancel: cancel}
		f.flights[key] = fl
		go func() {
			defer cancel()
			res, err := fn(fctx)
			f.mu.Lock()
			if f.flights[key] == fl {
				delete(f.flights, key)
			}
			f.mu.Unlock()
			fl.res, fl.err = res, err
			close(fl.done)
		}()
	}
	fl.callers++
	f.mu.Unlock()
	select {
	case <-fl.done:
		return fl.res, fl.err
	case <-ctx.Done():
	}
	f.mu.Lock()
	fl.callers--
	if fl.callers == 0 {
		// Nobody waits for it any more: later callers start afresh.
		if f.flights[key] == fl {
			delete(f.flights, key)
		}
		fl.cancel()
	}
	f.mu.Unlock()
	return flightResult[C]{}, ctx.Err()
}
