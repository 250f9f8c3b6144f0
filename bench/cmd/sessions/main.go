// Command sessions opens MCP sessions on a running tychora owner over
// Streamable HTTP the way a careless or hostile client would: N
// initialize requests, each followed by its notifications/initialized,
// none of them ever ended with DELETE. It reads the owner's resident
// memory (VmRSS of /proc/PID/status) before and after, and exits 1 when it
// grew by more than -max-growth. With -tokens K it first creates K read
// tokens (with the owner token of endpoint.json) and spreads the sessions
// over them; with 0 it uses the owner token. bench/sessions.sh builds
// tychora, starts an owner on a small workspace and runs this; see
// bench/README.md.
//
//	go run ./bench/cmd/sessions -workspace W [-n 10000] [-tokens 4]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const protocol = "2025-11-25"

func main() {
	ws := flag.String("workspace", "", "the workspace whose owner runs (reads .runtime/endpoint.json)")
	n := flag.Int("n", 10000, "initialize requests")
	tokens := flag.Int("tokens", 0, "read tokens to create and spread the sessions over (0: the owner token alone)")
	workers := flag.Int("workers", 8, "requests in flight at once")
	settle := flag.Duration("settle", 5*time.Second, "how long to wait after the last request before reading memory again")
	maxGrowth := flag.Int64("max-growth", 20<<20, "bytes the owner's VmRSS may grow by")
	flag.Parse()
	if *ws == "" {
		fmt.Fprintln(os.Stderr, "sessions: -workspace is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := run(ctx, *ws, *n, *tokens, *workers, *settle, *maxGrowth); err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
}

type endpoint struct {
	PID    int    `json:"pid"`
	URL    string `json:"url"`
	MCPURL string `json:"mcp_url"`
	Token  string `json:"token"`
}

func run(ctx context.Context, ws string, n, nTokens, workers int, settle time.Duration, maxGrowth int64) error {
	b, err := os.ReadFile(filepath.Join(ws, ".runtime", "endpoint.json"))
	if err != nil {
		return err
	}
	var ep endpoint
	if err := json.Unmarshal(b, &ep); err != nil {
		return fmt.Errorf("endpoint.json: %w", err)
	}
	// Loopback only: never send the token anywhere else.
	if !strings.HasPrefix(ep.URL, "http://127.0.0.1:") || !strings.HasPrefix(ep.MCPURL, ep.URL+"/") {
		return fmt.Errorf("endpoint.json names %q, not a 127.0.0.1 URL", ep.URL)
	}
	c := &client{ep: ep, http: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: workers}}}
	secrets := []string{ep.Token}
	if nTokens > 0 {
		secrets = secrets[:0]
		for i := range nTokens {
			s, err := c.createToken(ctx, fmt.Sprintf("sessions-bench-%d", i))
			if err != nil {
				return fmt.Errorf("create token: %w", err)
			}
			secrets = append(secrets, s)
		}
	}
	// One session first, so that the code paths of a session are loaded
	// before the idle reading.
	if _, err := c.open(ctx, secrets[0]); err != nil {
		return err
	}
	time.Sleep(time.Second)
	idle, err := memory(ep.PID)
	if err != nil {
		return err
	}
	fmt.Printf("owner pid %d at %s: %d initialize + notifications/initialized (protocol %s), %s, %d in flight\n",
		ep.PID, ep.URL, n, protocol, tokenWords(nTokens), workers)
	fmt.Printf("idle:    VmRSS %s, VmHWM %s\n", mb(idle.rss), mb(idle.hwm))

	// first[k] and last[k]: the first and last session opened with
	// secrets[k], to see afterwards which of them are still open.
	first := make([]string, len(secrets))
	last := make([]string, len(secrets))
	var mu sync.Mutex
	var next, failed atomic.Int64
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				k := int(i) % len(secrets)
				id, err := c.open(ctx, secrets[k])
				mu.Lock()
				switch {
				case err != nil:
					failed.Add(1)
					if firstErr == nil {
						firstErr = err
					}
				case i < int64(len(secrets)):
					first[k] = id
				}
				if err == nil && i >= int64(n-len(secrets)) {
					last[k] = id
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	after, err := memory(ep.PID)
	if err != nil {
		return err
	}
	fmt.Printf("after:   VmRSS %s (%+.1f MB), VmHWM %s; %d sessions in %.1f s (%.0f/s), %d failed\n",
		mb(after.rss), float64(after.rss-idle.rss)/(1<<20), mb(after.hwm), n, took.Seconds(), float64(n)/took.Seconds(), failed.Load())
	if firstErr != nil {
		fmt.Printf("first failure: %v\n", firstErr)
	}
	time.Sleep(settle)
	settled, err := memory(ep.PID)
	if err != nil {
		return err
	}
	fmt.Printf("settled: VmRSS %s (%+.1f MB) %s later\n", mb(settled.rss), float64(settled.rss-idle.rss)/(1<<20), settle)

	var firstOpen, lastOpen int
	for k := range secrets {
		if first[k] != "" && c.alive(ctx, secrets[k], first[k]) {
			firstOpen++
		}
		if last[k] != "" && c.alive(ctx, secrets[k], last[k]) {
			lastOpen++
		}
	}
	fmt.Printf("sessions: the first of each token still open: %d of %d; the last: %d of %d\n", firstOpen, len(secrets), lastOpen, len(secrets))
	if growth := after.rss - idle.rss; growth > maxGrowth || failed.Load() > 0 {
		return fmt.Errorf("VmRSS grew by %.1f MB (bound %.1f MB), %d failed", float64(growth)/(1<<20), float64(maxGrowth)/(1<<20), failed.Load())
	}
	return nil
}

func tokenWords(n int) string {
	if n == 0 {
		return "the owner token"
	}
	return fmt.Sprintf("%d read tokens in turn", n)
}

type client struct {
	ep   endpoint
	http *http.Client
}

func (c *client) post(ctx context.Context, url, secret string, hdr map[string]string, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// createToken creates a read token and returns its secret.
func (c *client) createToken(ctx context.Context, name string) (string, error) {
	resp, b, err := c.post(ctx, c.ep.URL+"/v1/tokens", c.ep.Token, nil, `{"grant":"read","name":`+strconv.Quote(name)+`}`)
	if err != nil {
		return "", err
	}
	var out struct {
		Token string `json:"token"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &out) != nil || out.Token == "" {
		return "", fmt.Errorf("POST /v1/tokens: %d %s", resp.StatusCode, b)
	}
	return out.Token, nil
}

// open sends initialize and notifications/initialized, and returns the
// session id.
func (c *client) open(ctx context.Context, secret string) (string, error) {
	resp, b, err := c.post(ctx, c.ep.MCPURL, secret, nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+protocol+`","capabilities":{},"clientInfo":{"name":"sessions-bench","version":"0"}}}`)
	if err != nil {
		return "", err
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" || !bytes.Contains(b, []byte(`"protocolVersion"`)) {
		return "", fmt.Errorf("initialize: %d %s", resp.StatusCode, clip(b))
	}
	resp, b, err = c.post(ctx, c.ep.MCPURL, secret, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": protocol},
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: %d %s", resp.StatusCode, clip(b))
	}
	return id, nil
}

// alive reports whether session id still answers a ping.
func (c *client) alive(ctx context.Context, secret, id string) bool {
	resp, _, err := c.post(ctx, c.ep.MCPURL, secret, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": protocol},
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	return err == nil && resp.StatusCode == http.StatusOK
}

type mem struct{ rss, hwm int64 }

// memory reads VmRSS and VmHWM of pid.
func memory(pid int) (mem, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return mem{}, err
	}
	defer f.Close()
	var m mem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return mem{}, fmt.Errorf("%s: %q", k, v)
		}
		if k == "VmRSS" {
			m.rss = kb << 10
		} else {
			m.hwm = kb << 10
		}
	}
	if m.rss == 0 {
		return mem{}, errors.New("no VmRSS in /proc/PID/status")
	}
	return m, sc.Err()
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }

func clip(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
