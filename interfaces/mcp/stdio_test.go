package mcpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/workspace"
)

// stdioPipes runs ServeStdio on a pair of pipes and returns the client's
// ends and the channel of its result.
func stdioPipes(t testing.TB, ctx context.Context, svc interfaces.Service, p workspace.Principal) (toServer *io.PipeWriter, fromServer *io.PipeReader, done <-chan error) {
	t.Helper()
	return stdioPipesWith(t, ctx, svc, p, mcpapi.Options{})
}

// stdioPipesWith is stdioPipes with options.
func stdioPipesWith(t testing.TB, ctx context.Context, svc interfaces.Service, p workspace.Principal, o mcpapi.Options) (toServer *io.PipeWriter, fromServer *io.PipeReader, done <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ch := make(chan error, 1)
	go func() {
		err := mcpapi.ServeStdio(ctx, svc, p, inR, outW, o)
		_ = outW.Close()
		ch <- err
	}()
	return inW, outR, ch
}

func waitServe(t testing.TB, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return")
		return nil
	}
}

func TestStdioClient(t *testing.T) {
	own := startOwner(t)
	for _, v := range []string{"", "2025-11-25", "2024-11-05"} {
		t.Run("version "+v, func(t *testing.T) {
			toServer, fromServer, done := stdioPipes(t, testCtx(t), own.Service(), readerP)
			cs, err := newClient().Connect(testCtx(t), &mcp.IOTransport{Reader: fromServer, Writer: toServer}, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			tools := listTools(t, cs)
			if _, ok := tools["add_sources"]; ok || len(tools) != 4 {
				t.Errorf("a read-only stdio process lists %d tools, add_sources %v", len(tools), ok)
			}
			res := call(t, cs, "add_sources", map[string]any{"action": "sync", "source_id": "s"})
			if code := envelope(t, res); code != workspace.CodePermissionDenied {
				t.Errorf("add_sources as reader: %s", code)
			}
			res = call(t, cs, "discover", discoverSources)
			if res.IsError {
				t.Fatalf("discover: %s", dump(res))
			}
			if v == "2024-11-05" {
				if res.StructuredContent != nil || len(res.Content) != 1 {
					t.Fatalf("old protocol: %s", dump(res))
				}
			} else {
				checkOutcome(t, "discover", res)
			}
			if err := cs.Close(); err != nil {
				t.Fatal(err)
			}
			if err := waitServe(t, done); err != nil {
				t.Fatalf("ServeStdio after EOF: %v, want nil", err)
			}
		})
	}
}

// frames reads newline-delimited JSON-RPC messages from r.
// frameWait is how long a test waits for a frame that must come.
const frameWait = 20 * time.Second

type frames struct {
	t  testing.TB
	sc *bufio.Scanner
}

func (f frames) next() []byte {
	f.t.Helper()
	// A frame that never comes fails the test rather than hanging it.
	scanned := make(chan bool, 1)
	go func() { scanned <- f.sc.Scan() }()
	select {
	case ok := <-scanned:
		if !ok {
			f.t.Fatalf("no frame: %v", f.sc.Err())
		}
	case <-time.After(frameWait):
		f.t.Fatalf("no frame within %v", frameWait)
	}
	line := f.sc.Bytes()
	if !json.Valid(line) {
		f.t.Fatalf("stdout carries a line that is not JSON: %q", line)
	}
	return append([]byte(nil), line...)
}

// TestStdioWireBytes reads the raw stdout frame of a search and checks the
// structuredContent bytes are the service's, exactly.
func TestStdioWireBytes(t *testing.T) {
	own := startOwner(t)
	want := sampleStructured(t)
	svc := stubbed(own.Service(), stub{structured: want})
	for _, modern := range []bool{true, false} {
		toServer, fromServer, done := stdioPipes(t, testCtx(t), svc, ownerP)
		sc := bufio.NewScanner(fromServer)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		f := frames{t, sc}
		send := func(s string) {
			if _, err := io.WriteString(toServer, s+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		callMsg := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}}%s}}`
		if modern {
			// 2026-07-28: no handshake, the version in _meta.
			send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"q"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		} else {
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
			if msg := f.next(); !bytes.Contains(msg, []byte(`"2025-03-26"`)) {
				t.Fatalf("initialize: %s", msg)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(bytesSprintf(callMsg, ""))
		}
		r := decodeRPC(t, f.next())
		if r.Result == nil || r.Result.IsError {
			t.Fatalf("search: %+v", r)
		}
		if modern {
			if !bytes.Equal(r.Result.StructuredContent, want) {
				t.Fatalf("stdio structuredContent differs:\nwire %s\nwant %s", r.Result.StructuredContent, want)
			}
		} else if r.Result.StructuredContent != nil || len(r.Result.Content) != 1 || r.Result.Content[0].Text != string(want) {
			t.Fatalf("old protocol search over stdio: %+v", r.Result)
		}
		_ = toServer.Close()
		if err := waitServe(t, done); err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	}
}

func bytesSprintf(format, arg string) string {
	return string(bytes.Replace([]byte(format), []byte("%s"), []byte(arg), 1))
}

func TestStdioStopsWithContext(t *testing.T) {
	own := startOwner(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	toServer, _, done := stdioPipes(t, ctx, own.Service(), ownerP)
	defer toServer.Close()
	cancel()
	if err := waitServe(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeStdio after cancel: %v, want context.Canceled", err)
	}
}

func TestStdioRefusesNoGrant(t *testing.T) {
	own := startOwner(t)
	err := mcpapi.ServeStdio(testCtx(t), own.Service(), workspace.Principal{ID: "stdio"}, bytes.NewReader(nil), io.Discard, mcpapi.Options{})
	if workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
		t.Fatalf("ServeStdio without a grant: %v", err)
	}
}

// TestStdioBadFrames: a line that is no JSON-RPC message is answered with
// the JSON-RPC error a client expects (id null) and the session goes on;
// so does a line over the request limit.
func TestStdioBadFrames(t *testing.T) {
	own := startOwner(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := mcpapi.ServeStdio(testCtx(t), own.Service(), ownerP, inR, outW, mcpapi.Options{MaxRequestBytes: 4096})
		_ = outW.Close()
		done <- err
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	f := frames{t, sc}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s); err != nil {
			t.Fatal(err)
		}
	}
	wantErr := func(what string, code int) {
		t.Helper()
		msg := f.next()
		var m map[string]json.RawMessage
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(msg, &m) != nil || string(m["id"]) != "null" || json.Unmarshal(m["error"], &e) != nil || e.Code != code || e.Message == "" {
			t.Fatalf("%s: %s, want the JSON-RPC error %d with id null", what, msg, code)
		}
	}
	send("not json\n")
	wantErr("not JSON", -32700)
	send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"caf\xe9\"}\n")
	wantErr("not UTF-8", -32700)
	send(`{"jsonrpc":"1.0","id":1,"method":"tools/list"}` + "\n")
	wantErr("wrong version", -32600)
	send("[]\r\n")
	wantErr("empty batch", -32600)
	send(`{"jsonrpc":"2.0","id":{},"method":"tools/list"}` + "\n")
	wantErr("an object id", -32600)
	send(`{"jsonrpc":"2.0","result":{}}` + "\n")
	wantErr("a response without an id", -32600)
	// A batch of notifications is no error: it is taken, and not answered.
	send(`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n")
	for _, id := range []string{"null", "1.5", "1e-3", "1.0000000000000000001", "9007199254740993", "1e20", "-1e400", "true"} {
		send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n")
		wantErr("the id "+id, -32600)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":null}` + "\n")
	wantErr("a null method", -32600)
	send(`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":3.0,"method":"ping"}]` + "\n")
	wantErr("a batch with one id twice", -32600)
	send("\n  \n" + `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"q":"` + strings.Repeat("x", 10000) + `"}}` + "\n")
	wantErr("over the limit", -32600)
	// The session is alive: a handshake and a call are answered.
	send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}` + "\n")
	if msg := f.next(); !bytes.Contains(msg, []byte(`"id":7`)) || !bytes.Contains(msg, []byte(`"2025-11-25"`)) {
		t.Fatalf("initialize after bad frames: %s", msg)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	send(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}` + "\r\n")
	if msg := f.next(); !bytes.Contains(msg, []byte(`"id":8`)) || !bytes.Contains(msg, []byte(`"search"`)) {
		t.Fatalf("tools/list after bad frames: %s", msg)
	}
	_ = inW.Close()
	if err := waitServe(t, done); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
}

