package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/interfaces/servicetest"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

func TestServiceLocal(t *testing.T) {
	own := startOwner(t, newWorkspace(t, "default", "a", "b"))
	servicetest.Run(t, servicetest.Harness{
		As: func(t *testing.T, g workspace.Grant, cs []string) (interfaces.Service, context.Context) {
			return own.Service(), workspace.WithPrincipal(context.Background(), workspace.Principal{ID: "suite", Grant: g, Collections: cs})
		},
		Root: own.Settings().IngestRoots[0],
	})
}

func TestServiceHTTPClient(t *testing.T) {
	own := startOwner(t, newWorkspace(t, "default", "a", "b"))
	client := func(t *testing.T, secret string) (interfaces.Service, context.Context) {
		c, err := httpapi.NewClient(own.URL(), secret, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c, context.Background()
	}
	servicetest.Run(t, servicetest.Harness{
		As: func(t *testing.T, g workspace.Grant, cs []string) (interfaces.Service, context.Context) {
			tok, err := own.Service().CreateToken(OwnerContext(context.Background()), interfaces.CreateTokenRequest{Grant: g, Collections: cs})
			if err != nil {
				t.Fatal(err)
			}
			return client(t, tok.Token)
		},
		WithSecret: client,
		Root:       own.Settings().IngestRoots[0],
	})
}

// TestReplayWithFullHistory: with query_history "full" a run keeps its
// request, and replay re-runs it against today's index.
func TestReplayWithFullHistory(t *testing.T) {
	dir := newWorkspace(t)
	l := workspace.NewLayout(dir)
	s, err := workspace.LoadSettings(l)
	if err != nil {
		t.Fatal(err)
	}
	s.QueryHistory = "full"
	if err := workspace.SaveSettings(l, s); err != nil {
		t.Fatal(err)
	}
	own := startOwner(t, dir)
	root := own.Settings().IngestRoots[0]
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("# Alpha\n\nreplay me please\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	add, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: filepath.Join(root, "a.md")}})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := own.queue.Wait(ctx, workspace.Principal{Grant: workspace.GrantManage}, add.Job.ID, nil); err != nil || j.State != "succeeded" {
		t.Fatalf("add: %+v %v", j, err)
	}
	first, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "replay"}})
	if err != nil || len(first.Result.Hits) != 1 {
		t.Fatalf("search: %+v %v", first.Result, err)
	}
	again, err := svc.Search(ctx, interfaces.SearchArgs{ReplayRunID: first.Result.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if again.Result.RunID == first.Result.RunID || len(again.Result.Hits) != 1 || again.Result.Hits[0].EvidenceID != first.Result.Hits[0].EvidenceID {
		t.Fatalf("replay: %+v", again.Result)
	}
	// Another reader cannot replay (or see) the owner's run.
	reader := workspace.WithPrincipal(context.Background(), workspace.Principal{ID: "token:other", Grant: workspace.GrantRead})
	if _, err := svc.Search(reader, interfaces.SearchArgs{ReplayRunID: first.Result.RunID}); workspace.ErrorCode(err) != workspace.CodeNotFound {
		t.Fatalf("foreign replay: %v", err)
	}
}

// TestWarmAnswerReused: the same search asked again is answered from the
// cached ranking with the first answer's bytes but for its run id; a
// different budget, or a hit's file changed on disk (stale), is fitted
// again.
func TestWarmAnswerReused(t *testing.T) {
	dir := newWorkspace(t)
	own := startOwner(t, dir)
	root := own.Settings().IngestRoots[0]
	file := filepath.Join(root, "pilot.md")
	if err := os.WriteFile(file, []byte("# Pilot\n\nThe harbour pilot boards at the outer buoy.\n\n## Tides\n\nThe pilot waits for the tide.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	add, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: root}})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := own.queue.Wait(ctx, workspace.Principal{Grant: workspace.GrantManage}, add.Job.ID, nil); err != nil || j.State != "succeeded" {
		t.Fatalf("add: %+v %v", j, err)
	}
	ask := func(budget int) interfaces.SearchOutput {
		t.Helper()
		out, err := svc.Search(ctx, interfaces.SearchArgs{Render: "agent@1", Request: &query.QueryRequest{Question: "pilot tide", Budget: &query.Budget{MaxTokens: budget}}})
		if err != nil || len(out.Result.Hits) == 0 || out.Rendered == nil {
			t.Fatalf("search: %+v %v", out.Result, err)
		}
		return out
	}
	// withoutRunID is the structured answer with its run id taken out.
	withoutRunID := func(out interfaces.SearchOutput) string {
		return strings.Replace(string(out.Structured), out.Result.RunID, "", 1)
	}
	first := ask(1000)
	second := ask(1000)
	if second.Result.RunID == first.Result.RunID || !strings.Contains(string(second.Structured), second.Result.RunID) {
		t.Fatalf("run ids %q and %q", first.Result.RunID, second.Result.RunID)
	}
	if withoutRunID(first) != withoutRunID(second) || *first.Rendered != *second.Rendered {
		t.Fatal("the answer asked again differs but for its run id")
	}
	if hits, _ := own.searcher.CacheStats(); hits == 0 {
		t.Fatal("the second search did not use the cached ranking")
	}
	if other := ask(999); other.Result.Budget.MaxTokens != 999 {
		t.Fatalf("another budget answered with %d", other.Result.Budget.MaxTokens)
	}
	// The file changes on disk: the cached ranking's hit is stale now, and
	// the answer says so.
	if err := os.WriteFile(file, []byte("# Pilot\n\nThe pilot has gone ashore.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	third := ask(1000)
	if !third.Result.Hits[0].Stale || withoutRunID(third) == withoutRunID(first) {
		t.Fatalf("after the change: stale %v, same answer %v", third.Result.Hits[0].Stale, withoutRunID(third) == withoutRunID(first))
	}
	var decoded query.QueryResult
	if err := json.Unmarshal(third.Structured, &decoded); err != nil || !decoded.Hits[0].Stale || decoded.RunID != third.Result.RunID {
		t.Fatalf("the structured answer after the change: %v, %+v", err, decoded.Hits)
	}
}
