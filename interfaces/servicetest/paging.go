package servicetest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

var minimumRE = regexp.MustCompile(`at least (\d+) tokens`)

// testBudgetPaging: paging through an answer whose budget leaves hits out
// of every page reaches every hit exactly once, in the order of paging
// with a budget that keeps them all; and paging with a budget that keeps
// none still ends.
func testBudgetPaging(t *testing.T, h Harness) {
	if h.Root == "" {
		t.Skip("harness has no ingest root")
	}
	dir := filepath.Join(h.Root, "paging")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 24 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Pelican notes %d\n\n", i)
		for j := range 5 + i%7*4 {
			fmt.Fprintf(&b, "Line %d of note %d: the pelican %s.\n", j, i, strings.Repeat("glides ", 1+(i+j)%5))
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note%02d.md", i)), []byte(b.String()), 0o644); err != nil {
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

	// pages follows next_cursor to the end and returns the hit ids in order
	// and the number of pages.
	pages := func(budget int) ([]string, int) {
		t.Helper()
		var ids []string
		cursor := ""
		for n := 1; ; n++ {
			req := &query.QueryRequest{Question: "pelican", Limit: 5, Cursor: cursor,
				Filters: &query.Filters{Sources: []string{res.Job.SourceID}}, Budget: &query.Budget{MaxTokens: budget}}
			out, err := r.Search(rctx, interfaces.SearchArgs{Request: req})
			if err != nil {
				t.Fatalf("budget %d, page %d: %v", budget, n, err)
			}
			for _, hit := range out.Result.Hits {
				ids = append(ids, hit.EvidenceID)
			}
			if out.Result.NextCursor == nil {
				return ids, n
			}
			if n > 100 {
				t.Fatalf("budget %d: still paging after %d pages", budget, n)
			}
			cursor = *out.Result.NextCursor
		}
	}
	all, _ := pages(1 << 20)
	if len(all) < 20 {
		t.Fatalf("%d hits for pelican, want every note", len(all))
	}
	trimmed, n := pages(700)
	if n <= (len(all)+4)/5 {
		t.Fatalf("budget 700 paged %d times for %d hits: the budget left nothing out, the test proves nothing", n, len(all))
	}
	if strings.Join(trimmed, " ") != strings.Join(all, " ") {
		t.Fatalf("paging under a budget gave\n%v\nwant\n%v", trimmed, all)
	}

	// The smallest answer fits no hit: every page is empty, and paging
	// still ends. (Every search cursor costs the same tokens, so the
	// smallest answer of the first page is enough for every page.)
	_, err = r.Search(rctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "pelican", Limit: 5,
		Filters: &query.Filters{Sources: []string{res.Job.SourceID}}, Budget: &query.Budget{MaxTokens: 1}}})
	m := minimumRE.FindStringSubmatch(workspace.ErrorMessage(err))
	if m == nil {
		t.Fatalf("budget 1: %v", err)
	}
	least, _ := strconv.Atoi(m[1])
	// The named minimum holds for every asking (each answer has a run id of
	// its own).
	for i := range 20 {
		_, err := r.Search(rctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "pelican", Limit: 5,
			Filters: &query.Filters{Sources: []string{res.Job.SourceID}}, Budget: &query.Budget{MaxTokens: least}}})
		if err != nil {
			t.Fatalf("asking %d with the named minimum %d: %v", i, least, err)
		}
	}
	none, n := pages(least)
	if len(none) != 0 || n != len(all)+1 && n != len(all) {
		t.Fatalf("budget %d: %d hits over %d pages, want none over about %d", least, len(none), n, len(all))
	}
}
