package mcpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/workspace"
)

// wireResponse is a JSON-RPC response as it travels.
type wireResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ids lists the ids of rs, each as compact JSON, sorted.
func ids(rs []wireResponse) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, string(r.ID))
	}
	slices.Sort(out)
	return out
}

// expectFrame reads one frame and checks it is what want says:
// "-32600", the Invalid Request error with a null id; "[…]", a batch
// answer holding exactly those ids (as JSON values, in any order);
// anything else, one response with that id (as JSON).
func expectFrame(t *testing.T, f frames, sent, want string) []wireResponse {
	t.Helper()
	msg := f.next()
	var rs []wireResponse
	switch {
	case want == "-32600":
		var r wireResponse
		if err := json.Unmarshal(msg, &r); err != nil || string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32600 {
			t.Fatalf("after %s: %s, want -32600 with id null", sent, msg)
		}
		return []wireResponse{r}
	case strings.HasPrefix(want, "["):
		if err := json.Unmarshal(msg, &rs); err != nil {
			t.Fatalf("after %s: %s, want a batch answer %s", sent, msg, want)
		}
		var wantIDs []json.RawMessage
		if err := json.Unmarshal([]byte(want), &wantIDs); err != nil {
			t.Fatal(err)
		}
		var ws []string
		for _, id := range wantIDs {
			ws = append(ws, string(id))
		}
		slices.Sort(ws)
		if got := ids(rs); !slices.Equal(got, ws) {
			t.Fatalf("after %s: %s, want answers to %s", sent, msg, want)
		}
	default:
		var r wireResponse
		if err := json.Unmarshal(msg, &r); err != nil || string(r.ID) != want {
			t.Fatalf("after %s: %s, want the answer to id %s", sent, msg, want)
		}
		rs = []wireResponse{r}
	}
	for _, r := range rs {
		if r.Result == nil && r.Error == nil {
			t.Fatalf("after %s: %s has neither result nor error", sent, msg)
		}
	}
	return rs
}

func ping(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }

func batchOf(msgs ...string) string { return "[" + strings.Join(msgs, ",") + "]" }

func initialize(id, version string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
}

