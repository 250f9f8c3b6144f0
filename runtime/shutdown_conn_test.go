package runtime

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestCloseWithUnusedConnection: a connection that never sent a request —
// an HTTP client's transport dials them ahead of need, and a bridge's
// keeps one — does not hold the owner's shutdown up. (http.Server.Shutdown
// waits five seconds before it takes such a connection for idle; the
// bridges of the workspace wait for the lock all that time.)
func TestCloseWithUnusedConnection(t *testing.T) {
	own, err := Start(context.Background(), Options{Dir: newWorkspace(t)})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(own.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Wait until the server has accepted it (it then counts as new).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		own.connMu.Lock()
		n := len(own.newConns)
		own.connMu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d new connections, want 1", n)
		}
	}
	start := time.Now()
	if err := own.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %v with an unused connection open", took)
	}
}
