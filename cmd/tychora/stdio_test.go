package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// stdioClient starts `tychora serve --stdio` under the go-sdk client.
func stdioClient(t *testing.T, ctx context.Context, ws string, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--workspace", ws, "serve", "--stdio"}, args...)...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, cmd
}

func callStatus(t *testing.T, ctx context.Context, cs *mcp.ClientSession) map[string]any {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"request": map[string]any{"subject": "settings"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		t.Fatalf("discover settings failed: %s", b)
	}
	var m map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &m)
	return m
}

// TestTwoStdioProcesses: the first `serve --stdio` on a workspace is the
// owner, the second bridges to it without opening storage; when the owner's
// client goes away, the bridge takes over and keeps answering.
func TestTwoStdioProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws := filepath.Join(t.TempDir(), "ws")
	first, firstCmd := stdioClient(t, ctx, ws)
	callStatus(t, ctx, first)
	ep, err := tyruntime.ReadEndpoint(workspace.NewLayout(ws))
	if err != nil || ep.PID != firstCmd.Process.Pid {
		t.Fatalf("the first stdio process is not the owner: %+v %v", ep, err)
	}
	second, secondCmd := stdioClient(t, ctx, ws, "--grant", "read")
	defer second.Close()
	callStatus(t, ctx, second)
	if ep2, _ := tyruntime.ReadEndpoint(workspace.NewLayout(ws)); ep2.PID != firstCmd.Process.Pid {
		t.Fatalf("the bridge replaced the owner: %+v", ep2)
	}
	// The bridge carries its own, narrower grant: a reader sees no add_sources.
	tools, err := second.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "add_sources" {
			t.Fatal("a read-only stdio client lists add_sources")
		}
	}
	// The owner's client exits: its process shuts down in order.
	if err := first.Close(); err != nil {
		t.Fatalf("owner exit: %v", err)
	}
	// The bridge still answers, now as the owner itself.
	callStatus(t, ctx, second)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ep3, err := tyruntime.ReadEndpoint(workspace.NewLayout(ws))
		if err == nil && ep3.PID == secondCmd.Process.Pid && ep3.State == tyruntime.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bridge did not become the owner: %+v %v", ep3, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A sibling CLI delegates to the new owner.
	if r := tychora(t, ws, "status", "--json"); r.code != 0 {
		t.Fatalf("status after takeover: %+v", r)
	}
}

// TestStdioSaysItCreatedTheWorkspace: `serve --stdio` on a missing
// workspace creates it and says so on stderr (DESIGN §2), as `serve` does.
func TestStdioSaysItCreatedTheWorkspace(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "fresh", ".tychora")
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--workspace", ws, "serve", "--stdio")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	callStatus(t, ctx, cs)
	cs.Close()
	if !strings.Contains(stderr.String(), "created workspace") {
		t.Fatalf("stderr says nothing of the new workspace:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(ws, "tychora.json")); err != nil {
		t.Fatal(err)
	}
}
