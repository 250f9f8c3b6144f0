package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// bodyBound is the BodyTimeout of the slow clients' tests; normalBound
// that of the normal clients', long enough for a 4 MiB body under the
// race detector on a busy machine.
const (
	bodyBound   = 200 * time.Millisecond
	normalBound = 2 * time.Second
)

// lingering is a Service whose search answers only once normalBound has
// passed, and records whether its context ended first.
func lingering(cancelled *atomic.Bool) *testkit.Service {
	return &testkit.Service{SearchFunc: func(ctx context.Context, _ interfaces.SearchArgs) (interfaces.SearchOutput, error) {
		select {
		case <-time.After(normalBound + 500*time.Millisecond):
			return interfaces.SearchOutput{Result: query.QueryResult{RunID: "run_1"}, Structured: json.RawMessage(`{"run_id":"run_1"}`)}, nil
		case <-ctx.Done():
			cancelled.Store(true)
			return interfaces.SearchOutput{}, workspace.Wrap(workspace.CodeUnavailable, ctx.Err(), "cancelled")
		}
	}}
}

// serveBodyBound serves NewHandler over svc on loopback with BodyTimeout
// bound, "secret" as the owner's token and an MCP stand-in that reads its
// body, and returns the authority.
func serveBodyBound(t *testing.T, svc interfaces.Service, bound time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"mcp":true}`)
	})
	srv := &http.Server{Handler: httpapi.NewHandler(svc, httpapi.Options{
		Authority: ln.Addr().String(), Auth: oneToken{}, MCP: mcp, MaxRequestBytes: 4 << 20, BodyTimeout: bound,
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// trickle sends head, then the body one byte every 20 ms (with chunked,
// each byte as its own chunk, and no last chunk) until the server stops
// reading or 10 s have passed. It returns the answer's status line and
// body, whether the server closed the connection after it, and how many
// body bytes had been sent when the answer came.
func trickle(t *testing.T, authority, head string, chunked bool) (status string, body []byte, closed bool, sent int64) {
	t.Helper()
	conn, err := net.Dial("tcp", authority)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	var count atomic.Int64
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; i < 500; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			b := "x"
			if chunked {
				b = "1\r\nx\r\n"
			}
			if _, err := io.WriteString(conn, b); err != nil {
				return
			}
			count.Add(1)
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	sent = count.Load()
	body, _ = io.ReadAll(resp.Body)
	_, err = br.ReadByte()
	closed = errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
	return resp.Status, body, closed, sent
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && !oe.Timeout()
}

// TestSlowBodyIsCut: a client that sends its headers and then trickles
// its body is answered and disconnected once the body bound has passed,
// long before its body is complete, on every route and whether or not it
// is authenticated (net/http reads a refused request's unread body too).
func TestSlowBodyIsCut(t *testing.T) {
	authority := serveBodyBound(t, newRecording(), bodyBound)
	const length = 400 // bytes, 8 s at the trickle's pace
	cases := []struct {
		name, head string
		chunked    bool
		status     int
	}{
		{"v1 search", "POST /v1/search HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer secret\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", false, http.StatusRequestTimeout},
		{"mcp chunked", "POST /mcp/ HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer secret\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", true, http.StatusRequestTimeout},
		{"no token", "POST /v1/search HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", false, http.StatusUnauthorized},
		{"foreign host", "POST /v1/search HTTP/1.1\r\nHost: localhost%.0s\r\nContent-Length: %d\r\n\r\n", false, http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := fmt.Sprintf(c.head, authority, length)
			if c.chunked {
				head = fmt.Sprintf(c.head, authority)
			}
			status, body, closed, sent := trickle(t, authority, head, c.chunked)
			if !strings.HasPrefix(status, fmt.Sprint(c.status)) {
				t.Fatalf("status %s %s, want %d", status, body, c.status)
			}
			var eb interfaces.ErrorBody
			if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Message == "" {
				t.Fatalf("answer %q is not the error envelope", body)
			}
			if c.status == http.StatusRequestTimeout && (eb.Error.Code != workspace.CodeInvalidArgument || !strings.Contains(eb.Error.Message, "did not arrive within 200ms")) {
				t.Fatalf("answer %s, want INVALID_ARGUMENT naming the bound", body)
			}
			if !closed {
				t.Error("the connection stayed open after the answer")
			}
			if sent >= length {
				t.Errorf("answered after the whole body (%d bytes) had been sent", sent)
			}
		})
	}
}

// TestBodyBoundSparesNormalClients: a 4 MiB body sent at once is read
// whole; an answer that takes longer than the bound once the body is in
// is neither cut nor cancelled; and the connection serves the next
// request afterwards.
func TestBodyBoundSparesNormalClients(t *testing.T) {
	var cancelled atomic.Bool
	authority := serveBodyBound(t, lingering(&cancelled), normalBound)
	tr := &http.Transport{Proxy: nil, MaxConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	post := func(path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+authority+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer secret")
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	big := `{"request":{"question":"q"}}` + strings.Repeat(" ", 4<<20-28)
	if code, body := post("/mcp/", big); code != http.StatusOK {
		t.Fatalf("a 4 MiB body: %d %s", code, body)
	}
	if code, body := post("/v1/search", `{"request":{"question":"q"}}`); code != http.StatusOK || !strings.Contains(body, "run_1") {
		t.Fatalf("a search answering after the bound: %d %s", code, body)
	}
	if code, body := post("/mcp/", `{}`); code != http.StatusOK {
		t.Fatalf("the next request on the connection: %d %s", code, body)
	}
	if cancelled.Load() {
		t.Fatal("a search's context ended while it was answering")
	}
}
