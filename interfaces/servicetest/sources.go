package servicetest

import (
	"context"
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
	e := newRemovalEnv(t, h)
	one, err := e.add(t, filepath.Join(e.base, "one"), "a")
	if err != nil || one.State != jobs.StateSucceeded {
		t.Fatalf("add one: %v %+v", err, one)
	}
	e.deletedFileCounted(t, one)
	inB := e.overlap(t, one)
	e.refusals(t, one)
	e.removed(t, one)
	e.readdAndManage(t, inB)
}

// removalEnv is a tree of two folders, a writer and a reader of
// collection a and a writer of collection b.
type removalEnv struct {
	h          Harness
	base       string
	wa, wb, ra interfaces.Service
	actx, bctx context.Context
	rctx       context.Context
}

func newRemovalEnv(t *testing.T, h Harness) *removalEnv {
	t.Helper()
	base := filepath.Join(h.Root, "removal")
	for rel, body := range map[string]string{
		"one/a.md": "# Quetzal\n\nThe quetzal nests here.\n",
		"one/b.md": "# Other\n\nAnother page.\n",
		"two/c.md": "# Quetzal two\n\nA second quetzal.\n",
	} {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := &removalEnv{h: h, base: base}
	e.wa, e.actx = h.As(t, workspace.GrantWrite, []string{"a"})
	e.wb, e.bctx = h.As(t, workspace.GrantWrite, []string{"b"})
	e.ra, e.rctx = h.As(t, workspace.GrantRead, []string{"a"})
	return e
}

// add adds path to collection as the writer of a and waits for its job.
func (e *removalEnv) add(t *testing.T, path, collection string) (jobs.Job, error) {
	t.Helper()
	res, err := e.wa.AddSources(e.actx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: path, CollectionID: collection}})
	if err != nil {
		return jobs.Job{}, err
	}
	return waitJob(t, e.wa, e.actx, res.Job.ID), nil
}

// find searches collection for "quetzal", as a reader of every collection.
func (e *removalEnv) find(t *testing.T, collection string) []query.Hit {
	t.Helper()
	m, mctx := e.h.As(t, workspace.GrantRead, nil)
	out, err := m.Search(mctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "quetzal",
		Filters: &query.Filters{Collections: []string{collection}}}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Result.Hits
}

// deletedFileCounted: the job's progress counts a deleted file.
func (e *removalEnv) deletedFileCounted(t *testing.T, one jobs.Job) {
	if err := os.Remove(filepath.Join(e.base, "one", "b.md")); err != nil {
		t.Fatal(err)
	}
	res, err := e.wa.AddSources(e.actx, interfaces.AddSourcesRequest{Action: "sync", SourceID: one.SourceID})
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, e.wa, e.actx, res.Job.ID); j.State != jobs.StateSucceeded || j.Progress.Deleted != 1 {
		t.Fatalf("sync after a delete: %+v, want deleted 1", j)
	}
}

// overlap within a collection is refused, naming the other source;
// another collection may hold the same files (its job is answered).
func (e *removalEnv) overlap(t *testing.T, one jobs.Job) jobs.Job {
	if err := os.MkdirAll(filepath.Join(e.base, "one", "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := e.add(t, filepath.Join(e.base, "one", "inner"), "a")
	wantCode(t, "a source inside another", err, workspace.CodeConflict)
	if msg := workspace.ErrorMessage(err); !strings.Contains(msg, one.SourceID) || !strings.Contains(msg, "inside") {
		t.Fatalf("nested: message %q does not name %s", msg, one.SourceID)
	}
	_, err = e.add(t, e.base, "a")
	wantCode(t, "a source holding another", err, workspace.CodeConflict)
	if msg := workspace.ErrorMessage(err); !strings.Contains(msg, one.SourceID) || !strings.Contains(msg, "holds") {
		t.Fatalf("containing: message %q does not name %s", msg, one.SourceID)
	}
	res, err := e.wb.AddSources(e.bctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: filepath.Join(e.base, "one"), CollectionID: "b"}})
	if err != nil {
		t.Fatalf("the same folder in another collection: %v", err)
	}
	return waitJob(t, e.wb, e.bctx, res.Job.ID)
}

// refusals: a reader, a writer of another collection, an unknown source.
func (e *removalEnv) refusals(t *testing.T, one jobs.Job) {
	_, err := e.ra.RemoveSource(e.rctx, one.SourceID)
	wantCode(t, "a reader removes", err, workspace.CodePermissionDenied)
	_, err = e.wb.RemoveSource(e.bctx, one.SourceID)
	wantCode(t, "a writer of b removes a's source", err, workspace.CodeNotFound)
	_, err = e.wa.RemoveSource(e.actx, "src_does_not_exist")
	wantCode(t, "an unknown source", err, workspace.CodeNotFound)
}

// removed: the writer of a removes it, and nothing of it is left.
func (e *removalEnv) removed(t *testing.T, one jobs.Job) {
	hits := e.find(t, "a")
	if len(hits) == 0 {
		t.Fatal("no hit before the removal")
	}
	evidenceID := hits[0].EvidenceID

	// The writer of a removes it: nothing of it is left.
	removed, err := e.wa.RemoveSource(e.actx, one.SourceID)
	if err != nil || !removed.Removed || removed.ID != one.SourceID || removed.CollectionID != "a" {
		t.Fatalf("remove: %+v %v", removed, err)
	}
	for _, hit := range e.find(t, "a") {
		if hit.SourceID == one.SourceID {
			t.Fatalf("a hit of the removed source: %+v", hit)
		}
	}
	if len(e.find(t, "b")) == 0 {
		t.Fatal("the same files in collection b left with the source of a")
	}
	_, err = e.ra.Evidence(e.rctx, evidenceID)
	wantCode(t, "evidence of the removed source", err, workspace.CodeNotFound)
	_, err = e.ra.Inspect(e.rctx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "source", SourceID: one.SourceID}})
	wantCode(t, "inspect the removed source", err, workspace.CodeNotFound)
	page, err := e.ra.Discover(e.rctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "sources", Limit: 200}})
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
	_, err = e.wa.RemoveSource(e.actx, one.SourceID)
	wantCode(t, "removing it again", err, workspace.CodeNotFound)
}

// readdAndManage: once it is gone, the folder that held it may be added;
// a manager of every collection removes any source.
func (e *removalEnv) readdAndManage(t *testing.T, inB jobs.Job) {
	// Once it is gone, the folder that held it may be added.
	if j, err := e.add(t, filepath.Join(e.base, "one", "inner"), "a"); err != nil || j.State != jobs.StateSucceeded {
		t.Fatalf("add inside the removed source's folder: %v %+v", err, j)
	}

	// A manager of every collection removes any source.
	m, mctx := e.h.As(t, workspace.GrantManage, nil)
	if _, err := m.RemoveSource(mctx, inB.SourceID); err != nil {
		t.Fatalf("a manager removes: %v", err)
	}
}
