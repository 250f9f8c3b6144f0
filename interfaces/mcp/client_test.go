package mcpapi_test

import (
	"context"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/workspace"
)

// clientStub records the client instance each search's context carries.
type clientStub struct {
	*testkit.Service
	seen chan string
}

func newClientStub(base interfaces.Service) *clientStub {
	c := &clientStub{seen: make(chan string, 1)}
	c.Service = &testkit.Service{Base: base, SearchFunc: func(ctx context.Context, _ interfaces.SearchArgs) (interfaces.SearchOutput, error) {
		c.seen <- workspace.ClientFrom(ctx)
		return interfaces.SearchOutput{Structured: []byte(`{}`)}, nil
	}}
	return c
}

// TestHTTPClientInstance: a tool call over a Streamable HTTP session
// reaches the Service with the session as its client instance, the unit
// the owner's admission of searches tells owner-token callers apart by.
func TestHTTPClientInstance(t *testing.T) {
	own := startOwner(t)
	svc := newClientStub(own.Service())
	base, _ := serveGuarded(t, svc)
	cs := httpSessionAt(t, base+"/mcp/", ownerSecret, "", "2025-11-25")
	call(t, cs, "search", map[string]any{"request": map[string]any{"question": "x"}})
	if got := <-svc.seen; got == "" || got != cs.ID() {
		t.Fatalf("client instance %q, want the session id %q", got, cs.ID())
	}
}
