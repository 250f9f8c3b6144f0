package runtime

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// FuzzHTTPRequest drives the real owner's handler with arbitrary methods,
// paths, headers and bodies: it never answers 500, and every refusal is the
// JSON error envelope.
func FuzzHTTPRequest(f *testing.F) {
	dir := newWorkspaceF(f)
	own, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { own.Close(context.Background()) })
	authority := strings.TrimPrefix(own.URL(), "http://")
	h := own.srv.Handler

	f.Add("POST", "/v1/tokens", `{"grant":"read"}`, "", "", true)
	f.Add("POST", "/v1/tokens", `{"grant":"read","collections":["x"]}`, "grant=read", "", true)
	f.Add("GET", "/v1/status", "", "", "http://evil", false)
	f.Add("DELETE", "/v1/tokens/..%2f..%2fetc", "", "collections=a", "", true)
	f.Add("GET", "/v1/health", "", "", "", false)
	f.Add("OPTIONS", "/mcp/", "", "", "", true)
	f.Add("POST", "/v1/search", `{"request":{"question":"\ud800 lone","cursor":null,"limit":0}}`, "", "", true)
	f.Add("POST", "/v1/tokens", `{"grant":"read","name":"\udc00","extra":1}`, "", "", true)
	f.Add("HEAD", "/v1/health", "", "", "", false)
	f.Fuzz(func(t *testing.T, method, path, body, scope, origin string, auth bool) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, "http://"+authority+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Host = authority
		if auth {
			req.Header.Set("Authorization", "Bearer "+own.Token())
		}
		if scope != "" {
			req.Header.Set("X-Tychora-Scope", scope)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s -> %d %s", method, path, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var eb interfaces.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || !eb.Error.Code.Valid() || eb.Error.Message == "" {
				t.Fatalf("%s %s -> %d with body %q", method, path, rec.Code, rec.Body)
			}
		}
	})
}

func newWorkspaceF(f *testing.F) string {
	root := f.TempDir()
	dir := root + "/.tychora"
	if _, err := Init(dir, InitOptions{Collections: []string{"default", "a"}}); err != nil {
		f.Fatal(err)
	}
	return dir
}

// fuzzRoutes are the routes FuzzHTTPHeaders sends to.
var fuzzRoutes = []struct{ method, path, body string }{
	{"GET", "/v1/health", ""},
	{"GET", "/v1/status", ""},
	{"POST", "/v1/search", `{"request":{"question":"q"}}`},
	{"POST", "/v1/add_sources", `{"action":"add","source":{"path":"../../etc"}}`},
	{"GET", "/v1/tokens", ""},
	{"GET", "/v1/evidence/x", ""},
	{"GET", "/openapi", ""},
	{"POST", "/mcp/", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}`},
	{"OPTIONS", "/v1/search", ""},
}

// FuzzHTTPHeaders drives the real owner's handler with arbitrary Host and
// Authorization values and arbitrary header lines (Origin, scope, MCP
// headers, anything) on each route, and checks the guard's order of DESIGN
// §8: a Host other than the bound authority is 403, then a foreign or
// repeated Origin 403, then OPTIONS 405, then a missing or invalid bearer
// token 401 (the token-less health answer aside). Never a 500, never a CORS
// header, and every refusal of /v1 is the error envelope.
func FuzzHTTPHeaders(f *testing.F) {
	dir := newWorkspaceF(f)
	own, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { own.Close(context.Background()) })
	authority := strings.TrimPrefix(own.URL(), "http://")
	h := own.srv.Handler

	// host "" is the bound authority; authz "" none, "owner" the owner's
	// token; headers are "Name: value" lines.
	f.Add(uint8(0), "", "owner", "")
	f.Add(uint8(1), "localhost", "owner", "")
	f.Add(uint8(1), "", "Bearer tyc_0000000000000000000000000000000000000000000000000000000000000000", "")
	f.Add(uint8(2), "", "owner", "Origin: http://evil.example\nX-Tychora-Scope: grant=read")
	f.Add(uint8(7), "", "owner", "Mcp-Protocol-Version: 2026-07-28\nMcp-Method: tools/list\nMcp-Session-Id: ../../x")
	f.Add(uint8(8), "", "", "Origin: null\nAccess-Control-Request-Method: POST")
	f.Add(uint8(4), "", "owner", "X-Tychora-Scope: grant=manage; collections=a,a,a\nAuthorization: Bearer x")
	f.Add(uint8(3), "[::1]", "basic Zm9vOmJhcg==", "Content-Type: text/plain\nTransfer-Encoding: chunked")
	f.Fuzz(func(t *testing.T, route uint8, host, authz, headers string) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		req := httptest.NewRequest(rt.method, "http://"+authority+rt.path, strings.NewReader(rt.body))
		req.Host = authority
		if host != "" {
			req.Host = host
		}
		switch authz {
		case "":
		case "owner":
			req.Header.Set("Authorization", "Bearer "+own.Token())
		default:
			req.Header.Set("Authorization", authz)
		}
		for _, line := range strings.Split(headers, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k != "" {
				req.Header.Add(k, strings.TrimSpace(v))
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		for k := range rec.Header() {
			if strings.HasPrefix(strings.ToLower(k), "access-control-") {
				t.Fatalf("CORS header %s", k)
			}
		}
		if rec.Code >= 500 {
			t.Fatalf("%s %s (Host %q, headers %q) -> %d %s", rt.method, rt.path, req.Host, headers, rec.Code, rec.Body)
		}
		var eb interfaces.ErrorBody
		envelope := json.Unmarshal(rec.Body.Bytes(), &eb) == nil && eb.Error.Code.Valid() && eb.Error.Message != ""
		// The guard's verdict, in its order.
		want, code := 0, workspace.Code("")
		origins, hasOrigin := req.Header["Origin"]
		authzs := req.Header.Values("Authorization")
		validAuth := len(authzs) == 1 && authzs[0] == "Bearer "+own.Token()
		switch {
		case req.Host != authority:
			want, code = http.StatusForbidden, workspace.CodePermissionDenied
		case hasOrigin && (len(origins) != 1 || origins[0] != own.URL()):
			want, code = http.StatusForbidden, workspace.CodePermissionDenied
		case rt.method == http.MethodOptions:
			want, code = http.StatusMethodNotAllowed, workspace.CodeInvalidArgument
		case len(authzs) == 0 && rt.path == "/v1/health":
			want = http.StatusOK
		case !validAuth: // the secret is new at every start: no input guesses it
			want, code = http.StatusUnauthorized, workspace.CodeUnauthenticated
		}
		if want != 0 && (rec.Code != want || (code != "" && (!envelope || eb.Error.Code != code))) {
			t.Fatalf("%s %s (Host %q, Authorization %q, headers %q) -> %d %s, want %d %s",
				rt.method, rt.path, req.Host, authzs, headers, rec.Code, rec.Body, want, code)
		}
		if rec.Code >= 400 && !strings.HasPrefix(rt.path, "/mcp") && !envelope {
			t.Fatalf("%s %s -> %d with body %q", rt.method, rt.path, rec.Code, rec.Body)
		}
	})
}
