package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// recording is a Service that answers health, search and token creation
// and keeps the arguments it was given; nothing else is called.
type recording struct {
	*testkit.Service
	mu      sync.Mutex
	search  []interfaces.SearchArgs
	clients []string // the client instance of each search (workspace.ClientFrom)
	tokens  []interfaces.CreateTokenRequest
}

func newRecording() *recording {
	s := &recording{}
	s.Service = &testkit.Service{
		HealthFunc: func(context.Context) (interfaces.HealthResult, error) {
			return interfaces.HealthResult{Status: "ok", WorkspaceID: "ws"}, nil
		},
		SearchFunc: func(ctx context.Context, a interfaces.SearchArgs) (interfaces.SearchOutput, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.search = append(s.search, a)
			s.clients = append(s.clients, workspace.ClientFrom(ctx))
			return interfaces.SearchOutput{Result: query.QueryResult{RunID: "run_1"}, Structured: json.RawMessage(searchBytes)}, nil
		},
		CreateTokenFunc: func(_ context.Context, r interfaces.CreateTokenRequest) (interfaces.CreatedToken, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.tokens = append(s.tokens, r)
			return interfaces.CreatedToken{Token: "tyc_x"}, nil
		},
	}
	return s
}

// searchBytes are the structured bytes the recording Service answers a
// search with: not json.Marshal of its result, so that an edge that
// encoded the result again would send other bytes.
const searchBytes = `{"run_id":"run_1", "hits":[],"rendered":"as \u003cthe\u003e service made it"}`

func (s *recording) lastSearch() interfaces.SearchArgs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.search[len(s.search)-1]
}

