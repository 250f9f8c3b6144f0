package httpapi_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/workspace"
)

// waitingSearch is a Service whose search waits for its context to end
// and fails as a storage layer does then; nothing else is called.
type waitingSearch struct {
	interfaces.Service
	started chan struct{}
}

func (s *waitingSearch) Search(ctx context.Context, _ interfaces.SearchArgs) (interfaces.SearchOutput, error) {
	close(s.started)
	<-ctx.Done()
	return interfaces.SearchOutput{}, workspace.Wrap(workspace.CodeInternal, ctx.Err(), "internal error")
}

type oneToken struct{}

func (oneToken) Authenticate(_ context.Context, secret string) (workspace.Principal, error) {
	if secret == "secret" {
		return workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}, nil
	}
	return workspace.Principal{}, workspace.Errorf(workspace.CodeUnauthenticated, "invalid bearer token")
}

// records is a slog.Handler keeping each record's level and message.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }

func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	return nil
}

func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

// TestCancelledRequestIsNoFailure: a client that goes away in the middle
// of a request (a stdio bridge whose MCP client cancelled the call) is not
// logged as a failure of the server.
func TestCancelledRequestIsNoFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc := &waitingSearch{started: make(chan struct{})}
	logs := &records{}
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
	case <-svc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the search never started")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled request got an answer")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(logs.all(), "DEBUG request cancelled") {
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled request was logged as %q", logs.all())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, m := range logs.all() {
		if strings.HasPrefix(m, "ERROR") || strings.HasPrefix(m, "WARN") {
			t.Fatalf("the cancelled request logged %q", m)
		}
	}
}
