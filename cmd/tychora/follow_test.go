package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// addWaitOutcome checks what add --wait --json printed for job id: exit
// 0, exactly the /v1 body of the succeeded job on stdout, and the job id
// on stderr.
func addWaitOutcome(t *testing.T, code int, stdout, stderr, id string) {
	t.Helper()
	var res interfaces.JobResult
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil || dec.More() {
		t.Fatalf("stdout is not one /v1 job body: %q (%v)", stdout, err)
	}
	if code != 0 || res.Job.ID != id || res.Job.State != jobs.StateSucceeded {
		t.Fatalf("add --wait: exit %d, job %+v (want %s succeeded); stderr %q", code, res.Job, id, stderr)
	}
	if !strings.Contains(stderr, "job "+id+" ") {
		t.Fatalf("stderr does not name job %s: %q", id, stderr)
	}
}

// TestAddWaitFollowsAcrossOwners: add --wait follows its durable job when
// the owner it follows is killed and another starts (it reconnects
// through endpoint.json), and when the owner stops and none comes back (it
// takes the workspace and runs the job itself); both times it exits 0
// with the job succeeded.
func TestAddWaitFollowsAcrossOwners(t *testing.T) {
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
	running := func(j jobs.Job) bool { return j.State == jobs.StateRunning && j.Progress.FilesSeen > 0 || j.Final() }

	t.Run("restarted", func(t *testing.T) {
		owner := serve(t, ws)
		cmd, out, errb, j := startAdd(t, ws, filepath.Join(root, "one"), running, "--json")
		if j.Final() {
			t.Fatalf("the job ended before its owner could be killed: %+v", j)
		}
		if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = owner.Wait()
		serve(t, ws)
		_, ep, err := tyruntime.ConnectLocal(t.Context(), ws)
		if err != nil {
			t.Fatal(err)
		}
		code := waitExit(t, cmd)
		addWaitOutcome(t, code, out.String(), errb.String(), j.ID)
		if !strings.Contains(errb.String(), "through the owner at "+ep.URL) {
			t.Errorf("stderr does not say it followed the new owner %s: %q", ep.URL, errb)
		}
	})

	t.Run("taken over", func(t *testing.T) {
		owner := serve(t, ws)
		cmd, out, errb, j := startAdd(t, ws, filepath.Join(root, "two"), running, "--json")
		if j.Final() {
			t.Fatalf("the job ended before its owner could be stopped: %+v", j)
		}
		if err := owner.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		code := waitExit(t, cmd)
		addWaitOutcome(t, code, out.String(), errb.String(), j.ID)
		if !strings.Contains(errb.String(), "runs in this process") {
			t.Errorf("stderr does not say the command took the job over: %q", errb)
		}
	})
}

// TestAddWaitAmongSiblings: ten CLI commands started at once with no owner
// running, one of them add --wait: whichever process holds the workspace
// when, add --wait ends 0 with its job succeeded, every round.
func TestAddWaitAmongSiblings(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	root := t.TempDir()
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	siblings := [][]string{
		{"sources", "--json"}, {"jobs", "list", "--json"}, {"search", "--json", "handler"},
		{"discover", "--json", "kinds"}, {"sources", "--json"}, {"search", "--json", "request"},
		{"jobs", "list", "--json"}, {"discover", "--json", "sources"}, {"search", "--json", "parses"},
	}
	for round := range 4 {
		dir := filepath.Join(root, fmt.Sprintf("tree%d", round))
		makeTree(t, dir, 400)
		type run struct {
			args []string
			cmd  *exec.Cmd
			out  bytes.Buffer
			err  bytes.Buffer
		}
		runs := []*run{{args: []string{"add", "--wait", "--json", dir}}}
		for _, s := range siblings {
			runs = append(runs, &run{args: s})
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		codes := make([]int, len(runs))
		for i, r := range runs {
			r.cmd = exec.Command(binary, append([]string{"--workspace", ws}, r.args...)...)
			r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.err
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := r.cmd.Run()
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					codes[i] = ee.ExitCode()
				case err != nil:
					codes[i] = -1
					fmt.Fprintln(&r.err, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		add := runs[0]
		var res interfaces.JobResult
		if err := json.Unmarshal(add.out.Bytes(), &res); err != nil {
			t.Fatalf("round %d: add --wait: exit %d, stdout %q, stderr %q", round, codes[0], add.out.String(), add.err.String())
		}
		addWaitOutcome(t, codes[0], add.out.String(), add.err.String(), res.Job.ID)
		for i, r := range runs[1:] {
			if codes[i+1] != 0 {
				t.Errorf("round %d: %v: exit %d, stderr %q", round, r.args, codes[i+1], r.err.String())
			}
		}
	}
}

// TestAddPreparesSearch: a command that runs an add to its end as its own
// owner leaves the search's file index of a large workspace saved
// (.runtime/file-index); the next command's search reads it rather than
// building and saving it again.
func TestAddPreparesSearch(t *testing.T) {
	ws := newWS(t)
	dir := filepath.Join(filepath.Dir(ws), "notes")
	for i := range 1000 { // inlineRefreshFiles: fewer are not saved
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%10), fmt.Sprintf("heron%04d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("# Heron %d\n\nThe heron%d note tells of marsh %d and reed %d.\n", i, i, i%37, i%11)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := tychora(t, ws, "add", "--wait", "--json", dir); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	saved := workspace.NewLayout(ws).FileIndex
	st, err := os.Stat(saved)
	if err != nil {
		t.Fatalf("the add left no saved file index: %v", err)
	}
	r := tychora(t, ws, "search", "--json", "--limit", "3", "heron417 marsh")
	if r.code != 0 || !strings.Contains(r.stdout, `"path":"d7/heron0417.md"`) {
		t.Fatalf("search: %+v", r)
	}
	if st2, err := os.Stat(saved); err != nil || !os.SameFile(st2, st) {
		t.Errorf("the search built and saved the index again (%v)", err)
	}
}