const (
	initializedN = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	cancelledN   = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"zz"}}`
	unknownN     = `{"jsonrpc":"2.0","method":"notifications/nope"}`
	// reportedBatch ended the stdio session (and the process) the second
	// time it came: the SDK keeps a batch's notification as an unanswered
	// request with the null id.
	reportedBatch = `[{"jsonrpc":"2.0","id":"d1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`
)

// TestStdioBatchesNeverEndTheSession sends sequences of batches that
// ended go-sdk's stdio session, under every protocol version that has
// batches and before any handshake: every request of an accepted batch is
// answered (with one array), and the session lives on (ServeStdio returns
// nil at the end of the input, not the SDK's error).
func TestStdioBatchesNeverEndTheSession(t *testing.T) {
	own := startOwner(t)
	type step struct{ send, want string } // want: see expectFrame; "" nothing
	sequences := map[string][]step{
		"the reported batch twice": {{reportedBatch, `["d1"]`}, {reportedBatch, `["d1"]`}},
		"a batch then a notification": {
			{reportedBatch, `["d1"]`}, {initializedN, ""}, {ping(`"p"`), `"p"`}, {reportedBatch, `["d1"]`},
		},
		"batches of notifications only": {
			{batchOf(initializedN, cancelledN), ""}, {batchOf(unknownN), ""}, {batchOf(initializedN, initializedN, unknownN), ""},
			{reportedBatch, `["d1"]`}, {batchOf(cancelledN, cancelledN), ""},
		},
		"notifications around requests": {
			{batchOf(initializedN, ping("1"), cancelledN, ping(`"a"`), unknownN), `[1,"a"]`},
			{batchOf(ping("1"), initializedN), `[1]`}, {batchOf(unknownN, ping(`"a"`)), `["a"]`},
		},
		"ids reused once answered": {
			{batchOf(ping("1"), ping("2")), `[1,2]`}, {batchOf(ping("2"), ping("1")), `[1,2]`},
			{ping("1"), "1"}, {batchOf(ping("1.0")), `[1]`}, {batchOf(ping("10e-1"), initializedN), `[1]`},
		},
		"one id twice in a batch": {
			{batchOf(ping("1"), ping("1.0")), "-32600"}, {batchOf(ping(`"x"`), initializedN, ping(`"x"`)), "-32600"}, {batchOf(ping("1")), `[1]`},
		},
		"a notification's method with an id": {
			{batchOf(`{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}`, ping("6")), `[5,6]`},
			{batchOf(`{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}`, initializedN), `[5]`},
		},
		"responses in a batch": {
			{batchOf(`{"jsonrpc":"2.0","id":99,"result":{}}`, ping("7"), initializedN), `[7]`},
			{batchOf(`{"jsonrpc":"2.0","id":99,"result":{}}`, initializedN), ""},
		},
		"bad ids": {
			{batchOf(ping("1.5"), initializedN), "-32600"}, {ping("null"), "-32600"}, {batchOf(ping("2"), `{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`), "-32600"},
			{reportedBatch, `["d1"]`},
		},
	}
	for _, version := range []string{"2025-03-26", "2024-11-05", ""} {
		for name, steps := range sequences {
			t.Run(cmpOr(version, "no handshake")+"/"+name, func(t *testing.T) {
				f, send, end := rawStdio(t, own.Service())
				if version != "" {
					send(initialize(`"init"`, version))
					if msg := f.next(); !bytes.Contains(msg, []byte(`"protocolVersion":"`+version+`"`)) {
						t.Fatalf("initialize: %s", msg)
					}
					send(initializedN)
				}
				for _, s := range steps {
					send(s.send)
					if s.want != "" {
						expectFrame(t, f, s.send, s.want)
					}
				}
				send(ping(`"end"`))
				expectFrame(t, f, "the last ping", `"end"`)
				end()
			})
		}
	}
	// A handshake in a batch, with its notification.
	f, send, end := rawStdio(t, own.Service())
	line := batchOf(initialize("1", "2025-03-26"), initializedN, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	send(line)
	if rs := expectFrame(t, f, line, `[1,2]`); rs[0].Error != nil || rs[1].Error != nil {
		t.Fatalf("handshake in a batch: %+v", rs)
	}
	send(reportedBatch)
	expectFrame(t, f, reportedBatch, `["d1"]`)
	send(reportedBatch)
	expectFrame(t, f, reportedBatch, `["d1"]`)
	end()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestStdioBatchReusesIDInFlight: a batch reusing the id of a request the
// SDK has not answered yet, which the SDK ends the session on, is refused;
// once the request is answered, the id is free again.
func TestStdioBatchReusesIDInFlight(t *testing.T) {
	own := startOwner(t)
	svc := newHeld(own.Service())
	f, send, end := rawStdio(t, svc)
	send(initialize("1", "2025-03-26"))
	f.next()
	send(initializedN)
	search := `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}}}}`
	send(batchOf(search, initializedN))
	select {
	case <-svc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the search never started")
	}
	for _, line := range []string{batchOf(ping(`"a"`)), batchOf(ping(`"b"`), ping(`"a"`), initializedN), ping(`"a"`)} {
		send(line)
		expectFrame(t, f, line, "-32600")
	}
	send(batchOf(ping(`"b"`), unknownN))
	expectFrame(t, f, "a batch with another id", `["b"]`)
	close(svc.release)
	if rs := expectFrame(t, f, "the release of the search", `["a"]`); rs[0].Result == nil {
		t.Fatalf("search: %+v", rs[0])
	}
	send(batchOf(ping(`"a"`), initializedN))
	expectFrame(t, f, "the id once answered", `["a"]`)
	end()
}

// TestStdioRandomSequences drives random lines of requests, notifications
// and responses, alone or in batches, through a stdio session: every line
// holding a request gets exactly the answers JSON-RPC asks for, and the
// session never ends.
func TestStdioRandomSequences(t *testing.T) {
	own := startOwner(t)
	idPool := []string{"1", "2", "2.0", `"a"`, `"b"`, "20e-1", `"1"`}
	canon := map[string]string{"2.0": "2", "20e-1": "2"}
	requests := []string{
		`{"jsonrpc":"2.0","id":%s,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":%s,"method":"resources/templates/list"}`,
		`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"discover","arguments":{"request":{"subject":"kinds"}}}}`,
		`{"jsonrpc":"2.0","id":%s,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":%s,"method":"notifications/initialized"}`,
	}
	others := []string{
		initializedN, unknownN, cancelledN,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress"}`,
		`{"jsonrpc":"2.0","id":"srv-1","result":{}}`,
	}
	for _, version := range []string{"2025-03-26", "2024-11-05", ""} {
		t.Run(cmpOr(version, "no handshake"), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 1))
			f, send, end := rawStdio(t, own.Service())
			if version != "" {
				send(initialize(`"init"`, version))
				f.next()
				send(initializedN)
			}
			for range 150 {
				n := 1 + rng.IntN(5)
				var msgs, reqIDs []string
				dup := false
				seen := map[string]bool{}
				for range n {
					if rng.IntN(2) == 0 {
						msgs = append(msgs, others[rng.IntN(len(others))])
						continue
					}
					id := idPool[rng.IntN(len(idPool))]
					msgs = append(msgs, fmt.Sprintf(requests[rng.IntN(len(requests))], id))
					c := cmpOr(canon[id], id)
					dup = dup || seen[c]
					seen[c] = true
					reqIDs = append(reqIDs, c)
				}
				single := n == 1 && rng.IntN(2) == 0
				line := batchOf(msgs...)
				if single {
					line = msgs[0]
				}
				send(line)
				switch {
				case len(reqIDs) == 0:
				case single:
					expectFrame(t, f, line, reqIDs[0])
				case dup:
					expectFrame(t, f, line, "-32600")
				default:
					expectFrame(t, f, line, "["+strings.Join(reqIDs, ",")+"]")
				}
			}
			send(ping(`"end"`))
			expectFrame(t, f, "the last ping", `"end"`)
			end()
		})
	}
}

