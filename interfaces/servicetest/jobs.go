package servicetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/workspace"
)

// writeTree makes n small text files under dir.
func writeTree(t *testing.T, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%5), fmt.Sprintf("note%03d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("# Note %d\n\nThe quick brown fox %d jumps over the lazy dog.\n", i, i)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// waitJob polls until the job is final.
func waitJob(t *testing.T, svc interfaces.Service, ctx context.Context, id string) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := svc.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if res.Job.Final() {
			return res.Job
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s", id, res.Job.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func jobCount(t *testing.T, svc interfaces.Service, ctx context.Context) int {
	t.Helper()
	n := 0
	cursor := ""
	for {
		res, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: "list", Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		n += len(res.Jobs)
		if res.NextCursor == nil {
			return n
		}
		cursor = *res.NextCursor
	}
}

func testAddSources(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	dir := filepath.Join(h.Root, "addsources")
	writeTree(t, dir, 12)
	w, wctx := h.As(t, workspace.GrantWrite, nil)
	before := jobCount(t, w, wctx)

	// Refusals come at once and create no job.
	outside := t.TempDir()
	for _, tc := range []struct {
		name string
		req  interfaces.AddSourcesRequest
		code workspace.Code
	}{
		{"outside the roots", interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: outside}}, workspace.CodeOutOfRoots},
		{"traversal", interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: filepath.Join(dir, "..", "..", "..", "etc")}}, workspace.CodeOutOfRoots},
		{"missing path", interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: filepath.Join(dir, "nope")}}, workspace.CodeNotFound},
		{"unknown collection", interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dir, CollectionID: "zzz"}}, workspace.CodeNotFound},
		{"no source", interfaces.AddSourcesRequest{Action: "add"}, workspace.CodeInvalidArgument},
		{"bad action", interfaces.AddSourcesRequest{Action: "delete", SourceID: "x"}, workspace.CodeInvalidArgument},
		{"sync unknown", interfaces.AddSourcesRequest{Action: "sync", SourceID: "src_nope"}, workspace.CodeNotFound},
		{"bad kind", interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dir, Kind: "file"}}, workspace.CodeInvalidArgument},
	} {
		_, err := w.AddSources(wctx, tc.req)
		wantCode(t, tc.name, err, tc.code)
	}
	if n := jobCount(t, w, wctx); n != before {
		t.Fatalf("refused adds created %d jobs", n-before)
	}
	r, rctx := h.As(t, workspace.GrantRead, nil)
	_, err := r.AddSources(rctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dir}})
	wantCode(t, "reader adds", err, workspace.CodePermissionDenied)

	res, err := w.AddSources(wctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	j := res.Job
	if j.ID == "" || j.Kind != jobs.KindAdd || j.CollectionID != "default" || j.SourceID == "" || j.Attempt != 1 {
		t.Fatalf("add job %+v", j)
	}
	done := waitJob(t, w, wctx, j.ID)
	if done.State != jobs.StateSucceeded || done.Progress.Indexed != 12 || done.StartedAt == nil || done.FinishedAt == nil {
		t.Fatalf("add finished %+v", done)
	}
	// The source is listed; a sync of the unchanged tree indexes nothing.
	srcs, err := r.Discover(rctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "sources"}})
	if err != nil || len(srcs.Items) == 0 {
		t.Fatalf("discover sources: %+v %v", srcs, err)
	}
	s2, err := w.AddSources(wctx, interfaces.AddSourcesRequest{Action: "sync", SourceID: j.SourceID})
	if err != nil {
		t.Fatal(err)
	}
	synced := waitJob(t, w, wctx, s2.Job.ID)
	if synced.State != jobs.StateSucceeded || synced.Kind != jobs.KindSync || synced.Progress.Indexed != 0 || synced.Progress.Unchanged != 12 {
		t.Fatalf("resync %+v", synced)
	}
	// Final jobs cannot be cancelled or retried.
	_, err = w.ManageJob(wctx, interfaces.ManageJobRequest{Action: "cancel", JobID: j.ID})
	wantCode(t, "cancel finished", err, workspace.CodeConflict)
	_, err = w.ManageJob(wctx, interfaces.ManageJobRequest{Action: "retry", JobID: j.ID})
	wantCode(t, "retry succeeded", err, workspace.CodeConflict)
	_, err = r.ManageJob(rctx, interfaces.ManageJobRequest{Action: "cancel", JobID: j.ID})
	wantCode(t, "reader cancels", err, workspace.CodePermissionDenied)
	got, err := r.ManageJob(rctx, interfaces.ManageJobRequest{Action: "get", JobID: j.ID})
	if err != nil || got.Job == nil || got.Job.ID != j.ID {
		t.Fatalf("reader get: %+v %v", got, err)
	}
	_, err = r.ManageJob(rctx, interfaces.ManageJobRequest{Action: "list", State: "done"})
	wantCode(t, "bad state", err, workspace.CodeInvalidArgument)
	_, err = r.ManageJob(rctx, interfaces.ManageJobRequest{Action: "list", Limit: 1000})
	wantCode(t, "bad limit", err, workspace.CodeInvalidArgument)
	_, err = r.ManageJob(rctx, interfaces.ManageJobRequest{Action: "get"})
	wantCode(t, "get without id", err, workspace.CodeInvalidArgument)
	_, err = r.ManageJob(rctx, interfaces.ManageJobRequest{Action: "explode"})
	wantCode(t, "bad action", err, workspace.CodeInvalidArgument)
}

