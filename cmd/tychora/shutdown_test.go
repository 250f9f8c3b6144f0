package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// outcome tallies how the requests of the shutdown test ended.
type outcome struct {
	mu       sync.Mutex
	counts   map[string]int
	failures []string
	slowest  time.Duration
}

func (o *outcome) add(class string, d time.Duration, failure string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counts[class]++
	o.slowest = max(o.slowest, d)
	if failure != "" && len(o.failures) < 20 {
		o.failures = append(o.failures, failure)
	}
}

func (o *outcome) get(class string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.counts[class]
}

// The bound on any one request during the shutdown: the owner's own wait
// for requests in flight is 10 s.
const requestBound = 15 * time.Second

// TestShutdownUnderLoad sends SIGTERM to `tychora serve` while searches
// run in loops over /v1 and over MCP (a session of the go-sdk client, and
// stateless JSON-RPC) and a sync is running. Every request must end
// within the bound with a whole answer, UNAVAILABLE, or no connection at
// all (the listener is closed): never a 500, never a response cut short.
// The owner exits 0 within the bound; the sync resumes at the next start
// and succeeds; the index passes integrity_check.
func TestShutdownUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("long: a served owner under load")
	}
	ctx := context.Background()
	root := t.TempDir()
	treeA, treeB := filepath.Join(root, "a"), filepath.Join(root, "b")
	writeFaultTree(t, treeA, 200)
	writeFaultTree(t, treeB, 2500)
	goFilesB := 2500 - 2500/4
	ws := filepath.Join(root, "ws")
	if r := tychora(t, ws, "init", "--ingest-root", root); r.code != 0 {
		t.Fatal(r)
	}
	// The sync of b below must be the test's own: a watching owner syncs
	// every source when it starts, and a sync asked for then answers with
	// that one.
	noWatch(t, ws)
	var srcB string
	for _, tree := range []string{treeA, treeB} {
		r := tychora(t, ws, "add", "--json", tree)
		var jr interfaces.JobResult
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &jr) != nil || jr.Job.State != jobs.StateSucceeded {
			t.Fatalf("add %s: %+v", tree, r)
		}
		srcB = jr.Job.SourceID
	}
	// Every file of b changes: its sync re-extracts and re-applies them all.
	err := filepath.WalkDir(treeB, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString("\n// Resumed after the shutdown: quiescentmarker.\nfunc Quiescent() {}\n")
		return errors.Join(err, f.Close())
	})
	if err != nil {
		t.Fatal(err)
	}

	own := startOwnerProc(t, ctx, ws)
	ep, err := tyruntime.ReadEndpoint(workspace.NewLayout(ws))
	if err != nil {
		t.Fatal(err)
	}
	var (
		res       = &outcome{counts: map[string]int{}}
		stop      = make(chan struct{})
		signalled = make(chan struct{})
		wg        sync.WaitGroup
	)
	afterSignal := func() bool {
		select {
		case <-signalled:
			return true
		default:
			return false
		}
	}
	// loop runs one client until the owner is gone (three refused
	// connections in a row after the signal) or stop, at most 5000 times.
	loop := func(name string, once func() (class, failure string)) {
		defer wg.Done()
		refused := 0
		for i := 0; i < 5000 && refused < 3; i++ {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			class, failure := once()
			d := time.Since(t0)
			if d > requestBound {
				failure = fmt.Sprintf("%s: a request took %v", name, d)
			}
			if failure != "" {
				class = "FAILED"
			}
			res.add(name+" "+class, d, failure)
			if class == "refused" {
				refused++
				time.Sleep(20 * time.Millisecond)
			} else {
				refused = 0
			}
		}
	}
	// Questions vary, so that each search ranks afresh (no cached
	// ranking) and spends its time in the owner: in flight at the signal.
	var asked atomic.Int64
	question := func() string {
		return fmt.Sprintf("parser %d handles request %d retries", asked.Add(1)%997, asked.Load()%6)
	}
	for i := 0; i < 3; i++ {
		hc := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 2 * requestBound}
		defer hc.CloseIdleConnections()
		wg.Add(1)
		go loop("v1", func() (string, string) {
			return v1Search(hc, ep, `{"request":{"question":"`+question()+`","budget":{"max_tokens":3000}}}`, afterSignal)
		})
	}
	for i := 0; i < 4; i++ {
		hc := &http.Client{Transport: testkit.Bearer{Token: ep.Token, Next: &http.Transport{Proxy: nil}}, Timeout: 2 * requestBound}
		wg.Add(1)
		go loop("mcp-session", mcpSessionSearch(ctx, hc, ep, question, afterSignal))
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 2 * requestBound}
	defer hc.CloseIdleConnections()
	wg.Add(1)
	go loop("mcp-stateless", func() (string, string) {
		return mcpStatelessSearch(hc, ep, question(), afterSignal)
	})
	waitFor(t, "every client answered", 30*time.Second, func() bool {
		return res.get("v1 ok") >= 10 && res.get("mcp-session ok") >= 5 && res.get("mcp-stateless ok") >= 5
	})

	// The sync of b, well under way: its files read, its apply begun.
	sj, err := own.client.AddSources(ctx, interfaces.AddSourcesRequest{Action: "sync", SourceID: srcB})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := readProcIO(own.cmd.Process.Pid)
	waitFor(t, "the sync reads b", 60*time.Second, func() bool {
		cur, err := readProcIO(own.cmd.Process.Pid)
		return err == nil && cur.rchar-base.rchar > 2<<20
	})
	j, err := own.client.GetJob(ctx, sj.Job.ID)
	if err != nil || j.Job.State != jobs.StateRunning {
		t.Fatalf("the sync is not running at the signal: %+v %v", j.Job, err)
	}
	before := fmt.Sprint(res.snapshot())
	t0 := time.Now()
	close(signalled)
	if err := own.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- own.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(requestBound + 10*time.Second):
		t.Fatalf("serve still running %v after SIGTERM", requestBound+10*time.Second)
	}
	stopTook := time.Since(t0)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * requestBound):
		close(stop)
		t.Fatal("the client loops did not end after the owner exited")
	}
	t.Logf("SIGTERM to exit: %v; before the signal: %s", stopTook.Round(time.Millisecond), before)
	t.Logf("all requests: %v; slowest %v", res.snapshot(), res.slowest.Round(time.Millisecond))
	for _, f := range res.failures {
		t.Error(f)
	}

	// The next start resumes the sync, which succeeds.
	own = startOwnerProc(t, ctx, ws)
	final := waitFinal(t, ctx, own.client, sj.Job.ID, 2*time.Minute)
	if final.State != jobs.StateSucceeded || final.Progress.Indexed != int64(goFilesB) {
		t.Fatalf("the sync after the restart (want %d files indexed): %+v", goFilesB, final)
	}
	out, err := own.client.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "quiescentmarker"}})
	if err != nil || out.Result.TotalMatches == 0 {
		t.Fatalf("the resumed sync's content: %d matches, %v", out.Result.TotalMatches, err)
	}
	stopOwnerProc(t, own)
	rep := dbcheck(t, filepath.Join(ws, "index.db"), false)
	if rep.Integrity != "ok" || rep.FTS != "ok" {
		t.Fatalf("integrity_check %q, fts %q", rep.Integrity, rep.FTS)
	}
	for id, st := range rep.Jobs {
		if st != jobs.StateSucceeded {
			t.Errorf("job %s is %s", id, st)
		}
	}
}

