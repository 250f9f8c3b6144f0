package mcpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/workspace"
)

// heldSearch is a tools/call of search with id, which the held service
// keeps running until it is released.
func heldSearch(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}}}}`
}

// TestHTTPRequestReusesIDInFlight: over a session on /mcp/, a request
// reusing the id of one still running gets the JSON-RPC error -32600
// (400), and the running call still gets its own answer.
func TestHTTPRequestReusesIDInFlight(t *testing.T) {
	own := startOwner(t)
	svc := newHeld(own.Service())
	base, _ := serveGuardedWith(t, svc, mcpapi.HTTPOptions{})
	url := base + "/mcp/"
	hdr := rawSession(t, url, ownerSecret, "2025-11-25")
	type answer struct {
		status int
		msg    []byte
	}
	first := make(chan answer, 1)
	go func() {
		resp, msg := rawPost(t, url, ownerSecret, hdr, heldSearch("5000"))
		first <- answer{resp.StatusCode, msg}
	}()
	select {
	case <-svc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the search never started")
	}
	resp, body := rawPost(t, url, ownerSecret, hdr, ping("5000"))
	var r wireResponse
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &r) != nil || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("a ping reusing the id in flight: %d %s, want 400 and the JSON-RPC error -32600", resp.StatusCode, body)
	}
	close(svc.release)
	a := <-first
	if err := json.Unmarshal(a.msg, &r); a.status != http.StatusOK || err != nil || string(r.ID) != "5000" || r.Result == nil {
		t.Fatalf("the held search: %d %s", a.status, a.msg)
	}
}

// TestHTTPCallBeforeInitialize: on /mcp/, a request other than initialize
// that names no session (and an older protocol version, or none) is
// refused with 400 and the error envelope, and logged below ERROR.
func TestHTTPCallBeforeInitialize(t *testing.T) {
	own := startOwner(t)
	logs := &testkit.Logs{}
	base, _ := serveGuardedWith(t, own.Service(), mcpapi.HTTPOptions{Options: mcpapi.Options{Logger: slog.New(logs)}})
	url := base + "/mcp/"
	for _, version := range []string{"", "2025-11-25", "2025-03-26"} {
		hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": version}
		for _, body := range []string{heldSearch("7"), ping("8"), `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`} {
			status, h, b := rawRequest(t, http.MethodPost, url, ownerSecret, hdr, body)
			e := wantEnvelope(t, body, status, h, b, http.StatusBadRequest, workspace.CodeInvalidArgument)
			if e.Error.Message == "" {
				t.Fatalf("%s: no message", body)
			}
		}
	}
	if errs := logs.At(slog.LevelError); len(errs) > 0 {
		t.Fatalf("a call before initialize logged at ERROR: %q", errs)
	}
}

// TestStdioSingleRequestReusesIDInFlight: over stdio, a request reusing
// the id of one still running (a tools/call, then a ping with its id) is
// answered with a JSON-RPC error at once, under every protocol version,
// and the running call still gets its own answer.
func TestStdioSingleRequestReusesIDInFlight(t *testing.T) {
	own := startOwner(t)
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		t.Run(version, func(t *testing.T) {
			svc := newHeld(own.Service())
			f, send, end := rawStdio(t, svc)
			send(initialize("1", version))
			f.next()
			send(initializedN)
			send(heldSearch("5000"))
			select {
			case <-svc.started:
			case <-time.After(10 * time.Second):
				t.Fatal("the search never started")
			}
			send(ping("5000"))
			expectFrame(t, f, "a ping reusing the id in flight", "-32600")
			send(ping(`"5000"`)) // a string id is another id
			expectFrame(t, f, "a ping with the string id", `"5000"`)
			close(svc.release)
			if rs := expectFrame(t, f, "the release of the search", "5000"); rs[0].Result == nil {
				t.Fatalf("search: %+v", rs[0])
			}
			send(ping("5000"))
			expectFrame(t, f, "the id once answered", "5000")
			end()
		})
	}
}

// TestSDKDropsReusedID is a canary: the SDK's own connection (here over
// its in-memory transport) never answers a request that reuses the id of
// one in flight, which is why the stdio connection answers it itself.
// When the SDK answers it, that check may go.
func TestSDKDropsReusedID(t *testing.T) {
	own := startOwner(t)
	svc := newHeld(own.Service())
	ctx := testCtx(t)
	srv := mcpapi.NewServer(svc, mcpapi.Options{Principal: &ownerP})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(s string) {
		t.Helper()
		m, err := jsonrpc.DecodeMessage([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	next := func() *jsonrpc.Response {
		t.Helper()
		m, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := m.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("read %T, want a response", m)
		}
		return r
	}
	send(initialize("1", "2025-11-25"))
	next()
	send(initializedN)
	send(heldSearch("5000"))
	<-svc.started
	send(ping("5000"))
	send(ping("6000"))
	if r := next(); r.ID.Raw() != int64(6000) {
		t.Fatalf("the SDK answered %v (%v) before the ping 6000: it answers a reused id; the stdio check may go", r.ID.Raw(), r.Error)
	}
	close(svc.release)
	if r := next(); r.ID.Raw() != int64(5000) || r.Error != nil {
		t.Fatalf("the held search answered %v %v", r.ID.Raw(), r.Error)
	}
	send(ping("7000"))
	if r := next(); r.ID.Raw() != int64(7000) {
		t.Fatalf("the SDK answered %v after the search, before ping 7000: the reused id got an answer of its own", r.ID.Raw())
	}
}
