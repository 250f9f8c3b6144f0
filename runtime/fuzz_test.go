package runtime

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
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
