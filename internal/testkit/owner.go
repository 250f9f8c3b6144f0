package testkit

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// Owner is what StartOwner starts and stops: a *runtime.Owner. (testkit
// does not import runtime, so that runtime's own tests can use it.)
type Owner interface {
	Close(ctx context.Context) error
}

// StartOwner starts an owner with start, given 20 s, and closes it when
// the test ends, failing the test if the close fails. Before the close,
// http.DefaultTransport's idle connections go: http.Server.Shutdown counts
// a connection a client dialled but never used as active for 5 s.
func StartOwner[O Owner](t testing.TB, start func(context.Context) (O, error)) O {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	own, err := start(ctx)
	if err != nil {
		t.Fatalf("start owner: %v", err)
	}
	t.Cleanup(func() {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if err := own.Close(context.Background()); err != nil {
			t.Errorf("close owner: %v", err)
		}
	})
	return own
}
