package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// makeTree writes n source-like files under dir.
func makeTree(t *testing.T, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%40), fmt.Sprintf("file%04d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "package pkg%02d\n\n", i%40)
		for f := 0; f < 8; f++ {
			fmt.Fprintf(&b, "// Handler%d_%d parses request %d.\nfunc Handler%d_%d(x int) int {\n\treturn x * %d\n}\n\n", i, f, f, i, f, i+f)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// evidenceSet reads every evidence row of a workspace as a sorted list of
// path, level, span and hash (ids are per workspace, content is not), and
// checks the index's integrity on the way. testdata/dbcheck does it, as
// its own process: SQLite under the race detector is tens of times slower.
func evidenceSet(t *testing.T, ws string) []string {
	t.Helper()
	r := dbcheck(t, workspace.NewLayout(ws).DB, true)
	if r.Integrity != "ok" || r.FTS != "ok" {
		t.Fatalf("integrity_check %q, fts integrity-check %q", r.Integrity, r.FTS)
	}
	return r.Lines
}

// TestKillMidIngest kills the owner with SIGKILL while a large add runs,
// restarts it, and checks the job resumes and ends with exactly the
// evidence of an uninterrupted run.
func TestKillMidIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	makeTree(t, tree, 2500)

	// The reference: an uninterrupted in-process add into its own workspace.
	refWS := filepath.Join(root, "ref")
	if r := tychora(t, refWS, "init", "--ingest-root", root); r.code != 0 {
		t.Fatal(r)
	}
	if r := tychora(t, refWS, "add", "--json", tree); r.code != 0 {
		t.Fatalf("reference add: %+v", r)
	}
	t.Logf("%s reference added", time.Now().Format("15:04:05.000"))
	want := evidenceSet(t, refWS)
	if len(want) < 2500 {
		t.Fatalf("reference has %d evidence rows", len(want))
	}

	ws := filepath.Join(root, "ws")
	if r := tychora(t, ws, "init", "--ingest-root", root); r.code != 0 {
		t.Fatal(r)
	}
	cmd := serve(t, ws)
	ctx := context.Background()
	client, _, err := tyruntime.ConnectLocal(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: tree}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Job.ID
	// Kill when the job has made progress but not finished.
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := client.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Job.Final() {
			t.Skip("the ingest finished before it could be interrupted")
		}
		if j.Job.State == jobs.StateRunning && j.Job.Progress.FilesSeen > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("job never made progress")
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("%s killing", time.Now().Format("15:04:05.000"))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	// Restart: the job resumes and finishes.
	cmd2 := serve(t, ws)
	client, _, err = tyruntime.ConnectLocal(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(120 * time.Second)
	var final jobs.Job
	for {
		j, err := client.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Job.Final() {
			final = j.Job
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("resumed job did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%s resumed job final", time.Now().Format("15:04:05.000"))
	if final.State != jobs.StateSucceeded || final.Attempt != 1 {
		t.Fatalf("resumed job %+v", final)
	}
	_ = cmd2.Process.Signal(syscall.SIGTERM)
	_ = cmd2.Wait()
	got := evidenceSet(t, ws)
	if !slices.Equal(got, want) {
		t.Fatalf("evidence after the crash differs: %d rows, want %d", len(got), len(want))
	}
}

// TestSourcesCLIBothWays: add, sync, sources and jobs give the same --json
// shapes with and without a running owner.
func TestSourcesCLIBothWays(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "notes")
	makeTree(t, tree, 20)
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	shape := func(args ...string) (map[string]any, string) {
		t.Helper()
		cmd := exec.Command(binary, append([]string{"--workspace", ws}, args...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("%v: %q", args, out)
		}
		return m, keysOf(m)
	}
	// Offline: a relative path is made absolute against the working dir.
	added, addKeys := shape("add", "--json", "notes")
	job := added["job"].(map[string]any)
	if job["state"] != "succeeded" {
		t.Fatalf("offline add did not run to completion: %v", job)
	}
	src := job["source_id"].(string)
	_, syncKeys := shape("sync", "--json", src)
	srcs, srcKeys := shape("sources", "--json")
	_, listKeys := shape("jobs", "list", "--json")
	_, getKeys := shape("jobs", "get", "--json", job["id"].(string))

	serve(t, ws)
	added2, addKeys2 := shape("add", "--wait", "--json", "notes")
	if addKeys2 != addKeys || added2["job"].(map[string]any)["state"] != "succeeded" {
		t.Fatalf("online add: %v", added2)
	}
	_, syncKeys2 := shape("sync", "--wait", "--json", src)
	srcs2, srcKeys2 := shape("sources", "--json")
	_, listKeys2 := shape("jobs", "list", "--json")
	_, getKeys2 := shape("jobs", "get", "--json", job["id"].(string))
	if syncKeys != syncKeys2 || srcKeys != srcKeys2 || listKeys != listKeys2 || getKeys != getKeys2 {
		t.Fatalf("shapes differ offline/online: %s %s %s %s vs %s %s %s %s", syncKeys, srcKeys, listKeys, getKeys, syncKeys2, srcKeys2, listKeys2, getKeys2)
	}
	if len(srcs["items"].([]any)) != 1 || len(srcs2["items"].([]any)) != 1 {
		t.Fatalf("sources: %v / %v", srcs, srcs2)
	}
	// Errors: outside the roots, unknown job.
	r := tychora(t, ws, "add", "--json", "/etc")
	var eb interfaces.ErrorBody
	if r.code != 1 || json.Unmarshal([]byte(r.stderr), &eb) != nil || eb.Error.Code != workspace.CodeOutOfRoots {
		t.Fatalf("add /etc: %+v", r)
	}
	r = tychora(t, ws, "jobs", "cancel", "--json", "nope")
	if r.code != 1 || json.Unmarshal([]byte(r.stderr), &eb) != nil || eb.Error.Code != workspace.CodeNotFound {
		t.Fatalf("cancel unknown: %+v", r)
	}
}

func keysOf(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}
