package mcpapi_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/workspace"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// rawRequest sends one request and returns its status, headers and body.
func rawRequest(t *testing.T, method, url, token string, hdr map[string]string, body string) (int, http.Header, []byte) {
	t.Helper()
	return testkit.Do(t, testkit.Request{Method: method, URL: url, Token: token, Header: hdr, Body: strings.NewReader(body)})
}

// wantEnvelope checks that a refusal is the error envelope of DESIGN §8
// with status and code.
func wantEnvelope(t *testing.T, what string, status int, h http.Header, body []byte, wantStatus int, wantCode workspace.Code) interfaces.ErrorBody {
	t.Helper()
	var eb interfaces.ErrorBody
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if status != wantStatus || h.Get("Content-Type") != "application/json" || dec.Decode(&eb) != nil ||
		eb.Error.Code != wantCode || eb.Error.Message == "" {
		t.Errorf("%s: %d %s %q, want %d with the %s envelope", what, status, h.Get("Content-Type"), body, wantStatus, wantCode)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: no X-Content-Type-Options: nosniff", what)
	}
	return eb
}

// TestHTTPRefusalsAreEnvelopes: every refusal on /mcp/ before MCP runs is
// the {"error":{"code","message"}} envelope with its status, whether the
// handler decides it before the SDK (method, Content-Type,
// Content-Encoding, empty body) or the SDK does (Accept, sessions,
// protocol version), and only /mcp and /mcp/ serve MCP.
func TestHTTPRefusalsAreEnvelopes(t *testing.T) {
	own := startOwner(t)
	url := own.URL() + "/mcp/"
	accept := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range accept {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	// A session of the owner's, for the session cases.
	st, hdr, body := rawRequest(t, "POST", url, own.Token(), accept, initializeBody)
	sid := hdr.Get("Mcp-Session-Id")
	if st != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", st, body)
	}
	session := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	toolsList := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

	cases := []struct {
		name, method, path, token string
		hdr                       map[string]string
		body                      string
		status                    int
		code                      workspace.Code
		allow                     string
	}{
		{"PUT", "PUT", "/mcp/", "", accept, initializeBody, 405, workspace.CodeInvalidArgument, "POST, DELETE"},
		{"GET", "GET", "/mcp/", "", map[string]string{"Accept": "text/event-stream"}, "", 405, workspace.CodeInvalidArgument, "POST, DELETE"},
		{"PATCH on /mcp", "PATCH", "/mcp", "", accept, initializeBody, 405, workspace.CodeInvalidArgument, "POST, DELETE"},
		{"Content-Type text/plain", "POST", "/mcp/", "", with(map[string]string{"Content-Type": "text/plain"}), initializeBody, 415, workspace.CodeInvalidArgument, ""},
		{"no Content-Type", "POST", "/mcp/", "", with(map[string]string{"Content-Type": ""}), initializeBody, 415, workspace.CodeInvalidArgument, ""},
		{"Content-Encoding gzip", "POST", "/mcp/", "", with(map[string]string{"Content-Encoding": "gzip"}), initializeBody, 415, workspace.CodeInvalidArgument, ""},
		{"Accept without event-stream", "POST", "/mcp/", "", with(map[string]string{"Accept": "application/json"}), initializeBody, 400, workspace.CodeInvalidArgument, ""},
		{"empty body", "POST", "/mcp/", "", accept, "", 400, workspace.CodeInvalidArgument, ""},
		{"unknown protocol version", "POST", "/mcp/", "", with(map[string]string{"Mcp-Protocol-Version": "2024-01-01"}), initializeBody, 400, workspace.CodeInvalidArgument, ""},
		{"DELETE without a session", "DELETE", "/mcp/", "", nil, "", 400, workspace.CodeInvalidArgument, ""},
		{"DELETE of an unknown session", "DELETE", "/mcp/", "", map[string]string{"Mcp-Session-Id": "nope"}, "", 404, workspace.CodeNotFound, ""},
		{"POST on an unknown session", "POST", "/mcp/", "", with(map[string]string{"Mcp-Session-Id": "nope", "Mcp-Protocol-Version": "2025-11-25"}), toolsList, 404, workspace.CodeNotFound, ""},
		{"another token on the session", "POST", "/mcp/", readToken(t, own), with(session), toolsList, 403, workspace.CodePermissionDenied, ""},
		{"DELETE without sessions (2026-07-28)", "DELETE", "/mcp/", "", map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, "", 405, workspace.CodeInvalidArgument, "POST"},
		{"a path below /mcp/", "POST", "/mcp/x", "", accept, initializeBody, 404, workspace.CodeNotFound, ""},
		{"a path below /mcp/x/", "POST", "/mcp/x/y", "", accept, initializeBody, 404, workspace.CodeNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			token := c.token
			if token == "" {
				token = own.Token()
			}
			st, h, b := rawRequest(t, c.method, own.URL()+c.path, token, c.hdr, c.body)
			eb := wantEnvelope(t, c.name, st, h, b, c.status, c.code)
			if c.status == http.StatusMethodNotAllowed && h.Get("Allow") != c.allow {
				t.Errorf("Allow %q, want %q", h.Get("Allow"), c.allow)
			}
			if c.status == http.StatusUnsupportedMediaType && c.hdr["Content-Encoding"] != "" && h.Get("Accept-Encoding") != "identity" {
				t.Errorf("Accept-Encoding %q, want identity", h.Get("Accept-Encoding"))
			}
			cleanMessage(t, c.name, eb.Error.Message)
		})
	}

	// The session still works for its own token, and at /mcp as well.
	for _, p := range []string{"/mcp/", "/mcp"} {
		st, _, b := rawRequest(t, "POST", own.URL()+p, own.Token(), with(session), toolsList)
		if st != http.StatusOK || !strings.Contains(string(b), `"add_sources"`) {
			t.Fatalf("the owner's session at %s: %d %s", p, st, b)
		}
	}
	if st, _, b := rawRequest(t, "DELETE", url, own.Token(), session, ""); st != http.StatusNoContent {
		t.Fatalf("DELETE of the session: %d %s", st, b)
	}
}

