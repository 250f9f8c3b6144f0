package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// TestIdenticalSearchesAtOnce: the same question asked by several
// callers at once (ranked once: query's TestIdenticalSearchesRankOnce)
// gives every caller a whole answer with its own run id.
func TestIdenticalSearchesAtOnce(t *testing.T) {
	_, svc, ctx := harbourOwner(t)
	const callers = 8
	var wg sync.WaitGroup
	runIDs := make([]string, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx := workspace.WithClient(ctx, fmt.Sprint("caller", i))
			out, err := svc.Search(cctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "where does the pilot board"}})
			if err == nil && len(out.Result.Hits) == 0 {
				t.Errorf("caller %d: no hits", i)
			}
			runIDs[i], errs[i] = out.Result.RunID, err
		}()
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
