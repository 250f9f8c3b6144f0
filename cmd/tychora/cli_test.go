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
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// tychoraIn runs the built binary in the working directory dir.
func tychoraIn(t *testing.T, dir, ws string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--workspace", ws}, args...)...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// errorEnvelope parses stderr as exactly one line holding the
// {"error":{"code","message"}} envelope.
func errorEnvelope(stderr string) (interfaces.ErrorBody, bool) {
	var eb interfaces.ErrorBody
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		return eb, false
	}
	if err := json.Unmarshal([]byte(stderr), &eb); err != nil || eb.Error.Message == "" {
		return eb, false
	}
	return eb, true
}

// TestUsageErrorsExit2: every usage error is INVALID_ARGUMENT on one line
// of stderr, nothing on stdout, exit status 2; runs diff says 3, since its
// 2 means "different sets". Errors that are not usage errors keep 1.
func TestUsageErrorsExit2(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	// A file in the working directory: `add ""` must not index it.
	if err := os.WriteFile(filepath.Join(root, "notes.md"), []byte("# Notes\n\nquuxle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"--bogus"}, 2},
		{[]string{"--log-level"}, 2},
		{[]string{"--log-level", "loud"}, 2},
		{[]string{"--log-level", "loud", "status"}, 2},
		{[]string{"--log-level", "info+4", "add", "notes.md"}, 2},
		{[]string{"--log-level", "", "sources"}, 2},
		{[]string{"nosuch"}, 2},
		{[]string{"search", "--bogus", "x"}, 2},
		{[]string{"search", "--limit", "abc", "x"}, 2},
		{[]string{"search", "--limit", "0", "x"}, 2},
		{[]string{"search", "--limit", "-1", "x"}, 2},
		{[]string{"search", "--limit", "101", "x"}, 2},
		{[]string{"search", "--budget", "0", "x"}, 2},
		{[]string{"search", "--budget", "-5", "x"}, 2},
		{[]string{"search", "--render", "html@9", "x"}, 2},
		{[]string{"search", "--collection", "Not Valid!", "x"}, 2},
		{[]string{"search", "--role", "tests", "x"}, 2},
		{[]string{"search", "--exclude-role", "vendor", "x"}, 2},
		{[]string{"search"}, 2},
		{[]string{"search", " "}, 2},
		{[]string{"search", "--replay", "run_x", "x"}, 2},
		{[]string{"search", "--replay", "run_x", "--limit", "3"}, 2},
		{[]string{"search", "--replay", "run_x", "--role", "test"}, 2},
		{[]string{"token", "create"}, 2},
		{[]string{"token", "create", "--grant", "root"}, 2},
		{[]string{"token", "create", "--grant", "read", "extra"}, 2},
		{[]string{"token", "list", "extra"}, 2},
		{[]string{"token", "revoke"}, 2},
		{[]string{"token", "revoke", ""}, 2},
		{[]string{"token", "nosuch"}, 2},
		{[]string{"add"}, 2},
		{[]string{"add", ""}, 2},
		{[]string{"add", "bad\xffname.txt"}, 2},
		{[]string{"add", "a", "b"}, 2},
		{[]string{"add", "--kind", "dir", "notes.md"}, 2},
		{[]string{"sync"}, 2},
		{[]string{"sync", ""}, 2},
		{[]string{"sources", "extra"}, 2},
		{[]string{"jobs", "nosuch"}, 2},
		{[]string{"jobs", "list", "extra"}, 2},
		{[]string{"jobs", "list", "--limit", "0"}, 2},
		{[]string{"jobs", "list", "--limit", "1000"}, 2},
		{[]string{"jobs", "list", "--state", "done"}, 2},
		{[]string{"jobs", "get"}, 2},
		{[]string{"jobs", "get", ""}, 2},
		{[]string{"jobs", "cancel", "a", "b"}, 2},
		{[]string{"discover"}, 2},
		{[]string{"discover", "nope"}, 2},
		{[]string{"discover", "--limit", "0", "kinds"}, 2},
		{[]string{"inspect", "source"}, 2},
		{[]string{"inspect", "nope", "src_x"}, 2},
		{[]string{"inspect", "--limit", "201", "source", "src_x"}, 2},
		{[]string{"init", "extra"}, 2},
		{[]string{"init", "--ingest-root", "/definitely/not/here"}, 2},
		{[]string{"serve", "extra"}, 2},
		{[]string{"serve", "--grant", "read"}, 2},
		{[]string{"serve", "--stdio", "--grant", "root"}, 2},
		{[]string{"serve", "--listen", "0.0.0.0:0"}, 2},
		{[]string{"status", "extra"}, 2},
		{[]string{"runs", "nosuch"}, 2},
		{[]string{"runs", "list", "extra"}, 2},
		{[]string{"mcp-config", "--client", "emacs"}, 2},
		{[]string{"mcp-config", "extra"}, 2},
		{[]string{"runs", "diff", "--bogus", "a", "b"}, 3},
		{[]string{"runs", "diff", "a"}, 3},
		{[]string{"runs", "diff", "a", ""}, 3},
		{[]string{"runs", "diff", "a", "b", "c"}, 3},
	}
	for _, tc := range cases {
		r := tychoraIn(t, root, ws, tc.args...)
		eb, ok := errorEnvelope(r.stderr)
		if r.code != tc.code || r.stdout != "" || !ok || eb.Error.Code != workspace.CodeInvalidArgument {
			t.Errorf("%q: exit %d (want %d), stdout %q, stderr %q", tc.args, r.code, tc.code, r.stdout, r.stderr)
		}
	}
	// A bad global flag value says what the flag takes.
	if r := tychoraIn(t, root, ws, "--log-level", "loud", "sources"); !strings.Contains(r.stderr, "use debug, info, warn or error") {
		t.Errorf("--log-level loud: %q", r.stderr)
	}
	// Nothing above reached the workspace: no source, no job.
	r := tychoraIn(t, root, ws, "sources", "--json")
	var srcs interfaces.DiscoverResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &srcs) != nil || len(srcs.Items) != 0 {
		t.Fatalf("sources after usage errors: %+v", r)
	}
	// An error that is not a usage error keeps exit 1 and its own code.
	r = tychoraIn(t, root, ws, "jobs", "get", "nope")
	if eb, ok := errorEnvelope(r.stderr); r.code != 1 || !ok || eb.Error.Code != workspace.CodeNotFound {
		t.Errorf("jobs get nope: %+v", r)
	}
	// Asking for help is not an error.
	for _, args := range [][]string{{}, {"jobs"}, {"search", "--help"}, {"runs", "diff", "--help"}} {
		r := tychoraIn(t, root, ws, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "USAGE") || r.stderr != "" {
			t.Errorf("%q: %+v", args, r)
		}
	}
}

