package tape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/workspace"
)

type echoArgs struct {
	Text string `json:"text"`
}

// echoServer is an SDK server with one tool, echo, that answers with its
// text and the number of calls so far.
func echoServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	n := 0
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		n++
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s #%d", a.Text, n)}}}, nil, nil
	})
	return srv
}

// pipeClient connects an SDK client, through pipes, to serve, which gets
// the server's ends of the streams.
func pipeClient(t *testing.T, ctx context.Context, version string, serve func(in io.Reader, out io.Writer)) *mcp.ClientSession {
	t.Helper()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(sr, sw)
		sw.Close()
	}()
	t.Cleanup(func() { cw.Close(); <-done })
	client := mcp.NewClient(&mcp.Implementation{Name: "pipe", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func echo(t *testing.T, ctx context.Context, cs *mcp.ClientSession, text string) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// recordEcho records a session with echoServer: the client's calls of
// echo with texts, in order.
func recordEcho(t *testing.T, dir string, version string, texts ...string) (*Tape, []string) {
	t.Helper()
	ctx := context.Background()
	rec, err := Create(dir, Options{Name: filepath.Base(dir), Server: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	cs := pipeClient(t, ctx, version, func(in io.Reader, out io.Writer) {
		_ = echoServer().Run(ctx, &mcp.IOTransport{Reader: rec.Reader(in, FromClient), Writer: nopCloser{rec.Writer(out, FromServer)}})
	})
	var got []string
	for _, text := range texts {
		got = append(got, echo(t, ctx, cs, text))
	}
	cs.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tp, got
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func TestRecordPlay(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), DirName, "echo")
			tp, live := recordEcho(t, dir, version, "a", "b", "a")
			for _, f := range []string{MetaFile, TraceFile} {
				fi, err := os.Stat(filepath.Join(dir, f))
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("%s: %v %v", f, fi.Mode(), err)
				}
			}
			if tp.Meta.Counts.Requests != tp.Meta.Counts.Responses || tp.Meta.Client != "pipe 1" || tp.Meta.ProtocolVersion != version {
				t.Fatalf("meta %+v", tp.Meta)
			}
			for _, e := range tp.Events {
				if e.Kind == KindResponse && (e.Echo == nil || e.Echo.Method == "") {
					t.Fatalf("a response without its request: %+v", e)
				}
			}
			// Each recorded request, sent again as it was, gets the
			// recorded response byte for byte.
			exact, err := NewPlayer(tp, PlayOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range tp.Exchanges() {
				if got := exact.Answer(x.Request.Payload); string(got) != string(x.Response.Payload) {
					t.Fatalf("%s: answered\n%s\nrecorded\n%s", x.Method, got, x.Response.Payload)
				}
			}
			var logs testkit.Logs
			p, err := NewPlayer(tp, PlayOptions{Logger: slog.New(&logs)})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			cs := pipeClient(t, ctx, version, func(in io.Reader, out io.Writer) { _ = p.Serve(ctx, in, out) })
			// Asked in another order, each call gets the answer recorded
			// for its arguments; a repeat takes the next one.
			if got := echo(t, ctx, cs, "b"); got != live[1] {
				t.Fatalf("b: %s, want %s", got, live[1])
			}
			if got, again := echo(t, ctx, cs, "a"), echo(t, ctx, cs, "a"); got != live[0] || again != live[2] {
				t.Fatalf("a, a: %s %s, want %s %s", got, again, live[0], live[2])
			}
			drift := echo(t, ctx, cs, "a")
			if !strings.Contains(drift, `"isError":true`) || !strings.Contains(drift, "tape drift") || !strings.Contains(drift, string(workspace.CodeNotFound)) {
				t.Fatalf("a fourth a: %s", drift)
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatal(err)
			}
			// The player logs each call that matched nothing, and only those.
			if n := logs.Count("tape drift"); n != 1 {
				t.Fatalf("%d drifts logged: %q", n, logs.At(slog.LevelDebug))
			}
		})
	}
}

