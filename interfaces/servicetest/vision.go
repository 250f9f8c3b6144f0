package servicetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// tinyPNG is a valid 1×1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// testSelectionText: the text seen in an image, submitted in the
// selection form of add_sources, is a job whose evidence (kind vision) a
// search finds by the text and a kinds filter keeps; the form is checked
// at once (bad fields, another collection's selection, an old hash) with
// the same codes on every implementation.
func testSelectionText(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	e := newVisionEnv(t, h)
	e.refused(t)
	e.accepted(t)
}

// visionEnv is an image in a source of collection a and another in one of
// b, with their selections and the writers of a and b.
type visionEnv struct {
	h             Harness
	dir           string
	src, otherSrc string
	wa, wb        interfaces.Service
	actx, bctx    context.Context
	sel, other    map[string]any // the selection of each image
	id, sha       string         // sel's id and hash
}

func newVisionEnv(t *testing.T, h Harness) *visionEnv {
	t.Helper()
	dir := filepath.Join(h.Root, "vision-a")
	otherDir := filepath.Join(h.Root, "vision-b")
	for _, d := range []string{dir, otherDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "shot.png"), append(append([]byte(nil), tinyPNG...), d...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wa, actx := h.As(t, workspace.GrantWrite, []string{"a"})
	wb, bctx := h.As(t, workspace.GrantWrite, []string{"b"})
	res, err := wa.AddSources(actx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dir, CollectionID: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	src := waitJob(t, wa, actx, res.Job.ID).SourceID
	res, err = wb.AddSources(bctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: otherDir, CollectionID: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	otherSrc := waitJob(t, wb, bctx, res.Job.ID).SourceID

	e := &visionEnv{h: h, dir: dir, src: src, otherSrc: otherSrc, wa: wa, wb: wb, actx: actx, bctx: bctx}
	e.sel, e.other = e.list(t, wa, actx, src), e.list(t, wb, bctx, otherSrc)
	e.id, e.sha = e.sel["id"].(string), e.sel["sha256"].(string)
	return e
}

// list answers the one selection of source s.
func (e *visionEnv) list(t *testing.T, svc interfaces.Service, ctx context.Context, s string) map[string]any {
	t.Helper()
	out, err := svc.Inspect(ctx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "source_selections", SourceID: s}})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := asMap(t, out.Result)["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("selections of %s: %v", s, out.Result)
	}
	return asMap(t, items[0])
}

// submit submits in as the writer of a.
func (e *visionEnv) submit(in interfaces.SourceInput) (interfaces.JobResult, error) {
	return e.wa.AddSources(e.actx, interfaces.AddSourcesRequest{Action: "add", Source: &in})
}

// refused: what is wrong with a submission is refused at once.
func (e *visionEnv) refused(t *testing.T) {
	_, err := e.submit(interfaces.SourceInput{SelectionID: e.id, SHA256: e.sha, Text: "x", Path: e.dir})
	wantCode(t, "a selection with a path", err, workspace.CodeInvalidArgument)
	_, err = e.submit(interfaces.SourceInput{SelectionID: e.id, SHA256: e.sha, Text: strings.Repeat("x", 64<<10+1)})
	wantCode(t, "a text over the limit", err, workspace.CodeInvalidArgument)
	_, err = e.submit(interfaces.SourceInput{SelectionID: e.id, SHA256: e.sha})
	wantCode(t, "no text", err, workspace.CodeInvalidArgument)
	_, err = e.submit(interfaces.SourceInput{SelectionID: e.other["id"].(string), SHA256: e.other["sha256"].(string), Text: "x"})
	wantCode(t, "another collection's selection", err, workspace.CodeNotFound)
	_, err = e.submit(interfaces.SourceInput{SelectionID: e.other["id"].(string), SHA256: e.other["sha256"].(string), Text: "x", CollectionID: "b"})
	wantCode(t, "a collection outside the grant", err, workspace.CodePermissionDenied)
	wab, abctx := e.h.As(t, workspace.GrantWrite, []string{"a", "b"})
	_, err = wab.AddSources(abctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{
		SelectionID: e.id, SHA256: e.sha, Text: "x", CollectionID: "b"}})
	wantCode(t, "the selection named in another collection of the grant", err, workspace.CodeNotFound)
	_, err = e.submit(interfaces.SourceInput{SelectionID: "sel_does_not_exist", SHA256: e.sha, Text: "x"})
	wantCode(t, "an unknown selection", err, workspace.CodeNotFound)
	_, err = e.submit(interfaces.SourceInput{SelectionID: e.id, SHA256: e.sha, Text: "x", SourceID: e.otherSrc})
	wantCode(t, "the selection in another source", err, workspace.CodeNotFound)
	_, err = e.submit(interfaces.SourceInput{SelectionID: e.id, SHA256: strings.Repeat("0", 64), Text: "x"})
	wantCode(t, "another hash", err, workspace.CodeConflict)
	r, rctx := e.h.As(t, workspace.GrantRead, []string{"a"})
	_, err = r.AddSources(rctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{SelectionID: e.id, SHA256: e.sha, Text: "x"}})
	wantCode(t, "a reader", err, workspace.CodePermissionDenied)
}

// accepted: a job of the image's source, and the text is searchable.
func (e *visionEnv) accepted(t *testing.T) {
	r, rctx := e.h.As(t, workspace.GrantRead, []string{"a"})
	res, err := e.submit(interfaces.SourceInput{SelectionID: e.id, SHA256: e.sha, Text: "The screenshot shows the ptarmigan settings page.",
		Model: "eye", RevisionID: e.sel["revision_id"].(string), SourceID: e.src, CollectionID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.Kind != jobs.KindAdd || res.Job.SourceID != e.src || res.Job.CollectionID != "a" {
		t.Fatalf("the submission's job: %+v", res.Job)
	}
	if j := waitJob(t, e.wa, e.actx, res.Job.ID); j.State != jobs.StateSucceeded || j.Progress.Indexed != 1 {
		t.Fatalf("the submission's job ended %+v", j)
	}
	found, err := r.Search(rctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "ptarmigan",
		Filters: &query.Filters{Kinds: []string{"vision"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if hits := found.Result.Hits; len(hits) != 1 || hits[0].Path != "shot.png" || hits[0].SourceID != e.src || hits[0].Kind != "vision" {
		t.Fatalf("search ptarmigan in kind vision: %+v", found.Result.Hits)
	}
	vis := asMap(t, e.list(t, e.wa, e.actx, e.src)["vision"])
	if vis["evidence_id"] != found.Result.Hits[0].EvidenceID || vis["relation"] != "describes" || vis["model"] != "eye" {
		t.Fatalf("the selection's vision: %v", vis)
	}
	// The image's own evidence keeps no text: what was seen in it is not
	// the file's content.
	img, err := r.Evidence(rctx, e.sel["evidence_id"].(string))
	if err != nil || img.Evidence.Kind != "image" || img.Evidence.Text != "" {
		t.Fatalf("the image's evidence: %+v %v", img, err)
	}
	ev, err := r.Evidence(rctx, found.Result.Hits[0].EvidenceID)
	if err != nil || ev.Evidence.Kind != "vision" || !strings.Contains(ev.Evidence.Text, "ptarmigan") {
		t.Fatalf("the vision evidence: %+v %v", ev, err)
	}
}
