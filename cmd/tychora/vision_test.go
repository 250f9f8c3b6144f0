package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/internal/testkit"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	tyruntime "github.com/tychora/tychora/runtime"
)

// visionPNG is a valid 1×1 PNG.
var visionPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// visionEnv is a served workspace and the ways to reach it.
type visionEnv struct {
	t   *testing.T
	ctx context.Context
	ws  string
	ep  tyruntime.Endpoint
	hc  *http.Client
}

// tool calls a tool and returns its structured result, or the code of
// its tool error.
func (v *visionEnv) tool(cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, string) {
	v.t.Helper()
	res, err := cs.CallTool(v.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		v.t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		var eb struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if len(res.Content) != 1 {
			v.t.Fatalf("%s: tool error with %d blocks", name, len(res.Content))
		}
		tc, _ := res.Content[0].(*mcp.TextContent)
		if tc == nil || json.Unmarshal([]byte(tc.Text), &eb) != nil || eb.Error.Code == "" {
			v.t.Fatalf("%s: tool error %+v", name, res.Content[0])
		}
		return nil, eb.Error.Code
	}
	return toMap(res.StructuredContent), ""
}

// v1 sends a /v1 request with the owner token (and a scope header when
// given) and returns the status and the decoded body.
func (v *visionEnv) v1(method, route, body, scope string) (int, map[string]any) {
	v.t.Helper()
	req, err := http.NewRequestWithContext(v.ctx, method, v.ep.URL+route, strings.NewReader(body))
	if err != nil {
		v.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if scope != "" {
		req.Header.Set("X-Tychora-Scope", scope)
	}
	resp, err := v.hc.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		v.t.Fatalf("%s %s: %d %s", method, route, resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

// wait follows job id over /v1 to its end and returns its final handle.
func (v *visionEnv) wait(id string) map[string]any {
	v.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, body := v.v1(http.MethodGet, "/v1/jobs/"+id, "", "")
		job, _ := body["job"].(map[string]any)
		if st != http.StatusOK || job == nil {
			v.t.Fatalf("get job %s: %d %v", id, st, body)
		}
		if s := job["state"]; s != "queued" && s != "running" {
			return job
		}
		if time.Now().After(deadline) {
			v.t.Fatalf("job %s did not end: %v", id, job)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// succeeded checks the add_sources answer res and waits for its job to
// succeed.
func (v *visionEnv) succeeded(how string, res map[string]any, sourceID string) {
	v.t.Helper()
	job, _ := res["job"].(map[string]any)
	if job == nil || job["kind"] != "add" || job["source_id"] != sourceID {
		v.t.Fatalf("%s: answer %v is no add job of source %s", how, res, sourceID)
	}
	if end := v.wait(job["id"].(string)); end["state"] != "succeeded" {
		v.t.Fatalf("%s: job ended %v", how, end)
	}
}

func items(m map[string]any, key ...string) []map[string]any {
	var cur any = m
	for _, k := range key {
		mm, _ := cur.(map[string]any)
		cur = mm[k]
	}
	list, _ := cur.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, it := range list {
		if mm, ok := it.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// visionHits are the hits of kind vision in a search result.
func visionHits(res map[string]any) []map[string]any {
	var out []map[string]any
	for _, h := range items(res, "hits") {
		if h["kind"] == "vision" {
			out = append(out, h)
		}
	}
	return out
}

// TestTextSeenInImages: an image's selection is listed; the text seen in
// it is submitted over MCP (stdio and HTTP, go-sdk clients), over /v1 and
// with the CLI, each time as a job; the image is then found by a word of
// the text, the relation shows in inspect, a new submission replaces the
// old text, a reader cannot submit, another collection's selection is
// NOT_FOUND, and after the image changes the old hash is CONFLICT and the
// old text is gone.
func TestTextSeenInImages(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, data []byte) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("shots/error-dialog.png", visionPNG)
	write("shots/README.md", []byte("# Shots\n\nScreenshots of the installer.\n"))
	write("scans/page.png", append(append([]byte(nil), visionPNG...), "scan"...))
	ws := filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init", "--collection", "default", "--collection", "docs"); r.code != 0 {
		t.Fatal(r)
	}
	if r := tychora(t, ws, "add", "--wait", filepath.Join(root, "shots")); r.code != 0 {
		t.Fatalf("add shots: %+v", r)
	}
	if r := tychora(t, ws, "add", "--wait", "--collection", "docs", filepath.Join(root, "scans")); r.code != 0 {
		t.Fatalf("add scans: %+v", r)
	}
	serve(t, ws)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, ep, err := tyruntime.ConnectLocal(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	v := &visionEnv{t: t, ctx: ctx, ws: ws, ep: ep, hc: &http.Client{Transport: testkit.Bearer{Token: ep.Token, Next: http.DefaultTransport}}}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}

	stdio, _ := stdioClient(t, ctx, ws)
	defer stdio.Close()
	httpCS, err := mcp.NewClient(&mcp.Implementation{Name: "vision", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: ep.MCPURL, HTTPClient: v.hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer httpCS.Close()

	// The sources, and the image selections they list.
	srcOf := map[string]string{}
	list, code := v.tool(stdio, "discover", map[string]any{"request": map[string]any{"subject": "sources"}})
	if code != "" {
		t.Fatal(code)
	}
	for _, it := range items(list, "items") {
		srcOf[filepath.Base(it["path"].(string))] = it["id"].(string)
	}
	shots, scans := srcOf["shots"], srcOf["scans"]
	if shots == "" || scans == "" {
		t.Fatalf("sources: %v", list)
	}
	selectionOf := func(cs *mcp.ClientSession, src string) map[string]any {
		t.Helper()
		res, code := v.tool(cs, "inspect", map[string]any{"request": map[string]any{"subject": "source_selections", "source_id": src}})
		sels := items(res, "result", "items")
		if code != "" || len(sels) != 1 {
			t.Fatalf("source_selections of %s: %s %v", src, code, res)
		}
		return sels[0]
	}
	sel := selectionOf(stdio, shots)
	selID, selSHA, asset := sel["id"].(string), sel["sha256"].(string), sel["asset_id"].(string)
	if sel["path"] != "error-dialog.png" || sel["selector"] != "asset" || sel["vision"] != nil || asset != selSHA {
		t.Fatalf("the image's selection: %v", sel)
	}
	form := func(text string) map[string]any {
		return map[string]any{"selection_id": selID, "sha256": selSHA, "text": text}
	}

	// Over stdio, with every field of the form.
	first := form("The installer's error dialog reads: disk quota exceeded on volume zephyrine.")
	first["model"], first["source_id"], first["revision_id"] = "eye-1", shots, sel["revision_id"]
	res, code := v.tool(stdio, "add_sources", map[string]any{"action": "add", "source": first})
	if code != "" {
		t.Fatalf("submit over stdio: %s", code)
	}
	v.succeeded("stdio", res, shots)

	// Found by a word of it: the hit names the image's file and asset.
	found, code := v.tool(stdio, "search", map[string]any{"request": map[string]any{"question": "zephyrine"}})
	hits := visionHits(found)
	if code != "" || len(hits) != 1 {
		t.Fatalf("search zephyrine: %s %v", code, found)
	}
	hit := hits[0]
	heading, _ := hit["heading_path"].([]any)
	if hit["path"] != "error-dialog.png" || hit["file"] != filepath.Join(realRoot, "shots", "error-dialog.png") ||
		len(heading) != 2 || heading[0] != "Text seen in image" || heading[1] != "tychora://assets/"+asset ||
		!strings.Contains(hit["text"].(string), "zephyrine") {
		t.Fatalf("the hit: %v", hit)
	}
	evidenceID := hit["evidence_id"].(string)
	rendered, err := stdio.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{
		"request": map[string]any{"question": "zephyrine"}, "render": "agent@1"}})
	if err != nil || rendered.IsError || len(rendered.Content) != 1 {
		t.Fatalf("rendered search: %v %+v", err, rendered)
	}
	if txt := rendered.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "error-dialog.png") ||
		!strings.Contains(txt, "Text seen in image › tychora://assets/"+asset) || !strings.Contains(txt, "zephyrine") {
		t.Fatalf("the render does not show text seen in the image:\n%s", txt)
	}

	// inspect: the selection's text and its relation; the vision
	// extraction's channel; the file's units.
	sel = selectionOf(stdio, shots)
	vis, _ := sel["vision"].(map[string]any)
	if vis == nil || vis["evidence_id"] != evidenceID || vis["relation"] != "describes" || vis["model"] != "eye-1" ||
		vis["submitted_by"] == "" || sel["evidence_id"] == nil {
		t.Fatalf("source_selections after the submission: %v", sel)
	}
	exts, _ := v.tool(stdio, "inspect", map[string]any{"request": map[string]any{"subject": "extractions", "source_id": shots}})
	extID := ""
	for _, x := range items(exts, "result", "items") {
		if x["extractor"] == "vision" {
			extID = x["id"].(string)
		}
	}
	chans, _ := v.tool(stdio, "inspect", map[string]any{"request": map[string]any{"subject": "channels", "source_id": shots, "extraction_id": extID}})
	if ch := items(chans, "result", "items"); extID == "" || len(ch) != 1 || ch[0]["channel"] != "text" || ch[0]["units"] != 1.0 {
		t.Fatalf("channels of the vision extraction %q: %v", extID, chans)
	}
	cov, _ := v.tool(stdio, "inspect", map[string]any{"request": map[string]any{"subject": "coverage", "source_id": shots}})
	for _, c := range items(cov, "result", "items") {
		if c["path"] == "error-dialog.png" && (c["status"] != "asset" || c["units"] != 2.0) {
			t.Fatalf("coverage of the image: %v", c)
		}
	}
	rels, _ := v.tool(stdio, "discover", map[string]any{"request": map[string]any{"subject": "relations"}})
	describes := 0.0
	for _, it := range items(rels, "items") {
		if it["type"] == "describes" {
			describes, _ = it["count"].(float64)
		}
	}
	if describes != 1 {
		t.Fatalf("discover relations: %v", rels)
	}
	schema, err := stdio.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tychora://schemas/SourceInput"})
	if err != nil || len(schema.Contents) != 1 || !strings.Contains(schema.Contents[0].Text, `"selection_id"`) ||
		!strings.Contains(schema.Contents[0].Text, "leaves with the image") {
		t.Fatalf("the SourceInput schema does not describe the selection form: %v %+v", err, schema)
	}
	if st, body := v.v1(http.MethodGet, "/v1/evidence/"+evidenceID, "", ""); st != http.StatusOK || toMap(body["evidence"])["kind"] != "vision" {
		t.Fatalf("evidence %s: %d %v", evidenceID, st, body)
	}

	// Over HTTP MCP: the new text replaces the old one.
	res, code = v.tool(httpCS, "add_sources", map[string]any{"action": "add", "source": form("A dialog box about the quokka migration.")})
	if code != "" {
		t.Fatalf("submit over HTTP: %s", code)
	}
	v.succeeded("http", res, shots)
	if found, _ := v.tool(httpCS, "search", map[string]any{"request": map[string]any{"question": "zephyrine"}}); len(visionHits(found)) != 0 {
		t.Fatalf("the replaced text is still found: %v", found)
	}
	if found, _ := v.tool(httpCS, "search", map[string]any{"request": map[string]any{"question": "quokka"}}); len(visionHits(found)) != 1 {
		t.Fatalf("search quokka: %v", found)
	}

	// Over /v1.
	body, _ := json.Marshal(map[string]any{"action": "add", "source": form("The dialog shows a marmot icon.")})
	st, out := v.v1(http.MethodPost, "/v1/add_sources", string(body), "")
	if st != http.StatusOK {
		t.Fatalf("POST /v1/add_sources: %d %v", st, out)
	}
	v.succeeded("/v1", out, shots)
	st, out = v.v1(http.MethodPost, "/v1/search", `{"request":{"question":"marmot"}}`, "")
	if st != http.StatusOK || len(visionHits(out)) != 1 {
		t.Fatalf("/v1 search marmot: %d %v", st, out)
	}

	// With the CLI, from a file, the hash taken as listed now.
	textFile := filepath.Join(t.TempDir(), "seen.txt")
	if err := os.WriteFile(textFile, []byte("A narwhal looks out of the dialog.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := tychora(t, ws, "add", "--selection", selID, "--text-file", textFile, "--model", "cli-eye", "--wait", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"state":"succeeded"`) {
		t.Fatalf("add --selection: %+v", r)
	}
	if st, out = v.v1(http.MethodPost, "/v1/search", `{"request":{"question":"narwhal"}}`, ""); len(visionHits(out)) != 1 {
		t.Fatalf("search narwhal: %d %v", st, out)
	}

	// A reader lists no add_sources and cannot call it.
	reader, _ := stdioClient(t, ctx, ws, "--grant", "read")
	defer reader.Close()
	tools, err := reader.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "add_sources" {
			t.Fatal("a reader lists add_sources")
		}
	}
	if _, code := v.tool(reader, "add_sources", map[string]any{"action": "add", "source": form("a reader saw this")}); code != "PERMISSION_DENIED" {
		t.Fatalf("a reader's submission: %q, want PERMISSION_DENIED", code)
	}

	// Another collection's selection is NOT_FOUND: over MCP for a writer
	// of default, and over /v1 with the scope narrowed.
	other := selectionOf(stdio, scans)
	otherForm := map[string]any{"selection_id": other["id"], "sha256": other["sha256"], "text": "a scanned page"}
	writer, _ := stdioClient(t, ctx, ws, "--grant", "write", "--collection", "default")
	defer writer.Close()
	if _, code := v.tool(writer, "add_sources", map[string]any{"action": "add", "source": otherForm}); code != "NOT_FOUND" {
		t.Fatalf("another collection's selection over MCP: %q, want NOT_FOUND", code)
	}
	body, _ = json.Marshal(map[string]any{"action": "add", "source": otherForm})
	if st, out := v.v1(http.MethodPost, "/v1/add_sources", string(body), "grant=write; collections=default"); st != http.StatusNotFound ||
		toMap(out["error"])["code"] != "NOT_FOUND" {
		t.Fatalf("another collection's selection over /v1: %d %v", st, out)
	}

	// The image changes: its text leaves with the old image, and the old
	// hash is CONFLICT.
	write("shots/error-dialog.png", append(append([]byte(nil), visionPNG...), "changed"...))
	if r := tychora(t, ws, "sync", "--wait", shots); r.code != 0 {
		t.Fatalf("sync: %+v", r)
	}
	if _, code := v.tool(stdio, "add_sources", map[string]any{"action": "add", "source": form("stale sight")}); code != "CONFLICT" {
		t.Fatalf("the old hash after the image changed: %q, want CONFLICT", code)
	}
	body, _ = json.Marshal(map[string]any{"action": "add", "source": form("stale sight")})
	if st, out := v.v1(http.MethodPost, "/v1/add_sources", string(body), ""); st != http.StatusConflict {
		t.Fatalf("the old hash over /v1: %d %v", st, out)
	}
	if st, out = v.v1(http.MethodPost, "/v1/search", `{"request":{"question":"narwhal"}}`, ""); len(visionHits(out)) != 0 {
		t.Fatalf("text seen in the old image is still found: %d %v", st, out)
	}
	now := selectionOf(stdio, shots)
	if now["id"] != selID || now["sha256"] == selSHA || now["vision"] != nil {
		t.Fatalf("the selection after the change: %v", now)
	}
}
