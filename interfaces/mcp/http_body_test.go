package mcpapi_test

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	httpapi "github.com/tychora/tychora/interfaces/http"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
)

// TestHTTPLongAnswerOutlivesBodyBound: the guard's body deadline ends
// with the body: an MCP answer streamed long after it (SSE, over a
// session) arrives whole.
func TestHTTPLongAnswerOutlivesBodyBound(t *testing.T) {
	own := startOwner(t)
	svc := newHeld(own.Service())
	mh := mcpapi.NewHTTPHandler(svc, mcpapi.HTTPOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const bound = 100 * time.Millisecond
	srv := &http.Server{Handler: httpapi.NewHandler(svc, httpapi.Options{
		Authority: ln.Addr().String(), Auth: fakeAuth{ownerSecret: ownerP}, MCP: mh, BodyTimeout: bound,
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = mh.Close()
		_ = srv.Close()
	})
	cs := httpSessionAt(t, "http://"+ln.Addr().String()+"/mcp/", ownerSecret, "", sessionVersion)
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"request": map[string]any{"question": "q"}}})
		answered <- answer{res, err}
	}()
	select {
	case <-svc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the search never started")
	}
	time.Sleep(3 * bound)
	close(svc.release)
	a := <-answered
	if a.err != nil || a.res.IsError {
		t.Fatalf("the answer after three body bounds: %v %s", a.err, dump(a.res))
	}
}
