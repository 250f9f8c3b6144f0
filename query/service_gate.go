package query

import (
	"context"
	"slices"
	"sync"

	"github.com/tychora/tychora/workspace"
)

// rankGate admits searches fairly between callers (docs/search.md,
// "Admission"); a search holds its turn while it is ranked and fitted. A
// ranking holds a read connection for its whole length, and database/sql
// hands a freed connection to a random waiter: the gate admits at most
// slots searches at a time and leaves a connection free for the short
// reads every answer and every other tool makes. Within that:
//
//   - a caller runs at most one search at a time; its others wait in its
//     own queue, in arrival order;
//   - free slots go round-robin between the callers that wait: a caller
//     just admitted goes to the back of the line, so a caller that floods
//     searches delays another's turn by at most one search per slot;
//   - heavy searches (Heavy: a long question, many glob patterns)
//     together hold at most heavySlots, whoever sends them: the other
//     slots stay open to searches whose cost the limits keep small. The
//     class comes from the request, not from how long searches took, so
//     that a slow moment of the machine never moves a caller's quick
//     searches behind heavy ones.
type rankGate struct {
	mu           sync.Mutex
	slots        int
	heavySlots   int
	running      int
	heavyRunning int
	callers      map[string]*gateCaller
	line         []*gateCaller // callers with waiters, in turn order
}

type gateCaller struct {
	key     string
	running bool
	waiters []*gateWaiter
}

type gateWaiter struct {
	ready    chan struct{}
	admitted bool
	heavy    bool
}

func newRankGate(slots int) *rankGate {
	return &rankGate{slots: slots, heavySlots: max(1, slots-2), callers: map[string]*gateCaller{}}
}

// acquire waits for the caller's turn and a slot (a heavy one when heavy),
// or for ctx to end. The caller must call release when done.
func (g *rankGate) acquire(ctx context.Context, caller string, heavy bool) (release func(), err error) {
	g.mu.Lock()
	c := g.callers[caller]
	if c == nil {
		c = &gateCaller{key: caller}
		g.callers[caller] = c
	}
	w := &gateWaiter{ready: make(chan struct{}), heavy: heavy}
	c.waiters = append(c.waiters, w)
	if len(c.waiters) == 1 {
		g.line = append(g.line, c)
	}
	g.dispatch()
	g.mu.Unlock()

	release = func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.running--
		if w.heavy {
			g.heavyRunning--
		}
		c.running = false
		g.forget(c)
		g.dispatch()
	}
	select {
	case <-w.ready:
		return release, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if w.admitted {
		// Admitted as ctx ended: hand the slot back.
		g.running--
		if w.heavy {
			g.heavyRunning--
		}
		c.running = false
	} else {
		c.waiters = slices.DeleteFunc(c.waiters, func(x *gateWaiter) bool { return x == w })
		if len(c.waiters) == 0 {
			g.line = slices.DeleteFunc(g.line, func(x *gateCaller) bool { return x == c })
		}
	}
	g.forget(c)
	g.dispatch()
	g.mu.Unlock()
	return nil, ctx.Err()
}

// dispatch admits waiters while a slot is free, in line order: the next
// search of the first caller in line that runs nothing, if it is light or
// finds a heavy slot.
func (g *rankGate) dispatch() {
	for g.running < g.slots {
		i := slices.IndexFunc(g.line, func(c *gateCaller) bool {
			return !c.running && (!c.waiters[0].heavy || g.heavyRunning < g.heavySlots)
		})
		if i < 0 {
			return
		}
		c := g.line[i]
		w := c.waiters[0]
		c.waiters = c.waiters[1:]
		g.line = slices.Delete(g.line, i, i+1)
		if len(c.waiters) > 0 {
			g.line = append(g.line, c)
		}
		w.admitted = true
		c.running = true
		g.running++
		if w.heavy {
			g.heavyRunning++
		}
		close(w.ready)
	}
}

// forget drops a caller that neither runs nor waits.
func (g *rankGate) forget(c *gateCaller) {
	if !c.running && len(c.waiters) == 0 {
		delete(g.callers, c.key)
	}
}

// callerKey is the unit of fairness: an issued token (whoever holds it),
// and for the owner token each process that holds it — a stdio bridge or
// a CLI command names itself in X-Tychora-Client, an MCP client by its
// session — since every one of them holds the same owner token.
func callerKey(ctx context.Context, p workspace.Principal) string {
	if p.ID == workspace.OwnerPrincipalID {
		if id := workspace.ClientFrom(ctx); id != "" {
			return p.ID + "/" + id
		}
	}
	return p.ID
}
