package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// endpoint is the part of .runtime/endpoint.json the load needs.
type endpoint struct {
	PID    int    `json:"pid"`
	URL    string `json:"url"`
	MCPURL string `json:"mcp_url"`
	Token  string `json:"token"`
	State  string `json:"state"`
}

func readEndpoint(ws string) (endpoint, error) {
	var ep endpoint
	b, err := os.ReadFile(filepath.Join(ws, ".runtime", "endpoint.json"))
	if err != nil {
		return ep, err
	}
	if err := json.Unmarshal(b, &ep); err != nil {
		return ep, fmt.Errorf("endpoint.json: %w", err)
	}
	// Loopback only: never send the token anywhere else.
	if !strings.HasPrefix(ep.URL, "http://127.0.0.1:") || !strings.HasPrefix(ep.MCPURL, ep.URL+"/") {
		return ep, fmt.Errorf("endpoint.json names %q, not a 127.0.0.1 URL", ep.URL)
	}
	return ep, nil
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// httpClient is one client's own connection pool, as a separate client
// process would have.
func httpClient(token string) *http.Client {
	tr := &http.Transport{
		Proxy:               nil, // loopback only
		MaxIdleConns:        4,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{Transport: bearer{token: token, next: tr}}
}

// connect opens one MCP session over Streamable HTTP with the go-sdk
// client.
func connect(ctx context.Context, ep endpoint, protocol string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "tychora-load", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: ep.MCPURL, HTTPClient: httpClient(ep.Token), MaxRetries: -1}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.Connect(cctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
}

// searchArgs are the search tool's arguments for question q within budget
// tokens, marshalled once.
func searchArgs(q string, budget int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"request": map[string]any{
		"question": q,
		"budget":   map[string]any{"max_tokens": budget},
	}})
	return b
}

// callTimeout bounds one call: the load always ends by itself.
const callTimeout = 30 * time.Second

// search calls the search tool once and reports how many hits came back.
// A tool error, a result without structured content or one over its
// budget is an error.
func search(ctx context.Context, cs *mcp.ClientSession, args json.RawMessage, budget int) (int, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "search", Arguments: args})
	if err != nil {
		return 0, err
	}
	if res.IsError {
		msg := "tool error"
		if len(res.Content) > 0 {
			if t, ok := res.Content[0].(*mcp.TextContent); ok {
				msg = t.Text
			}
		}
		return 0, errors.New(msg)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	b, _ := sc["budget"].(map[string]any)
	used, ok := b["used_tokens"].(float64)
	if !ok {
		return 0, errors.New("no budget.used_tokens in structuredContent")
	}
	if int(used) > budget {
		return 0, fmt.Errorf("used_tokens %d over the budget %d", int(used), budget)
	}
	hits, _ := sc["hits"].([]any)
	return len(hits), nil
}

// callTool calls any tool and decodes its structured content into out.
func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args any, out any) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		return fmt.Errorf("%s: %s", name, b)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// cacheCounts is the search_cache object of GET /v1/status.
type cacheCounts struct {
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
}

type status struct {
	SearchCache *cacheCounts `json:"search_cache"`
}

// ownerStatus reads GET /v1/status.
func ownerStatus(ctx context.Context, ep endpoint) (cacheCounts, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, ep.URL+"/v1/status", nil)
	if err != nil {
		return cacheCounts{}, err
	}
	resp, err := httpClient(ep.Token).Do(req)
	if err != nil {
		return cacheCounts{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return cacheCounts{}, fmt.Errorf("GET /v1/status: %s", resp.Status)
	}
	var st status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return cacheCounts{}, fmt.Errorf("GET /v1/status: %w", err)
	}
	if st.SearchCache == nil {
		return cacheCounts{}, errors.New("GET /v1/status has no search_cache")
	}
	return *st.SearchCache, nil
}

// cpuTicks is a process's user + system time from /proc/PID/stat, in
// clock ticks (100 a second on Linux).
func cpuTicks(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; fields count from the
	// closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return u + st, true
}

// machineTicks returns the busy and total clock ticks of all CPUs
// (/proc/stat), to tell how much of the machine other processes took.
func machineTicks() (busy, total int64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, true
}