// rawStdio serves svc on stdio pipes for a test speaking raw JSON-RPC: it
// returns the frames read, a function sending one line, and one that
// ends the input and checks ServeStdio returned nil.
func rawStdio(t *testing.T, svc interfaces.Service) (frames, func(string), func()) {
	t.Helper()
	return rawStdioWith(t, svc, mcpapi.Options{})
}

// rawStdioWith is rawStdio with options.
func rawStdioWith(t *testing.T, svc interfaces.Service, o mcpapi.Options) (frames, func(string), func()) {
	t.Helper()
	toServer, fromServer, done := stdioPipesWith(t, testCtx(t), svc, ownerP, o)
	sc := bufio.NewScanner(fromServer)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(toServer, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	end := func() {
		t.Helper()
		_ = toServer.Close()
		if err := waitServe(t, done); err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	}
	return frames{t, sc}, send, end
}

// TestStdioBatchAfterHandshake: a JSON-RPC batch is answered as the
// negotiated version wants — refused with -32600 after a handshake for
// 2025-06-18 or later (the session goes on), served after one for
// 2025-03-26.
func TestStdioBatchAfterHandshake(t *testing.T) {
	own := startOwner(t)
	for _, version := range []string{"2025-11-25", "2025-06-18", "2099-01-01", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			f, send, end := rawStdio(t, own.Service())
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
			if msg := f.next(); !bytes.Contains(msg, []byte(`"id":1`)) {
				t.Fatalf("initialize: %s", msg)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`)
			msg := f.next()
			if version == "2025-03-26" {
				var batch []map[string]json.RawMessage
				if err := json.Unmarshal(msg, &batch); err != nil || len(batch) != 2 || batch[0]["result"] == nil || batch[1]["result"] == nil {
					t.Fatalf("batch under 2025-03-26: %s, want two results", msg)
				}
			} else {
				var m struct {
					ID    json.RawMessage `json:"id"`
					Error struct {
						Code int `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal(msg, &m); err != nil || string(m.ID) != "null" || m.Error.Code != -32600 {
					t.Fatalf("batch after a %s handshake: %s, want -32600 with id null", version, msg)
				}
			}
			send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
			if msg := f.next(); !bytes.Contains(msg, []byte(`"id":4`)) || !bytes.Contains(msg, []byte(`"search"`)) {
				t.Fatalf("tools/list after the batch: %s", msg)
			}
			// A second handshake, refused by the SDK, changes nothing.
			send(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
			if msg := f.next(); !bytes.Contains(msg, []byte(`"id":5`)) || !bytes.Contains(msg, []byte(`"error"`)) {
				t.Fatalf("second initialize: %s, want the SDK's error", msg)
			}
			send(`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`)
			if msg := f.next(); bytes.Contains(msg, []byte(`-32600`)) != (version != "2025-03-26") {
				t.Fatalf("batch after a second handshake: %s", msg)
			}
			send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
			if msg := f.next(); !bytes.Contains(msg, []byte(`"id":7`)) {
				t.Fatalf("ping at the end: %s", msg)
			}
			end()
		})
	}
}

