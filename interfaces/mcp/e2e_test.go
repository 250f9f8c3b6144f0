package mcpapi_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/workspace"
)

// TestEndToEnd adds a folder over MCP, waits for its job, searches it and
// reads a hit's evidence, over Streamable HTTP with the owner token. Steps
// whose Service is not in this build yet (UNAVAILABLE) end the test early.
func TestEndToEnd(t *testing.T) {
	own := startOwner(t)
	root := filepath.Dir(own.Layout().Dir)
	docs := filepath.Join(root, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "# Tokens\n\nOwner tokens are stored hashed & compared in constant time <always>.\n"
	if err := os.WriteFile(filepath.Join(docs, "tokens.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := httpSession(t, own, own.Token(), "", "")
	available := func(step string, res *mcp.CallToolResult) bool {
		t.Helper()
		if !res.IsError {
			return true
		}
		if code := envelope(t, res); code != workspace.CodeUnavailable {
			t.Fatalf("%s: %s", step, dump(res))
		}
		t.Logf("%s is not in this build yet: stopping here", step)
		return false
	}

	res := call(t, cs, "add_sources", map[string]any{"action": "add", "source": map[string]any{"path": docs}})
	if !available("add_sources", res) {
		return
	}
	checkOutcome(t, "add_sources", res)
	var added struct {
		Job struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"job"`
	}
	_ = json.Unmarshal(mustJSON(t, res.StructuredContent), &added)
	deadline := time.Now().Add(15 * time.Second)
	for added.Job.State != "succeeded" {
		if added.Job.State == "failed" || added.Job.State == "cancelled" || time.Now().After(deadline) {
			t.Fatalf("job: %+v", added.Job)
		}
		time.Sleep(20 * time.Millisecond)
		res = call(t, cs, "manage_job", map[string]any{"action": "get", "job_id": added.Job.ID})
		if ok, _ := checkOutcome(t, "manage_job", res); !ok {
			t.Fatalf("manage_job get: %s", dump(res))
		}
		_ = json.Unmarshal(mustJSON(t, res.StructuredContent), &added)
	}

	res = call(t, cs, "search", map[string]any{"request": map[string]any{"question": "tokens hashed"}})
	if !available("search", res) {
		return
	}
	checkOutcome(t, "search", res)
	var found struct {
		Hits []struct {
			EvidenceID string `json:"evidence_id"`
		} `json:"hits"`
	}
	_ = json.Unmarshal(mustJSON(t, res.StructuredContent), &found)
	if len(found.Hits) == 0 {
		t.Fatalf("no hits: %s", dump(res))
	}
	c, err := readResource(t, cs, "tychora://evidence/"+found.Hits[0].EvidenceID)
	if err != nil {
		t.Logf("evidence: %v", err)
		return
	}
	if c.MIMEType != "application/json" || !json.Valid([]byte(c.Text)) {
		t.Fatalf("evidence resource: %s %s", c.MIMEType, c.Text)
	}
}