func TestPlayLenient(t *testing.T) {
	tp, live := recordEcho(t, filepath.Join(t.TempDir(), "echo"), "2025-06-18", "a", "b")
	ctx := context.Background()
	p, err := NewPlayer(tp, PlayOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	cs := pipeClient(t, ctx, "2025-11-25", func(in io.Reader, out io.Writer) { _ = p.Serve(ctx, in, out) })
	if got := echo(t, ctx, cs, "z"); got != live[0] {
		t.Fatalf("lenient z: %s, want %s", got, live[0])
	}
	if got := echo(t, ctx, cs, "b"); got != live[1] {
		t.Fatalf("b: %s, want %s", got, live[1])
	}
}

// TestPlayRefusesServerRequests: a tape in which the server asked the
// client something cannot be played.
func TestPlayRefusesServerRequests(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "asks")
	rec, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct {
		d    Direction
		line string
	}{
		{FromClient, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`},
		{FromServer, `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`},
		{FromClient, `{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`},
		{FromServer, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`},
	} {
		rec.Record(l.d, []byte(l.line))
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Ids of both sides' requests are told apart.
	if x := tp.Exchanges(); len(x) != 1 || x[0].Response == nil || !strings.Contains(string(x[0].Response.Payload), "content") {
		t.Fatalf("exchanges %+v", x)
	}
	_, err = NewPlayer(tp, PlayOptions{})
	var we *workspace.Error
	if !errors.Is(err, ErrServerRequests) || !errors.As(err, &we) || we.Code != workspace.CodeInvalidArgument || !strings.Contains(err.Error(), "roots/list") {
		t.Fatalf("NewPlayer: %v", err)
	}
}

// record writes lines (c: client, s: server) as a tape and loads it.
func record(t *testing.T, dir string, lines ...string) *Tape {
	t.Helper()
	rec, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		d := FromClient
		if l[0] == 's' {
			d = FromServer
		}
		rec.Record(d, []byte(l[2:]))
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func call(id int, tool, args string) string {
	return fmt.Sprintf(`c {"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

func answer(id int, structured string) string {
	return fmt.Sprintf(`s {"jsonrpc":"2.0","id":%d,"result":{"content":[],"structuredContent":%s}}`, id, structured)
}

func TestDiff(t *testing.T) {
	base := []string{
		call(1, "search", `{"q":"a"}`), answer(1, `{"run_id":"run_000000000000000000000000000000000000001","hits":[1]}`),
		call(2, "manage_job", `{"action":"get","job_id":"0b8e8a52-7a4c-4bd0-9f3e-2f6b2f1f9a11"}`), answer(2, `{"job":{"created_at":"2026-12-01T10:00:00Z","took_ms":5}}`),
	}
	same := []string{
		call(7, "search", `{ "q" : "a" }`), answer(7, `{"hits":[1],"run_id":"run_000000000000000000000000000000000000002"}`),
		call(8, "manage_job", `{"job_id":"1c9f9b63-8b5d-4ce1-8a4f-3a7c3a2a8b22","action":"get"}`), answer(8, `{"job":{"created_at":"2026-12-01T11:11:11.5Z","took_ms":9}}`),
	}
	output := []string{base[0], answer(1, `{"hits":[2]}`), base[2], base[3]}
	longer := append(append([]string{}, base...), call(3, "search", `{"q":"b"}`), answer(3, `{}`))
	swapped := []string{base[2], base[3], base[0], base[1]}
	// The same swap with both calls in flight together is no drift.
	parallel := []string{call(2, "manage_job", `{"action":"get","job_id":"x"}`), call(1, "search", `{"q":"a"}`), base[1], answer(2, `{"job":{"created_at":"2026-12-01T10:00:00Z","took_ms":5}}`)}
	parallelBase := []string{call(1, "search", `{"q":"a"}`), base[1], call(2, "manage_job", `{"action":"get","job_id":"x"}`), answer(2, `{"job":{"created_at":"2026-12-01T10:00:00Z","took_ms":5}}`)}
	root := t.TempDir()
	tp := func(name string, lines []string) *Tape { return record(t, filepath.Join(root, name), lines...) }
	for _, c := range []struct {
		name   string
		a, b   *Tape
		strict bool
		want   Outcome
	}{
		{"same", tp("base", base), tp("same", same), false, Same},
		{"strict", tp("base2", base), tp("same2", same), true, StructuralDrift},
		{"output", tp("base3", base), tp("output", output), false, OutputDrift},
		{"strict output", tp("base4", base), tp("base4b", base), true, Same},
		{"longer", tp("base5", base), tp("longer", longer), false, StructuralDrift},
		{"shorter", tp("longer2", longer), tp("base6", base), false, StructuralDrift},
		{"swapped", tp("base7", base), tp("swapped", swapped), false, StructuralDrift},
		{"parallel", tp("pbase", parallelBase), tp("parallel", parallel), false, Same},
	} {
		d := Diff(c.a, c.b, DiffOptions{Strict: c.strict})
		if d.Outcome != c.want {
			t.Errorf("%s: %d (%s), want %d", c.name, d.Outcome, d.Reason, c.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	a := Normalize(json.RawMessage(`{"content":[{"type":"text","text":"{\"run_id\":\"run_123456789012345678901234567890123456789\",\"next_cursor\":\"abc\"}"}],"id":"src_0123456789abcdef","at":"2026-12-01T10:00:00+01:00"}`))
	want := `{"at":"<time>","content":[{"text":"{\"next_cursor\":\"<cursor>\",\"run_id\":\"<run>\"}","type":"text"}],"id":"<src>"}`
	if string(a) != want {
		t.Fatalf("got  %s\nwant %s", a, want)
	}
}

func TestRedaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	rec, err := Create(dir, Options{Redact: []string{`hunter[0-9]`}})
	if err != nil {
		t.Fatal(err)
	}
	secret := workspace.TokenPrefix + strings.Repeat("ab", 32)
	rec.Record(FromClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"`+secret+`","b":"Bearer xyz","c":"hunter2","authorization":"Basic Zm9v"}}`))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, TraceFile))
	for _, s := range []string{secret, "xyz", "hunter2", "Zm9v"} {
		if strings.Contains(string(b), s) {
			t.Errorf("the trace holds %q: %s", s, b)
		}
	}
	tp, err := Load(dir)
	if err != nil || tp.Events[0].Kind != KindRequest {
		t.Fatalf("a redacted line is no longer a request: %v %+v", err, tp)
	}
	if _, err := Create(filepath.Join(t.TempDir(), "bad"), Options{Redact: []string{"("}}); err == nil {
		t.Fatal("a bad pattern was taken")
	}
	if _, err := Create(dir, Options{}); err == nil {
		t.Fatal("a second tape of one name was created")
	}
}