// TestHTTPHandlerOwnMethodCheck: mounted on its own (not behind the
// routes of interfaces/http), the handler answers a method other than
// POST and DELETE with the envelope and the right Allow, and the SDK's
// plain-text refusals (here: no principal) as envelopes too.
func TestHTTPHandlerOwnMethodCheck(t *testing.T) {
	mh := mcpapi.NewHTTPHandler(startOwner(t).Service(), mcpapi.HTTPOptions{})
	srv := httptest.NewServer(mh)
	t.Cleanup(func() { _ = mh.Close(); srv.Close() })
	for _, m := range []string{"GET", "PUT", "HEAD", "OPTIONS"} {
		st, h, b := rawRequest(t, m, srv.URL+"/", "", nil, "")
		if m == "HEAD" {
			if st != http.StatusMethodNotAllowed || h.Get("Allow") != "POST, DELETE" {
				t.Errorf("HEAD: %d Allow %q", st, h.Get("Allow"))
			}
			continue
		}
		wantEnvelope(t, m, st, h, b, http.StatusMethodNotAllowed, workspace.CodeInvalidArgument)
		if h.Get("Allow") != "POST, DELETE" {
			t.Errorf("%s: Allow %q, want POST, DELETE", m, h.Get("Allow"))
		}
	}
	st, h, b := rawRequest(t, "POST", srv.URL+"/", "", map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, initializeBody)
	wantEnvelope(t, "no principal", st, h, b, http.StatusUnauthorized, workspace.CodeUnauthenticated)
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestSDKRefusalWords pins the words of the refusals go-sdk decides on
// /mcp/ (a plain-text body, passed on as the envelope's message with the
// SDK's "Bad Request: " lead cut): the SDK offers no structured error for
// them, so an upgrade that rewords one fails here, and the golden file
// shows what changed (go test -run TestSDKRefusalWords -update).
func TestSDKRefusalWords(t *testing.T) {
	own := startOwner(t)
	url := own.URL() + "/mcp/"
	accept := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	cases := []struct {
		name, method string
		hdr          map[string]string
		body         string
	}{
		{"Accept without event-stream", "POST", map[string]string{"Content-Type": "application/json", "Accept": "application/json"}, initializeBody},
		{"unknown protocol version", "POST", map[string]string{"Content-Type": "application/json", "Accept": accept["Accept"], "Mcp-Protocol-Version": "2024-01-01"}, initializeBody},
		{"DELETE without a session", "DELETE", nil, ""},
		{"DELETE without sessions (2026-07-28)", "DELETE", map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, ""},
	}
	var got strings.Builder
	for _, c := range cases {
		st, h, b := rawRequest(t, c.method, url, own.Token(), c.hdr, c.body)
		var eb interfaces.ErrorBody
		if err := json.Unmarshal(b, &eb); err != nil || h.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %q is not the envelope", c.name, st, b)
		}
		fmt.Fprintf(&got, "%s: %d %s %s\n", c.name, st, eb.Error.Code, eb.Error.Message)
	}
	golden := filepath.Join("testdata", "sdk_refusals.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("the SDK's refusals read\n%s\nwant (%s)\n%s", got.String(), golden, want)
	}
}
