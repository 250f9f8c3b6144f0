package runtime_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/internal/testkit"
	tyruntime "github.com/tychora/tychora/runtime"
)

// TestCloseLeavesNoGoroutine: an owner that served /v1 and an MCP session
// over loopback, ran a sync job (with its source watched) and recorded a
// search leaves no goroutine running once Close returns and its clients
// have let go of their connections.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.md"), []byte("# Notes\n\nThe harbour opens at dawn.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".tychora")
	if _, err := tyruntime.Init(dir, tyruntime.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	before := testkit.RunningGoroutines()
	own, err := tyruntime.Start(context.Background(), tyruntime.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = own.Close(context.Background())
		}
	})
	ctx := tyruntime.OwnerContext(t.Context())

	// A job run to its end.
	added, err := own.Service().AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: root}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !added.Job.Final(); {
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s", added.Job.ID, added.Job.State)
		}
		time.Sleep(20 * time.Millisecond)
		if added, err = own.Service().GetJob(ctx, added.Job.ID); err != nil {
			t.Fatal(err)
		}
	}

	// /v1 over loopback.
	if status, _, body := testkit.Do(t, testkit.Request{Method: "GET", URL: own.URL() + "/v1/status", Token: own.Token()}); status != http.StatusOK {
		t.Fatalf("status: %d %s", status, body)
	}

	// An MCP session over loopback, with a search the recorder keeps.
	transport := &http.Transport{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "leak", Version: "v0"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: own.URL() + "/mcp/", HTTPClient: &http.Client{Transport: testkit.Bearer{Token: own.Token(), Next: transport}}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: interfaces.ToolSearch, Arguments: map[string]any{"request": map[string]any{"question": "harbour"}}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}

	if err := own.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	closed = true
	transport.CloseIdleConnections()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	testkit.NoGoroutinesLeft(t, before, 5*time.Second)
}
