package mcpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/workspace"
)

// heldSearch is a tools/call of search with id, which the held service
// keeps running until it is released.
func heldSearch(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}}}}`
}

// TestHTTPRequestReusesIDInFlight: over a session on /mcp/, a request
// reusing the id of one still running gets the JSON-RPC error -32600
// (400), and the running call still gets its own answer.
func TestHTTPRequestReusesIDInFlight(t *testing.T) {
	own := startOwner(t)
	svc := &held{Service: own.Service(), started: make(chan struct{}, 1), release: make(chan struct{})}
	base, _ := serveGuardedWith(t, svc, mcpapi.HTTPOptions{})
	url := base + "/mcp/"
	hdr := rawSession(t, url, ownerSecret, "2025-11-25")
	type answer struct {
		status int
		msg    []byte
	}
	first := make(chan answer, 1)
	go func() {
		resp, msg := rawPost(t, url, ownerSecret, hdr, heldSearch("5000"))
		first <- answer{resp.StatusCode, msg}
	}()
	select {
	case <-svc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the search never started")
	}
	resp, body := rawPost(t, url, ownerSecret, hdr, ping("5000"))
	var r wireResponse
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &r) != nil || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("a ping reusing the id in flight: %d %s, want 400 and the JSON-RPC error -32600", resp.StatusCode, body)
	}
	close(svc.release)
	a := <-first
	if err := json.Unmarshal(a.msg, &r); a.status != http.StatusOK || err != nil || string(r.ID) != "5000" || r.Result == nil {
		t.Fatalf("the held search: %d %s", a.status, a.msg)
	}
}

// TestHTTPCallBeforeInitialize: on /mcp/, a request other than initialize
// that names no session (and an older protocol version, or none) is
// refused with 400 and the error envelope, and logged below ERROR.
func TestHTTPCallBeforeInitialize(t *testing.T) {
	own := startOwner(t)
	logs := &logRecords{}
	base, _ := serveGuardedWith(t, own.Service(), mcpapi.HTTPOptions{Options: mcpapi.Options{Logger: slog.New(logs)}})
	url := base + "/mcp/"
	for _, version := range []string{"", "2025-11-25", "2025-03-26"} {
		hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": version}
		for _, body := range []string{heldSearch("7"), ping("8"), `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`} {
			status, h, b := rawRequest(t, http.MethodPost, url, ownerSecret, hdr, body)
			e := wantEnvelope(t, body, status, h, b, http.StatusBadRequest, workspace.CodeInvalidArgument)
			if e.Error.Message == "" {
				t.Fatalf("%s: no message", body)
			}
		}
	}
	if errs := logs.at(slog.LevelError); len(errs) > 0 {
		t.Fatalf("a call before initialize logged at ERROR: %q", errs)
	}
}
