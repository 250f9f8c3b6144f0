package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tychora-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "tychora")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code   int
	stdout string
	stderr string
}

// tychora runs the built binary with args against workspace ws.
func tychora(t *testing.T, ws string, args ...string) result {
	t.Helper()
	return runCmd(t, exec.Command(binary, append([]string{"--workspace", ws}, args...)...))
}

// runCmd runs cmd to its end and returns its exit status and output.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// serve starts `tychora serve` and waits until its endpoint answers.
func serve(t *testing.T, ws string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary, "--workspace", ws, "serve")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	ready := make(chan struct{})
	go func() {
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	return cmd
}

func newWS(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	if r := tychora(t, ws, "init", "--collection", "default", "--collection", "docs"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	return ws
}

func TestServeStatusSIGTERM(t *testing.T) {
	ws := newWS(t)
	if r := tychora(t, ws, "status"); r.code != exitNoOwner {
		t.Fatalf("status without owner: %+v", r)
	} else {
		var eb interfaces.ErrorBody
		if err := json.Unmarshal([]byte(r.stderr), &eb); err != nil || eb.Error.Code != workspace.CodeUnavailable {
			t.Fatalf("status error body %q", r.stderr)
		}
	}
	cmd := serve(t, ws)
	r := tychora(t, ws, "status", "--json")
	if r.code != 0 {
		t.Fatalf("status: %+v", r)
	}
	var st interfaces.StatusResult
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.PID != cmd.Process.Pid || !strings.HasPrefix(st.URL, "http://127.0.0.1:") {
		t.Fatalf("status body %q: %v", r.stdout, err)
	}
	// A second owner is refused, naming the first; the first keeps serving.
	r = tychora(t, ws, "serve")
	if r.code == 0 || !strings.Contains(r.stderr, st.URL) || !strings.Contains(r.stderr, "CONFLICT") {
		t.Fatalf("second serve: %+v", r)
	}
	if r := tychora(t, ws, "status"); r.code != 0 {
		t.Fatalf("status after refused second owner: %+v", r)
	}
	// SIGTERM: ordered shutdown, endpoint.json removed, lock released.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	l := workspace.NewLayout(ws)
	if _, err := os.Stat(l.Endpoint); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("endpoint.json after SIGTERM: %v", err)
	}
	lock, err := workspace.AcquireLock(l)
	if err != nil {
		t.Fatalf("lock after SIGTERM: %v", err)
	}
	lock.Release()
}

// TestTokenCommandsBothWays: the same commands give the same --json shapes
// with an owner running (delegated) and without one (in-process).
func TestTokenCommandsBothWays(t *testing.T) {
	ws := newWS(t)
	run := func(args ...string) map[string]any {
		t.Helper()
		r := tychora(t, ws, args...)
		if r.code != 0 {
			t.Fatalf("%v: %+v", args, r)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
			t.Fatalf("%v: stdout %q", args, r.stdout)
		}
		return m
	}
	keys := func(m map[string]any) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return strings.Join(ks, ",")
	}
	offline := run("token", "create", "--grant", "read", "--collection", "docs", "--name", "ci", "--json")
	if _, err := os.Stat(workspace.NewLayout(ws).Endpoint); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("in-process command left endpoint.json behind")
	}
	serve(t, ws)
	online := run("token", "create", "--grant", "read", "--collection", "docs", "--name", "ci", "--json")
	if keys(offline) != keys(online) || offline["id"] != online["id"] || offline["token"] == online["token"] {
		t.Fatalf("offline %v, online %v", offline, online)
	}
	list := run("token", "list", "--json")
	toks, _ := list["tokens"].([]any)
	if len(toks) != 1 {
		t.Fatalf("list %v", list)
	}
	if strings.Contains(jsonString(list), online["token"].(string)) {
		t.Fatal("token list shows a secret")
	}
	// The rotated secret works against the owner; the old one does not.
	c, ep, err := tyruntime.ConnectLocal(context.Background(), ws)
	if err != nil || c == nil || ep.PID == 0 {
		t.Fatal(err)
	}
	rev := run("token", "revoke", "--json", online["id"].(string))
	if rev["revoked"] != true {
		t.Fatalf("revoke %v", rev)
	}
	r := tychora(t, ws, "token", "revoke", "--json", online["id"].(string))
	var eb interfaces.ErrorBody
	if r.code != 1 || json.Unmarshal([]byte(r.stderr), &eb) != nil || eb.Error.Code != workspace.CodeNotFound {
		t.Fatalf("second revoke: %+v", r)
	}
}

func TestUsageErrors(t *testing.T) {
	ws := newWS(t)
	for _, args := range [][]string{
		{"token", "create", "--grant", "root", "--json"},
		{"token", "revoke"},
		{"init", "--ingest-root", "/definitely/not/here"},
		{"serve", "--listen", "0.0.0.0:0"},
	} {
		r := tychora(t, ws, args...)
		if r.code == 0 || !strings.Contains(r.stderr, `"code"`) {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := tychora(t, ws, "init"); r.code != 1 || !strings.Contains(r.stderr, "CONFLICT") {
		t.Errorf("init twice: %+v", r)
	}
	for _, cmd := range []string{"init", "serve", "status", "token"} {
		r := tychora(t, ws, cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "USAGE") {
			t.Errorf("%s --help: %+v", cmd, r)
		}
	}
}
