package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
)

// TestHumanOutput: without --json every command prints text for a person
// (records and tables, integers as integers), never a raw JSON body.
func TestHumanOutput(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"README.md": "# Notes\n\nquuxle here\n", "main.go": "package main\n\nfunc main() {}\n"} {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	r := tychora(t, ws, "add", "--json", proj)
	var added interfaces.JobResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &added) != nil {
		t.Fatalf("add: %+v", r)
	}
	src := added.Job.SourceID
	human := func(args ...string) string {
		t.Helper()
		r := tychora(t, ws, args...)
		if r.code != 0 {
			t.Fatalf("%q: %+v", args, r)
		}
		if strings.HasPrefix(strings.TrimSpace(r.stdout), "{") {
			t.Fatalf("%q prints JSON without --json:\n%s", args, r.stdout)
		}
		return r.stdout
	}
	settings := human("discover", "settings")
	if !strings.Contains(settings, "max_file_bytes      8388608\n") || strings.Contains(settings, "e+") {
		t.Errorf("discover settings:\n%s", settings)
	}
	if out := human("inspect", "source", src); !strings.Contains(out, "path: "+proj+"\n") || !strings.Contains(out, "  indexed: 2\n") {
		t.Errorf("inspect source:\n%s", out)
	}
	if out := human("inspect", "coverage", src); !strings.Contains(out, "PATH ") || !strings.Contains(out, "main.go ") {
		t.Errorf("inspect coverage:\n%s", out)
	}
	if out := human("discover", "languages"); !strings.Contains(out, "LANGUAGE") || !strings.Contains(out, "go ") {
		t.Errorf("discover languages:\n%s", out)
	}
	for _, args := range [][]string{{"discover", "kinds"}, {"discover", "profiles"}, {"discover", "sources"}, {"inspect", "revisions", src}, {"inspect", "extractions", src}, {"sources"}, {"jobs", "list"}, {"token", "list"}} {
		human(args...)
	}

	// A sync that removed a file says so, and the job counts it.
	if err := os.Remove(filepath.Join(proj, "main.go")); err != nil {
		t.Fatal(err)
	}
	if out := human("sync", src); !strings.Contains(out, "1 file removed from the index") || !strings.Contains(out, " unchanged, 0 skipped, 1 deleted, ") {
		t.Errorf("sync after a deletion:\n%s", out)
	}
	r = tychora(t, ws, "jobs", "list", "--json")
	var list interfaces.ManageJobResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list.Jobs) != 2 || list.Jobs[0].Progress.Deleted != 1 || list.Jobs[1].Progress.Deleted != 0 {
		t.Fatalf("jobs after the sync: %+v", r)
	}

	// History that keeps no questions says so.
	human("search", "quuxle")
	if out := human("runs", "list"); !strings.Contains(out, "(not kept)") || !strings.Contains(out, `query_history "metadata"`) {
		t.Errorf("runs list under the default history:\n%s", out)
	}
}

// TestQueuedWithoutOwner: a job left queued with no owner to run it is
// said in plain words by sources, jobs list and search; "no matches" is
// not given as final while it waits, and matches that exist come with the
// same words.
func TestQueuedWithoutOwner(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	makeTree(t, tree, 3000)
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	// The words about waiting jobs must be about the test's own job: a
	// watching owner syncs every source when it starts, and that sync may
	// still run when the add ends.
	noWatch(t, ws)
	// A small source indexed first: its matches exist while the big one
	// waits.
	notes := filepath.Join(root, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "a.md"), []byte("# Plan\n\nzorblax is the plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := tychora(t, ws, "add", notes); r.code != 0 {
		t.Fatal(r)
	}
	owner := serve(t, ws)
	r := tychora(t, ws, "add", "--json", tree)
	var added interfaces.JobResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &added) != nil {
		t.Fatalf("add: %+v", r)
	}
	// The owner dies before the job ends: the next open queues it again.
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = owner.Process.Wait()
	r = tychora(t, ws, "jobs", "get", "--json", added.Job.ID)
	var got interfaces.JobResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil {
		t.Fatal(r)
	}
	if got.Job.State != jobs.StateQueued {
		t.Fatalf("the job ended before the owner was killed: %+v", got.Job)
	}
	const waiting = "1 job is queued and no owner is running to do it"
	for _, args := range [][]string{{"sources"}, {"jobs", "list"}} {
		r := tychora(t, ws, args...)
		if r.code != 0 || !strings.Contains(r.stdout, waiting) {
			t.Errorf("%q: %+v", args, r)
		}
	}
	if r := tychora(t, ws, "sources"); strings.Count(r.stdout, "(a job is queued)") != 1 {
		t.Errorf("sources: %+v", r)
	}
	r = tychora(t, ws, "search", "Handler12_3")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "no matches in what is indexed so far: "+waiting) {
		t.Errorf("search while the job waits: %+v", r)
	}

	// Matches that exist are shown, and the waiting job is said beside them.
	r = tychora(t, ws, "search", "zorblax")
	if r.code != 0 || !strings.Contains(r.stdout, "a.md") || strings.Contains(r.stdout, "no matches") || !strings.Contains(r.stderr, waiting) {
		t.Errorf("search with matches while the job waits: %+v", r)
	}

	// Once an owner runs the job, the words go.
	serve(t, ws)
	deadline := time.Now().Add(120 * time.Second)
	for got.Job.State != jobs.StateSucceeded && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		r = tychora(t, ws, "jobs", "get", "--json", added.Job.ID)
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil {
			t.Fatal(r)
		}
	}
	r = tychora(t, ws, "search", "Handler12_3")
	if r.code != 0 || strings.Contains(r.stdout, "no matches") || strings.Contains(r.stderr, "queued") {
		t.Errorf("search after the job: %+v", r)
	}
	if r := tychora(t, ws, "sources"); strings.Contains(r.stdout, "a job is") || strings.Contains(r.stdout, "no owner") {
		t.Errorf("sources after the job: %+v", r)
	}
}
