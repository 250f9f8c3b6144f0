package runtime

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
)

// TestIdenticalSearchesRankOnce: the same question asked by several
// callers at once is ranked once, and every caller gets a whole answer
// with its own run id.
func TestIdenticalSearchesRankOnce(t *testing.T) {
	dir := newWorkspace(t)
	own, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(context.Background())
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

	// Hold every ranking slot, so that the callers all miss the cache
	// and wait before any ranking runs.
	for range cap(own.rankGate) {
		own.rankGate <- struct{}{}
	}
	_, miss0 := own.cache.stats()
	before := own.rankings.Load()
	const callers = 8
	var wg sync.WaitGroup
	runIDs := make([]string, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "where does the pilot board"}})
			if err == nil && len(out.Result.Hits) == 0 {
				t.Errorf("caller %d: no hits", i)
			}
			runIDs[i], errs[i] = out.Result.RunID, err
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, miss := own.cache.stats(); miss-miss0 >= callers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the callers did not all reach the cache")
		}
	}
	for range cap(own.rankGate) {
		<-own.rankGate
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