func (o *outcome) snapshot() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var parts []string
	for k, v := range o.counts {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// unreachable classifies a transport error, which came before any response:
// once the owner was told to stop, the request was refused (the listener
// is closed, or the idle connection it was sent on was); before, it fails.
// A response cut short is caught where its body is read.
func unreachable(name string, err error, stopping bool) (string, string) {
	if stopping {
		return "refused", ""
	}
	return "", fmt.Sprintf("%s before the signal: %v", name, err)
}

// envelopeClass checks an error answer: only UNAVAILABLE (503) is
// expected, and only once the owner is stopping.
func envelopeClass(name string, status int, body []byte, stopping bool) (string, string) {
	var eb interfaces.ErrorBody
	if err := json.Unmarshal(body, &eb); err != nil {
		return "", fmt.Sprintf("%s: HTTP %d with a body that is not the error envelope: %.200q", name, status, body)
	}
	if eb.Error.Code == workspace.CodeUnavailable && status == http.StatusServiceUnavailable && stopping {
		return "unavailable", ""
	}
	return "", fmt.Sprintf("%s: HTTP %d %s %q (stopping %v)", name, status, eb.Error.Code, eb.Error.Message, stopping)
}

// v1Search posts one search to /v1/search and classifies the answer: a
// whole QueryResult, UNAVAILABLE, or no connection.
func v1Search(hc *http.Client, ep tyruntime.Endpoint, body string, stoppingNow func() bool) (string, string) {
	req, _ := http.NewRequest(http.MethodPost, ep.URL+"/v1/search", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+ep.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	stopping := stoppingNow()
	if err != nil {
		return unreachable("v1", err, stopping)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Sprintf("v1: HTTP %d, body cut: %v after %d bytes", resp.StatusCode, err, len(b))
	}
	if resp.StatusCode != http.StatusOK {
		return envelopeClass("v1", resp.StatusCode, b, stopping)
	}
	var qr query.QueryResult
	if err := json.Unmarshal(b, &qr); err != nil || qr.RunID == "" {
		return "", fmt.Sprintf("v1: a 200 that is not a whole result (%v): %.200q", err, b)
	}
	return "ok", ""
}

// mcpStatelessSearch posts one stateless (2026-07-28) tools/call search to
// /mcp/ and classifies the answer.
func mcpStatelessSearch(hc *http.Client, ep tyruntime.Endpoint, question string, stoppingNow func() bool) (string, string) {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"request":{"question":"` + question + `"}},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, ep.MCPURL, strings.NewReader(call))
	req.Header.Set("Authorization", "Bearer "+ep.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "search")
	resp, err := hc.Do(req)
	stopping := stoppingNow()
	if err != nil {
		return unreachable("mcp-stateless", err, stopping)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Sprintf("mcp-stateless: HTTP %d, body cut: %v after %d bytes", resp.StatusCode, err, len(b))
	}
	if resp.StatusCode != http.StatusOK {
		return envelopeClass("mcp-stateless", resp.StatusCode, b, stopping)
	}
	msg := b
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msg = nil
		for _, line := range bytes.Split(b, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id"`)) {
				msg = d
			}
		}
	}
	var rpc struct {
		Result *mcp.CallToolResult `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &rpc); err != nil || (rpc.Result == nil && rpc.Error == nil) {
		return "", fmt.Sprintf("mcp-stateless: a 200 without a whole JSON-RPC response (%v): %.300q", err, b)
	}
	if rpc.Error != nil {
		return "", fmt.Sprintf("mcp-stateless: JSON-RPC error %d %q (stopping %v)", rpc.Error.Code, rpc.Error.Message, stopping)
	}
	return toolOutcome("mcp-stateless", rpc.Result, stopping)
}

// toolOutcome classifies a tool result: structured content, or a tool
// error that says UNAVAILABLE while the owner stops.
func toolOutcome(name string, r *mcp.CallToolResult, stopping bool) (string, string) {
	if !r.IsError {
		if r.StructuredContent == nil {
			return "", name + ": a result without structuredContent"
		}
		return "ok", ""
	}
	if len(r.Content) != 1 {
		return "", fmt.Sprintf("%s: a tool error with %d blocks", name, len(r.Content))
	}
	tc, _ := r.Content[0].(*mcp.TextContent)
	var eb interfaces.ErrorBody
	if tc == nil || json.Unmarshal([]byte(tc.Text), &eb) != nil {
		return "", name + ": a tool error that is not the envelope"
	}
	if eb.Error.Code == workspace.CodeUnavailable && stopping {
		return "unavailable", ""
	}
	return "", fmt.Sprintf("%s: tool error %s %q (stopping %v)", name, eb.Error.Code, eb.Error.Message, stopping)
}

// mcpSessionSearch returns a loop body that searches over one go-sdk
// client session (protocol 2025-11-25), reconnecting when the session
// ends.
func mcpSessionSearch(ctx context.Context, hc *http.Client, ep tyruntime.Endpoint, question func() string, stopping func() bool) func() (string, string) {
	var cs *mcp.ClientSession
	return func() (string, string) {
		if cs == nil {
			tr := &mcp.StreamableClientTransport{Endpoint: ep.MCPURL, HTTPClient: hc, MaxRetries: -1}
			cctx, cancel := context.WithTimeout(ctx, requestBound)
			defer cancel()
			c, err := mcp.NewClient(&mcp.Implementation{Name: "shutdown-test", Version: "1"}, nil).
				Connect(cctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				return unreachable("mcp-session connect", err, stopping())
			}
			cs = c
		}
		cctx, cancel := context.WithTimeout(ctx, 2*requestBound)
		defer cancel()
		r, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "search",
			Arguments: map[string]any{"request": map[string]any{"question": question()}}})
		s := stopping()
		if err != nil {
			_ = cs.Close()
			cs = nil
			return sessionError(err, s)
		}
		return toolOutcome("mcp-session", r, s)
	}
}

// sessionError classifies a failed call of the go-sdk client. Once the
// owner was told to stop, a call the transport could not deliver
// (connection refused, or an idle connection the server closed, before
// any response) never ran, and one refused with HTTP 503 got UNAVAILABLE.
// Anything else fails: in particular "request terminated without
// response", the client's words for an answer cut short.
func sessionError(err error, stopping bool) (string, string) {
	switch {
	case !stopping:
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF):
		return "refused", ""
	case strings.Contains(err.Error(), "503"), strings.Contains(err.Error(), http.StatusText(http.StatusServiceUnavailable)):
		// The go-sdk names a 503 by its status text only ("rejected by
		// transport: ...: Service Unavailable").
		return "unavailable", ""
	}
	return "", fmt.Sprintf("mcp-session (stopping %v): %v", stopping, err)
}