// TestStdioCancelledCall: a tool call the client cancels is no server
// failure: it is not logged as an error, and the answer the SDK still
// sends (it answers every request) is not labelled INTERNAL.
func TestStdioCancelledCall(t *testing.T) {
	own := startOwner(t)
	for _, version := range []string{"2025-11-25", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			svc := newHeld(own.Service())
			defer close(svc.release)
			logs := &testkit.Logs{}
			f, send, end := rawStdioWith(t, svc, mcpapi.Options{Logger: slog.New(logs)})
			send(initialize("1", version))
			f.next()
			send(initializedN)
			send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}}}}`)
			select {
			case <-svc.started:
			case <-time.After(10 * time.Second):
				t.Fatal("the search never started")
			}
			send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user"}}`)
			rs := expectFrame(t, f, "the cancellation", "2")
			var res struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if rs[0].Error != nil || json.Unmarshal(rs[0].Result, &res) != nil || !res.IsError || len(res.Content) != 1 {
				t.Fatalf("the cancelled call answered %+v %s", rs[0].Error, rs[0].Result)
			}
			var body struct {
				Error struct {
					Code workspace.Code `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(res.Content[0].Text), &body); err != nil || body.Error.Code != workspace.CodeUnavailable {
				t.Fatalf("the cancelled call answered %s, want UNAVAILABLE (not INTERNAL)", res.Content[0].Text)
			}
			if errs := logs.At(slog.LevelWarn); len(errs) > 0 {
				t.Fatalf("a cancelled call logged %q", errs)
			}
			logs.WaitFor(t, "mcp call cancelled")
			send(ping("3"))
			expectFrame(t, f, "a ping after the cancellation", "3")
			end()
		})
	}
}

// TestHTTPCancelledCall: the SDK client cancels a call over a session;
// the call ends without an error logged.
func TestHTTPCancelledCall(t *testing.T) {
	own := startOwner(t)
	svc := newHeld(own.Service())
	defer close(svc.release)
	logs := &testkit.Logs{}
	base, _ := serveGuardedWith(t, svc, mcpapi.HTTPOptions{Options: mcpapi.Options{Logger: slog.New(logs)}})
	cs := httpSessionAt(t, base+"/mcp/", ownerSecret, "", "2025-11-25")
	ctx, cancel := context.WithCancel(testCtx(t))
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"request": map[string]any{"question": "q"}}})
		called <- err
	}()
	select {
	case <-svc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the search never started")
	}
	cancel()
	if err := <-called; err == nil {
		t.Fatal("the cancelled call succeeded")
	}
	logs.WaitFor(t, "mcp call cancelled")
	if errs := logs.At(slog.LevelError); len(errs) > 0 {
		t.Fatalf("a cancelled call logged %q", errs)
	}
	listTools(t, cs) // the session lives on
}

// rawSession opens a session at version on url by hand and returns the
// headers of its requests.
func rawSession(t *testing.T, url, token, version string) map[string]string {
	t.Helper()
	resp, msg := rawPost(t, url, token, nil, initialize("1", version))
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, msg)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}
	if resp, _ := rawPost(t, url, token, hdr, initializedN); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	return hdr
}

// expectRPCError checks an HTTP answer is a 400 with one JSON-RPC error
// response of code with id.
func expectRPCError(t *testing.T, what string, resp *http.Response, body []byte, code int, id string) {
	t.Helper()
	var r wireResponse
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" ||
		json.Unmarshal(body, &r) != nil || r.Error == nil || r.Error.Code != code || string(r.ID) != id || r.Error.Message == "" {
		t.Fatalf("%s: %d %s %s, want 400 application/json and the JSON-RPC error %d with id %s",
			what, resp.StatusCode, resp.Header.Get("Content-Type"), body, code, id)
	}
}

// TestHTTPRefusedIDs: an id that is null, or a number that is no integer
// the SDK keeps exactly (it would answer 1.5 as 1), is -32600 with a null
// id, in a session and out of one; an integer in another spelling is
// answered with the integer.
func TestHTTPRefusedIDs(t *testing.T) {
	own := startOwner(t)
	url := own.URL() + "/mcp/"
	hdr := rawSession(t, url, own.Token(), "2025-11-25")
	for _, h := range []map[string]string{hdr, nil} {
		for _, id := range []string{"null", "1.5", "-0.5", "1e-3", "1.0000000000000000001", "9007199254740993", "1e300", "true", "{}"} {
			resp, body := rawPost(t, url, own.Token(), h, ping(id))
			expectRPCError(t, "the id "+id, resp, body, -32600, "null")
		}
		resp, body := rawPost(t, url, own.Token(), h, `{"jsonrpc":"2.0","id":1,"method":null}`)
		expectRPCError(t, "a null method", resp, body, -32600, "null")
	}
	for id, want := range map[string]string{"2.0": "2", "3e0": "3", "-9007199254740992": "-9007199254740992", `"1.5"`: `"1.5"`} {
		resp, msg := rawPost(t, url, own.Token(), hdr, ping(id))
		var r wireResponse
		if resp.StatusCode != http.StatusOK || json.Unmarshal(msg, &r) != nil || string(r.ID) != want || r.Result == nil {
			t.Fatalf("ping with the id %s: %d %s, want a result with id %s", id, resp.StatusCode, msg, want)
		}
	}
}

// TestHTTPUnknownMethods: what the SDK answers with a plain-text 400 for
// the whole body is answered as JSON-RPC and stdio answer it: -32601 for
// an unknown request, -32600 for a malformed one (with their ids), and an
// unknown notification is accepted and ignored.
func TestHTTPUnknownMethods(t *testing.T) {
	own := startOwner(t)
	url := own.URL() + "/mcp/"
	tok := own.Token()
	hdr := rawSession(t, url, tok, "2025-11-25")

	resp, body := rawPost(t, url, tok, hdr, `{"jsonrpc":"2.0","id":9,"method":"no/such/method"}`)
	expectRPCError(t, "an unknown method", resp, body, -32601, "9")
	resp, body = rawPost(t, url, tok, hdr, `{"jsonrpc":"2.0","id":"x","method":"notifications/initialized"}`)
	expectRPCError(t, "a notification's method with an id", resp, body, -32600, `"x"`)
	resp, body = rawPost(t, url, tok, hdr, `{"jsonrpc":"2.0","id":11,"method":"tools/call"}`)
	expectRPCError(t, "tools/call without params", resp, body, -32600, "11")
	for _, n := range []string{unknownN, `{"jsonrpc":"2.0","method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/progress"}`} {
		if resp, body := rawPost(t, url, tok, hdr, n); resp.StatusCode != http.StatusAccepted || len(body) != 0 {
			t.Fatalf("%s: %d %s, want 202", n, resp.StatusCode, body)
		}
	}
	// The session lives on.
	resp, msg := rawPost(t, url, tok, hdr, `{"jsonrpc":"2.0","id":12,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(msg, []byte(`"search"`)) {
		t.Fatalf("tools/list after them: %d %s", resp.StatusCode, msg)
	}
	// A session the SDK does not know is still the SDK's 404.
	gone := map[string]string{"Mcp-Session-Id": "no-such-session", "Mcp-Protocol-Version": "2025-11-25"}
	if resp, _ := rawPost(t, url, tok, gone, `{"jsonrpc":"2.0","id":9,"method":"no/such/method"}`); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown method on an unknown session: %d, want 404", resp.StatusCode)
	}

	// Batches (2025-03-26).
	old := rawSession(t, url, tok, "2025-03-26")
	resp, msg = rawPost(t, url, tok, old, batchOf(ping("1"), unknownN))
	var rs []wireResponse
	var one wireResponse // the SDK sends a batch's answers as events of one stream
	if resp.StatusCode != http.StatusOK || json.Unmarshal(msg, &one) != nil || string(one.ID) != "1" || one.Result == nil {
		t.Fatalf("a batch with an unknown notification: %d %s, want the ping answered", resp.StatusCode, msg)
	}
	if resp, body := rawPost(t, url, tok, old, batchOf(unknownN, cancelledN, `{"jsonrpc":"2.0","method":"tools/list"}`)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a batch of notifications: %d %s, want 202", resp.StatusCode, body)
	}
	resp, body = rawPost(t, url, tok, old, batchOf(ping("2"), unknownN, `{"jsonrpc":"2.0","id":3,"method":"nope"}`))
	rs = nil
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &rs) != nil || len(rs) != 2 ||
		string(rs[0].ID) != "2" || rs[0].Error == nil || rs[0].Error.Code != -32600 || string(rs[1].ID) != "3" || rs[1].Error == nil || rs[1].Error.Code != -32601 {
		t.Fatalf("a batch with an unknown request: %d %s, want 400 and an answer to each request", resp.StatusCode, body)
	}

	// Stateless (2026-07-28): the SDK answers an unknown request itself
	// (-32601 with the 404 of SEP-2575); an unknown notification is taken.
	sl := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/nope"}
	if resp, body := rawPost(t, url, tok, sl, unknownN); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("stateless unknown notification: %d %s, want 202", resp.StatusCode, body)
	}
	sl["Mcp-Method"] = "no/such/method"
	resp, body = rawPost(t, url, tok, sl, `{"jsonrpc":"2.0","id":4,"method":"no/such/method","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	var r wireResponse
	if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &r) != nil || r.Error == nil || r.Error.Code != -32601 || string(r.ID) != "4" {
		t.Fatalf("stateless unknown request: %d %s, want 404 and -32601", resp.StatusCode, body)
	}
}

// TestServerMethodsMatchSDK checks the method table the HTTP handler
// screens bodies with against the SDK's own check, which answers a
// plain-text 400 for what it refuses: each method in the table is taken
// in its shape, and refused with an id flipped or without required
// params; an unknown method is refused (so the probe can tell).
func TestServerMethodsMatchSDK(t *testing.T) {
	own := startOwner(t)
	mh := mcpapi.NewHTTPHandler(own.Service(), mcpapi.HTTPOptions{})
	t.Cleanup(func() { _ = mh.Close() })
	url := serveMCP(t, own.Service(), mh.SDKSessionHandler()) + "/mcp/"
	hdr := rawSession(t, url, ownerSecret, "2025-11-25")
	hc := &http.Client{Transport: &http.Transport{}, Timeout: time.Second}
	t.Cleanup(hc.CloseIdleConnections)
	n := 100
	refused := func(method string, id, params bool) bool {
		t.Helper()
		m := map[string]any{"jsonrpc": "2.0", "method": method}
		if id {
			n++
			m["id"] = n
		}
		if params {
			m["params"] = map[string]any{}
		}
		b, _ := json.Marshal(m)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+ownerSecret)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false // still running (subscriptions/listen): taken
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusBadRequest && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain")
	}
	if !refused("no/such/method", true, true) {
		t.Fatal("the SDK takes an unknown method: the probe cannot tell")
	}
	for method, rule := range mcpapi.ServerMethods() {
		notification, needsParams := rule[0], rule[1]
		if refused(method, !notification, true) {
			t.Errorf("%s: the SDK refuses it in the shape of the table", method)
		}
		if !refused(method, notification, true) {
			t.Errorf("%s: the SDK takes it with the id flipped: the table's notification flag is wrong", method)
		}
		if got := refused(method, !notification, false); got != needsParams {
			t.Errorf("%s without params: refused %v, the table says params required %v", method, got, needsParams)
		}
	}
}