func testJobIsolation(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	dirA := filepath.Join(h.Root, "iso-a")
	writeTree(t, dirA, 3)
	wa, actx := h.As(t, workspace.GrantWrite, []string{"a"})
	wb, bctx := h.As(t, workspace.GrantWrite, []string{"b"})
	_, err := wa.AddSources(actx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dirA, CollectionID: "b"}})
	wantCode(t, "add into a foreign collection", err, workspace.CodePermissionDenied)
	_, err = wa.AddSources(actx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dirA}})
	wantCode(t, "no collection and no default in grant", err, workspace.CodeInvalidArgument)
	res, err := wa.AddSources(actx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dirA, CollectionID: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	ja := waitJob(t, wa, actx, res.Job.ID)

	_, err = wb.GetJob(bctx, ja.ID)
	wantCode(t, "b gets a's job", err, workspace.CodeNotFound)
	_, err = wb.ManageJob(bctx, interfaces.ManageJobRequest{Action: "cancel", JobID: ja.ID})
	wantCode(t, "b cancels a's job", err, workspace.CodeNotFound)
	_, err = wb.ManageJob(bctx, interfaces.ManageJobRequest{Action: "retry", JobID: ja.ID})
	wantCode(t, "b retries a's job", err, workspace.CodeNotFound)
	_, err = wb.AddSources(bctx, interfaces.AddSourcesRequest{Action: "sync", SourceID: ja.SourceID})
	wantCode(t, "b syncs a's source", err, workspace.CodeNotFound)
	list, err := wb.ManageJob(bctx, interfaces.ManageJobRequest{Action: "list", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range list.Jobs {
		if j.CollectionID != "b" {
			t.Fatalf("b lists a job of %q", j.CollectionID)
		}
	}
	srcs, err := wb.Discover(bctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "sources"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srcs.Items); n != 0 {
		t.Fatalf("b sees %d sources of a", n)
	}
	// A cursor issued to one scope is refused under another.
	for i := 0; i < 2; i++ {
		if _, err := wa.AddSources(actx, interfaces.AddSourcesRequest{Action: "sync", SourceID: ja.SourceID}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	page, err := wa.ManageJob(actx, interfaces.ManageJobRequest{Action: "list", Limit: 1})
	if err != nil || page.NextCursor == nil {
		t.Fatalf("paging: %+v %v", page, err)
	}
	_, err = wb.ManageJob(bctx, interfaces.ManageJobRequest{Action: "list", Limit: 1, Cursor: *page.NextCursor})
	wantCode(t, "cursor under another scope", err, workspace.CodeInvalidArgument)
	next, err := wa.ManageJob(actx, interfaces.ManageJobRequest{Action: "list", Limit: 1, Cursor: *page.NextCursor})
	if err != nil || len(next.Jobs) != 1 || next.Jobs[0].ID == page.Jobs[0].ID {
		t.Fatalf("second page: %+v %v", next, err)
	}
}