// fixture serves NewHandler over a recording Service on loopback, with
// "secret" as the owner's token, a stand-in MCP handler and an OpenAPI
// document.
type fixture struct {
	base, authority string
	svc             *recording
	logs            *testkit.Logs
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{authority: ln.Addr().String(), svc: newRecording(), logs: &testkit.Logs{}}
	f.base = "http://" + f.authority
	doc, err := httpapi.OpenAPI("test", f.base)
	if err != nil {
		t.Fatal(err)
	}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"mcp":true}`)
	})
	srv := &http.Server{Handler: httpapi.NewHandler(f.svc, httpapi.Options{
		Authority: f.authority, Auth: oneToken{}, MCP: mcp, OpenAPI: doc, MaxRequestBytes: 1 << 10,
		Logger: slog.New(f.logs),
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return f
}

// do sends a request: token "" sends none; hdr values "" delete. A body
// goes as application/json unless hdr says otherwise.
func (f *fixture) do(t *testing.T, method, path, token string, hdr map[string]string, body string) (int, http.Header, []byte) {
	t.Helper()
	h := map[string]string{}
	if body != "" {
		h["Content-Type"] = "application/json"
	}
	maps.Copy(h, hdr)
	return testkit.Do(t, testkit.Request{Method: method, URL: f.base + path, Token: token, Header: h, Body: strings.NewReader(body)})
}

// envelope decodes the error envelope of a refusal, or fails.
func envelope(t *testing.T, what string, status int, b []byte) interfaces.ErrorBody {
	t.Helper()
	var eb interfaces.ErrorBody
	if err := json.Unmarshal(b, &eb); err != nil || !eb.Error.Code.Valid() || eb.Error.Message == "" {
		t.Fatalf("%s: %d %q is not the error envelope", what, status, b)
	}
	return eb
}

// TestMethodNotAllowedNamesAllow: a 405 on /v1 (a method the route does
// not take, or any OPTIONS) carries the error envelope and an Allow
// header: the route's own methods once the caller is authenticated; for
// OPTIONS, refused before authentication, the same for every path, so
// that it tells no one which routes exist.
func TestMethodNotAllowedNamesAllow(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ method, path, token, allow string }{
		{"GET", "/v1/search", "secret", "POST"},
		{"PUT", "/v1/search", "secret", "POST"},
		{"BREW", "/v1/discover", "secret", "POST"},
		{"POST", "/v1/health", "secret", "GET, HEAD"},
		{"DELETE", "/v1/status", "secret", "GET, HEAD"},
		{"DELETE", "/v1/tokens", "secret", "GET, HEAD, POST"},
		{"GET", "/v1/tokens/tok_1", "secret", "DELETE"},
		{"POST", "/v1/jobs/job_1", "secret", "GET, HEAD"},
		{"PUT", "/openapi", "secret", "GET, HEAD"},
		{"GET", "/mcp/", "secret", "POST, DELETE"},
		{"HEAD", "/mcp", "secret", "POST, DELETE"},
		// OPTIONS is refused before authentication, as DESIGN §8 orders.
		{"OPTIONS", "/v1/search", "", "GET, HEAD, POST, DELETE"},
		{"OPTIONS", "/v1/health", "", "GET, HEAD, POST, DELETE"},
		{"OPTIONS", "/v1/tokens", "", "GET, HEAD, POST, DELETE"},
		{"OPTIONS", "/v1/tokens/tok_1", "", "GET, HEAD, POST, DELETE"},
		{"OPTIONS", "/mcp/", "", "GET, HEAD, POST, DELETE"},
		{"OPTIONS", "/v1/no-such-route", "", "GET, HEAD, POST, DELETE"},
		{"OPTIONS", "/v1/search", "secret", "GET, HEAD, POST, DELETE"},
	}
	for _, c := range cases {
		st, h, b := f.do(t, c.method, c.path, c.token, nil, "")
		if st != http.StatusMethodNotAllowed || h.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", c.method, c.path, st, h.Get("Allow"), c.allow)
			continue
		}
		if c.method == "HEAD" {
			continue
		}
		if eb := envelope(t, c.method+" "+c.path, st, b); eb.Error.Code != workspace.CodeInvalidArgument || !strings.Contains(eb.Error.Message, c.allow) {
			t.Errorf("%s %s: %+v", c.method, c.path, eb.Error)
		}
	}
}

// TestHeadLikeGet: a GET route answers HEAD with GET's status and headers
// and no body, behind the same checks (Host, Origin, token).
func TestHeadLikeGet(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name, path, token string
		hdr               map[string]string
		status            int
	}{
		{"health without a token", "/v1/health", "", nil, 200},
		{"health with a bad token", "/v1/health", "wrong", nil, 401},
		{"openapi", "/openapi", "secret", nil, 200},
		{"openapi without a token", "/openapi", "", nil, 401},
		{"foreign Host", "/v1/health", "", map[string]string{"Host": "localhost"}, 403},
		{"foreign Origin", "/openapi", "secret", map[string]string{"Origin": "http://evil.example"}, 403},
		{"POST route", "/v1/search", "secret", nil, 405},
	}
	for _, c := range cases {
		st, h, b := f.do(t, "HEAD", c.path, c.token, c.hdr, "")
		if st != c.status || len(b) != 0 {
			t.Errorf("HEAD %s (%s): %d with %d body bytes, want %d and none", c.path, c.name, st, len(b), c.status)
		}
		if st == 200 && (h.Get("Content-Type") != "application/json" || h.Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("HEAD %s: headers %v", c.path, h)
		}
	}
}

// TestBodyMediaType: a /v1 body labelled as anything but JSON, or
// content-coded, is 415 with code INVALID_ARGUMENT; the checks run after
// authentication and the body size check.
func TestBodyMediaType(t *testing.T) {
	f := newFixture(t)
	body := `{"request":{"question":"q"}}`
	refused := []map[string]string{
		{"Content-Type": "text/plain"},
		{"Content-Type": "text/plain; charset=utf-8"},
		{"Content-Type": "application/x-www-form-urlencoded"},
		{"Content-Type": "multipart/form-data; boundary=x"},
		{"Content-Type": "application/xml"},
		{"Content-Type": "application/json; charset=iso-8859-1"},
		{"Content-Type": "application/jsonx"},
		{"Content-Type": "garbage;;"},
		{"Content-Encoding": "gzip"},
		{"Content-Encoding": "identity, br"},
	}
	for _, hdr := range refused {
		st, h, b := f.do(t, "POST", "/v1/search", "secret", hdr, body)
		eb := envelope(t, "search", st, b)
		if st != http.StatusUnsupportedMediaType || eb.Error.Code != workspace.CodeInvalidArgument {
			t.Errorf("%v: %d %+v, want 415 INVALID_ARGUMENT", hdr, st, eb.Error)
		}
		if hdr["Content-Encoding"] != "" && h.Get("Accept-Encoding") != "identity" {
			t.Errorf("%v: Accept-Encoding %q", hdr, h.Get("Accept-Encoding"))
		}
	}
	if st, _, b := f.do(t, "POST", "/v1/tokens", "secret", map[string]string{"Content-Type": "text/plain"}, `{"grant":"read"}`); st != http.StatusUnsupportedMediaType {
		t.Errorf("tokens as text/plain: %d %s", st, b)
	}
	accepted := []map[string]string{
		nil,
		{"Content-Type": "application/json; charset=utf-8"},
		{"Content-Type": "Application/JSON; charset=UTF-8"},
		{"Content-Type": ""}, // none at all: taken as JSON
		{"Content-Encoding": "identity"},
	}
	for _, hdr := range accepted {
		if st, _, b := f.do(t, "POST", "/v1/search", "secret", hdr, body); st != http.StatusOK {
			t.Errorf("%v: %d %s", hdr, st, b)
		}
	}
	// In DESIGN §8's order: authentication, then body size, then this.
	plain := map[string]string{"Content-Type": "text/plain"}
	if st, _, _ := f.do(t, "POST", "/v1/search", "", plain, body); st != http.StatusUnauthorized {
		t.Errorf("text/plain without a token: %d, want 401", st)
	}
	if st, _, _ := f.do(t, "POST", "/v1/search", "secret", plain, strings.Repeat(" ", 2<<10)+body); st != http.StatusRequestEntityTooLarge {
		t.Errorf("text/plain over the size limit: %d, want 413", st)
	}
}

// TestBodyLoneSurrogate: an escaped lone surrogate in a /v1 body, which
// encoding/json would quietly turn into U+FFFD, is INVALID_ARGUMENT; a
// proper pair and an escaped backslash are not.
func TestBodyLoneSurrogate(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ path, body string }{
		{"/v1/search", `{"request":{"question":"\ud800 lone"}}`},
		{"/v1/search", `{"request":{"question":"\uDBFF\uDBFF"}}`},
		{"/v1/search", `{"request":{"question":"x\udc00"}}`},
		{"/v1/search", `{"request":{"question":"\ud800"}}`},
		{"/v1/tokens", `{"grant":"read","name":"\ud83d"}`},
	} {
		st, _, b := f.do(t, "POST", c.path, "secret", nil, c.body)
		if eb := envelope(t, c.body, st, b); st != http.StatusBadRequest || eb.Error.Code != workspace.CodeInvalidArgument || !strings.Contains(eb.Error.Message, "surrogate") {
			t.Errorf("%s %s: %d %+v", c.path, c.body, st, eb.Error)
		}
	}
	st, _, b := f.do(t, "POST", "/v1/search", "secret", nil, `{"request":{"question":"\ud83d\ude00 \\ud800"}}`)
	if st != http.StatusOK {
		t.Fatalf("a surrogate pair and an escaped backslash: %d %s", st, b)
	}
	if q := f.svc.lastSearch().Request.Question; q != "😀 \\ud800" {
		t.Errorf("question decoded as %q", q)
	}
}

// TestSearchSendsServiceBytes: /v1/search answers with the structured
// bytes of the Service's SearchOutput as they are, which the budget
// counted, never the result encoded again.
func TestSearchSendsServiceBytes(t *testing.T) {
	f := newFixture(t)
	st, _, b := f.do(t, "POST", "/v1/search", "secret", nil, `{"request":{"question":"q"}}`)
	if st != http.StatusOK || string(b) != searchBytes+"\n" {
		t.Fatalf("%d %q, want %q", st, b, searchBytes+"\n")
	}
}

// TestIntegralNumbers: an integer written 1.0 or 1e2 (an integer to JSON
// Schema) decodes to its value.
func TestIntegralNumbers(t *testing.T) {
	f := newFixture(t)
	st, _, b := f.do(t, "POST", "/v1/search", "secret", nil, `{"request":{"question":"q","limit":1.0,"budget":{"max_tokens":1e2}}}`)
	if st != http.StatusOK {
		t.Fatalf("%d %s", st, b)
	}
	if r := f.svc.lastSearch().Request; r.Limit != 1 || r.Budget == nil || r.Budget.MaxTokens != 100 {
		t.Fatalf("decoded %+v", r)
	}
	st, _, b = f.do(t, "POST", "/v1/search", "secret", nil, `{"request":{"question":"q","limit":1.5}}`)
	if eb := envelope(t, "1.5", st, b); st != http.StatusBadRequest || eb.Error.Code != workspace.CodeInvalidArgument {
		t.Fatalf("limit 1.5: %d %+v", st, eb.Error)
	}
}

// TestMCPOnlyAtItsPaths: /mcp and /mcp/ reach MCP; nothing below them does.
func TestMCPOnlyAtItsPaths(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/mcp", "/mcp/"} {
		if st, _, b := f.do(t, "POST", p, "secret", nil, `{}`); st != http.StatusOK || string(b) != `{"mcp":true}` {
			t.Errorf("POST %s: %d %s", p, st, b)
		}
	}
	for _, p := range []string{"/mcp/x", "/mcp/x/", "/mcp//", "/mcp/%2e%2e/v1/status"} {
		st, _, b := f.do(t, "POST", p, "secret", nil, `{}`)
		if eb := envelope(t, p, st, b); st != http.StatusNotFound || eb.Error.Code != workspace.CodeNotFound {
			t.Errorf("POST %s: %d %+v, want 404 NOT_FOUND", p, st, eb.Error)
		}
	}
}

// TestOpenAPIResponse: /openapi is sent like every route (nosniff, no
// caching), and documents the 405s, 413s and 415s where they occur and the
// asset route's bytes of any type.
func TestOpenAPIResponse(t *testing.T) {
	f := newFixture(t)
	st, h, b := f.do(t, "GET", "/openapi", "secret", nil, "")
	if st != http.StatusOK || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("/openapi: %d %v", st, h)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Headers map[string]any `json:"headers"`
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	has := func(path, method, status string) bool {
		_, ok := doc.Paths[path][method].Responses[status]
		return ok
	}
	for path, ops := range doc.Paths {
		r, ok := ops["options"].Responses["405"]
		if !ok || r.Headers["Allow"] == nil {
			t.Errorf("%s: OPTIONS has no 405 with Allow", path)
		}
	}
	for _, c := range []struct{ path, method, status string }{
		{"/v1/search", "post", "413"}, {"/v1/search", "post", "415"},
		{"/v1/tokens", "post", "413"}, {"/v1/tokens", "post", "415"},
		{"/mcp/", "post", "413"}, {"/mcp/", "post", "415"},
		{"/mcp/", "get", "405"}, {"/mcp/", "delete", "405"},
	} {
		if !has(c.path, c.method, c.status) {
			t.Errorf("%s %s: no %s response", c.method, c.path, c.status)
		}
	}
	if has("/mcp/", "post", "405") {
		t.Error("POST /mcp/ documents a 405 it never answers")
	}
	if _, ok := doc.Paths["/v1/assets/{id}"]["get"].Responses["200"].Content["*/*"]; !ok {
		t.Errorf("the asset route's 200 is %v, want */*", doc.Paths["/v1/assets/{id}"]["get"].Responses["200"].Content)
	}
}

// TestRefusedBodiesAreNoFailure: a body refused for its media type (415) or
// its size (413) is the caller's mistake, not logged as a failure of the
// server (anyone with a token could fill the error log otherwise).
func TestRefusedBodiesAreNoFailure(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		hdr    map[string]string
		body   string
		status int
	}{
		{map[string]string{"Content-Type": "text/plain"}, `{"request":{"question":"q"}}`, http.StatusUnsupportedMediaType},
		{map[string]string{"Content-Encoding": "gzip"}, `{"request":{"question":"q"}}`, http.StatusUnsupportedMediaType},
		{nil, `{"request":{"question":"` + strings.Repeat("q", 2<<10) + `"}}`, http.StatusRequestEntityTooLarge},
	} {
		if st, _, b := f.do(t, "POST", "/v1/search", "secret", c.hdr, c.body); st != c.status {
			t.Fatalf("%v: %d %s, want %d", c.hdr, st, b, c.status)
		}
	}
	for _, m := range f.logs.At(slog.LevelDebug) {
		if strings.HasPrefix(m, "ERROR") {
			t.Fatalf("a refused body was logged %q", m)
		}
	}
}

// TestNullBodyRefused: a /v1 body must be a JSON object; null is not the
// absent arguments of a tool call.
func TestNullBodyRefused(t *testing.T) {
	f := newFixture(t)
	st, _, b := f.do(t, "POST", "/v1/search", "secret", nil, `null`)
	if eb := envelope(t, "null", st, b); st != http.StatusBadRequest || !strings.Contains(eb.Error.Message, "must be a JSON object") {
		t.Fatalf("null body: %d %+v", st, eb.Error)
	}
}

// TestClientInstance: the instance a Client names (X-Tychora-Client)
// reaches the Service in the context of each call, the unit the owner's
// admission of searches tells owner-token processes apart by; a Client
// that names none reaches it with none.
func TestClientInstance(t *testing.T) {
	f := newFixture(t)
	for _, instance := range []string{"proc-one", "proc-two", ""} {
		c, err := httpapi.NewClient(f.base, "secret", nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Instance = instance
		if _, err := c.Search(context.Background(), interfaces.SearchArgs{Request: &query.QueryRequest{Question: "x"}}); err != nil {
			t.Fatal(err)
		}
		f.svc.mu.Lock()
		got := f.svc.clients[len(f.svc.clients)-1]
		f.svc.mu.Unlock()
		if got != instance {
			t.Errorf("client instance %q reached the Service as %q", instance, got)
		}
	}
}
