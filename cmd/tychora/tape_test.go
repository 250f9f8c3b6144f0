package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces/mcp/tape"
	"github.com/tychora/tychora/internal/testkit"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// connect starts cmd under the go-sdk client.
func connect(t *testing.T, ctx context.Context, cmd *exec.Cmd, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectVersion(t, ctx, cmd, opts, "")
}

// connectVersion is connect asking for protocol version (the newest
// when "").
func connectVersion(t *testing.T, ctx context.Context, cmd *exec.Cmd, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "tape-test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// transcript is what a client saw of a session: one JSON line per answer.
type transcript []string

func (tr *transcript) add(t *testing.T, what string, v any, err error) {
	t.Helper()
	if err != nil {
		*tr = append(*tr, what+" error: "+err.Error())
		return
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		t.Fatal(merr)
	}
	*tr = append(*tr, what+" "+string(b))
}

// readOnlySession drives the calls of the read-only session:
// discover, search with and without a render, inspect, manage_job list, a
// resource read and a tool error. extra adds calls at the end.
func readOnlySession(t *testing.T, ctx context.Context, cs *mcp.ClientSession, extra int) transcript {
	t.Helper()
	var tr transcript
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		tr.add(t, name, res, err)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	tools, err := cs.ListTools(ctx, nil)
	tr.add(t, "tools/list", tools, err)
	call("discover", map[string]any{"request": map[string]any{"subject": "kinds"}})
	found := call("search", map[string]any{"request": map[string]any{"question": "parse http request"}})
	if found.IsError {
		t.Fatalf("search failed: %+v", found.Content)
	}
	call("search", map[string]any{"request": map[string]any{"question": "token budget"}, "render": "agent@1"})
	var hits struct {
		Hits []struct {
			SourceID string `json:"source_id"`
		} `json:"hits"`
	}
	b, _ := json.Marshal(found.StructuredContent)
	if json.Unmarshal(b, &hits) != nil || len(hits.Hits) == 0 {
		t.Fatalf("search found nothing: %s", b)
	}
	call("inspect", map[string]any{"request": map[string]any{"subject": "source", "source_id": hits.Hits[0].SourceID}})
	call("manage_job", map[string]any{"action": "list"})
	kind, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tychora://kinds/markdown"})
	tr.add(t, "resources/read", kind, err)
	if bad := call("search", map[string]any{"request": map[string]any{"question": "x"}, "bogus": 1}); !bad.IsError {
		t.Fatal("a search with an unknown field did not fail")
	}
	for range extra {
		call("discover", map[string]any{"request": map[string]any{"subject": "settings"}})
	}
	return tr
}

// tapeTree writes the files the sessions search, under the ingest root of
// a workspace made by newWS.
func tapeTree(t *testing.T, ws string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(ws), "src")
	files := map[string]string{
		"guide.md":  "# Install guide\n\nRun the installer, then configure the token budget.\n\n## Tokens\n\nBudgets are counted in tokens.\n",
		"server.go": "package server\n\n// ParseHTTPRequest parses a request line.\nfunc ParseHTTPRequest(line string) (string, error) {\n\treturn line, nil\n}\n",
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Two recordings of one session must meet the same index: a watching
	// owner would sync every source when it starts, and the second
	// session's job list would hold one job more.
	noWatch(t, ws)
	if r := tychora(t, ws, "add", dir); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	return dir
}

// recordStdio records one session of `serve --stdio` as the tape name and
// returns what the client saw.
func recordStdio(t *testing.T, ctx context.Context, ws, name string, session func(*mcp.ClientSession) transcript) transcript {
	t.Helper()
	cs := connect(t, ctx, exec.Command(binary, "--workspace", ws, "serve", "--stdio", "--record", name), nil)
	tr := session(cs)
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return tr
}

// play replays the tape name under the go-sdk client.
func play(t *testing.T, ctx context.Context, ws, name string, session func(*mcp.ClientSession) transcript, args ...string) transcript {
	t.Helper()
	cs := connect(t, ctx, exec.Command(binary, append([]string{"--workspace", ws, "tape", "play", name}, args...)...), nil)
	tr := session(cs)
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return tr
}

// noSecrets fails when a file under ws/tapes holds any of secrets, or a
// tychora secret at all.
func noSecrets(t *testing.T, ws string, secrets ...string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(ws, tape.DirName), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, _ := d.Info()
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, s := range append(secrets, workspace.TokenPrefix) {
			if s != "" && strings.Contains(string(b), s) {
				t.Errorf("%s holds a secret (%.8s...)", path, s)
			}
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("no tape files to check (%d): %v", n, err)
	}
}

func sameTranscript(t *testing.T, what string, got, want transcript) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d answers, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: answer %d differs:\n got %.400s\nwant %.400s", what, i, got[i], want[i])
		}
	}
}

