package mcpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/workspace"
)

const sessionVersion = "2025-11-25"

// probe sends tools/list on session cs with token and returns the status
// and, for a refusal, the envelope's code.
func probe(t *testing.T, base, token string, cs *mcp.ClientSession) (int, workspace.Code) {
	t.Helper()
	resp, body := rawPost(t, base+"/mcp/", token, map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": sessionVersion},
		`{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{}}`)
	if resp.StatusCode == http.StatusOK {
		return http.StatusOK, ""
	}
	var eb interfaces.ErrorBody
	if err := json.Unmarshal(body, &eb); err != nil {
		t.Fatalf("refusal %d %q is not the envelope", resp.StatusCode, body)
	}
	return resp.StatusCode, eb.Error.Code
}

// wantLive fails unless each session answers.
func wantLive(t *testing.T, base, token string, what string, css ...*mcp.ClientSession) {
	t.Helper()
	for i, cs := range css {
		if st, code := probe(t, base, token, cs); st != http.StatusOK {
			t.Fatalf("%s %d: %d %s, want it open", what, i, st, code)
		}
	}
}

// wantClosed fails unless cs is a session the server no longer knows:
// 404 NOT_FOUND, after which a client starts a new one.
func wantClosed(t *testing.T, base, token, what string, cs *mcp.ClientSession) {
	t.Helper()
	if st, code := probe(t, base, token, cs); st != http.StatusNotFound || code != workspace.CodeNotFound {
		t.Fatalf("%s: %d %s, want 404 NOT_FOUND", what, st, code)
	}
}

// TestHTTPSessionCapPerCaller: a token at its cap that opens one more
// session closes its own session idle the longest (the least recently
// used), which then answers 404; its newer sessions and another token's
// keep working.
func TestHTTPSessionCapPerCaller(t *testing.T) {
	own := startOwner(t)
	base, _ := serveGuardedWith(t, own.Service(), mcpapi.HTTPOptions{MaxSessionsPerCaller: 3})
	url := base + "/mcp/"
	r1 := httpSessionAt(t, url, readerSecret, "", sessionVersion)
	r2 := httpSessionAt(t, url, readerSecret, "", sessionVersion)
	r3 := httpSessionAt(t, url, readerSecret, "", sessionVersion)
	o1 := httpSessionAt(t, url, ownerSecret, "", sessionVersion)
	wantLive(t, base, readerSecret, "reader session", r1) // r2 is now idle the longest

	r4 := httpSessionAt(t, url, readerSecret, "", sessionVersion)
	wantClosed(t, base, readerSecret, "the reader's least recently used session", r2)
	wantLive(t, base, readerSecret, "reader session", r1, r3, r4)
	wantLive(t, base, ownerSecret, "the owner's session", o1)
	// The SDK client on the closed session is told so.
	if _, err := r2.ListTools(testCtx(t), nil); err == nil {
		t.Fatal("a closed session still answers its client")
	}

	// r1 is now idle the longest (r1, r3, r4 were used in that order).
	r5 := httpSessionAt(t, url, readerSecret, "", sessionVersion)
	wantClosed(t, base, readerSecret, "the reader's least recently used session", r1)
	wantLive(t, base, readerSecret, "reader session", r3, r4, r5)
	wantLive(t, base, ownerSecret, "the owner's session", o1)
	if len(listTools(t, r5)) == 0 {
		t.Fatal("the newest session lists no tools")
	}
}

// TestHTTPSessionCapInAll: at the cap in all, a new session closes the
// one idle the longest, whoever holds it.
func TestHTTPSessionCapInAll(t *testing.T) {
	own := startOwner(t)
	base, _ := serveGuardedWith(t, own.Service(), mcpapi.HTTPOptions{MaxSessionsPerCaller: 10, MaxSessions: 3})
	url := base + "/mcp/"
	r1 := httpSessionAt(t, url, readerSecret, "", sessionVersion)
	r2 := httpSessionAt(t, url, readerSecret, "", sessionVersion)
	o1 := httpSessionAt(t, url, ownerSecret, "", sessionVersion)
	o2 := httpSessionAt(t, url, ownerSecret, "", sessionVersion)
	wantClosed(t, base, readerSecret, "the session idle the longest", r1)
	wantLive(t, base, readerSecret, "reader session", r2)
	wantLive(t, base, ownerSecret, "owner session", o1, o2)
}

// TestHTTPSessionCapBusy: a session with a request in flight is not
// closed to make room; with none idle, the initialize is refused with
// UNAVAILABLE, and succeeds once the session is idle again (closing it).
func TestHTTPSessionCapBusy(t *testing.T) {
	own := startOwner(t)
	svc := newHeld(own.Service())
	base, _ := serveGuardedWith(t, svc, mcpapi.HTTPOptions{MaxSessionsPerCaller: 1})
	url := base + "/mcp/"
	r1 := httpSessionAt(t, url, readerSecret, "", sessionVersion)
	answered := make(chan error, 1)
	go func() {
		_, err := r1.CallTool(testCtx(t), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"request": map[string]any{"question": "q"}}})
		answered <- err
	}()
	select {
	case <-svc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the search never started")
	}
	resp, body := rawPost(t, url, readerSecret, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"second","version":"0"}}}`)
	var eb interfaces.ErrorBody
	if err := json.Unmarshal(body, &eb); resp.StatusCode != http.StatusServiceUnavailable || err != nil || eb.Error.Code != workspace.CodeUnavailable {
		t.Fatalf("initialize with the only session busy: %d %s, want 503 UNAVAILABLE", resp.StatusCode, body)
	}
	close(svc.release)
	if err := <-answered; err != nil {
		t.Fatalf("the busy session's call: %v", err)
	}
	// The session is busy until its HTTP request ends, a moment after
	// its client has the answer.
	var r2 *mcp.ClientSession
	for deadline := time.Now().Add(10 * time.Second); r2 == nil; {
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient(t, readerSecret, ""), MaxRetries: -1}
		cs, err := newClient().Connect(testCtx(t), tr, &mcp.ClientSessionOptions{ProtocolVersion: sessionVersion})
		switch {
		case err == nil:
			t.Cleanup(func() { _ = cs.Close() })
			r2 = cs
		case time.Now().After(deadline):
			t.Fatalf("initialize once the session is idle: %v", err)
		default:
			time.Sleep(5 * time.Millisecond)
		}
	}
	wantClosed(t, base, readerSecret, "the session idle again", r1)
	wantLive(t, base, readerSecret, "the new session", r2)
}
