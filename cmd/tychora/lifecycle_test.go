package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// lifecycleWS is a workspace over root with two folder sources, notes and
// docs (named "handbook").
func lifecycleWS(t *testing.T) (root, ws string, ids map[string]string) {
	t.Helper()
	root = t.TempDir()
	makeTree(t, filepath.Join(root, "notes"), 6)
	makeTree(t, filepath.Join(root, "docs"), 3)
	ws = filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatal(r)
	}
	ids = map[string]string{}
	for _, a := range [][]string{{"notes"}, {"docs", "--name", "handbook"}} {
		r := tychoraIn(t, root, ws, append([]string{"add", "--json"}, a...)...)
		var res interfaces.JobResult
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
			t.Fatalf("add %v: %+v", a, r)
		}
		ids[a[0]] = res.Job.SourceID
	}
	return root, ws, ids
}

// TestSyncByIDNamePathAll: sync takes a source id, a name, a path (the
// source's, or one inside it, relative to the working directory) and
// --all; an unknown one is NOT_FOUND.
func TestSyncByIDNamePathAll(t *testing.T) {
	root, ws, ids := lifecycleWS(t)
	for arg, want := range map[string]string{
		ids["notes"]:                ids["notes"],
		"handbook":                  ids["docs"],
		"notes":                     ids["notes"],
		filepath.Join(root, "docs"): ids["docs"],
		"notes/pkg01":               ids["notes"],
		"docs/d0/note000.md":        ids["docs"],
	} {
		r := tychoraIn(t, root, ws, "sync", "--json", arg)
		var res interfaces.JobResult
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res.Job.SourceID != want {
			t.Fatalf("sync %s: %+v, want source %s", arg, r, want)
		}
	}
	r := tychoraIn(t, root, ws, "sync", "--json", "--all")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 {
		t.Fatalf("sync --all: %+v", r)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var res interfaces.JobResult
		if err := json.Unmarshal([]byte(l), &res); err != nil || res.Job.State != "succeeded" {
			t.Fatalf("sync --all line %q: %v", l, err)
		}
		seen[res.Job.SourceID] = true
	}
	if !seen[ids["notes"]] || !seen[ids["docs"]] {
		t.Fatalf("sync --all synced %v", seen)
	}
	r = tychoraIn(t, root, ws, "sync", "--json", "nowhere")
	if eb, ok := errorEnvelope(r.stderr); r.code != 1 || !ok || eb.Error.Code != workspace.CodeNotFound {
		t.Fatalf("sync nowhere: %+v", r)
	}
	if r := tychoraIn(t, root, ws, "sync", "--all", "notes"); r.code != 2 || r.stdout != "" {
		t.Fatalf("sync --all with a SOURCE: %+v", r)
	}
}

// TestSourcesRemoveCLI: sources remove takes a name or path like sync,
// prints the /v1 body, and the source is gone from sources and search;
// an overlapping add names the source it overlaps.
func TestSourcesRemoveCLI(t *testing.T) {
	root, ws, ids := lifecycleWS(t)
	r := tychoraIn(t, root, ws, "add", "--json", "notes/pkg01")
	if eb, ok := errorEnvelope(r.stderr); r.code != 1 || !ok || eb.Error.Code != workspace.CodeConflict || !strings.Contains(eb.Error.Message, ids["notes"]) {
		t.Fatalf("add inside a source: %+v", r)
	}
	serve(t, ws)
	r = tychoraIn(t, root, ws, "sources", "remove", "--json", "handbook")
	var res interfaces.RemovedSource
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res.ID != ids["docs"] || !res.Removed {
		t.Fatalf("sources remove handbook: %+v", r)
	}
	var page interfaces.DiscoverResult
	r = tychoraIn(t, root, ws, "sources", "list", "--json")
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &page) != nil || len(page.Items) != 1 {
		t.Fatalf("sources after the removal: %+v", r)
	}
	r = tychoraIn(t, root, ws, "sources", "remove", "--json", ids["docs"])
	if eb, ok := errorEnvelope(r.stderr); r.code != 1 || !ok || eb.Error.Code != workspace.CodeNotFound {
		t.Fatalf("removing it again: %+v", r)
	}
	// Once notes is gone, a folder inside it may be a source.
	if r := tychoraIn(t, root, ws, "sources", "remove", "notes"); r.code != 0 {
		t.Fatalf("sources remove notes: %+v", r)
	}
	if r := tychoraIn(t, root, ws, "add", "--wait", "--json", "notes/pkg01"); r.code != 0 {
		t.Fatalf("add inside the removed source: %+v", r)
	}
}

// TestStopFromSibling: stop ends a served owner with its ordered
// shutdown; with no owner it exits 3.
func TestStopFromSibling(t *testing.T) {
	ws := newWS(t)
	if r := tychora(t, ws, "stop"); r.code != exitNoOwner {
		t.Fatalf("stop without an owner: %+v", r)
	}
	cmd := serve(t, ws)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	r := tychora(t, ws, "stop", "--json")
	var out struct {
		Stopped bool `json:"stopped"`
		PID     int  `json:"pid"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || !out.Stopped || out.PID != cmd.Process.Pid {
		t.Fatalf("stop: %+v", r)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after stop", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve still runs after stop")
	}
	l := workspace.NewLayout(ws)
	if _, err := os.Stat(l.Endpoint); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("endpoint.json after stop: %v", err)
	}
	if r := tychora(t, ws, "status"); r.code != exitNoOwner {
		t.Fatalf("status after stop: %+v", r)
	}
}

// noWatch turns watching off in the workspace's settings.
func noWatch(t *testing.T, ws string) {
	t.Helper()
	l := workspace.NewLayout(ws)
	s, err := workspace.LoadSettings(l)
	if err != nil {
		t.Fatal(err)
	}
	off := false
	s.Watch = &off
	if err := workspace.SaveSettings(l, s); err != nil {
		t.Fatal(err)
	}
}
