package mcpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/workspace"
)

var fuzzSeeds = []string{
	`{"request":{"subject":"sources"}}`,
	`{"request":{"subject":"kinds","limit":2,"cursor":"x"}}`,
	`{"request":{"question":"tokens"}}`,
	`{"request":{"question":"a","filters":{"paths":["docs/**"],"facets":{"language":"go"}},"budget":{"max_tokens":10}},"render":"agent@1"}`,
	`{"replay_run_id":"run_1"}`,
	`{"request":{"subject":"revisions","source_id":"s","include_content":true}}`,
	`{"action":"add","source":{"path":"/","kind":"folder","include":["*.md"]}}`,
	`{"action":"sync","source_id":"src_1"}`,
	`{"action":"add","source":{"selection_id":"sel_1","sha256":"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f","text":"seen\r\nhere","model":"m"}}`,
	`{"action":"add","source":{"selection_id":"sel_1","path":"docs","text":"\u0000"}}`,
	`{"action":"list","state":"running","limit":100}`,
	`{"action":"cancel","job_id":"j"}`,
	`{}`, `null`, `[]`, `"x"`, `1e999`, `{"request":null}`, `{"request":{"question":"\u0000\ud800"}}`,
	`{"request":{"subject":"sources","limit":1e30}}`, `{"a":{"b":{"c":[[[[[[[]]]]]]]}}}`,
	`{"request":{"question":"\ud800 lone"}}`, `{"request":{"question":"\udc00\ud800\udc00"}}`,
	`{"request":{"question":"x","cursor":null,"limit":null}}`, `{"request":{"subject":"kinds","limit":0}}`,
	`{"request":{"question":"x","limit":1.0,"budget":{"max_tokens":0}}}`, `{"action":"list","limit":1e2,"limit":null}`,
	`{"request":{"question":"x","filters":{"facets":{"a":{"a":{"a":1}}}}}}`, `{"request":{"question":"x","limit":1e400}}`,
}

// FuzzToolArguments sends arbitrary JSON arguments to every tool: a call
// through a real server always answers with a tool result (the envelope or
// a structured object), never a JSON-RPC error. What the decoder refuses,
// and in what words, is interfaces' FuzzArgumentErrors.
func FuzzToolArguments(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(uint8(i), s)
	}
	own := startOwner(f)
	cs := memSession(f, own.Service(), ownerP, "")
	tools := interfaces.ToolNames()
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		tool := tools[int(which)%len(tools)]
		if !json.Valid([]byte(args)) {
			return // no client can send it
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s %s: JSON-RPC error %v", tool, args, err)
		}
		if res.IsError {
			envelope(t, res)
			return
		}
		checkOutcome(t, tool, res)
	})
}

var rpcSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"discover","arguments":{"request":{"subject":"sources"}}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"tychora://kinds/code"}}`,
	`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`{"jsonrpc":"1.0","id":null}`, `{}`, `[]`, ``, `{"jsonrpc":"2.0","id":{},"method":"x"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`,
	`{"jsonrpc":"2.0","method":"notifications/nope"}`, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"nope"}]`,
}

var rpcVersions = []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "2099-01-01", "garbage"}

// FuzzJSONRPC posts arbitrary bytes to the real owner's /mcp/, with and
// without a session and under every protocol version header: never a 500,
// and the owner keeps answering.
func FuzzJSONRPC(f *testing.F) {
	for i, s := range rpcSeeds {
		f.Add(uint8(i), []byte(s))
	}
	own := startOwner(f)
	url := own.URL() + "/mcp/"
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	f.Cleanup(hc.CloseIdleConnections)
	var lastBody []byte // the body of post's last answer (the fuzz function runs serially)
	post := func(hdr map[string]string, body []byte) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+own.Token())
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		lastBody, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		return resp, nil
	}
	// A live session for the inputs that use one.
	init, err := post(nil, []byte(rpcSeeds[0]))
	if err != nil || init.Header.Get("Mcp-Session-Id") == "" {
		f.Fatalf("no session: %v", err)
	}
	sid := init.Header.Get("Mcp-Session-Id")
	if _, err := post(map[string]string{"Mcp-Session-Id": sid}, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, mode uint8, body []byte) {
		// subscriptions/listen holds its stream open until the client
		// goes: not a request this target can wait for.
		if strings.Contains(string(body), "listen") {
			t.Skip()
		}
		hdr := map[string]string{}
		if v := rpcVersions[int(mode)%len(rpcVersions)]; v != "" {
			hdr["Mcp-Protocol-Version"] = v
		}
		if mode&0x80 != 0 {
			hdr["Mcp-Session-Id"] = sid
		}
		if hdr["Mcp-Protocol-Version"] >= "2026-07-28" {
			var m struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
					URI  string `json:"uri"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &m) == nil && validHeader(m.Method) && validHeader(m.Params.Name+m.Params.URI) {
				hdr["Mcp-Method"] = m.Method
				hdr["Mcp-Name"] = m.Params.Name + m.Params.URI
			}
		}
		resp, err := post(hdr, body)
		if err != nil {
			t.Fatalf("post %q (headers %v): %v", body, hdr, err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("status %d for %q (headers %v)", resp.StatusCode, body, hdr)
		}
		// What is not JSON is the JSON-RPC parse error (valid UTF-8 only:
		// other bytes are refused before, with the envelope).
		if utf8.Valid(body) && !json.Valid(body) && len(body) > 0 {
			var a struct {
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			var m map[string]json.RawMessage
			if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(lastBody, &a) != nil || a.Error.Code != -32700 ||
				json.Unmarshal(lastBody, &m) != nil || string(m["id"]) != "null" {
				t.Fatalf("%q: status %d, %q; want 400 and the parse error -32700 with id null", body, resp.StatusCode, lastBody)
			}
		}
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" && s != sid {
			req, _ := http.NewRequest(http.MethodDelete, url, nil)
			req.Header.Set("Authorization", "Bearer "+own.Token())
			req.Header.Set("Mcp-Session-Id", s)
			if r, err := hc.Do(req); err == nil {
				_ = r.Body.Close()
			}
		}
	})
}

func validHeader(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// FuzzStdioFrames feeds arbitrary bytes to ServeStdio as its input (with a
// small request limit): it never panics, every line it writes is JSON, and
// it ends cleanly at the end of the input.
func FuzzStdioFrames(f *testing.F) {
	for _, s := range rpcSeeds {
		f.Add([]byte(s + "\n"))
	}
	for _, s := range []string{"not json\n", "\n\n", "[]\r\n", "{\"jsonrpc\":\"2.0\"\n", "\xff\xfe\n", strings.Repeat("x", 3000) + "\n{}"} {
		f.Add([]byte(s))
	}
	// Sequences that ended the SDK's session: batches with notifications,
	// batches reusing ids.
	for _, lines := range [][]string{
		{reportedBatch, reportedBatch},
		{initialize("1", "2025-03-26"), initializedN, reportedBatch, reportedBatch},
		{initialize("1", "2024-11-05"), reportedBatch, initializedN, batchOf(initializedN, initializedN)},
		{batchOf(ping("1"), initializedN), batchOf(ping("1"), ping("2")), ping("1"), batchOf(unknownN, ping("2"))},
		{batchOf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}}}}`), batchOf(ping("3"), cancelledN)},
	} {
		f.Add([]byte(strings.Join(lines, "\n") + "\n"))
	}
	own := startOwner(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		if strings.Contains(string(in), "listen") {
			t.Skip() // subscriptions/listen holds its stream open
		}
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := mcpapi.ServeStdio(ctx, own.Service(), workspace.Principal{ID: "fuzz", Grant: workspace.GrantRead}, bytes.NewReader(in), &out, mcpapi.Options{MaxRequestBytes: 2048})
		if err != nil {
			t.Fatalf("ServeStdio(%q): %v", in, err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) > 0 && !json.Valid(line) {
				t.Fatalf("ServeStdio(%q) wrote a line that is not JSON: %q", in, line)
			}
		}
	})
}
