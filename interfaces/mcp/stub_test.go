package mcpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// stub is what search and inspect answer, to test exactly what travels.
type stub struct {
	structured []byte
	rendered   *string
	inspect    any
}

// stubbed is base with search and inspect answering what s holds (to a
// caller: one with no principal is refused as base would refuse it).
func stubbed(base interfaces.Service, s stub) *testkit.Service {
	return &testkit.Service{
		Base: base,
		SearchFunc: func(ctx context.Context, _ interfaces.SearchArgs) (interfaces.SearchOutput, error) {
			if _, err := workspace.CallerFrom(ctx); err != nil {
				return interfaces.SearchOutput{}, err
			}
			return interfaces.SearchOutput{Structured: s.structured, Rendered: s.rendered}, nil
		},
		InspectFunc: func(ctx context.Context, _ interfaces.InspectArgs) (interfaces.InspectResult, error) {
			if _, err := workspace.CallerFrom(ctx); err != nil {
				return interfaces.InspectResult{}, err
			}
			b, err := json.Marshal(s.inspect)
			if err != nil {
				return interfaces.InspectResult{}, err
			}
			return interfaces.InspectResult{Result: b}, nil
		},
	}
}

// sampleStructured is a search result as the service encodes it: compact
// and HTML-escaped (<, >, & as \u003c, \u003e, \u0026).
func sampleStructured(t testing.TB) []byte {
	t.Helper()
	text := "if a < b && c > d {\n\treturn \"é\u2028ok\"\n}"
	rt := "agent@1"
	res := query.QueryResult{
		RunID:   "run_1",
		Request: query.RequestEcho{Question: "a <b> & c", Modalities: []string{"lexical"}, Profile: "balanced", Limit: 10},
		Hits: []query.Hit{{EvidenceID: "ev_1", SourceID: "src_1", RevisionID: "rev_1", Kind: "code", Path: "a/b.go",
			Title: "b.go", HeadingPath: []string{"func <T>"}, Span: query.Span{StartLine: 1, EndLine: 3}, Score: 1.25,
			Snippet: "a < b && c", Text: &text, Hash: "sha256:00", Stale: false}},
		TotalMatches: 1,
		Budget:       query.BudgetInfo{MaxTokens: 4000, UsedTokens: 97, Counter: "o200k_base", Target: "mcp-structured-json@2.2.0", RenderTarget: &rt},
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`\u003c`)) || !bytes.Contains(b, []byte(`\u2028`)) {
		t.Fatalf("sample is not HTML-escaped: %s", b)
	}
	return b
}

// fakeAuth maps secrets to principals.
type fakeAuth map[string]workspace.Principal

func (f fakeAuth) Authenticate(_ context.Context, secret string) (workspace.Principal, error) {
	if p, ok := f[secret]; ok {
		return p, nil
	}
	return workspace.Principal{}, workspace.Errorf(workspace.CodeUnauthenticated, "invalid bearer token")
}

const (
	ownerSecret  = "owner-secret"
	readerSecret = "reader-secret"
)

// serveGuarded serves svc's /v1 and MCP on loopback behind the real guard,
// with ownerSecret and readerSecret as tokens. It returns the base URL and
// the MCP handler.
func serveGuarded(t testing.TB, svc interfaces.Service) (string, *mcpapi.HTTPHandler) {
	t.Helper()
	return serveGuardedWith(t, svc, mcpapi.HTTPOptions{})
}

// serveGuardedWith is serveGuarded with options.
func serveGuardedWith(t testing.TB, svc interfaces.Service, o mcpapi.HTTPOptions) (string, *mcpapi.HTTPHandler) {
	t.Helper()
	mh := mcpapi.NewHTTPHandler(svc, o)
	return serveMCP(t, svc, mh), mh
}

// serveMCP serves svc's /v1 and mcp on loopback behind the real guard,
// with ownerSecret and readerSecret as tokens, and returns the base URL.
func serveMCP(t testing.TB, svc interfaces.Service, mh http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.NewHandler(svc, httpapi.Options{
		Authority: ln.Addr().String(),
		Auth:      fakeAuth{ownerSecret: ownerP, readerSecret: readerP},
		MCP:       mh,
	})
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		if c, ok := mh.(io.Closer); ok {
			_ = c.Close()
		}
		_ = srv.Close()
	})
	return "http://" + ln.Addr().String()
}

// rawPost sends one JSON-RPC body to url and returns the response and the
// JSON-RPC message it carries (the SSE data of the response, or the JSON
// body).
func rawPost(t testing.TB, url, token string, hdr map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, sseMessage(t, data)
	}
	return resp, data
}

// sseMessage returns the data of the event that holds a JSON-RPC response.
func sseMessage(t testing.TB, stream []byte) []byte {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id"`)) {
			return append([]byte(nil), d...)
		}
	}
	t.Fatalf("no JSON-RPC response in the stream: %q", stream)
	return nil
}

// rpcResult is the part of a tools/call response the wire tests read, with
// structuredContent kept as the exact bytes that travelled.
type rpcResult struct {
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeRPC(t testing.TB, msg []byte) rpcResult {
	t.Helper()
	var r rpcResult
	if err := json.Unmarshal(msg, &r); err != nil {
		t.Fatalf("response %q: %v", msg, err)
	}
	return r
}
