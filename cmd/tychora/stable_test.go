package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/workspace"
)

// stopServe sends SIGTERM to a serve started by serve() and waits for it.
func stopServe(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_, _ = cmd.Process.Wait() // serve's cleanup reaps the rest
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

// httpConfig runs mcp-config --http for client and returns the URL and
// secret of its entry, with stderr.
func httpConfig(t *testing.T, ws, client string, extra ...string) (url, secret, stderr string) {
	t.Helper()
	r := tychora(t, ws, append([]string{"mcp-config", "--http", "--client", client}, extra...)...)
	if r.code != 0 {
		t.Fatalf("mcp-config --http --client %s %v: %+v", client, extra, r)
	}
	var doc map[string]map[string]struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("config %q: %v", r.stdout, err)
	}
	for _, servers := range doc {
		e := servers["tychora"]
		return e.URL, strings.TrimPrefix(e.Headers["Authorization"], "Bearer "), r.stderr
	}
	t.Fatalf("no server in %q", r.stdout)
	return "", "", ""
}

// accepts reports whether the owner behind the MCP URL url accepts secret.
func accepts(t *testing.T, url, secret string) bool {
	t.Helper()
	c, err := httpapi.NewClient(strings.TrimSuffix(url, "/mcp/"), secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Health(context.Background())
	return err == nil
}

// TestHTTPConfigSurvivesRestarts: a configuration mcp-config --http printed
// keeps working across runs of mcp-config and restarts of the owner; only
// --rotate changes the secret, and a token whose secret is not kept is
// never rotated silently.
func TestHTTPConfigSurvivesRestarts(t *testing.T) {
	ws := newWS(t)
	owner := serve(t, ws)
	url, secret, stderr := httpConfig(t, ws, "cursor")
	if !strings.Contains(stderr, "created") || strings.Contains(stderr, "rotated") || !accepts(t, url, secret) {
		t.Fatalf("first config: %s %s, stderr %q", url, secret, stderr)
	}
	fi, err := os.Stat(workspace.NewLayout(ws).MCPTokens)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kept secrets file: %v %v", fi, err)
	}
	url2, secret2, stderr := httpConfig(t, ws, "cursor")
	if url2 != url || secret2 != secret || strings.Contains(stderr, "rotated") || !strings.Contains(stderr, "same secret") {
		t.Fatalf("second config: %s %s, stderr %q", url2, secret2, stderr)
	}

	// A restart keeps the port; the same configuration works.
	stopServe(t, owner)
	owner = serve(t, ws)
	url3, secret3, _ := httpConfig(t, ws, "cursor")
	if url3 != url || secret3 != secret || !accepts(t, url, secret) {
		t.Fatalf("after a restart: %s %s, first %s %s", url3, secret3, url, secret)
	}

	// --rotate: a new secret, said so; the old one stops working.
	url4, secret4, stderr := httpConfig(t, ws, "cursor", "--rotate")
	if url4 != url || secret4 == secret || !strings.Contains(stderr, "rotated") || accepts(t, url, secret) || !accepts(t, url, secret4) {
		t.Fatalf("rotate: %s %s, stderr %q", url4, secret4, stderr)
	}

	// A token of that name made by token create is not rotated without
	// --rotate: its holder keeps working.
	r := tychora(t, ws, "token", "create", "--grant", "write", "--name", "mcp-vscode", "--json")
	var made struct {
		Token string `json:"token"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &made) != nil {
		t.Fatal(r)
	}
	r = tychora(t, ws, "mcp-config", "--http", "--client", "vscode")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "CONFLICT") || !strings.Contains(r.stderr, "--rotate") || !accepts(t, url, made.Token) {
		t.Fatalf("mcp-config over a token create token: %+v", r)
	}
	if r := tychora(t, ws, "mcp-config", "--rotate"); r.code != exitUsage {
		t.Fatalf("--rotate without --http: %+v", r)
	}

	// When the port is taken, the owner listens on another and the
	// configuration says the new URL with the same secret.
	stopServe(t, owner)
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp/")
	ln, err := net.Listen("tcp", host)
	if err != nil {
		t.Fatalf("take the owner's port %s: %v", host, err)
	}
	defer ln.Close()
	serve(t, ws)
	url5, secret5, _ := httpConfig(t, ws, "cursor")
	if url5 == url || secret5 != secret4 || !accepts(t, url5, secret4) {
		t.Fatalf("port taken: %s %s, before %s %s", url5, secret5, url, secret4)
	}
}
