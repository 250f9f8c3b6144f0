package servicetest

import (
	"encoding/json"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// testDiscover runs after testInspect has indexed a folder in "default".
func testDiscover(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	r, rctx := h.As(t, workspace.GrantRead, nil)
	get := func(subject string, limit int, cursor string) interfaces.DiscoverResult {
		t.Helper()
		res, err := r.Discover(rctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: subject, Limit: limit, Cursor: cursor}})
		if err != nil {
			t.Fatalf("discover %s: %v", subject, err)
		}
		if res.Subject != subject || res.Items == nil {
			t.Fatalf("discover %s: %+v", subject, res)
		}
		return res
	}
	// Paging one at a time visits every kind once.
	all := get("kinds", 0, "")
	var paged []json.RawMessage
	cursor := ""
	for i := 0; i < 50; i++ {
		page := get("kinds", 1, cursor)
		paged = append(paged, page.Items...)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if len(all.Items) < 4 || len(paged) != len(all.Items) {
		t.Fatalf("kinds: %d items, %d paged", len(all.Items), len(paged))
	}
	langs := map[string]float64{}
	for _, it := range get("languages", 0, "").Items {
		m := asMap(t, it)
		langs[m["language"].(string)] = m["files"].(float64)
	}
	if langs["go"] < 1 || langs["markdown"] < 2 {
		t.Fatalf("languages %v", langs)
	}
	facetValues := 0
	roles := map[string]float64{} // "kind/role": files
	for _, it := range get("facets", 0, "").Items {
		m := asMap(t, it)
		facetValues += len(m["values"].([]any))
		if m["facet"] == "role" {
			for _, v := range m["values"].([]any) {
				vm := v.(map[string]any)
				roles[m["kind"].(string)+"/"+vm["value"].(string)] += vm["files"].(float64)
			}
		}
	}
	if facetValues == 0 {
		t.Fatal("facets carry no values")
	}
	// Every kind has the role facet; the indexed folder's files count.
	if roles["code/source"] < 1 || roles["markdown/documentation"] < 2 || roles["text/documentation"] < 1 || roles["image/source"] < 1 {
		t.Fatalf("role facet counts %v", roles)
	}
	rels := map[string]float64{}
	for _, it := range get("relations", 0, "").Items {
		m := asMap(t, it)
		rels[m["type"].(string)] = m["count"].(float64)
	}
	if rels["parent"] == 0 || rels["parent"] != rels["child"] {
		t.Fatalf("relations %v", rels)
	}
	keys := map[string]bool{}
	for _, it := range get("settings", 0, "").Items {
		keys[asMap(t, it)["key"].(string)] = true
	}
	for _, k := range []string{"ingest_roots", "collections", "max_file_bytes", "max_request_bytes", "workers", "token_counter", "default_max_tokens", "query_history", "listen", "default_excludes", "watch"} {
		if !keys[k] {
			t.Errorf("settings lacks %s", k)
		}
	}
	// Scope: a reader of collection b sees none of default's languages.
	other, octx := h.As(t, workspace.GrantRead, []string{"b"})
	res, err := other.Discover(octx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "languages"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range res.Items {
		if m := asMap(t, it); m["language"] == "go" {
			t.Fatalf("collection b sees default's languages: %v", res.Items)
		}
	}
	_, err = other.Discover(octx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "kinds", Cursor: cursor}})
	wantCode(t, "cursor under another scope", err, workspace.CodeInvalidArgument)
	_, err = r.Discover(rctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "everything"}})
	wantCode(t, "unknown subject", err, workspace.CodeInvalidArgument)
}
