package query

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// gateRun is one acquire in flight in a test.
type gateRun struct {
	caller  string
	release func()
	err     error
	done    chan struct{}
}

func startAcquire(ctx context.Context, g *rankGate, caller string, heavy bool, admitted chan<- *gateRun) *gateRun {
	r := &gateRun{caller: caller, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.release, r.err = g.acquire(ctx, caller, heavy)
		if r.err == nil && admitted != nil {
			admitted <- r
		}
	}()
	return r
}

// settledWaiting checks, once every goroutine of the test's bubble is
// blocked, that caller has n acquires waiting in g.
func settledWaiting(t *testing.T, g *rankGate, caller string, n int) {
	t.Helper()
	synctest.Wait()
	if got := waitingIn(g, caller); got != n {
		t.Fatalf("%s has %d waiting, want %d", caller, got, n)
	}
}

// waitingIn is how many acquires caller has waiting in g.
func waitingIn(g *rankGate, caller string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.callers[caller]; c != nil {
		return len(c.waiters)
	}
	return 0
}

// waitWaiting waits until caller has n acquires waiting in g, for the
// tests of a real owner (whose sockets and storage no bubble holds).
func waitWaiting(t *testing.T, g *rankGate, caller string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		got := waitingIn(g, caller)
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
func TestRankGateOneSlotPerCaller(t *testing.T) { synctest.Test(t, testRankGateOneSlotPerCaller) }

func testRankGateOneSlotPerCaller(t *testing.T) {
	g := newRankGate(2)
	ctx := context.Background()
	relA, err := g.acquire(ctx, "a", false)
	if err != nil {
		t.Fatal(err)
	}
	admitted := make(chan *gateRun, 5)
	for range 5 {
		startAcquire(ctx, g, "a", false, admitted)
	}
	settledWaiting(t, g, "a", 5)
	relB, err := g.acquire(ctx, "b", false) // the second slot, at once
	if err != nil {
		t.Fatal(err)
	}
	relB()
	relA()
	for range 5 {
		(<-admitted).release()
	}
}

// TestRankGateRoundRobin: a caller flooding searches delays another
// caller's turn by at most one of its rankings: after "a" has run one
// more, "b" goes before a's other waiting searches.
func TestRankGateRoundRobin(t *testing.T) { synctest.Test(t, testRankGateRoundRobin) }

func testRankGateRoundRobin(t *testing.T) {
	g := newRankGate(1)
	ctx := context.Background()
	relA, err := g.acquire(ctx, "a", false)
	if err != nil {
		t.Fatal(err)
	}
	admitted := make(chan *gateRun, 4)
	for i := range 3 {
		startAcquire(ctx, g, "a", false, admitted)
		settledWaiting(t, g, "a", i+1)
	}
	startAcquire(ctx, g, "b", false, admitted)
	settledWaiting(t, g, "b", 1)
	relA()
	var order []string
	for range 4 {
		r := <-admitted
		order = append(order, r.caller)
		r.release()
	}
	if got := fmt.Sprint(order); got != "[a b a a]" {
		t.Fatalf("turns %s, want [a b a a]", got)
	}
}

// TestRankGateHeavyLane: heavy searches share one slot (of three),
// whoever sends them; a light search still finds one free.
func TestRankGateHeavyLane(t *testing.T) { synctest.Test(t, testRankGateHeavyLane) }

func testRankGateHeavyLane(t *testing.T) {
	g := newRankGate(3)
	ctx := context.Background()
	relA, err := g.acquire(ctx, "a", true)
	if err != nil {
		t.Fatal(err)
	}
	runC := startAcquire(ctx, g, "c", true, nil)
	settledWaiting(t, g, "c", 1) // two slots free, but the heavy one is taken
	relB, err := g.acquire(ctx, "b", false)
	if err != nil {
		t.Fatal(err)
	}
	relA2 := startAcquire(ctx, g, "a", false, nil) // a's light search waits for a's heavy one
	settledWaiting(t, g, "a", 1)
	relB()
	relA()
	<-runC.done
	<-relA2.done
	if runC.err != nil || relA2.err != nil {
		t.Fatal(runC.err, relA2.err)
	}
	runC.release()
	relA2.release()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != 0 || g.heavyRunning != 0 || len(g.line) != 0 || len(g.callers) != 0 {
		t.Fatalf("gate not empty: running %d heavy %d line %d callers %d", g.running, g.heavyRunning, len(g.line), len(g.callers))
	}
}

// TestRankGateCancelWhileWaiting: a caller that gives up leaves the line.
func TestRankGateCancelWhileWaiting(t *testing.T) { synctest.Test(t, testRankGateCancelWhileWaiting) }

func testRankGateCancelWhileWaiting(t *testing.T) {
	g := newRankGate(1)
	rel, err := g.acquire(context.Background(), "a", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := startAcquire(ctx, g, "b", false, nil)
	settledWaiting(t, g, "b", 1)
	cancel()
	<-r.done
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err %v", r.err)
	}
	rel()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != 0 || len(g.line) != 0 || len(g.callers) != 0 {
		t.Fatalf("gate not empty: running %d line %d callers %d", g.running, len(g.line), len(g.callers))
	}
}

// TestRankFlightLeave: one caller of a shared ranking who gives up does
// not fail the other, nor cancel the ranking; when every caller has gone,
// the ranking's context ends.
func TestRankFlightLeave(t *testing.T) { synctest.Test(t, testRankFlightLeave) }

func testRankFlightLeave(t *testing.T) {
	var f rankFlights[struct{}]
	life := context.Background()
	proceed := make(chan struct{})
	cut := make(chan struct{})
	fn := func(fctx context.Context) (flightResult[struct{}], error) {
		select {
		case <-proceed:
			return flightResult[struct{}]{inserted: true}, nil
		case <-fctx.Done():
			close(cut)
			return flightResult[struct{}]{}, fctx.Err()
		}
	}
	gone, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { _, err := f.do(gone, life, "k", fn); errs <- err }()
	got := make(chan flightResult[struct{}], 1)
	go func() {
		r, err := f.do(context.Background(), life, "k", fn)
		errs <- err
		got <- r
	}()
	settledFlight(t, &f, 2)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up: %v", err)
	}
	settledFlight(t, &f, 1)
	close(proceed)
	if err := <-errs; err != nil || !(<-got).inserted {
		t.Fatalf("the caller that stayed: %v", err)
	}
	select {
	case <-cut:
		t.Fatal("the ranking was cancelled while a caller waited for it")
	default:
	}

	// Its only caller gives up: the ranking's context ends.
	cut = make(chan struct{})
	proceed = make(chan struct{})
	gone, cancel = context.WithCancel(context.Background())
	go func() { _, err := f.do(gone, life, "k2", fn); errs <- err }()
	settledFlight(t, &f, 1)
	cancel()
	<-errs
	<-cut
}

// settledFlight checks, once every goroutine of the test's bubble is
// blocked, that n callers share f's rankings.
func settledFlight[C any](t *testing.T, f *rankFlights[C], n int) {
	t.Helper()
	synctest.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	c := 0
	for _, fl := range f.flights {
		c += fl.callers
	}
	if c != n {
		t.Fatalf("%d callers share a ranking, want %d", c, n)
	}
}
