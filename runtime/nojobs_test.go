package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/internal/testkit"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// TestNoJobsLeavesTheQueue: an owner opened with NoJobs (a command that only
// reads) runs no job, queued or interrupted, until one is added, synced or
// retried through it.
func TestNoJobsLeavesTheQueue(t *testing.T) {
	ctx := context.Background()
	dir := newWorkspace(t)
	data := filepath.Join(filepath.Dir(dir), "notes")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(data, fmt.Sprintf("n%d.md", i)), []byte("# Note\n\nheron\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := testkit.RunningGoroutines()
	own, err := OpenLocal(ctx, Options{Dir: dir}) // NoJobs, as for every command
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(ctx)
	src, _, err := own.idx().Add(ctx, sources.SourceInput{Path: data, CollectionID: "default"})
	if err != nil {
		t.Fatal(err)
	}
	queued, _, err := own.queue.Enqueue(ctx, jobs.KindAdd, src.ID, src.CollectionID, "owner")
	if err != nil {
		t.Fatal(err)
	}
	svc := own.Service()
	octx := OwnerContext(ctx)
	// No worker runs, so none can claim it.
	for _, stack := range testkit.StartedSince(before) {
		if strings.Contains(stack, "jobs.(*Queue).worker") {
			t.Fatalf("a queue worker runs under NoJobs:\n%s", stack)
		}
	}
	got, err := svc.GetJob(octx, queued.ID)
	if err != nil || got.Job.State != jobs.StateQueued || got.Job.StartedAt != nil {
		t.Fatalf("a queued job under NoJobs: %+v %v", got.Job, err)
	}

	// A sync asked through this owner starts the workers: both jobs run.
	other := filepath.Join(filepath.Dir(dir), "more")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "m.md"), []byte("# More\n\nheron\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := svc.AddSources(octx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: other}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{queued.ID, res.Job.ID} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			j, err := svc.GetJob(octx, id)
			if err != nil {
				t.Fatal(err)
			}
			if j.Job.State == jobs.StateSucceeded {
				break
			}
			if j.Job.Final() || time.Now().After(deadline) {
				t.Fatalf("job %s: %+v", id, j.Job)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestOpenLocalBuildsInline: the owner of one command (OpenLocal) leaves
// the file index to its search, which builds it before it ranks, so that
// the command's answer does not depend on the machine's speed; a serving
// owner builds it behind its searches.
func TestOpenLocalBuildsInline(t *testing.T) {
	ctx := context.Background()
	dir := newWorkspace(t)
	own, err := OpenLocal(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if own.engine.BuildsBehind() {
		t.Error("a one-command owner builds the file index behind its search")
	}
	if err := own.Close(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err := Start(ctx, Options{Dir: dir, NoJobs: true, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	if !srv.engine.BuildsBehind() {
		t.Error("a serving owner builds the file index in its searches")
	}
}

// TestOpenLocalSavesFileIndex: the first command over a large workspace
// builds the file index and saves its base (.runtime/file-index, 0600);
// the next command reads it instead of building it again, and answers
// the same.
func TestOpenLocalSavesFileIndex(t *testing.T) {
	root := t.TempDir()
	// inlineRefreshFiles: a workspace of fewer files is not saved.
	writeTextTree(t, filepath.Join(root, "notes"), "heron", 1000, 120)
	dir := filepath.Join(root, ".tychora")
	if _, err := Init(dir, InitOptions{IngestRoots: []string{root}}); err != nil {
		t.Fatal(err)
	}
	own, err := Start(context.Background(), Options{Dir: dir, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := OwnerContext(context.Background())
	res, err := own.Service().AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: filepath.Join(root, "notes")}})
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, own, res.Job.ID); j.State != jobs.StateSucceeded {
		t.Fatalf("add: %+v", j)
	}
	if err := own.Close(ctx); err != nil {
		t.Fatal(err)
	}
	saved := workspace.NewLayout(dir).FileIndex
	os.Remove(saved) // the serving owner's, built behind its searches
	command := func() []string {
		t.Helper()
		own, err := OpenLocal(context.Background(), Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer own.Close(context.Background())
		out, err := own.Service().Search(OwnerContext(context.Background()), interfaces.SearchArgs{Request: &query.QueryRequest{Question: "heron 417 paragraph story", Limit: 10}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range out.Result.Hits {
			got = append(got, fmt.Sprintf("%s %v", h.Path, h.Score))
		}
		return got
	}
	first := command()
	st, err := os.Stat(saved)
	if err != nil {
		t.Fatalf("the first command saved no file index: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("saved with mode %v, want 0600", st.Mode().Perm())
	}
	if len(first) == 0 || !strings.HasPrefix(first[0], "d07/heron0417.md ") {
		t.Errorf("first command: %v", first)
	}
	second := command()
	if !slices.Equal(second, first) {
		t.Errorf("the second command answered %v, the first %v", second, first)
	}
	if st2, err := os.Stat(saved); err != nil || !os.SameFile(st2, st) {
		t.Errorf("the second command built and saved the index again (%v)", err)
	}
}