// TestHelpDefaults: no flag's help shows urfave's zero default next to the
// default it documents.
func TestHelpDefaults(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	for _, args := range [][]string{{"search"}, {"discover"}, {"inspect"}, {"jobs", "list"}} {
		r := tychora(t, ws, append(args, "--help")...)
		if r.code != 0 {
			t.Fatalf("%q: %+v", args, r)
		}
		for _, bad := range []string{"(default: 0)", "(default: false)"} {
			if strings.Contains(r.stdout, bad) {
				t.Errorf("%q help says %s:\n%s", args, bad, r.stdout)
			}
		}
		if !regexp.MustCompile(`--limit .*\(default: \d+\)`).MatchString(r.stdout) {
			t.Errorf("%q help does not give --limit's default:\n%s", args, r.stdout)
		}
	}
}

// getV1 fetches a /v1 path from the running owner of ws and returns the
// body as sent.
func getV1(t *testing.T, ws, path string) []byte {
	t.Helper()
	return callV1(t, ws, http.MethodGet, path, "")
}

// callV1 sends one /v1 request with the owner's token and returns the body
// of its 200 answer.
func callV1(t *testing.T, ws, method, path, body string) []byte {
	t.Helper()
	_, ep, err := tyruntime.ConnectLocal(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, ep.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ep.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s %v", method, path, resp.StatusCode, b, err)
	}
	return b
}