// TestTapeReadOnlySession: a read-only session records, replays with the
// same results with no owner and no index, and diffs as identical
// against a second recording; after a file changes and is synced a third
// recording drifts in output at the first search, and one with one more
// call drifts in structure.
func TestTapeReadOnlySession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ws := newWS(t)
	src := tapeTree(t, ws)
	session := func(extra int) func(*mcp.ClientSession) transcript {
		return func(cs *mcp.ClientSession) transcript { return readOnlySession(t, ctx, cs, extra) }
	}
	live := recordStdio(t, ctx, ws, "first", session(0))
	recordStdio(t, ctx, ws, "second", session(0))
	if r := tychora(t, ws, "tape", "diff", "first", "second"); r.code != 0 || !strings.HasPrefix(r.stdout, "same:") {
		t.Fatalf("diff of two recordings of one session: %+v", r)
	}
	if r := tychora(t, ws, "tape", "diff", "--strict", "first", "second"); r.code != 1 {
		t.Fatalf("--strict sees no run ids: %+v", r)
	}

	// The owner is gone (the stdio owner exits with its session); the
	// index is moved away.
	if _, err := tyruntime.ReadEndpoint(workspace.NewLayout(ws)); err == nil {
		t.Fatal("an owner still runs")
	}
	l := workspace.NewLayout(ws)
	moved := filepath.Join(t.TempDir(), "index.db")
	if err := os.Rename(l.DB, moved); err != nil {
		t.Fatal(err)
	}
	replayed := play(t, ctx, ws, "first", session(0))
	sameTranscript(t, "replay", replayed, live)
	// Byte for byte: each recorded request gets the recorded response.
	first, err := tape.Load(filepath.Join(ws, tape.DirName, "first"))
	if err != nil {
		t.Fatal(err)
	}
	player, err := tape.NewPlayer(first, tape.PlayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range first.Exchanges() {
		if got := player.Answer(x.Request.Payload); string(got) != string(x.Response.Payload) {
			t.Fatalf("%s %s: the replayed bytes differ from the recorded ones", x.Method, x.Tool)
		}
	}
	if _, err := os.Stat(l.DB); err == nil {
		t.Fatal("tape play created an index")
	}
	// A call the tape does not hold is a tool error naming the drift.
	cs := connect(t, ctx, exec.Command(binary, "--workspace", ws, "tape", "play", "first"), nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"request": map[string]any{"question": "never asked"}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "tape drift") {
		t.Fatalf("an unrecorded call: %+v %v", res, err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	cs.Close()
	if err := os.Rename(moved, l.DB); err != nil {
		t.Fatal(err)
	}

	// A file changes and is synced: the first search drifts in output.
	f, err := os.OpenFile(filepath.Join(src, "server.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "\n// ParseHTTPRequest trims the request line of a parse http request.\nfunc Trim() {}\n")
	f.Close()
	sources := tychora(t, ws, "sources", "--json")
	var list struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if json.Unmarshal([]byte(sources.stdout), &list) != nil || len(list.Items) != 1 {
		t.Fatalf("sources: %+v", sources)
	}
	if r := tychora(t, ws, "sync", list.Items[0].ID); r.code != 0 {
		t.Fatalf("sync: %+v", r)
	}
	recordStdio(t, ctx, ws, "changed", session(0))
	r := tychora(t, ws, "tape", "diff", "first", "changed")
	if r.code != 1 || !strings.Contains(r.stdout, `call 4 (tools/call search {"request":{"question":"parse http request"}})`) {
		t.Fatalf("diff after a change: %+v", r)
	}
	recordStdio(t, ctx, ws, "longer", session(1))
	if r := tychora(t, ws, "tape", "diff", "changed", "longer"); r.code != 2 || !strings.Contains(r.stdout, "structural drift") {
		t.Fatalf("diff with one more call: %+v", r)
	}
	if r := tychora(t, ws, "tape", "ls"); r.code != 0 || strings.Count(r.stdout, "tychora serve --stdio") != 4 {
		t.Fatalf("tape ls: %+v", r)
	}
	if r := tychora(t, ws, "tape", "report", "first"); r.code != 0 || !strings.Contains(r.stdout, "tools/call search") {
		t.Fatalf("tape report: %+v", r)
	}
	noSecrets(t, ws)
}

// addSession adds dir as a source, waits (outside the session, when wait
// is set) for its job to finish, and gets the job.
func addSession(t *testing.T, ctx context.Context, cs *mcp.ClientSession, dir string, wait func(jobID string)) transcript {
	t.Helper()
	var tr transcript
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_sources", Arguments: map[string]any{"action": "add", "source": map[string]any{"path": dir}}})
	tr.add(t, "add_sources", res, err)
	if err != nil || res.IsError {
		t.Fatalf("add_sources: %+v %v", res, err)
	}
	var added struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(b, &added) != nil || added.Job.ID == "" {
		t.Fatalf("add_sources gave no job: %s", b)
	}
	if wait != nil {
		wait(added.Job.ID)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "manage_job", Arguments: map[string]any{"action": "get", "job_id": added.Job.ID}})
	tr.add(t, "manage_job", res, err)
	if err != nil || res.IsError {
		t.Fatalf("manage_job get: %+v %v", res, err)
	}
	return tr
}

// TestTapeAddSources: sessions that add a source on two fresh
// workspaces record, replay, and diff as identical once job ids and
// times are normalized.
func TestTapeAddSources(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root := t.TempDir()
	dir := filepath.Join(root, "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\n\nThe quokka parses tapes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var lives []transcript
	for _, name := range []string{"one", "two"} {
		ws := filepath.Join(root, "ws-"+name)
		if r := tychora(t, ws, "init", "--ingest-root", root); r.code != 0 {
			t.Fatalf("init: %+v", r)
		}
		noWatch(t, ws)
		wait := func(jobID string) {
			waitFor(t, "the add job", time.Minute, func() bool {
				r := tychora(t, ws, "jobs", "list", "--json")
				return r.code == 0 && strings.Contains(r.stdout, `"state":"succeeded"`)
			})
		}
		lives = append(lives, recordStdio(t, ctx, ws, "add", func(cs *mcp.ClientSession) transcript { return addSession(t, ctx, cs, dir, wait) }))
		noSecrets(t, ws)
	}
	one, two := filepath.Join(root, "ws-one", tape.DirName, "add"), filepath.Join(root, "ws-two", tape.DirName, "add")
	if r := tychora(t, filepath.Join(root, "ws-one"), "tape", "diff", one, two); r.code != 0 {
		t.Fatalf("diff of two fresh workspaces: %+v", r)
	}
	if lives[0][0] == lives[1][0] {
		t.Fatal("the two workspaces gave the same job id: nothing was normalized")
	}
	if err := os.RemoveAll(filepath.Join(root, "ws-two")); err != nil {
		t.Fatal(err)
	}
	replayed := play(t, ctx, root, one, func(cs *mcp.ClientSession) transcript { return addSession(t, ctx, cs, dir, nil) })
	sameTranscript(t, "replay", replayed, lives[0])
}

// buildTapeServer builds testdata/tapeserver, a small stdio MCP server.
func buildTapeServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tapeserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/tapeserver").CombinedOutput(); err != nil {
		t.Fatalf("build tapeserver: %v\n%s", err, out)
	}
	return bin
}

// TestTapeRecProxy: tape rec in front of another stdio MCP server records
// a session the client cannot tell from a direct one, and tape play
// replays it; a session in which the server asked the client something
// cannot be played.
func TestTapeRecProxy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	server := buildTapeServer(t)
	ws := filepath.Join(t.TempDir(), "ws")
	// Parallel calls: each is answered with its own count, so a replay
	// must match each by its arguments. (The two calls of alpha are in
	// flight together: either may get either answer.)
	session := func(cs *mcp.ClientSession) transcript {
		texts := []string{"alpha", "beta", "gamma", "alpha"}
		got := make([]string, len(texts))
		done := make(chan error, len(texts))
		for i, text := range texts {
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
				if err == nil {
					got[i] = res.Content[0].(*mcp.TextContent).Text
				}
				done <- err
			}()
		}
		for range texts {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if got[0] > got[3] {
			got[0], got[3] = got[3], got[0]
		}
		return got
	}
	// Protocol 2025-06-18 has an initialize handshake (later ones need none).
	const version = "2025-06-18"
	direct := connectVersion(t, ctx, exec.Command(server), nil, version)
	want := session(direct)
	direct.Close()
	rec := connectVersion(t, ctx, exec.Command(binary, "--workspace", ws, "tape", "rec", "--name", "echo", "--", server), nil, version)
	recorded := session(rec)
	rec.Close()
	// The counts depend on the order the calls arrived in; the rest is
	// the same through the proxy as directly.
	texts := func(tr []string) string {
		var out []string
		for _, s := range tr {
			text, _, _ := strings.Cut(s, " #")
			out = append(out, text)
		}
		return strings.Join(out, ",")
	}
	if texts(recorded) != texts(want) || texts(want) != "alpha,beta,gamma,alpha" {
		t.Fatalf("through tape rec %v, directly %v", recorded, want)
	}
	// A newer client plays the tape: the handshake is matched leniently.
	cs := connectVersion(t, ctx, exec.Command(binary, "--workspace", ws, "tape", "play", "echo"), nil, "2025-11-25")
	sameTranscript(t, "replay", session(cs), recorded)
	cs.Close()
	tp, err := tape.Load(filepath.Join(ws, tape.DirName, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	if tp.Meta.Server != server || tp.Meta.Counts.Requests < 5 || tp.Meta.Client != "tape-test 1" {
		t.Fatalf("meta.json: %+v", tp.Meta)
	}

	// A server that asks the user through the client: recorded, never
	// played.
	opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}
	asks := connectVersion(t, ctx, exec.Command(binary, "--workspace", ws, "tape", "rec", "--name", "asks", "--", server), opts, "2025-11-25")
	res, err := asks.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "accept" {
		t.Fatalf("ask through tape rec: %+v %v %s", res, err, res.Content[0].(*mcp.TextContent).Text)
	}
	asks.Close()
	r := tychora(t, ws, "tape", "play", "asks")
	if r.code != 1 || !strings.Contains(r.stderr, "elicitation/create") || !strings.Contains(r.stderr, "INVALID_ARGUMENT") {
		t.Fatalf("play of a tape with server requests: %+v", r)
	}
	if r := tychora(t, ws, "tape", "rec", "--name", "echo", "--", server); r.code != 1 || !strings.Contains(r.stderr, "CONFLICT") {
		t.Fatalf("a second tape of one name: %+v", r)
	}
	for _, args := range [][]string{{"tape", "rec", "--name", "../x", "--", server}, {"tape", "rec", "--name", "x"}, {"tape", "rec", "--", server}, {"tape", "play"}} {
		if r := tychora(t, ws, args...); r.code != 2 {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := tychora(t, ws, "tape", "diff", "echo"); r.code != 3 {
		t.Errorf("diff with one tape: %+v", r)
	}
	if r := tychora(t, ws, "tape", "diff", "echo", "nope"); r.code != 3 || !strings.Contains(r.stderr, "NOT_FOUND") {
		t.Errorf("diff with a missing tape: %+v", r)
	}
	noSecrets(t, ws)
}

// TestTapeSecrets: the owner's bearer token, an Authorization value and
// what tape_redact names never reach a tape, even when a client sends
// them as arguments.
func TestTapeSecrets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws := newWS(t)
	l := workspace.NewLayout(ws)
	s, err := workspace.LoadSettings(l)
	if err != nil {
		t.Fatal(err)
	}
	s.TapeRedact = []string{`quokka-[0-9]+`}
	if err := workspace.SaveSettings(l, s); err != nil {
		t.Fatal(err)
	}
	var token string
	recordStdio(t, ctx, ws, "secrets", func(cs *mcp.ClientSession) transcript {
		waitFor(t, "endpoint.json", 20*time.Second, func() bool {
			ep, err := tyruntime.ReadEndpoint(l)
			token = ep.Token
			return err == nil && token != ""
		})
		for _, q := range []string{token, "Bearer abc.def-123", `{"Authorization":"Basic dXNlcjpwYXNz"}`, "quokka-4711"} {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"request": map[string]any{"question": q}}}); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	noSecrets(t, ws, token, "abc.def-123", "dXNlcjpwYXNz", "quokka-4711")
	b, err := os.ReadFile(filepath.Join(ws, tape.DirName, "secrets", tape.TraceFile))
	if err != nil || strings.Count(string(b), tape.Redacted) < 4 {
		t.Fatalf("the trace redacts too little: %v\n%.2000s", err, b)
	}
	if _, err := tape.Load(filepath.Join(ws, tape.DirName, "secrets")); err != nil {
		t.Fatalf("a redacted tape does not load: %v", err)
	}
	s.TapeRedact = []string{`a*`}
	if err := workspace.SaveSettings(l, s); err != nil {
		t.Fatal(err)
	}
	if r := tychora(t, ws, "tape", "rec", "--name", "bad", "--", "true"); r.code != 1 || !strings.Contains(r.stderr, "tape_redact[0] matches the empty string") {
		t.Fatalf("a pattern matching nothing: %+v", r)
	}
}

// TestTapeRecordHTTP: serve --record-http writes one tape per MCP session
// over HTTP, without the bearer token, and the tape replays over stdio.
func TestTapeRecordHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ws := newWS(t)
	tapeTree(t, ws)
	cmd := exec.Command(binary, "--workspace", ws, "serve", "--record-http")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	l := workspace.NewLayout(ws)
	var ep tyruntime.Endpoint
	waitFor(t, "endpoint.json", 20*time.Second, func() bool {
		var err error
		ep, err = tyruntime.ReadEndpoint(l)
		return err == nil && ep.State == tyruntime.StateRunning
	})
	hc := &http.Client{Transport: testkit.Bearer{Token: ep.Token, Next: &http.Transport{Proxy: nil}}}
	var lives []transcript
	for _, version := range []string{"2025-11-25", "2025-11-25"} {
		client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ep.MCPURL, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		lives = append(lives, readOnlySession(t, ctx, cs, 0))
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	entries, err := tape.List(ws)
	if err != nil || len(entries) != 2 {
		t.Fatalf("tapes %+v %v", entries, err)
	}
	noSecrets(t, ws, ep.Token)
	for i, en := range entries {
		if !strings.HasPrefix(en.Name, "http-") || en.Meta.EndedAt.IsZero() {
			t.Fatalf("tape %+v", en)
		}
		replayed := play(t, ctx, ws, en.Name, func(cs *mcp.ClientSession) transcript { return readOnlySession(t, ctx, cs, 0) })
		sameTranscript(t, en.Name, replayed, lives[i])
	}
	if r := tychora(t, ws, "tape", "diff", entries[0].Name, entries[1].Name); r.code != 0 {
		t.Fatalf("two HTTP sessions of one script: %+v", r)
	}
	if r := tychora(t, ws, "serve", "--stdio", "--record-http"); r.code != 2 {
		t.Fatalf("--record-http with --stdio: %+v", r)
	}
}
