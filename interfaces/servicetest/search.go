package servicetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// recount counts the bytes of an answer independently of the fitter.
func recount(t *testing.T, out interfaces.SearchOutput, counter string) int {
	t.Helper()
	c, err := render.CounterFor(counter)
	if err != nil {
		t.Fatal(err)
	}
	n := c.CountBytes(out.Structured)
	if out.Rendered != nil {
		n += c.Count(*out.Rendered)
	}
	return n
}

func testSearch(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	e := newSearchEnv(t, h)
	e.identifiersAndPhrases(t)
	e.budgets(t)
	top, out := e.evidence(t)
	e.otherCollection(t, top, out)
	e.staleHits(t, top)
	e.runs(t, out)
}

// searchEnv is a source of a few files, indexed, and a reader of it.
type searchEnv struct {
	h    Harness
	dir  string
	src  string
	r    interfaces.Service
	rctx context.Context
}

func newSearchEnv(t *testing.T, h Harness) *searchEnv {
	t.Helper()
	dir := filepath.Join(h.Root, "searchable")
	files := map[string]string{
		"server/http.go":  "package server\n\n// ParseHTTPRequest reads the request line of an HTTP request.\nfunc ParseHTTPRequest(line string) (string, error) {\n\treturn strings.TrimSpace(line), nil\n}\n",
		"util/strings.py": "def parse_http_request(raw):\n    \"\"\"Split a raw request into method and path.\"\"\"\n    return raw.split(\" \", 1)\n",
		"docs/guide.md":   "# Guide\n\n## Token budgets\n\nEvery answer is sized to a token budget <counted> on the exact bytes & nothing else.\n\n## Unrelated\n\nThe quick brown fox jumps over the lazy dog.\n",
		"notes/gone.md":   "# Ephemeral\n\nThis zebra note will be deleted before the search.\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, wctx := h.As(t, workspace.GrantWrite, nil)
	res, err := w.AddSources(wctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, w, wctx, res.Job.ID)
	r, rctx := h.As(t, workspace.GrantRead, nil)
	return &searchEnv{h: h, dir: dir, src: res.Job.SourceID, r: r, rctx: rctx}
}

// search is a search that must answer.
func (e *searchEnv) search(t *testing.T, args interfaces.SearchArgs) interfaces.SearchOutput {
	t.Helper()
	out, err := e.r.Search(e.rctx, args)
	if err != nil {
		t.Fatalf("search %+v: %v", args.Request, err)
	}
	return out
}

// q asks question within the source.
func (e *searchEnv) q(question string) *query.QueryRequest {
	return &query.QueryRequest{Question: question, Filters: &query.Filters{Sources: []string{e.src}}}
}

// identifiersAndPhrases: identifiers match split and whole, hits name
// their files, phrases match adjacent words, and any question is one.
func (e *searchEnv) identifiersAndPhrases(t *testing.T) {
	for _, question := range []string{"parse http request", "ParseHTTPRequest", "parse_http_request"} {
		out := e.search(t, interfaces.SearchArgs{Request: e.q(question)})
		if len(out.Result.Hits) < 2 {
			t.Fatalf("%q: %d hits", question, len(out.Result.Hits))
		}
		paths := map[string]bool{}
		for _, hit := range out.Result.Hits[:2] {
			paths[hit.Path] = true
		}
		if !paths["server/http.go"] || !paths["util/strings.py"] {
			t.Errorf("%q: top hits %v", question, paths)
		}
	}
	// Every hit names its file by a path that opens with no further call.
	root, err := filepath.EvalSymlinks(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range e.search(t, interfaces.SearchArgs{Request: e.q("parse http request")}).Result.Hits {
		if want := filepath.Join(root, filepath.FromSlash(hit.Path)); hit.File != want {
			t.Errorf("hit %s: file %q, want %q", hit.Path, hit.File, want)
		}
		if _, err := os.Stat(hit.File); err != nil {
			t.Errorf("hit %s: %v", hit.Path, err)
		}
	}
	// A quoted phrase matches adjacent words only.
	out := e.search(t, interfaces.SearchArgs{Request: e.q(`"lazy dog"`)})
	if len(out.Result.Hits) != 1 || out.Result.Hits[0].Path != "docs/guide.md" {
		t.Fatalf("phrase: %+v", out.Result.Hits)
	}
	if n := len(e.search(t, interfaces.SearchArgs{Request: e.q(`"dog lazy"`)}).Result.Hits); n != 0 {
		t.Fatalf("reversed phrase matched %d", n)
	}
	// Any characters at all are a question, never a syntax error.
	for _, question := range []string{`"unbalanced`, `AND OR NOT`, `col:umn*`, `(((`, `C++ p53/MDM2 5'-UTR`, `NEAR(a b)`, "\x00\xff"} {
		if _, err := e.r.Search(e.rctx, interfaces.SearchArgs{Request: e.q(question)}); err != nil && workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Errorf("question %q: %v", question, err)
		}
	}
}

// budgets: the budget counts the exact bytes that travel, in every render.
func (e *searchEnv) budgets(t *testing.T) {
	var err error
	for _, render := range []string{"", interfaces.RenderAgent, interfaces.RenderMarkdown, interfaces.RenderHierarchical} {
		for _, budget := range []int{400, 1000, 20000} {
			args := interfaces.SearchArgs{Request: e.q("request budget token fox"), Render: render}
			args.Request.Budget = &query.Budget{MaxTokens: budget}
			out := e.search(t, args)
			b := out.Result.Budget
			if got := recount(t, out, b.Counter); got != b.UsedTokens || b.UsedTokens > budget || b.MaxTokens != budget {
				t.Errorf("render %q budget %d: used %d, recount %d", render, budget, b.UsedTokens, got)
			}
			if (render == "") != (out.Rendered == nil) {
				t.Errorf("render %q: rendered %v", render, out.Rendered != nil)
			}
			for _, hit := range out.Result.Hits {
				if render != "" && (hit.Text != nil || hit.Snippet != "" || hit.Hash != "") {
					t.Errorf("render %q: hit %s is not a compact citation: %+v", render, hit.EvidenceID, hit)
				}
				if render != "" && !strings.Contains(*out.Rendered, hit.File) {
					t.Errorf("render %q: the rendered text does not name %s", render, hit.File)
				}
			}
			if render != "" {
				// structuredContent carries the rendered text too: some
				// clients show a model nothing else.
				var body struct {
					Rendered *string `json:"rendered"`
				}
				if err := json.Unmarshal(out.Structured, &body); err != nil || body.Rendered == nil || *body.Rendered != *out.Rendered {
					t.Errorf("render %q: the structured bytes do not carry the rendered text (%v)", render, err)
				}
			}
			if budget == 20000 && out.Result.Truncated {
				t.Errorf("a budget of 20000 truncated %d hits", len(out.Result.Hits))
			}
		}
	}
	small := e.q("fox")
	small.Budget = &query.Budget{MaxTokens: 5}
	_, err = e.r.Search(e.rctx, interfaces.SearchArgs{Request: small})
	wantCode(t, "budget below the empty answer", err, workspace.CodeOutputBudgetExceeded)
	_, err = e.r.Search(e.rctx, interfaces.SearchArgs{})
	wantCode(t, "no request", err, workspace.CodeInvalidArgument)
	_, err = e.r.Search(e.rctx, interfaces.SearchArgs{Request: e.q("x"), ReplayRunID: "run_x"})
	wantCode(t, "request and replay", err, workspace.CodeInvalidArgument)
	_, err = e.r.Search(e.rctx, interfaces.SearchArgs{Request: e.q("x"), Render: "html@9"})
	wantCode(t, "unknown render", err, workspace.CodeInvalidArgument)
}

// evidence: a hit's evidence reads back whole; it answers the top hit and
// its search.
func (e *searchEnv) evidence(t *testing.T) (query.Hit, interfaces.SearchOutput) {
	// Evidence reads back whole; a hit's text is the evidence text.
	out := e.search(t, interfaces.SearchArgs{Request: e.q("ParseHTTPRequest")})
	top := out.Result.Hits[0]
	ev, err := e.r.Evidence(e.rctx, top.EvidenceID)
	if err != nil || top.Text == nil || ev.Evidence.Text != *top.Text || ev.Evidence.Hash != top.Hash {
		t.Fatalf("evidence %v: %+v", err, ev)
	}
	// A hit names its language, as its evidence record does.
	langs := map[string]string{"server/http.go": "go", "util/strings.py": "python"}
	for _, hit := range out.Result.Hits {
		if want, ok := langs[hit.Path]; ok && hit.Language != want {
			t.Errorf("hit %s: language %q, want %q", hit.Path, hit.Language, want)
		}
	}
	if top.Language == "" || top.Language != ev.Evidence.Language {
		t.Errorf("top hit language %q, evidence %q", top.Language, ev.Evidence.Language)
	}
	_, err = e.r.Evidence(e.rctx, "ev_nope")
	wantCode(t, "unknown evidence", err, workspace.CodeNotFound)
	return top, out
}

// otherCollection: another collection sees nothing: no hits, no count, no
// evidence, and no use of a cursor.
func (e *searchEnv) otherCollection(t *testing.T, top query.Hit, out interfaces.SearchOutput) {
	// Another collection sees nothing: no hits, no count, no evidence.
	other, octx := e.h.As(t, workspace.GrantRead, []string{"b"})
	oout, err := other.Search(octx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "ParseHTTPRequest"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range oout.Result.Hits {
		if hit.SourceID == e.src {
			t.Fatalf("collection b sees %s", hit.Path)
		}
	}
	_, err = other.Evidence(octx, top.EvidenceID)
	wantCode(t, "another collection's evidence", err, workspace.CodeNotFound)
	if out.Result.NextCursor != nil {
		_, err = other.Search(octx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "ParseHTTPRequest", Cursor: *out.Result.NextCursor}})
		wantCode(t, "cursor under another scope", err, workspace.CodeInvalidArgument)
	}
}

