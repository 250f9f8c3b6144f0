package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// TestIdenticalSearchesRankOnce: the same question asked by several
// callers at once is ranked once, and every caller gets a whole answer
// with its own run id.
func TestIdenticalSearchesRankOnce(t *testing.T) {
	own, svc, ctx := harbourOwner(t)

	// Hold every ranking slot, so that the callers all miss the cache
	// and wait before any ranking runs.
	var holds []func()
	for i := range own.rankGate.slots {
		release, err := own.rankGate.acquire(ctx, fmt.Sprint("holder", i), false)
		if err != nil {
			t.Fatal(err)
		}
		holds = append(holds, release)
	}
	before := own.rankings.Load()
	const callers = 8
	var wg sync.WaitGroup
	runIDs := make([]string, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Callers of their own: one caller's searches take turns.
			cctx := workspace.WithClient(ctx, fmt.Sprint("caller", i))
			out, err := svc.Search(cctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "where does the pilot board"}})
			if err == nil && len(out.Result.Hits) == 0 {
				t.Errorf("caller %d: no hits", i)
			}
			runIDs[i], errs[i] = out.Result.RunID, err
		}()
	}
	for i := range callers {
		waitWaiting(t, own.rankGate, workspace.OwnerPrincipalID+"/"+fmt.Sprint("caller", i), 1)
	}
	for _, release := range holds {
		release()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
		if seen[runIDs[i]] {
			t.Fatalf("two answers share the run id %s", runIDs[i])
		}
		seen[runIDs[i]] = true
	}
	if n := own.rankings.Load() - before; n != 1 {
		t.Fatalf("%d rankings for %d identical questions asked at once, want 1", n, callers)
	}
}

// harbourOwner starts an owner holding one small markdown file about a
// harbour pilot, and returns it, its Service and an owner context.
func harbourOwner(t *testing.T) (*Owner, interfaces.Service, context.Context) {
	t.Helper()
	dir := newWorkspace(t)
	own, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close(context.Background()) })
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	docs := filepath.Join(filepath.Dir(dir), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "harbour.md"), []byte("# Harbour\n\nThe pilot boards at the outer buoy.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: docs}})
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, own, res.Job.ID); j.State != "succeeded" {
		t.Fatalf("ingest: %+v", j)
	}
	return own, svc, ctx
}

// TestSharedRankingPanic: a panic inside a ranking (here: the engine gone)
// is an INTERNAL error for the caller, with nothing of the panic in its
// message, and the owner goes on serving.
func TestSharedRankingPanic(t *testing.T) {
	own, svc, ctx := harbourOwner(t)
	req := interfaces.SearchArgs{Request: &query.QueryRequest{Question: "where does the pilot board"}}
	engine := own.engine
	own.engine = nil
	_, err := svc.Search(ctx, req)
	own.engine = engine
	if workspace.ErrorCode(err) != workspace.CodeInternal || strings.Contains(workspace.ErrorMessage(err), "nil pointer") {
		t.Fatalf("a panicking ranking: %v, want a sanitized INTERNAL error", err)
	}
	out, err := svc.Search(ctx, req)
	if err != nil || len(out.Result.Hits) == 0 {
		t.Fatalf("after the panic: %v, %d hits", err, len(out.Result.Hits))
	}
}

// TestRunKeepsHashesUnderRender: a rendered answer's citations carry no
// hash, and its run still records each hit's evidence hash.
func TestRunKeepsHashesUnderRender(t *testing.T) {
	own, svc, ctx := harbourOwner(t)
	out, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "pilot buoy"}, Render: "agent@1"})
	if err != nil || len(out.Result.Hits) == 0 {
		t.Fatalf("search: %v", err)
	}
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run, err := own.runs.GetRun(ctx, p, out.Result.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range out.Result.Hits {
		ev, err := svc.Evidence(ctx, h.EvidenceID)
		if err != nil {
			t.Fatal(err)
		}
		if h.Hash != "" || i >= len(run.Hits) || run.Hits[i].Hash != ev.Evidence.Hash {
			t.Errorf("hit %d: citation hash %q, run %+v, evidence %q", i, h.Hash, run.Hits, ev.Evidence.Hash)
		}
	}
}