// TestJSONIsV1Body: --json prints the bytes the owner's /v1 route sends,
// with and without a running owner.
func TestJSONIsV1Body(t *testing.T) {
	root := t.TempDir()
	makeTree(t, filepath.Join(root, "tree"), 5)
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	r := tychora(t, ws, "add", "--json", filepath.Join(root, "tree"))
	if r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	var added interfaces.JobResult
	if err := json.Unmarshal([]byte(r.stdout), &added); err != nil {
		t.Fatal(err)
	}
	offline := tychora(t, ws, "jobs", "get", "--json", added.Job.ID).stdout
	if r := tychora(t, ws, "token", "create", "--grant", "read", "--name", "ci", "--json"); r.code != 0 {
		t.Fatal(r)
	}
	offlineTokens := tychora(t, ws, "token", "list", "--json").stdout
	// The bodies are compared while the index stands still: a watching
	// owner's first sync would move last_synced_at between two of them.
	noWatch(t, ws)
	serve(t, ws)
	for _, c := range []struct {
		name    string
		path    string
		printed []string
	}{
		{"jobs get", "/v1/jobs/" + added.Job.ID, []string{offline, tychora(t, ws, "jobs", "get", "--json", added.Job.ID).stdout}},
		{"token list", "/v1/tokens", []string{offlineTokens, tychora(t, ws, "token", "list", "--json").stdout}},
	} {
		want := string(getV1(t, ws, c.path))
		for i, got := range c.printed {
			if got != want {
				t.Errorf("%s --json (owner running: %t):\n%q\nGET %s:\n%q", c.name, i == 1, got, c.path, want)
			}
		}
	}
	// Through the owner, items of discover and inspect results keep the
	// owner's bytes (not re-encoded from maps, whose keys would be sorted).
	for _, c := range []struct {
		args       []string
		path, body string
	}{
		{[]string{"sources", "--json"}, "/v1/discover", `{"request":{"subject":"sources"}}`},
		{[]string{"discover", "--json", "kinds"}, "/v1/discover", `{"request":{"subject":"kinds"}}`},
		{[]string{"inspect", "--json", "source", added.Job.SourceID}, "/v1/inspect", `{"request":{"subject":"source","source_id":"` + added.Job.SourceID + `"}}`},
	} {
		want := string(callV1(t, ws, http.MethodPost, c.path, c.body))
		if got := tychora(t, ws, c.args...).stdout; got != want {
			t.Errorf("%q:\n%q\nPOST %s:\n%q", c.args, got, c.path, want)
		}
	}
	// Every --json body is one compact line.
	for _, args := range [][]string{{"search", "--json", "handler"}, {"sources", "--json"}, {"jobs", "list", "--json"}, {"status", "--json"}} {
		r := tychora(t, ws, args...)
		var buf bytes.Buffer
		if r.code != 0 || json.Compact(&buf, []byte(r.stdout)) != nil || buf.String()+"\n" != r.stdout {
			t.Errorf("%q: not one compact JSON line: %+v", args, r)
		}
	}
}

// moreHint returns the command a paging hint suggests, or "".
func moreHint(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			// The program as it was started: the test runs the binary by
			// its absolute path.
			if !strings.HasPrefix(rest, shellQuote(binary)+" ") {
				t.Fatalf("hint %q does not run %s", line, binary)
			}
			return rest
		}
	}
	return ""
}

// shell runs a command line with sh, the test binary first on PATH.
func shell(t *testing.T, line string) result {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return runCmd(t, cmd)
}

