package query

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// countingRanker is the Engine, counting its rankings.
type countingRanker struct {
	*Engine
	n atomic.Int64
}

func (r *countingRanker) SearchNormalized(ctx context.Context, p workspace.Principal, norm QueryRequest) (Ranked, error) {
	r.n.Add(1)
	return r.Engine.SearchNormalized(ctx, p, norm)
}

// harbourSearcher is a Searcher over an index of one small markdown file
// about a harbour pilot, with the ranker that counts its rankings.
func harbourSearcher(t *testing.T) (*searchEnv, *Searcher[[]int], *countingRanker) {
	t.Helper()
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{"harbour.md": "# Harbour\n\nThe pilot boards at the outer buoy.\n"})
	runs := NewRecorder(env.db, false, nil)
	t.Cleanup(runs.Close)
	r := &countingRanker{Engine: env.engine}
	s := NewSearcher[[]int](context.Background(), SearcherOptions{Ranker: r, DB: env.db, Runs: runs, Slots: 3, CacheSize: 16})
	return env, s, r
}

// rankedFor asks s for the ranking of question, as its Search does, and
// gives the turn back.
func rankedFor(ctx context.Context, s *Searcher[[]int], p workspace.Principal, question string) (*cacheEntry[[]int], error) {
	norm, err := Normalize(QueryRequest{Question: question})
	if err != nil {
		return nil, err
	}
	key := strconv.FormatInt(s.generation.Load(), 10) + "|" + workspace.ScopeKey(p) + "|" + RequestHash(norm)
	t, err := s.ranked(ctx, p, norm, key)
	t.endTurn()
	return t.entry, err
}

// holdGate takes every slot of g; the returned func gives them back.
func holdGate(t *testing.T, g *rankGate) func() {
	t.Helper()
	var holds []func()
	for i := range g.slots {
		rel, err := g.acquire(context.Background(), fmt.Sprint("holder", i), false)
		if err != nil {
			t.Fatal(err)
		}
		holds = append(holds, rel)
	}
	return func() {
		for _, rel := range holds {
			rel()
		}
	}
}

// TestIdenticalSearchesRankOnce: the same question asked by several
// callers at once is ranked once, and every caller gets that ranking.
func TestIdenticalSearchesRankOnce(t *testing.T) {
	_, s, r := harbourSearcher(t)
	p := workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}
	// Hold every slot, so that the callers all miss the cache and wait
	// before any ranking runs.
	unhold := holdGate(t, s.gate)
	const callers = 8
	var wg sync.WaitGroup
	entries := make([]*cacheEntry[[]int], callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Callers of their own: one caller's searches take turns.
			ctx := workspace.WithClient(context.Background(), fmt.Sprint("caller", i))
			entries[i], errs[i] = rankedFor(ctx, s, p, "where does the pilot board")
		}()
	}
	for i := range callers {
		waitWaiting(t, s.gate, callerKey(workspace.WithClient(context.Background(), fmt.Sprint("caller", i)), p), 1)
	}
	unhold()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
		if entries[i] != entries[0] || len(entries[i].ranked.Hits) == 0 {
			t.Fatalf("caller %d got another ranking, or none: %+v", i, entries[i])
		}
	}
	if n := r.n.Load(); n != 1 {
		t.Fatalf("%d rankings for %d identical questions asked at once, want 1", n, callers)
	}
	if hits, misses := s.CacheStats(); hits != 0 || misses != callers {
		t.Fatalf("cache counted %d hits and %d misses, want 0 and %d", hits, misses, callers)
	}
}

// TestSearchGivenUp: a search whose caller gives up while it waits for
// its turn is never ranked.
func TestSearchGivenUp(t *testing.T) {
	_, s, r := harbourSearcher(t)
	p := workspace.Principal{ID: "token:reader", Grant: workspace.GrantRead}
	unhold := holdGate(t, s.gate)
	gone, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := rankedFor(gone, s, p, "outer buoy"); done <- err }()
	waitWaiting(t, s.gate, p.ID, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	waitWaiting(t, s.gate, p.ID, 0)
	unhold()
	if n := r.n.Load(); n != 0 {
		t.Fatalf("%d rankings ran for a search nobody waits for", n)
	}
}

