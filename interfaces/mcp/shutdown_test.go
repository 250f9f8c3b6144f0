package mcpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/workspace"
)

// held is the real Service with a search that waits until released (or
// its context ends).
type held struct {
	*testkit.Service
	started chan struct{}
	release chan struct{}
}

func newHeld(base interfaces.Service) *held {
	h := &held{started: make(chan struct{}, 1), release: make(chan struct{})}
	h.Service = &testkit.Service{Base: base, SearchFunc: func(ctx context.Context, args interfaces.SearchArgs) (interfaces.SearchOutput, error) {
		h.started <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
			return interfaces.SearchOutput{}, ctx.Err()
		}
		return base.Search(ctx, args)
	}}
	return h
}

// TestHTTPShutdownLetsCallsAnswer: Shutdown refuses new requests with
// UNAVAILABLE, lets a call in flight (over a session) answer, and only
// then ends the sessions.
func TestHTTPShutdownLetsCallsAnswer(t *testing.T) {
	own := startOwner(t)
	svc := newHeld(own.Service())
	base, mh := serveGuarded(t, svc)
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp/", HTTPClient: httpClient(t, ownerSecret, ""), MaxRetries: -1}
	cs, err := newClient().Connect(testCtx(t), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"request": map[string]any{"question": "q"}}})
		answered <- answer{res, err}
	}()
	select { // the call is in flight
	case <-svc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never started")
	}

	stopped := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { stopped <- mh.Shutdown(ctx) }()
	// A new request while the call runs: 503, the UNAVAILABLE envelope.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body := rawPost(t, base+"/mcp/", ownerSecret, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"0"}}}`)
		if resp.StatusCode == http.StatusServiceUnavailable {
			var eb interfaces.ErrorBody
			if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code != workspace.CodeUnavailable {
				t.Fatalf("a request during the shutdown: %d %s", resp.StatusCode, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a request during the shutdown was still served: %d %s", resp.StatusCode, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned (%v) with a call in flight", err)
	default:
	}
	close(svc.release)
	a := <-answered
	if a.err != nil {
		t.Fatalf("the call in flight got no answer: %v", a.err)
	}
	if a.res.IsError {
		t.Fatalf("the call in flight failed: %s", dump(a.res.Content))
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	// The session is over.
	if _, err := cs.ListTools(testCtx(t), nil); err == nil {
		t.Fatal("the session still answers after Shutdown")
	}
}

// TestHTTPShutdownBounded: a call that does not end in time does not hold
// Shutdown past its context: it is cut, answers UNAVAILABLE, and the
// sessions close.
func TestHTTPShutdownBounded(t *testing.T) {
	own := startOwner(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			svc := newHeld(own.Service())
			defer close(svc.release)
			base, mh := serveGuarded(t, svc)
			answered := make(chan string, 1)
			if version == "2026-07-28" {
				meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
				go func() {
					req, _ := http.NewRequest(http.MethodPost, base+"/mcp/", strings.NewReader(
						`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}}`+meta+`}}`))
					for k, v := range map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "search",
						"Authorization": "Bearer " + ownerSecret, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"} {
						req.Header.Set(k, v)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						answered <- err.Error()
						return
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					answered <- string(b)
				}()
			} else {
				cs := httpSessionAt(t, base+"/mcp/", ownerSecret, "", version)
				go func() {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"request": map[string]any{"question": "q"}}})
					if err != nil {
						answered <- err.Error()
						return
					}
					answered <- dump(res.Content)
				}()
			}
			select {
			case <-svc.started:
			case a := <-answered:
				t.Fatalf("the call ended before the shutdown: %s", a)
			case <-time.After(10 * time.Second):
				t.Fatal("the call never started")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := mh.Shutdown(ctx)
			if took := time.Since(start); err == nil || took > 3*time.Second {
				t.Fatalf("Shutdown with a call that does not end: %v after %v", err, took)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Shutdown error %v, want the context's", err)
			}
			select {
			case a := <-answered:
				if !strings.Contains(a, `UNAVAILABLE`) {
					t.Fatalf("the cut call answered %s", a)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the cut call never ended")
			}
		})
	}
}
