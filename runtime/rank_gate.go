package runtime

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/tychora/tychora/workspace"
)

// rankGate admits rankings fairly between callers (docs/search.md,
// "Admission"). A ranking holds a read connection for its whole length,
// and database/sql hands a freed connection to a random waiter: the gate
// admits at most slots rankings at a time and leaves a connection free
// for the short reads every answer and every other tool makes. Within
// that:
//
//   - a caller runs at most one ranking at a time; its others wait in its
//     own queue, in arrival order;
//   - free slots go round-robin between the callers that wait: a caller
//     just admitted goes to the back of the line, so a caller that floods
//     searches delays another's turn by at most one ranking per slot;
//   - a caller whose last ranking took heavyRanking or more is heavy until
//     a ranking of its own is quick again, and heavy callers together hold
//     at most heavySlots: the other slots stay open to callers whose
//     rankings are quick.
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
	heavy   bool
	lastEnd time.Time
	waiters []*gateWaiter
}

type gateWaiter struct {
	ready    chan struct{}
	admitted bool
	heavy    bool // admitted as a heavy ranking
}

// heavyRanking is how long a caller's ranking must take for its next one
// to count as heavy.
const heavyRanking = 200 * time.Millisecond

// heavyMemory is how long an idle caller stays heavy.
const heavyMemory = 10 * time.Second

func newRankGate(slots int) *rankGate {
	return &rankGate{slots: slots, heavySlots: max(1, slots-2), callers: map[string]*gateCaller{}}
}

// acquire waits for the caller's turn and a slot, or for ctx to end. The
// caller must call release with how long its ranking took.
func (g *rankGate) acquire(ctx context.Context, caller string) (release func(took time.Duration), err error) {
	g.mu.Lock()
	c := g.callers[caller]
	if c == nil {
		c = &gateCaller{key: caller}
		g.callers[caller] = c
	}
	w := &gateWaiter{ready: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	if len(c.waiters) == 1 {
		g.line = append(g.line, c)
	}
	g.dispatch()
	g.mu.Unlock()

	release = func(took time.Duration) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.running--
		if w.heavy {
			g.heavyRunning--
		}
		c.running = false
		c.heavy = took >= heavyRanking
		c.lastEnd = time.Now()
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

// dispatch admits waiters while a slot is free, in line order: the first
// caller in line that runs nothing and, if heavy, finds a heavy slot.
func (g *rankGate) dispatch() {
	for g.running < g.slots {
		i := slices.IndexFunc(g.line, func(c *gateCaller) bool {
			return !c.running && (!g.isHeavy(c) || g.heavyRunning < g.heavySlots)
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
		w.admitted, w.heavy = true, g.isHeavy(c)
		c.running = true
		g.running++
		if w.heavy {
			g.heavyRunning++
		}
		close(w.ready)
	}
}

func (g *rankGate) isHeavy(c *gateCaller) bool {
	return c.heavy && (c.running || len(c.waiters) > 0 || time.Since(c.lastEnd) < heavyMemory)
}

// forget drops a caller that neither runs nor waits nor is heavy.
func (g *rankGate) forget(c *gateCaller) {
	if !c.running && len(c.waiters) == 0 && !c.heavy {
		delete(g.callers, c.key)
	}
	if len(g.callers) > maxGateCallers {
		for k, x := range g.callers {
			if !x.running && len(x.waiters) == 0 && time.Since(x.lastEnd) >= heavyMemory {
				delete(g.callers, k)
			}
		}
	}
}

// maxGateCallers is how many idle heavy callers the gate keeps before it
// looks for ones to drop.
const maxGateCallers = 1024

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