// TestStdioBatchlessHandshakes: handshakes the SDK takes in forms a
// careless filter would miss — with an escaped method name, with keys
// differing in case only (the SDK matches keys exactly) — still make a
// later batch an error, not the end of the session; and a handshake for
// such a version inside a batch, which the SDK would end the session on
// answering, is refused.
func TestStdioBatchlessHandshakes(t *testing.T) {
	own := startOwner(t)
	params := `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`
	{
		f, send, end := rawStdio(t, own.Service())
		send(`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + params + `}]`)
		if msg := f.next(); !bytes.Contains(msg, []byte(`-32600`)) {
			t.Fatalf("initialize in a batch: %s, want -32600", msg)
		}
		send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":` + params + `}`)
		if msg := f.next(); !bytes.Contains(msg, []byte(`"id":2`)) || !bytes.Contains(msg, []byte(`"2025-06-18"`)) {
			t.Fatalf("initialize after the refused batch: %s", msg)
		}
		end()
	}
	for name, init := range map[string]string{
		"escaped":      `{"jsonrpc":"2.0","id":1,"method":"initializ\u0065","params":` + params + `}`,
		"case of keys": `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","ProtocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			f, send, end := rawStdio(t, own.Service())
			send(init)
			if msg := f.next(); !bytes.Contains(msg, []byte(`"2025-06-18"`)) {
				t.Fatalf("initialize: %s", msg)
			}
			send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
			if msg := f.next(); !bytes.Contains(msg, []byte(`-32600`)) {
				t.Fatalf("batch after the handshake: %s, want -32600", msg)
			}
			send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
			if msg := f.next(); !bytes.Contains(msg, []byte(`"id":3`)) {
				t.Fatalf("ping after the batch: %s", msg)
			}
			end()
		})
	}
}

// TestStdioQuietAfterReturn: once ServeStdio returned, a line still
// arriving on its input gets no answer on its output.
func TestStdioQuietAfterReturn(t *testing.T) {
	own := startOwner(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	var out lockedBuffer
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	// A reader that Close does not interrupt, as a process's stdin.
	in := struct{ io.Reader }{inR}
	go func() { done <- mcpapi.ServeStdio(ctx, own.Service(), ownerP, in, &out, mcpapi.Options{}) }()
	cancel()
	if err := waitServe(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeStdio after cancel: %v", err)
	}
	// The filter is still reading: a bad line reaches it, and nothing may
	// come out. A filter that answered it would go back to reading and
	// take a second line; one that found its output closed has stopped.
	if _, err := io.WriteString(inW, "garbage\n"); err != nil {
		t.Fatal(err)
	}
	second := make(chan struct{})
	go func() { _, _ = io.WriteString(inW, "garbage\n"); close(second) }()
	select {
	case <-second:
	case <-time.After(time.Second):
	}
	if s := out.String(); s != "" {
		t.Fatalf("ServeStdio wrote after it returned: %q", s)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A client that writes its requests and closes its end of the pipe at once
// (printf … | tychora serve --stdio) gets every answer before ServeStdio
// returns: the end of the input waits for the requests in flight.
func TestStdioAnswersWhatCameBeforeEOF(t *testing.T) {
	own := startOwner(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"discover","arguments":{"request":{"subject":"kinds"}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"anything"}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := mcpapi.ServeStdio(testCtx(t), own.Service(), readerP, strings.NewReader(in), &out, mcpapi.Options{}); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	answered := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("frame %q: %v", line, err)
		}
		if m.Result != nil {
			answered[string(m.ID)] = true
		}
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		if !answered[id] {
			t.Errorf("request %s has no answer; output:\n%s", id, out.String())
		}
	}
}

// A call before initialize is refused with a JSON-RPC code (-32600), not
// the code 0 of a plain error, and the session goes on.
func TestStdioCallBeforeInitialize(t *testing.T) {
	own := startOwner(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"discover","arguments":{"request":{"subject":"kinds"}}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"discover","arguments":{"request":{"subject":"kinds"}}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := mcpapi.ServeStdio(testCtx(t), own.Service(), readerP, strings.NewReader(in), &out, mcpapi.Options{}); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	got := map[string]struct {
		Result json.RawMessage
		Code   *int
	}{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code *int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("frame %q: %v", line, err)
		}
		e := got[string(m.ID)]
		e.Result = m.Result
		if m.Error != nil {
			e.Code = m.Error.Code
		}
		got[string(m.ID)] = e
	}
	if e := got["1"]; e.Code == nil || *e.Code != -32600 {
		t.Errorf("call before initialize: %+v, want error -32600; output:\n%s", e, out.String())
	}
	if got["2"].Result == nil || got["3"].Result == nil {
		t.Errorf("initialize and the call after it: %+v; output:\n%s", got, out.String())
	}
}