// TestPagingHints: the command a "more" hint suggests works as given to a
// POSIX shell, and brings the next page.
func TestPagingHints(t *testing.T) {
	root := t.TempDir()
	docs := filepath.Join(root, "my docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		body := fmt.Sprintf("# Doc %d\n\nthe quuxle's note number %d.\n", i, i)
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("d%d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(root, "the ws")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	r := tychora(t, ws, "add", "--json", docs)
	if r.code != 0 {
		t.Fatal(r)
	}
	var added interfaces.JobResult
	if err := json.Unmarshal([]byte(r.stdout), &added); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := tychora(t, ws, "sync", added.Job.SourceID); r.code != 0 {
			t.Fatal(r)
		}
	}

	// search: limit, filters, profile, budget and a question that needs
	// quoting.
	r = tychora(t, ws, "search", "--limit", "2", "--kind", "markdown", "--collection", "default", "--profile", "balanced",
		"--budget", "3000", "quuxle's note")
	if r.code != 0 {
		t.Fatal(r)
	}
	seen := map[string]bool{r.stdout: true}
	pages := 1
	for hint := moreHint(t, r.stderr, "tychora: more with: "); hint != ""; hint = moreHint(t, r.stderr, "tychora: more with: ") {
		r = shell(t, "cd / && "+hint) // from any directory
		if r.code != 0 || seen[r.stdout] {
			t.Fatalf("page %d from %q: %+v", pages+1, hint, r)
		}
		seen[r.stdout] = true
		if pages++; pages > 10 {
			t.Fatal("the pages do not end")
		}
	}
	if pages < 3 {
		t.Fatalf("7 matches at 2 a page came in %d pages", pages)
	}

	// jobs list: limit and state.
	r = tychora(t, ws, "jobs", "list", "--limit", "1", "--state", "succeeded")
	hint := moreHint(t, r.stdout, "more: ")
	if r.code != 0 || hint == "" {
		t.Fatalf("jobs list: %+v", r)
	}
	if r2 := shell(t, hint); r2.code != 0 || r2.stdout == r.stdout || !strings.Contains(r2.stdout, "succeeded") {
		t.Fatalf("jobs list page 2 from %q: %+v", hint, r2)
	}

	// discover: limit.
	r = tychora(t, ws, "discover", "--limit", "1", "kinds")
	hint = moreHint(t, r.stderr, "tychora: more with: ")
	if r.code != 0 || hint == "" {
		t.Fatalf("discover: %+v", r)
	}
	if r2 := shell(t, hint); r2.code != 0 || r2.stdout == r.stdout {
		t.Fatalf("discover page 2 from %q: %+v", hint, r2)
	}
}

func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc", "abc"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"docs/**", "'docs/**'"},
		{"$HOME", "'$HOME'"},
		{"a=b,c:d@e%f+g.h/i_j-k", "a=b,c:d@e%f+g.h/i_j-k"},
	} {
		if got := shellQuote(tc.in); got != tc.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(tc.in)).Output(); err != nil || string(out) != tc.in {
			t.Errorf("sh read %s as %q (%v)", shellQuote(tc.in), out, err)
		}
	}
}

// startAdd starts `add --wait` of dir against the running owner and waits
// until the owner lists its job in a state want accepts.
func startAdd(t *testing.T, ws, dir string, want func(jobs.Job) bool, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer, jobs.Job) {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{"--workspace", ws, "add", "--wait"}, args...), dir)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ctx := context.Background()
	client, _, err := tyruntime.ConnectLocal(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		res, err := client.ManageJob(ctx, interfaces.ManageJobRequest{Action: interfaces.JobActionList})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range res.Jobs {
			if j.Kind == "add" && want(j) {
				src, err := client.Discover(ctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "sources", Limit: 200}})
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range src.Items {
					var m map[string]any
					b, _ := json.Marshal(it)
					if json.Unmarshal(b, &m) == nil && m["id"] == j.SourceID && m["path"] == dir {
						return cmd, &out, &errb, j
					}
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no job for %s", dir)
	return nil, nil, nil, jobs.Job{}
}

func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		t.Fatal("add --wait did not exit")
		return -1
	}
}

// TestAddWaitCancelledAndInterrupted: add --wait exits 1 when its job is
// cancelled; after Ctrl-C it names the state the job is really in.
func TestAddWaitCancelledAndInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	root := t.TempDir()
	makeTree(t, filepath.Join(root, "one"), 6000)
	makeTree(t, filepath.Join(root, "two"), 6000)
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	serve(t, ws)
	ctx := context.Background()
	client, _, err := tyruntime.ConnectLocal(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("cancelled", func(t *testing.T) {
		dir := filepath.Join(root, "one")
		cmd, out, errb, j := startAdd(t, ws, dir, func(j jobs.Job) bool { return true }, "--json")
		if _, err := client.ManageJob(ctx, interfaces.ManageJobRequest{Action: interfaces.JobActionCancel, JobID: j.ID}); err != nil {
			var we *workspace.Error
			if errors.As(err, &we) && we.Code == workspace.CodeConflict {
				t.Skip("the job ended before it could be cancelled")
			}
			t.Fatal(err)
		}
		code := waitExit(t, cmd)
		var res interfaces.JobResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Job.State != jobs.StateCancelled {
			t.Fatalf("stdout %q: %v", out, err)
		}
		if code != 1 {
			t.Fatalf("add --wait of a cancelled job: exit %d, stderr %q", code, errb)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		dir := filepath.Join(root, "two")
		cmd, _, errb, j := startAdd(t, ws, dir, func(j jobs.Job) bool {
			return j.State == jobs.StateRunning && j.Progress.FilesSeen > 0 || j.Final()
		})
		if j.Final() {
			t.Skip("the job ended before it could be interrupted")
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		code := waitExit(t, cmd)
		// The job was running when the CLI was told to stop: it says so
		// (or, if the job ended in between, that it ended).
		want := regexp.MustCompile(`stopped following job ` + regexp.QuoteMeta(j.ID) +
			`; (the job goes on in the owner \(state running\)|it has ended \(state succeeded\))\n`)
		if code != 1 || !want.MatchString(errb.String()) {
			t.Fatalf("exit %d, stderr %q; want %s", code, errb, want)
		}
		// It does go on.
		after, err := client.GetJob(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(120 * time.Second)
		for !after.Job.Final() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			if after, err = client.GetJob(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
		}
		if after.Job.State != jobs.StateSucceeded {
			t.Fatalf("job after the CLI stopped following: %+v", after.Job)
		}
	})
}

// TestAddGlobsKeepCommas: a glob given with --include or --exclude is one
// glob, commas and all ({a,b} alternation), not a list split at commas.
func TestAddGlobsKeepCommas(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "g")
	for _, name := range []string{"top.md", "t.txt", "other.go"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("word\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	r := tychora(t, ws, "add", "--wait", "--json", "--include", "{top,t}.*", dir)
	if r.code != 0 {
		t.Fatalf("add --include {top,t}.*: %+v", r)
	}
	var res interfaces.JobResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Job.Progress.Indexed != 2 {
		t.Fatalf("indexed %d files (want top.md and t.txt): %s %v", res.Job.Progress.Indexed, r.stdout, err)
	}
}

// TestSearchRoleFlags: --role and --exclude-role (each repeatable) select
// files by role through the built binary; hits name their role, and
// discover facets counts the roles.
func TestSearchRoleFlags(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	files := map[string]string{
		"net/ip.go":          "package net\n\n// quokka parses.\nfunc Quokka() {}\n",
		"net/ip_test.go":     "package net\n\nimport \"testing\"\n\n// quokka test.\nfunc TestQuokka(t *testing.T) {}\n",
		"net/testdata/q.txt": "quokka fixture\n",
		"vendor/x/x.go":      "package x\n\n// quokka vendored.\nfunc Q() {}\n",
		"docs/guide.md":      "# Guide\n\nThe quokka smiles.\n",
	}
	for name, body := range files {
		p := filepath.Join(proj, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(root, "ws")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	if r := tychora(t, ws, "add", proj); r.code != 0 {
		t.Fatal(r)
	}
	search := func(args ...string) map[string]string {
		t.Helper()
		r := tychora(t, ws, append(append([]string{"search", "--json", "--limit", "20"}, args...), "quokka")...)
		if r.code != 0 {
			t.Fatalf("search %v: %+v", args, r)
		}
		var res query.QueryResult
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, h := range res.Hits {
			got[filepath.ToSlash(h.Path)] = h.Role
		}
		return got
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "map[docs/guide.md:documentation net/ip.go:source net/ip_test.go:test net/testdata/q.txt:testdata vendor/x/x.go:vendored]"},
		{[]string{"--role", "test"}, "map[net/ip_test.go:test]"},
		{[]string{"--role", "source", "--role", "documentation"}, "map[docs/guide.md:documentation net/ip.go:source]"},
		{[]string{"--exclude-role", "test", "--exclude-role", "testdata", "--exclude-role", "vendored"}, "map[docs/guide.md:documentation net/ip.go:source]"},
		{[]string{"--role", "source", "--role", "test", "--exclude-role", "vendored"}, "map[net/ip.go:source net/ip_test.go:test]"},
	} {
		got := search(c.args...)
		// Paths may be absolute; compare by their tail.
		tails := map[string]string{}
		for p, role := range got {
			p = strings.TrimPrefix(p, filepath.ToSlash(proj)+"/")
			tails[p] = role
		}
		if fmt.Sprint(tails) != c.want {
			t.Errorf("search %v: %v, want %s", c.args, tails, c.want)
		}
	}
	// A role both kept and left out is the service's INVALID_ARGUMENT.
	r := tychora(t, ws, "search", "--role", "test", "--exclude-role", "test", "quokka")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "INVALID_ARGUMENT") {
		t.Errorf("kept and excluded: %+v", r)
	}
	// An unknown role is a usage error that lists the roles.
	r = tychora(t, ws, "search", "--role", "fixtures", "quokka")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "testdata") {
		t.Errorf("unknown role: %+v", r)
	}
	// discover facets counts the roles per kind.
	r = tychora(t, ws, "discover", "--json", "facets")
	if r.code != 0 {
		t.Fatal(r)
	}
	var facets struct {
		Items []query.FacetItem `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &facets); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, it := range facets.Items {
		if it.Facet == "role" {
			for _, v := range it.Values {
				counts[it.Kind+"/"+v.Value] += v.Files
			}
		}
	}
	if want := "map[code/source:1 code/test:1 code/vendored:1 markdown/documentation:1 text/testdata:1]"; fmt.Sprint(counts) != want {
		t.Errorf("role facets %v, want %s", counts, want)
	}
}
