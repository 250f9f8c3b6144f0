package httpapi_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/workspace"
)

type oneToken struct{}

func (oneToken) Authenticate(_ context.Context, secret string) (workspace.Principal, error) {
	if secret == "secret" {
		return workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}, nil
	}
	return workspace.Principal{}, workspace.Errorf(workspace.CodeUnauthenticated, "invalid bearer token")
}

// TestCancelledRequestIsNoFailure: a client that goes away in the middle
// of a request (a stdio bridge whose MCP client cancelled the call) is not
// logged as a failure of the server.
func TestCancelledRequestIsNoFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A search that waits for its context to end and fails as a storage
	// layer does then; nothing else is called.
	started := make(chan struct{})
	svc := &testkit.Service{SearchFunc: func(ctx context.Context, _ interfaces.SearchArgs) (interfaces.SearchOutput, error) {
		close(started)
		<-ctx.Done()
		return interfaces.SearchOutput{}, workspace.Wrap(workspace.CodeInternal, ctx.Err(), "internal error")
	}}
	logs := &testkit.Logs{}
	srv := &http.Server{Handler: httpapi.NewHandler(svc, httpapi.Options{
		Authority: ln.Addr().String(),
		Auth:      oneToken{},
		Logger:    slog.New(logs),
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ln.Addr().String()+"/v1/search", strings.NewReader(`{"request":{"question":"q"}}`))
	req.Header.Set("Authorization", "Bearer secret")
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the search never started")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled request got an answer")
	}
	if r := logs.WaitFor(t, "request cancelled"); r.Level != slog.LevelDebug {
		t.Fatalf("the cancelled request was logged at %s", r.Level)
	}
	for _, m := range logs.At(slog.LevelDebug) {
		if strings.HasPrefix(m, "ERROR") || strings.HasPrefix(m, "WARN") {
			t.Fatalf("the cancelled request logged %q", m)
		}
	}
}
