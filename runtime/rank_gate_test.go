package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// gateRun is one acquire in flight in a test.
type gateRun struct {
	caller  string
	release func(time.Duration)
	err     error
	done    chan struct{}
}

func startAcquire(ctx context.Context, g *rankGate, caller string, admitted chan<- *gateRun) *gateRun {
	r := &gateRun{caller: caller, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.release, r.err = g.acquire(ctx, caller)
		if r.err == nil && admitted != nil {
			admitted <- r
		}
	}()
	return r
}

// waitWaiting waits until caller has n acquires waiting in g.
func waitWaiting(t *testing.T, g *rankGate, caller string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		c := g.callers[caller]
		got := 0
		if c != nil {
			got = len(c.waiters)
		}
		g.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d waiting, want %d", caller, got, n)
		}
	}
}

// TestRankGateOneSlotPerCaller: a caller runs one ranking at a time, so a
// free slot stays free for another caller however many searches the first
// sends.
func TestRankGateOneSlotPerCaller(t *testing.T) {
	g := newRankGate(2)
	ctx := context.Background()
	relA, err := g.acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	admitted := make(chan *gateRun, 5)
	for range 5 {
		startAcquire(ctx, g, "a", admitted)
	}
	waitWaiting(t, g, "a", 5)
	relB, err := g.acquire(ctx, "b") // the second slot, at once
	if err != nil {
		t.Fatal(err)
	}
	relB(0)
	relA(0)
	for range 5 {
		(<-admitted).release(0)
	}
}

// TestRankGateRoundRobin: a caller flooding searches delays another
// caller's turn by at most one of its rankings: after "a" has run one
// more, "b" goes before a's other waiting searches.
func TestRankGateRoundRobin(t *testing.T) {
	g := newRankGate(1)
	ctx := context.Background()
	relA, err := g.acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	admitted := make(chan *gateRun, 4)
	for i := range 3 {
		startAcquire(ctx, g, "a", admitted)
		waitWaiting(t, g, "a", i+1)
	}
	startAcquire(ctx, g, "b", admitted)
	waitWaiting(t, g, "b", 1)
	relA(0)
	var order []string
	for range 4 {
		r := <-admitted
		order = append(order, r.caller)
		r.release(0)
	}
	if got := fmt.Sprint(order); got != "[a b a a]" {
		t.Fatalf("turns %s, want [a b a a]", got)
	}
}

// TestRankGateHeavyLane: callers whose rankings took long share one slot
// (of three); a caller with quick rankings still finds one free.
func TestRankGateHeavyLane(t *testing.T) {
	g := newRankGate(3)
	ctx := context.Background()
	for _, c := range []string{"a", "c"} {
		rel, err := g.acquire(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		rel(heavyRanking) // its next ranking is heavy
	}
	relA, err := g.acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	runC := startAcquire(ctx, g, "c", nil)
	waitWaiting(t, g, "c", 1) // two slots free, but the heavy lane is full
	relB, err := g.acquire(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	relB(time.Millisecond)
	relA(time.Millisecond) // quick now: a is light again
	<-runC.done
	if runC.err != nil {
		t.Fatal(runC.err)
	}
	runC.release(0)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != 0 || g.heavyRunning != 0 || len(g.line) != 0 {
		t.Fatalf("gate not empty: running %d heavy %d line %d", g.running, g.heavyRunning, len(g.line))
	}
}

// TestRankGateCancelWhileWaiting: a caller that gives up leaves the line.
func TestRankGateCancelWhileWaiting(t *testing.T) {
	g := newRankGate(1)
	rel, err := g.acquire(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := startAcquire(ctx, g, "b", nil)
	waitWaiting(t, g, "b", 1)
	cancel()
	<-r.done
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err %v", r.err)
	}
	rel(0)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != 0 || len(g.line) != 0 || len(g.callers) != 0 {
		t.Fatalf("gate not empty: running %d line %d callers %d", g.running, len(g.line), len(g.callers))
	}
}

// holdGate takes every ranking slot; the returned func gives them back.
func holdGate(t *testing.T, own *Owner) func() {
	t.Helper()
	var holds []func(time.Duration)
	for i := range own.rankGate.slots {
		rel, err := own.rankGate.acquire(context.Background(), fmt.Sprint("holder", i))
		if err != nil {
			t.Fatal(err)
		}
		holds = append(holds, rel)
	}
	return func() {
		for _, rel := range holds {
			rel(0)
		}
	}
}

// TestSharedRankingCancel: one caller of a shared ranking who gives up
// does not fail the other; when every caller has gone, the ranking stops
// and never runs.
func TestSharedRankingCancel(t *testing.T) {
	own, svc, ctx := harbourOwner(t)
	args := interfaces.SearchArgs{Request: &query.QueryRequest{Question: "where does the pilot board"}}

	// Two callers share a ranking; the first gives up.
	unhold := holdGate(t, own)
	gone, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var errGone, errStay error
	var hits int
	wg.Add(2)
	go func() { defer wg.Done(); _, errGone = svc.Search(gone, args) }()
	go func() {
		defer wg.Done()
		out, err := svc.Search(ctx, args)
		errStay, hits = err, len(out.Result.Hits)
	}()
	waitFlightCallers(t, own, 2)
	cancel()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if flightCallers(own) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the caller that gave up is still counted")
		}
	}
	unhold()
	wg.Wait()
	if !errors.Is(errGone, context.Canceled) || errStay != nil || hits == 0 {
		t.Fatalf("gone: %v; stayed: %v with %d hits", errGone, errStay, hits)
	}

	// Its only caller gives up: the ranking leaves the gate unrun.
	before := own.rankings.Load()
	unhold = holdGate(t, own)
	gone, cancel = context.WithCancel(ctx)
	done := make(chan error, 1)
	other := interfaces.SearchArgs{Request: &query.QueryRequest{Question: "outer buoy"}}
	go func() { _, err := svc.Search(gone, other); done <- err }()
	waitWaiting(t, own.rankGate, workspace.OwnerPrincipalID, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	waitWaiting(t, own.rankGate, workspace.OwnerPrincipalID, 0)
	unhold()
	if n := own.rankings.Load() - before; n != 0 {
		t.Fatalf("%d rankings ran for a search nobody waits for", n)
	}
}

func flightCallers(own *Owner) int {
	own.flights.mu.Lock()
	defer own.flights.mu.Unlock()
	n := 0
	for _, f := range own.flights.flights {
		n += f.callers
	}
	return n
}

func waitFlightCallers(t *testing.T, own *Owner, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); flightCallers(own) != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers share a ranking, want %d", flightCallers(own), n)
		}
	}
}

// TestCallerPerProcess: two processes holding the owner token (a bridge, a
// CLI command: ConnectLocal clients) are two callers to the gate, each
// named by its X-Tychora-Client id, not one "owner".
func TestCallerPerProcess(t *testing.T) {
	own, _, ctx := harbourOwner(t)
	c1, _, err := ConnectLocal(ctx, own.opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c2, _, err := ConnectLocal(ctx, own.opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c1.Instance, c2.Instance = "proc-one", "proc-two"
	unhold := holdGate(t, own)
	var wg sync.WaitGroup
	for i, c := range []interfaces.Service{c1, c2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := fmt.Sprintf("pilot buoy %d", i)
			if _, err := c.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: q}}); err != nil {
				t.Error(err)
			}
		}()
	}
	waitWaiting(t, own.rankGate, workspace.OwnerPrincipalID+"/proc-one", 1)
	waitWaiting(t, own.rankGate, workspace.OwnerPrincipalID+"/proc-two", 1)
	unhold()
	wg.Wait()
}
