package mcpapi_test

import (
	"context"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// clientStub records the client instance each search's context carries.
type clientStub struct {
	interfaces.Service
	seen chan string
}

func (s *clientStub) Search(ctx context.Context, _ interfaces.SearchArgs) (interfaces.SearchOutput, error) {
	s.seen <- workspace.ClientFrom(ctx)
	return interfaces.SearchOutput{Structured: []byte(`{}`)}, nil
}

// TestHTTPClientInstance: a tool call over a Streamable HTTP session
// reaches the Service with the session as its client instance, the unit
// the owner's admission of searches tells owner-token callers apart by.
func TestHTTPClientInstance(t *testing.T) {
	own := startOwner(t)
	svc := &clientStub{Service: own.Service(), seen: make(chan string, 1)}
	base, _ := serveGuarded(t, svc)
	cs := httpSessionAt(t, base+"/mcp/", ownerSecret, "", "2025-11-25")
	call(t, cs, "search", map[string]any{"request": map[string]any{"question": "x"}})
	if got := <-svc.seen; got == "" || got != cs.ID() {
		t.Fatalf("client instance %q, want the session id %q", got, cs.ID())
	}
}