// TestRecorderLines: the tee passes bytes through unchanged and records
// lines cut across writes, batches one message each, and lines that are
// no JSON-RPC as invalid.
func TestRecorderLines(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lines")
	rec, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	w := rec.Writer(&out, FromServer)
	input := "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]\nnot json\n"
	for i := 0; i < len(input); i += 7 {
		if _, err := w.Write([]byte(input[i:min(i+7, len(input))])); err != nil {
			t.Fatal(err)
		}
	}
	r := rec.Reader(strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"), FromClient)
	if b, _ := io.ReadAll(r); string(b) != "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}" {
		t.Fatalf("read %q", b)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != input {
		t.Fatalf("the tee changed the bytes: %q", out.String())
	}
	tp, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range tp.Events {
		kinds = append(kinds, fmt.Sprintf("%s/%d", e.Kind, e.Batch))
	}
	if got := strings.Join(kinds, " "); got != "notification/0 response/1 response/2 invalid/0 request/0" {
		t.Fatalf("events %s", got)
	}
}

func TestReadTraceRefuses(t *testing.T) {
	for _, line := range []string{
		`{"seq":1,"dir":"up","kind":"request","method":"x","id":1,"payload":{}}`,
		`{"seq":1,"dir":"c2s","kind":"request","id":1,"payload":{}}`,
		`{"seq":1,"dir":"c2s","kind":"request","method":"x","payload":{}}`,
		`{"seq":1,"dir":"s2c","kind":"response","id":1,"payload":{}}`,
		`{"seq":1,"dir":"c2s","kind":"notification","method":"x"}`,
		`{"seq":1,"dir":"c2s","kind":"notification","method":"x","payload":{},"extra":1}`,
		`{"seq":1,"dir":"c2s","kind":"notification","method":"x","payload":{}} {}`,
		`{"seq":1,"dir":"c2s","kind":"notification","method":"x","payload":{`,
	} {
		if _, err := ReadTrace(strings.NewReader(line)); err == nil || !strings.HasPrefix(err.Error(), "line 1: ") {
			t.Errorf("%s: %v", line, err)
		}
	}
}
