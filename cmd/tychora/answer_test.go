package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/google/jsonschema-go/jsonschema"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/render"
	tyruntime "github.com/tychora/tychora/runtime"
)

// wireTap keeps the bytes a client reads, as they arrived.
type wireTap struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *wireTap) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// messages are the JSON-RPC messages the tap saw: newline-delimited frames
// (stdio) or HTTP bodies, plain JSON or server-sent events.
func (w *wireTap) messages() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(w.buf.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		line := bytes.TrimPrefix(sc.Bytes(), []byte("data: "))
		if len(line) > 0 && line[0] == '{' {
			out = append(out, append([]byte(nil), line...))
		}
	}
	return out
}

// tapBodies is an http.RoundTripper that adds the owner's token and copies
// every response body into a tap.
type tapBodies struct {
	token string
	tap   *wireTap
}

func (b tapBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, b.tap), resp.Body}
	return resp, nil
}

// wireResult is the search result of id as it travelled.
type wireResult struct {
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func searchOnWire(t *testing.T, tap *wireTap) wireResult {
	t.Helper()
	for _, m := range tap.messages() {
		var msg struct {
			Result *wireResult `json:"result"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Result != nil &&
			(bytes.Contains(msg.Result.StructuredContent, []byte(`"used_tokens"`)) ||
				len(msg.Result.Content) > 0 && strings.Contains(msg.Result.Content[0].Text, `"used_tokens"`)) {
			return *msg.Result
		}
	}
	t.Fatal("no search result on the wire")
	return wireResult{}
}

// TestRenderedAnswerInEveryClientView: with a render, a model sees the
// rendered answer whichever part of the result its client passes on —
// structuredContent only (as Claude Code and VS Code do), content only, or
// both — and used_tokens counts exactly what travels, read off the wire of
// stdio and HTTP under the go-sdk client.
func TestRenderedAnswerInEveryClientView(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "budget"), 0o755); err != nil {
		t.Fatal(err)
	}
	code := "package budget\n\n// FitAnswerToBudget packs the answer into its token budget.\nfunc FitAnswerToBudget(max int) int {\n\treturn max / 2 // <half> & more\n}\n"
	if err := os.WriteFile(filepath.Join(tree, "budget", "fit.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := "# Budgets\n\nFitAnswerToBudget is how an answer fits its budget.\n"
	if err := os.WriteFile(filepath.Join(tree, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	if r := tychora(t, ws, "add", "--wait", tree); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	serve(t, ws)
	_, ep, err := tyruntime.ConnectLocal(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	realTree, err := filepath.EvalSymlinks(tree)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := filepath.Join(realTree, "budget", "fit.go")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	type transport struct {
		name    string
		connect func(t *testing.T, tap *wireTap, version string) *mcp.ClientSession
	}
	transports := []transport{
		{"stdio", func(t *testing.T, tap *wireTap, version string) *mcp.ClientSession {
			cmd := exec.Command(binary, "--workspace", ws, "serve", "--stdio", "--grant", "read")
			cmd.Stderr = os.Stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
			tr := &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(stdout, tap)), Writer: stdin}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "views", Version: "1"}, nil).
				Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}},
		{"http", func(t *testing.T, tap *wireTap, version string) *mcp.ClientSession {
			tr := &mcp.StreamableClientTransport{Endpoint: ep.MCPURL,
				HTTPClient: &http.Client{Transport: tapBodies{ep.Token, tap}}, MaxRetries: -1}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "views", Version: "1"}, nil).
				Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}},
	}
	counter, err := render.CounterFor("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	// Whole files and ranges over MCP: inspect content, on each transport.
	for _, tc := range transports {
		tap := &wireTap{}
		cs := tc.connect(t, tap, "2025-11-25")
		src := callStatusSource(t, ctx, cs)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "inspect", Arguments: map[string]any{"request": map[string]any{
			"subject": "content", "source_id": src, "path": "budget/fit.go", "start_line": 4, "end_line": 5}}})
		if err != nil || res.IsError {
			t.Fatalf("%s: inspect content: %v %+v", tc.name, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var fc struct {
			Result struct {
				Text  string `json:"text"`
				File  string `json:"file"`
				Stale bool   `json:"stale"`
			} `json:"result"`
		}
		lines := strings.SplitAfter(code, "\n")
		if err := json.Unmarshal(b, &fc); err != nil || fc.Result.Text != lines[3]+lines[4] || fc.Result.File != wantFile || fc.Result.Stale {
			t.Fatalf("%s: inspect content 4-5: %s", tc.name, b)
		}
		cs.Close()
	}
	for _, tc := range transports {
		for _, version := range []string{"2025-11-25", "2025-03-26"} {
			for _, format := range []string{"agent@1", "markdown@1", "hierarchical-evidence@1"} {
				t.Run(tc.name+"/"+version+"/"+format, func(t *testing.T) {
					tap := &wireTap{}
					cs := tc.connect(t, tap, version)
					defer cs.Close()
					const budget = 1000
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{
						"request": map[string]any{"question": "FitAnswerToBudget", "budget": map[string]any{"max_tokens": budget}},
						"render":  format}})
					if err != nil || res.IsError {
						t.Fatalf("search: %v %+v", err, res)
					}
					w := searchOnWire(t, tap)
					// What each kind of client shows a model.
					var structured json.RawMessage
					var texts []string
					for _, c := range w.Content {
						texts = append(texts, c.Text)
					}
					if version == "2025-03-26" {
						// No structuredContent: the JSON is the first block.
						if w.StructuredContent != nil || len(texts) != 2 {
							t.Fatalf("old protocol: %d blocks, structuredContent %s", len(texts), w.StructuredContent)
						}
						structured, texts = json.RawMessage(texts[0]), texts[1:]
					} else {
						if w.StructuredContent == nil || len(texts) != 1 {
							t.Fatalf("%d text blocks, structuredContent %d bytes", len(texts), len(w.StructuredContent))
						}
						structured = w.StructuredContent
					}
					var body struct {
						Rendered *string `json:"rendered"`
						Budget   struct {
							MaxTokens  int `json:"max_tokens"`
							UsedTokens int `json:"used_tokens"`
						} `json:"budget"`
						Hits []struct {
							File  string `json:"file"`
							Text  any    `json:"text"`
							Hash  any    `json:"hash"`
							Snip  any    `json:"snippet"`
							Score any    `json:"score"`
						} `json:"hits"`
					}
					if err := json.Unmarshal(structured, &body); err != nil {
						t.Fatal(err)
					}
					views := map[string]string{
						"structuredContent only": string(structured),
						"content only":           strings.Join(texts, "\n"),
						"both":                   string(structured) + "\n" + strings.Join(texts, "\n"),
					}
					if body.Rendered == nil {
						t.Fatalf("structuredContent carries no rendered text: %s", structured)
					}
					if version != "2025-03-26" {
						validateAdvertised(t, ctx, cs, "search", structured)
					}
					for view, seen := range views {
						// JSON.stringify of the object shows the rendered
						// string escaped; a model reads it as the text.
						shown := seen
						if view == "structuredContent only" {
							shown = *body.Rendered
						}
						for _, want := range []string{wantFile, "func FitAnswerToBudget(max int) int {", "return max / 2 // <half> & more"} {
							if !strings.Contains(shown, want) {
								t.Errorf("%s: the model does not see %q:\n%s", view, want, seen)
							}
						}
					}
					if texts[len(texts)-1] != *body.Rendered {
						t.Errorf("the text block and structuredContent's rendered differ")
					}
					if len(body.Hits) == 0 {
						t.Fatal("no hits")
					}
					for _, h := range body.Hits {
						if h.Text != nil || h.Hash != nil || h.Snip != nil || h.File == "" {
							t.Errorf("hit is not a compact citation with its file: %+v", h)
						}
						if _, err := os.Stat(h.File); err != nil {
							t.Errorf("hit file does not open: %v", err)
						}
					}
					// The budget counts exactly what travels: the
					// structured bytes as they arrived, and the text.
					recount := counter.CountBytes(structured) + counter.Count(texts[len(texts)-1])
					if body.Budget.UsedTokens != recount || recount > budget || body.Budget.MaxTokens != budget {
						t.Errorf("used_tokens %d, recount of the wire %d, budget %d", body.Budget.UsedTokens, recount, budget)
					}
				})
			}
		}
	}
}

// callStatusSource is the id of the one source discover lists.
func callStatusSource(t *testing.T, ctx context.Context, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "discover", Arguments: map[string]any{"request": map[string]any{"subject": "sources"}}})
	if err != nil || res.IsError {
		t.Fatalf("discover sources: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var d struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &d); err != nil || len(d.Items) != 1 {
		t.Fatalf("discover sources: %s", b)
	}
	return d.Items[0].ID
}

// validateAdvertised checks structured against the output schema the
// server advertises for tool in tools/list, as a client that validates
// structuredContent does.
func validateAdvertised(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, structured json.RawMessage) {
	t.Helper()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != tool {
			continue
		}
		b, err := json.Marshal(tl.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var inst any
		if err := json.Unmarshal(structured, &inst); err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(inst); err != nil {
			t.Errorf("%s structuredContent does not match its advertised outputSchema: %v\n%s", tool, err, structured)
		}
		return
	}
	t.Fatalf("tools/list has no %s", tool)
}
