package mcpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/workspace"
)

var discoverSources = map[string]any{"request": map[string]any{"subject": "sources"}}

// TestHTTPEveryProtocolVersion connects the SDK client at every protocol
// version the SDK offers to the real owner's /mcp/: 2026-07-28 through the
// stateless mode, the others through sessions, all on the same endpoint.
func TestHTTPEveryProtocolVersion(t *testing.T) {
	own := startOwner(t)
	for _, v := range mcp.SupportedProtocolVersions() {
		t.Run(v, func(t *testing.T) {
			cs := httpSession(t, own, own.Token(), "", v)
			if got := cs.InitializeResult().ProtocolVersion; got != v {
				t.Fatalf("negotiated %s, want %s", got, v)
			}
			tools := listTools(t, cs)
			modern := v >= "2025-06-18"
			for name, tool := range tools {
				if (tool.OutputSchema != nil) != modern {
					t.Errorf("%s: outputSchema present %v at %s", name, tool.OutputSchema != nil, v)
				}
			}
			res := call(t, cs, "discover", discoverSources)
			if res.IsError {
				t.Fatalf("discover: %s", dump(res))
			}
			if modern {
				checkOutcome(t, "discover", res)
				return
			}
			// Before 2025-06-18: the same JSON as the one text block.
			if res.StructuredContent != nil || len(res.Content) != 1 {
				t.Fatalf("old protocol result: %s", dump(res))
			}
			text := res.Content[0].(*mcp.TextContent).Text
			validateJSON(t, "discover", []byte(text))
		})
	}
}

func TestHTTPReaderGrant(t *testing.T) {
	own := startOwner(t)
	tok := readToken(t, own)
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			cs := httpSession(t, own, tok, "", v)
			tools := listTools(t, cs)
			if _, ok := tools["add_sources"]; ok {
				t.Error("a reader's tools/list shows add_sources")
			}
			if _, ok := tools["manage_job"]; !ok {
				t.Error("a reader's tools/list hides manage_job")
			}
			res := call(t, cs, "add_sources", map[string]any{"action": "add", "source": map[string]any{"path": "."}})
			if code := envelope(t, res); code != workspace.CodePermissionDenied {
				t.Fatalf("reader add_sources: %s, want PERMISSION_DENIED", code)
			}
			res = call(t, cs, "manage_job", map[string]any{"action": "cancel", "job_id": "job_x"})
			if code := envelope(t, res); code != workspace.CodePermissionDenied {
				t.Fatalf("reader manage_job cancel: %s, want PERMISSION_DENIED", code)
			}
			if ok, _ := checkOutcome(t, "manage_job", call(t, cs, "manage_job", map[string]any{"action": "list"})); !ok {
				t.Error("a reader cannot list jobs")
			}
		})
	}
	// The owner token sees every tool.
	if _, ok := listTools(t, httpSession(t, own, own.Token(), "", ""))["add_sources"]; !ok {
		t.Error("the owner's tools/list hides add_sources")
	}
}

// switchScope is a RoundTripper whose X-Tychora-Scope can change between
// requests of one session.
type switchScope struct {
	token string
	scope atomic.Value // string
	base  http.RoundTripper
}

func (s *switchScope) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+s.token)
	if v, _ := s.scope.Load().(string); v != "" {
		r.Header.Set(httpapi.ScopeHeader, v)
	}
	return s.base.RoundTrip(r)
}

