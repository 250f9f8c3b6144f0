package mcpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/internal/testkit"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// The principals of the tests.
var (
	ownerP  = workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}
	readerP = workspace.Principal{ID: "token:reader", Grant: workspace.GrantRead}
	writerP = workspace.Principal{ID: "token:writer", Grant: workspace.GrantWrite}
)

// startOwner runs a real owner on a fresh workspace in t.TempDir().
func startOwner(t testing.TB) *tyruntime.Owner {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	if _, err := tyruntime.Init(dir, tyruntime.InitOptions{}); err != nil {
		t.Fatalf("init: %v", err)
	}
	return testkit.StartOwner(t, func(ctx context.Context) (*tyruntime.Owner, error) {
		return tyruntime.Start(ctx, tyruntime.Options{Dir: dir, ShutdownWait: 2 * time.Second})
	})
}

func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "tychora-test", Version: "v0"}, nil)
}

// memSession connects a client to NewServer(svc) over in-memory transports,
// every request acting as p.
func memSession(t testing.TB, svc interfaces.Service, p workspace.Principal, version string) *mcp.ClientSession {
	t.Helper()
	ctx := testCtx(t)
	srv := mcpapi.NewServer(svc, mcpapi.Options{Principal: &p, Version: "test"})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	cs, err := newClient().Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// bearer is an http.RoundTripper that adds the token (and a scope) to
// every request.
type bearer struct {
	token, scope string
	base         http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.scope != "" {
		r.Header.Set(httpapi.ScopeHeader, b.scope)
	}
	return b.base.RoundTrip(r)
}

// httpClient returns a client sending token (and scope); its idle
// connections close when the test ends.
func httpClient(t testing.TB, token, scope string) *http.Client {
	base := &http.Transport{Proxy: nil}
	t.Cleanup(base.CloseIdleConnections)
	return &http.Client{Transport: bearer{token: token, scope: scope, base: base}}
}

// httpSession connects a client to the owner's /mcp/ with token.
func httpSession(t testing.TB, own *tyruntime.Owner, token, scope, version string) *mcp.ClientSession {
	t.Helper()
	return httpSessionAt(t, own.URL()+"/mcp/", token, scope, version)
}

// httpSessionAt connects a client to the MCP endpoint url with token.
func httpSessionAt(t testing.TB, url, token, scope, version string) *mcp.ClientSession {
	t.Helper()
	ctx := testCtx(t)
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient(t, token, scope), MaxRetries: -1}
	cs, err := newClient().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("client connect over http (%s): %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// readToken creates a stored token with the read grant.
func readToken(t testing.TB, own *tyruntime.Owner) string {
	t.Helper()
	ctx := tyruntime.OwnerContext(testCtx(t))
	tok, err := own.Service().CreateToken(ctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Name: "reader"})
	if err != nil {
		t.Fatalf("create read token: %v", err)
	}
	return tok.Token
}

// envelope asserts that res is a tool error with one text block holding
// {"error":{"code","message"}}, no structuredContent, and returns the code.
func envelope(t testing.TB, res *mcp.CallToolResult) workspace.Code {
	t.Helper()
	if !res.IsError {
		t.Fatalf("isError is false: %s", dump(res))
	}
	if res.StructuredContent != nil {
		t.Fatalf("a tool error carries structuredContent: %s", dump(res))
	}
	if len(res.Content) != 1 {
		t.Fatalf("a tool error has %d content blocks, want 1: %s", len(res.Content), dump(res))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	var body struct {
		Error *struct {
			Code    workspace.Code `json:"code"`
			Message string         `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(tc.Text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Error == nil {
		t.Fatalf("text block is not the error envelope: %q (%v)", tc.Text, err)
	}
	if !body.Error.Code.Valid() || body.Error.Message == "" {
		t.Fatalf("envelope has code %q message %q", body.Error.Code, body.Error.Message)
	}
	return body.Error.Code
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 2000 {
		b = append(b[:2000], "..."...)
	}
	return string(b)
}

func call(t testing.TB, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}