// TestSharedRankingPanic: a panic inside a ranking (here: the engine gone)
// is an INTERNAL error for the caller, with nothing of the panic in its
// message, and the searcher goes on serving.
func TestSharedRankingPanic(t *testing.T) {
	env, s, _ := harbourSearcher(t)
	s.ranker = (*Engine)(nil)
	_, err := rankedFor(context.Background(), s, env.all, "where does the pilot board")
	if workspace.ErrorCode(err) != workspace.CodeInternal || strings.Contains(workspace.ErrorMessage(err), "nil pointer") {
		t.Fatalf("a panicking ranking: %v, want a sanitized INTERNAL error", err)
	}
	s.ranker = env.engine
	e, err := rankedFor(context.Background(), s, env.all, "where does the pilot board")
	if err != nil || len(e.ranked.Hits) == 0 {
		t.Fatalf("after the panic: %v, %+v", err, e)
	}
}

// TestCallerPerProcess: the processes holding the owner token (a bridge,
// a CLI command, an MCP session: each names itself in the context) are
// callers of their own to the gate; an issued token is one caller
// whoever holds it.
func TestCallerPerProcess(t *testing.T) {
	owner := workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}
	reader := workspace.Principal{ID: "token:r", Grant: workspace.GrantRead}
	one := workspace.WithClient(context.Background(), "proc-one")
	two := workspace.WithClient(context.Background(), "proc-two")
	if a, b := callerKey(one, owner), callerKey(two, owner); a == b || a == callerKey(context.Background(), owner) {
		t.Fatalf("owner-token processes share the caller %q, %q", a, b)
	}
	if a, b := callerKey(one, reader), callerKey(two, reader); a != b || a != reader.ID {
		t.Fatalf("an issued token is the callers %q and %q, want %q", a, b, reader.ID)
	}
}

// busyRanker is the Engine, noting how many foreground requests run
// while it ranks.
type busyRanker struct {
	*Engine
	fg   *workspace.Foreground
	busy atomic.Int64
}

func (r *busyRanker) SearchNormalized(ctx context.Context, p workspace.Principal, norm QueryRequest) (Ranked, error) {
	r.busy.Store(int64(r.fg.Busy()))
	return r.Engine.SearchNormalized(ctx, p, norm)
}

// TestSearchIsForeground: a search counts as foreground work from its
// cache miss to the end of its turn, and not once it is over, whether it
// was ranked or gave up waiting for its turn.
func TestSearchIsForeground(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{"harbour.md": "# Harbour\n\nThe pilot boards at the outer buoy.\n"})
	runs := NewRecorder(env.db, false, nil)
	t.Cleanup(runs.Close)
	fg := &workspace.Foreground{}
	r := &busyRanker{Engine: env.engine, fg: fg}
	s := NewSearcher[[]int](context.Background(), SearcherOptions{Ranker: r, DB: env.db, Runs: runs, Slots: 2, CacheSize: 16, Foreground: fg})
	p := workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}
	if _, err := rankedFor(context.Background(), s, p, "pilot buoy"); err != nil {
		t.Fatal(err)
	}
	if n := r.busy.Load(); n != 1 {
		t.Errorf("%d foreground requests while ranking, want 1", n)
	}
	if n := fg.Busy(); n != 0 {
		t.Errorf("%d foreground requests after the search", n)
	}
	// A caller who gives up while waiting for its turn leaves nothing.
	unhold := holdGate(t, s.gate)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := rankedFor(ctx, s, p, "outer harbour")
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a search that gave up: %v", err)
	}
	unhold()
	if n := fg.Busy(); n != 0 {
		t.Errorf("%d foreground requests after a search gave up", n)
	}
}