// TestHTTPGrantIsPerRequest narrows the grant in the middle of a session:
// the next request acts with the narrower grant.
func TestHTTPGrantIsPerRequest(t *testing.T) {
	own := startOwner(t)
	for _, v := range []string{"2026-07-28", "2025-06-18"} {
		t.Run(v, func(t *testing.T) {
			base := &http.Transport{}
			t.Cleanup(base.CloseIdleConnections)
			rt := &switchScope{token: own.Token(), base: base}
			rt.scope.Store("")
			tr := &mcp.StreamableClientTransport{Endpoint: own.URL() + "/mcp", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}
			cs, err := newClient().Connect(testCtx(t), tr, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, ok := listTools(t, cs)["add_sources"]; !ok {
				t.Fatal("owner does not see add_sources")
			}
			rt.scope.Store("grant=read")
			if _, ok := listTools(t, cs)["add_sources"]; ok {
				t.Error("after narrowing to read, add_sources is still listed")
			}
			res := call(t, cs, "add_sources", map[string]any{"action": "sync", "source_id": "src_x"})
			if code := envelope(t, res); code != workspace.CodePermissionDenied {
				t.Errorf("narrowed add_sources: %s, want PERMISSION_DENIED", code)
			}
			rt.scope.Store("")
			if _, ok := listTools(t, cs)["add_sources"]; !ok {
				t.Error("the session kept the narrowed grant")
			}
		})
	}
}

// TestHTTPSessionBoundToPrincipal: a session opened with one token cannot
// be used with another.
func TestHTTPSessionBoundToPrincipal(t *testing.T) {
	own := startOwner(t)
	url := own.URL() + "/mcp/"
	resp, msg := rawPost(t, url, own.Token(), nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, sid, msg)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	if resp, _ := rawPost(t, url, own.Token(), hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	resp, _ = rawPost(t, url, readToken(t, own), hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another token on the session: %d, want 403", resp.StatusCode)
	}
	resp, msg = rawPost(t, url, own.Token(), hdr, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(msg, []byte(`"add_sources"`)) {
		t.Fatalf("the owner's own session: %d %s", resp.StatusCode, msg)
	}
}

// TestHTTPRawOldProtocol speaks 2024-11-05 by hand: no structuredContent,
// the JSON as the one text block.
func TestHTTPRawOldProtocol(t *testing.T) {
	own := startOwner(t)
	url := own.URL() + "/mcp"
	resp, msg := rawPost(t, url, own.Token(), nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if !bytes.Contains(msg, []byte(`"protocolVersion":"2024-11-05"`)) {
		t.Fatalf("initialize: %s", msg)
	}
	hdr := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id")}
	rawPost(t, url, own.Token(), hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, msg = rawPost(t, url, own.Token(), hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if bytes.Contains(msg, []byte("outputSchema")) {
		t.Errorf("2024-11-05 tools/list carries outputSchema")
	}
	_, msg = rawPost(t, url, own.Token(), hdr,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"discover","arguments":{"request":{"subject":"sources"}}}}`)
	r := decodeRPC(t, msg)
	if r.Result == nil || r.Result.IsError || r.Result.StructuredContent != nil || len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" {
		t.Fatalf("old-protocol tools/call: %s", msg)
	}
	validateJSON(t, "discover", []byte(r.Result.Content[0].Text))
	_, msg = rawPost(t, url, own.Token(), hdr,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"discover","arguments":{"nope":1}}}`)
	r = decodeRPC(t, msg)
	if r.Result == nil || !r.Result.IsError || !strings.Contains(r.Result.Content[0].Text, `"INVALID_ARGUMENT"`) {
		t.Fatalf("old-protocol tool error: %s", msg)
	}
}

// TestHTTPWireBytes reads structuredContent off the HTTP response body and
// checks it is byte for byte what the service produced, in both HTTP modes.
func TestHTTPWireBytes(t *testing.T) {
	own := startOwner(t)
	want := sampleStructured(t)
	rendered := "1. a/b.go:1-3 <b> & é"
	base, _ := serveGuarded(t, stubbed(own.Service(), stub{structured: want, rendered: &rendered}))
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"},"render":"agent@1"}%s}}`

	check := func(t *testing.T, msg []byte) {
		r := decodeRPC(t, msg)
		if r.Result == nil || r.Result.IsError {
			t.Fatalf("search: %s", msg)
		}
		if !bytes.Equal(r.Result.StructuredContent, want) {
			t.Fatalf("structuredContent on the wire differs from the service's bytes:\nwire %s\nwant %s", r.Result.StructuredContent, want)
		}
		if len(r.Result.Content) != 1 || r.Result.Content[0].Text != rendered {
			t.Fatalf("content %v, want one text block with the rendered text", r.Result.Content)
		}
	}
	t.Run("stateless 2026-07-28", func(t *testing.T) {
		meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		resp, msg := rawPost(t, base+"/mcp/", ownerSecret, map[string]string{
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "search"}, fmt.Sprintf(call, meta))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, msg)
		}
		check(t, msg)
	})
	t.Run("session 2025-06-18", func(t *testing.T) {
		resp, _ := rawPost(t, base+"/mcp/", ownerSecret, nil,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		hdr := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
		rawPost(t, base+"/mcp/", ownerSecret, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		_, msg := rawPost(t, base+"/mcp/", ownerSecret, hdr, fmt.Sprintf(call, ""))
		check(t, msg)
	})
	t.Run("session 2025-03-26", func(t *testing.T) {
		resp, _ := rawPost(t, base+"/mcp/", ownerSecret, nil,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		hdr := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id")}
		rawPost(t, base+"/mcp/", ownerSecret, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		_, msg := rawPost(t, base+"/mcp/", ownerSecret, hdr, fmt.Sprintf(call, ""))
		r := decodeRPC(t, msg)
		if r.Result == nil || r.Result.StructuredContent != nil || len(r.Result.Content) != 2 {
			t.Fatalf("old protocol search: %s", msg)
		}
		if r.Result.Content[0].Text != string(want) || r.Result.Content[1].Text != rendered {
			t.Fatalf("old protocol blocks: %q / %q", r.Result.Content[0].Text, r.Result.Content[1].Text)
		}
	})
}

// TestHTTPWireEscapesHTML documents the SDK's encoder: structured bytes
// must already be json.Marshal's (HTML-escaped), or they change on the way.
func TestHTTPWireEscapesHTML(t *testing.T) {
	own := startOwner(t)
	raw := []byte(`{"run_id":"a<b"}`)
	base, _ := serveGuarded(t, stubbed(own.Service(), stub{structured: raw}))
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	_, msg := rawPost(t, base+"/mcp/", ownerSecret, map[string]string{
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "search"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}},`+meta+`}}`)
	if got := decodeRPC(t, msg).Result.StructuredContent; string(got) != `{"run_id":"a\u003cb"}` {
		t.Fatalf("the SDK sent %s", got)
	}
}

// TestHTTPBatches: a batch under a version with batches (2025-03-26, the
// default without a version header) is served; under 2025-06-18 and
// later it is a JSON-RPC -32600, as every other malformed message.
func TestHTTPBatches(t *testing.T) {
	own := startOwner(t)
	url := own.URL() + "/mcp/"
	batch := `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}]`
	resp, msg := rawPost(t, url, own.Token(), nil, batch)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(msg, []byte(`"protocolVersion":"2025-03-26"`)) {
		t.Fatalf("batch under 2025-03-26: %d %s", resp.StatusCode, msg)
	}
	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		resp, msg := rawPost(t, url, own.Token(), map[string]string{"Mcp-Protocol-Version": v}, " \n"+batch)
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(msg, &m) != nil || string(m.ID) != "null" || m.Error.Code != -32600 {
			t.Fatalf("batch under %s: %d %s, want 400 and -32600", v, resp.StatusCode, msg)
		}
	}
}

func TestHTTPBodyLimit(t *testing.T) {
	own := startOwner(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"discover","arguments":{"x":"` + strings.Repeat("a", int(own.Settings().MaxRequestBytes)) + `"}}}`
	resp, _ := rawPost(t, own.URL()+"/mcp/", own.Token(), nil, body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d, want 413", resp.StatusCode)
	}
}

// TestHTTPClose ends open sessions.
func TestHTTPClose(t *testing.T) {
	own := startOwner(t)
	base, mh := serveGuarded(t, own.Service())
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp/", HTTPClient: httpClient(t, ownerSecret, ""), MaxRetries: -1}
	cs, err := newClient().Connect(testCtx(t), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listTools(t, cs)
	if err := mh.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(testCtx(t), nil); err == nil {
		t.Fatal("the session still answers after Close")
	}
	// New sessions are still served.
	listTools(t, httpSessionAt(t, base+"/mcp/", ownerSecret, "", ""))
}

// TestHTTPNoStandaloneStream: GET is 405 (the spec's "no SSE stream here"),
// so no request hangs open, and an owner with live sessions stops at once.
func TestHTTPNoStandaloneStream(t *testing.T) {
	own := startOwner(t)
	cs := httpSession(t, own, own.Token(), "", "2025-11-25")
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, own.URL()+"/mcp/", nil)
	req.Header.Set("Authorization", "Bearer "+own.Token())
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	listTools(t, cs)
	start := time.Now()
	if err := own.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the owner took %v to stop with an open MCP session", d)
	}
}