// staleHits: an edit and a delete show without a re-sync.
func (e *searchEnv) staleHits(t *testing.T, top query.Hit) {
	if err := os.WriteFile(filepath.Join(e.dir, "server", "http.go"), []byte("package server // rewritten\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.dir, "notes", "gone.md")); err != nil {
		t.Fatal(err)
	}
	for question, want := range map[string][2]string{"ParseHTTPRequest": {"server/http.go", "changed"}, "zebra ephemeral": {"notes/gone.md", "deleted"}} {
		path := want[0]
		out := e.search(t, interfaces.SearchArgs{Request: e.q(question)})
		found := false
		for _, hit := range out.Result.Hits {
			if hit.Path == path {
				found = true
				if !hit.Stale || hit.StaleReason == nil || *hit.StaleReason != want[1] {
					t.Errorf("%s: stale %v, reason %v; want stale, %s", path, hit.Stale, hit.StaleReason, want[1])
				}
			} else if hit.Stale || hit.StaleReason != nil {
				t.Errorf("%s is stale but did not change", hit.Path)
			}
		}
		if !found {
			t.Errorf("%q no longer finds %s", question, path)
		}
	}
	ev, err := e.r.Evidence(e.rctx, top.EvidenceID)
	if err != nil || !ev.Evidence.Stale || ev.Evidence.StaleReason == nil || *ev.Evidence.StaleReason != "changed" {
		t.Fatalf("evidence after the edit: %v stale=%v reason=%v", err, ev.Evidence.Stale, ev.Evidence.StaleReason)
	}
}

// runs: each search is recorded; this workspace keeps metadata only.
func (e *searchEnv) runs(t *testing.T, out interfaces.SearchOutput) {
	runs, err := e.r.Discover(e.rctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "runs", Limit: 200}})
	if err != nil {
		t.Fatal(err)
	}
	var mine map[string]any
	for _, it := range runs.Items {
		if m := asMap(t, it); m["id"] == out.Result.RunID {
			mine = m
		}
	}
	if mine == nil || mine["retained"] != false || len(mine["hits"].([]any)) != len(out.Result.Hits) {
		t.Fatalf("run %s not listed as expected: %v", out.Result.RunID, mine)
	}
	// A run under a render keeps the scores and hashes of its hits, which
	// its citations do not carry: the same as the run without a render.
	rout := e.search(t, interfaces.SearchArgs{Request: e.q(out.Result.Request.Question), Render: "agent@1"})
	runs, err = e.r.Discover(e.rctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "runs", Limit: 200}})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]map[string]any{}
	for _, it := range runs.Items {
		m := asMap(t, it)
		byID[m["id"].(string)] = m
	}
	plain, rendered := byID[out.Result.RunID], byID[rout.Result.RunID]
	if rendered == nil || len(rendered["hits"].([]any)) == 0 {
		t.Fatalf("the run under a render is not listed: %v", rendered)
	}
	for i, h := range rendered["hits"].([]any) {
		got, want := asMap(t, h), asMap(t, plain["hits"].([]any)[i])
		if got["evidence_id"] != want["evidence_id"] || got["score"] != want["score"] || got["hash"] != want["hash"] || got["score"] == 0.0 {
			t.Fatalf("run hit %d under a render is %v, without one %v", i, got, want)
		}
	}
	_, err = e.r.Search(e.rctx, interfaces.SearchArgs{ReplayRunID: out.Result.RunID})
	wantCode(t, "replay without a kept body", err, workspace.CodeReplayUnavailable)
	_, err = e.r.Search(e.rctx, interfaces.SearchArgs{ReplayRunID: "run_nope"})
	wantCode(t, "replay of an unknown run", err, workspace.CodeNotFound)
}
