package servicetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// testRemoveSource: a source leaves under the write grant on its
// collection, and with it every trace of it in search, inspect, evidence
// and discover; a reader is refused and a writer of another collection
// does not see it.
func testRemoveSource(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	base := filepath.Join(h.Root, "removal")
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one/a.md", "# Quetzal\n\nThe quetzal nests here.\n")
	write("one/b.md", "# Other\n\nAnother page.\n")
	write("two/c.md", "# Quetzal two\n\nA second quetzal.\n")
	wa, actx := h.As(t, workspace.GrantWrite, []string{"a"})
	add := func(path, collection string) (jobs.Job, error) {
		t.Helper()
		res, err := wa.AddSources(actx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: path, CollectionID: collection}})
		if err != nil {
			return jobs.Job{}, err
		}
		return waitJob(t, wa, actx, res.Job.ID), nil
	}
	one, err := add(filepath.Join(base, "one"), "a")
	if err != nil || one.State != jobs.StateSucceeded {
		t.Fatalf("add one: %v %+v", err, one)
	}

	// The job's progress counts a deleted file.
	if err := os.Remove(filepath.Join(base, "one", "b.md")); err != nil {
		t.Fatal(err)
	}
	res, err := wa.AddSources(actx, interfaces.AddSourcesRequest{Action: "sync", SourceID: one.SourceID})
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, wa, actx, res.Job.ID); j.State != jobs.StateSucceeded || j.Progress.Deleted != 1 {
		t.Fatalf("sync after a delete: %+v, want deleted 1", j)
	}

	// Overlap within a collection is refused, naming the other source;
	// another collection may hold the same files.
	if err := os.MkdirAll(filepath.Join(base, "one", "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = add(filepath.Join(base, "one", "inner"), "a")
	wantCode(t, "a source inside another", err, workspace.CodeConflict)
	if msg := workspace.ErrorMessage(err); !strings.Contains(msg, one.SourceID) || !strings.Contains(msg, "inside") {
		t.Fatalf("nested: message %q does not name %s", msg, one.SourceID)
	}
	_, err = add(base, "a")
	wantCode(t, "a source holding another", err, workspace.CodeConflict)
	if msg := workspace.ErrorMessage(err); !strings.Contains(msg, one.SourceID) || !strings.Contains(msg, "holds") {
		t.Fatalf("containing: message %q does not name %s", msg, one.SourceID)
	}
	wb, bctx := h.As(t, workspace.GrantWrite, []string{"b"})
	res, err = wb.AddSources(bctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: filepath.Join(base, "one"), CollectionID: "b"}})
	if err != nil {
		t.Fatalf("the same folder in another collection: %v", err)
	}
	inB := waitJob(t, wb, bctx, res.Job.ID)

	// Refusals: a reader, and a writer of another collection.
	ra, rctx := h.As(t, workspace.GrantRead, []string{"a"})
	_, err = ra.RemoveSource(rctx, one.SourceID)
	wantCode(t, "a reader removes", err, workspace.CodePermissionDenied)
	_, err = wb.RemoveSource(bctx, one.SourceID)
	wantCode(t, "a writer of b removes a's source", err, workspace.CodeNotFound)
	_, err = wa.RemoveSource(actx, "src_does_not_exist")
	wantCode(t, "an unknown source", err, workspace.CodeNotFound)

	find := func(collection string) []query.Hit {
		t.Helper()
		m, mctx := h.As(t, workspace.GrantRead, nil)
		out, err := m.Search(mctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "quetzal",
			Filters: &query.Filters{Collections: []string{collection}}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Result.Hits
	}
	hits := find("a")
	if len(hits) == 0 {
		t.Fatal("no hit before the removal")
	}
	evidenceID := hits[0].EvidenceID

	// The writer of a removes it: nothing of it is left.
	removed, err := wa.RemoveSource(actx, one.SourceID)
	if err != nil || !removed.Removed || removed.ID != one.SourceID || removed.CollectionID != "a" {
		t.Fatalf("remove: %+v %v", removed, err)
	}
	for _, hit := range find("a") {
		if hit.SourceID == one.SourceID {
			t.Fatalf("a hit of the removed source: %+v", hit)
		}
	}
	if len(find("b")) == 0 {
		t.Fatal("the same files in collection b left with the source of a")
	}
	_, err = ra.Evidence(rctx, evidenceID)
	wantCode(t, "evidence of the removed source", err, workspace.CodeNotFound)
	_, err = ra.Inspect(rctx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "source", SourceID: one.SourceID}})
	wantCode(t, "inspect the removed source", err, workspace.CodeNotFound)
	page, err := ra.Discover(rctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "sources", Limit: 200}})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		var s query.SourceItem
		if err := json.Unmarshal(it, &s); err != nil {
			t.Fatalf("discover sources item %s: %v", it, err)
		}
		if s.ID == one.SourceID {
			t.Fatal("discover sources still lists the removed source")
		}
	}
	_, err = wa.RemoveSource(actx, one.SourceID)
	wantCode(t, "removing it again", err, workspace.CodeNotFound)

	// Once it is gone, the folder that held it may be added.
	if j, err := add(filepath.Join(base, "one", "inner"), "a"); err != nil || j.State != jobs.StateSucceeded {
		t.Fatalf("add inside the removed source's folder: %v %+v", err, j)
	}

	// A manager of every collection removes any source.
	m, mctx := h.As(t, workspace.GrantManage, nil)
	if _, err := m.RemoveSource(mctx, inB.SourceID); err != nil {
		t.Fatalf("a manager removes: %v", err)
	}
}
