package servicetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// png1x1 is a valid 1x1 PNG image.
var png1x1 = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// asMap re-reads an inspect answer as JSON, as a client sees it.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func testInspect(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	e := newInspectEnv(t, h)
	rep, sels := e.reports(t)
	assetID := e.asset(t, sels)
	e.coverage(t)
	e.content(t)
	e.earlierRevision(t, rep)
	e.errorsAndScope(t, assetID)
}

// inspectFiles are the files of the source testInspect inspects.
var inspectFiles = map[string][]byte{
	"README.md":       []byte("# Inspect\n\nSome words.\n"),
	"main.go":         []byte("package main\n\nfunc main() {}\n"),
	"notes.txt":       []byte("plain text\n"),
	"logo.png":        png1x1,
	"blob.bin":        {0, 1, 2, 3, 0, 0, 7},
	"bad.txt":         {'o', 'k', 0xff, 0xfe, '\n'},
	"ignored.log":     []byte("ignored\n"),
	".gitignore":      []byte("*.log\n"),
	"sub/deeper.md":   []byte("# Deeper\n\ntext\n"),
	"sub/another.txt": []byte("another\n"),
}

// inspectEnv is an indexed source of inspectFiles, its writer and a reader.
type inspectEnv struct {
	h    Harness
	dir  string
	src  string
	w, r interfaces.Service
	wctx context.Context
	rctx context.Context
}

