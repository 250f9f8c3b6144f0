package query

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// encodingFit is a Reuser that encodes the page as its answer and counts
// its fits.
type encodingFit struct {
	budget int
	fits   *int
	out    string
}

func (f *encodingFit) Prepare(QueryRequest) (string, error) { return "json", nil }
func (f *encodingFit) Merge(kept, fresh []int) []int        { return append(kept, fresh...) }
func (f *encodingFit) AnswerKey() string                    { return strings.Repeat("b", f.budget) }

func (f *encodingFit) Fit(_ context.Context, page RankedPage[[]int]) (Fitted[[]int], error) {
	*f.fits++
	b, err := json.Marshal(page.Result)
	if err != nil {
		return Fitted[[]int]{}, err
	}
	f.out = string(b)
	return Fitted[[]int]{Result: page.Result, Answer: page.Result}, nil
}

func (f *encodingFit) Reuse(answer any, runID string) (Fitted[[]int], bool) {
	r := answer.(QueryResult)
	r.RunID = runID
	b, err := json.Marshal(r)
	if err != nil {
		return Fitted[[]int]{}, false
	}
	f.out = string(b)
	return Fitted[[]int]{Result: r}, true
}

// The Searcher gives a Reuser's answer again for the same page and key,
// under the new run id, and fits again for another key or when a hit's
// file changed on disk (its stale flag is part of the page).
func TestSearcherReusesAnswers(t *testing.T) {
	env, s, _ := harbourSearcher(t)
	p := workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}
	ctx := context.Background()
	fits := 0
	ask := func(budget int) (QueryResult, string) {
		t.Helper()
		f := &encodingFit{budget: budget, fits: &fits}
		r, err := s.Search(ctx, p, SearchInput{Request: &QueryRequest{Question: "pilot buoy"}}, f)
		if err != nil || len(r.Hits) == 0 {
			t.Fatalf("search: %v %+v", err, r)
		}
		return r, f.out
	}
	first, a := ask(1)
	second, b := ask(1)
	if fits != 1 {
		t.Fatalf("%d fits for the same page twice, want 1", fits)
	}
	if second.RunID == first.RunID || strings.Replace(a, first.RunID, "", 1) != strings.Replace(b, second.RunID, "", 1) {
		t.Fatalf("the reused answer is not the first under a new run id:\n%s\n%s", a, b)
	}
	ask(2)
	if fits != 2 {
		t.Fatalf("another answer key was not fitted (%d fits)", fits)
	}
	if err := os.WriteFile(filepath.Join(env.root, "docs", "harbour.md"), []byte("# Harbour\n\nThe pilot left.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale, _ := ask(1)
	if fits != 3 || !stale.Hits[0].Stale {
		t.Fatalf("after the file changed: %d fits, stale %v", fits, stale.Hits[0].Stale)
	}
}