func newInspectEnv(t *testing.T, h Harness) *inspectEnv {
	t.Helper()
	dir := filepath.Join(h.Root, "inspect-me")
	for name, b := range inspectFiles {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, wctx := h.As(t, workspace.GrantWrite, nil)
	res, err := w.AddSources(wctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	job := waitJob(t, w, wctx, res.Job.ID)
	r, rctx := h.As(t, workspace.GrantRead, nil)
	return &inspectEnv{h: h, dir: dir, src: job.SourceID, w: w, wctx: wctx, r: r, rctx: rctx}
}

// inspect asks the reader, and answers the result as a map.
func (e *inspectEnv) inspect(t *testing.T, req interfaces.InspectRequest) (map[string]any, error) {
	t.Helper()
	out, err := e.r.Inspect(e.rctx, interfaces.InspectArgs{Request: req})
	if err != nil {
		return nil, err
	}
	return asMap(t, out.Result), nil
}

// reports: the source report, its revisions, extractions, channels and
// selections; it answers the report and the selections.
func (e *inspectEnv) reports(t *testing.T) (rep, sels map[string]any) {
	rep, err := e.inspect(t, interfaces.InspectRequest{Subject: "source", SourceID: e.src})
	if err != nil {
		t.Fatal(err)
	}
	fc := rep["files"].(map[string]any)
	reasons := fc["skipped_by_reason"].(map[string]any)
	if fc["indexed"].(float64) < 5 || fc["assets"].(float64) != 1 || reasons["binary"] == nil || reasons["undecodable"] == nil || reasons["ignored"] == nil {
		t.Fatalf("source report files %v", fc)
	}
	if rep["revision"] == nil {
		t.Fatal("source report has no revision")
	}

	revs, err := e.inspect(t, interfaces.InspectRequest{Subject: "revisions", SourceID: e.src})
	if err != nil || len(revs["items"].([]any)) != 1 {
		t.Fatalf("revisions %v %v", revs, err)
	}
	exts, err := e.inspect(t, interfaces.InspectRequest{Subject: "extractions", SourceID: e.src})
	if err != nil || len(exts["items"].([]any)) == 0 {
		t.Fatalf("extractions %v %v", exts, err)
	}
	extID := exts["items"].([]any)[0].(map[string]any)["id"].(string)
	chans, err := e.inspect(t, interfaces.InspectRequest{Subject: "channels", SourceID: e.src, ExtractionID: extID})
	if err != nil || len(chans["items"].([]any)) == 0 {
		t.Fatalf("channels %v %v", chans, err)
	}
	sels, err = e.inspect(t, interfaces.InspectRequest{Subject: "source_selections", SourceID: e.src})
	if err != nil || len(sels["items"].([]any)) != 1 || sels["items"].([]any)[0].(map[string]any)["selector"] != "asset" {
		t.Fatalf("selections %v %v", sels, err)
	}
	return rep, sels
}

// asset: the image is an asset with its MIME type; it answers its id.
func (e *inspectEnv) asset(t *testing.T, sels map[string]any) string {
	// The image is an asset with its MIME type; others cannot read it.
	assetID, _ := sels["items"].([]any)[0].(map[string]any)["asset_id"].(string)
	a, err := e.r.Asset(e.rctx, assetID)
	if err != nil || a.MIME != "image/png" || string(a.Bytes) != string(png1x1) {
		t.Fatalf("asset %q: %v %q %d bytes", assetID, err, a.MIME, len(a.Bytes))
	}
	_, err = e.r.Asset(e.rctx, "../../etc/passwd")
	wantCode(t, "asset path traversal", err, workspace.CodeNotFound)
	return assetID
}

// coverage, paged two at a time, lists every path once with its status;
// a cursor is bound to its request and scope.
func (e *inspectEnv) coverage(t *testing.T) {
	var err error
	// Coverage, paged two at a time, lists every path once with its status.
	seen := map[string]string{}
	cursor := ""
	for pages := 0; pages < 20; pages++ {
		page, err := e.inspect(t, interfaces.InspectRequest{Subject: "coverage", SourceID: e.src, Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page["items"].([]any) {
			m := it.(map[string]any)
			p := m["path"].(string)
			if _, dup := seen[p]; dup {
				t.Fatalf("coverage lists %s twice", p)
			}
			seen[p] = m["status"].(string)
		}
		if page["next_cursor"] == nil {
			break
		}
		cursor = page["next_cursor"].(string)
	}
	for path, status := range map[string]string{"README.md": "indexed", "logo.png": "asset", "blob.bin": "skipped", "bad.txt": "skipped", "ignored.log": "skipped", "sub/deeper.md": "indexed"} {
		if seen[path] != status {
			t.Errorf("coverage: %s is %q, want %q (all: %v)", path, seen[path], status, seen)
		}
	}
	// A cursor is bound to its request and scope.
	first, _ := e.inspect(t, interfaces.InspectRequest{Subject: "coverage", SourceID: e.src, Limit: 2})
	c := first["next_cursor"].(string)
	_, err = e.inspect(t, interfaces.InspectRequest{Subject: "revisions", SourceID: e.src, Cursor: c})
	wantCode(t, "coverage cursor on revisions", err, workspace.CodeInvalidArgument)
}

// content is present while the file is unchanged, stale after an edit.
func (e *inspectEnv) content(t *testing.T) {
	// Content: present while the file is unchanged, stale after an edit.
	withContent := func() map[string]map[string]any {
		page, err := e.inspect(t, interfaces.InspectRequest{Subject: "coverage", SourceID: e.src, IncludeContent: true, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, it := range page["items"].([]any) {
			m := it.(map[string]any)
			out[m["path"].(string)] = m
		}
		return out
	}
	got := withContent()
	if got["main.go"]["content"] != string(inspectFiles["main.go"]) || got["main.go"]["stale"] != false {
		t.Fatalf("main.go content %v", got["main.go"])
	}
	if err := os.WriteFile(filepath.Join(e.dir, "main.go"), []byte("package main // edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = withContent()
	if got["main.go"]["content"] != nil || got["main.go"]["stale"] != true {
		t.Fatalf("edited main.go %v", got["main.go"])
	}
}

// earlierRevision: after a second revision, the first one's files and
// coverage are not answered with today's.
func (e *inspectEnv) earlierRevision(t *testing.T, rep map[string]any) {
	// After a second revision, the first one's files and coverage are not
	// answered with today's: only the current revision keeps them.
	firstRev := rep["source"].(map[string]any)["current_revision_id"].(string)
	if err := os.Remove(filepath.Join(e.dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	synced, err := e.w.AddSources(e.wctx, interfaces.AddSourcesRequest{Action: "sync", SourceID: e.src})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, e.w, e.wctx, synced.Job.ID)
	for _, subject := range []string{"coverage", "revisions"} {
		_, err := e.inspect(t, interfaces.InspectRequest{Subject: subject, SourceID: e.src, RevisionID: firstRev})
		wantCode(t, subject+" of an earlier revision", err, workspace.CodeInvalidArgument)
	}
	if _, err := e.inspect(t, interfaces.InspectRequest{Subject: "revisions", SourceID: e.src}); err != nil {
		t.Fatalf("revisions: %v", err)
	}
}

// errorsAndScope: bad requests, and another collection's source and asset.
func (e *inspectEnv) errorsAndScope(t *testing.T, assetID string) {
	var err error
	// Errors and scope.
	for _, tc := range []struct {
		name string
		req  interfaces.InspectRequest
		code workspace.Code
	}{
		{"no source", interfaces.InspectRequest{Subject: "source"}, workspace.CodeInvalidArgument},
		{"unknown source", interfaces.InspectRequest{Subject: "source", SourceID: "src_nope"}, workspace.CodeNotFound},
		{"bad subject", interfaces.InspectRequest{Subject: "everything", SourceID: e.src}, workspace.CodeInvalidArgument},
		{"unknown revision", interfaces.InspectRequest{Subject: "extractions", SourceID: e.src, RevisionID: "rev_nope"}, workspace.CodeNotFound},
		{"unknown extraction", interfaces.InspectRequest{Subject: "channels", SourceID: e.src, ExtractionID: "x"}, workspace.CodeNotFound},
		{"content with source", interfaces.InspectRequest{Subject: "source", SourceID: e.src, IncludeContent: true}, workspace.CodeInvalidArgument},
		{"limit", interfaces.InspectRequest{Subject: "coverage", SourceID: e.src, Limit: 100000}, workspace.CodeInvalidArgument},
	} {
		_, err := e.inspect(t, tc.req)
		wantCode(t, tc.name, err, tc.code)
	}
	other, octx := e.h.As(t, workspace.GrantRead, []string{"b"})
	_, err = other.Inspect(octx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "source", SourceID: e.src}})
	wantCode(t, "another collection's source", err, workspace.CodeNotFound)
	_, err = other.Asset(octx, assetID)
	wantCode(t, "another collection's asset", err, workspace.CodeNotFound)
}
