package render

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tychora/tychora/query"
)

// An answer given again under a new run id (SearchFit.Reuse) is, byte for
// byte, the answer a fit of the same page under that run id makes: the
// same structured bytes but for the id, the same rendered text, the same
// used_tokens, which a count of the bytes confirms.
func TestSearchFitReuseIsAFit(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ctx := context.Background()
	reused := 0
	for c := range 8 {
		res := genResult(r)
		res.RunID = query.NewRunID()
		for fi, f := range formats {
			counter := []string{"o200k_base", "cl100k_base"}[(c+fi)%2]
			for _, budget := range []int{300, 1000, 4000} {
				page := query.RankedPage[[]HitCost]{Result: res}
				first := &SearchFit{Format: f, MaxTokens: budget, Counter: counter}
				if _, err := first.Prepare(query.QueryRequest{}); err != nil {
					t.Fatal(err)
				}
				fitted, err := first.Fit(ctx, page)
				if err != nil {
					continue // below the minimum: nothing to reuse
				}
				again := &SearchFit{Format: f, MaxTokens: budget, Counter: counter}
				if again.AnswerKey() != first.AnswerKey() {
					t.Fatalf("the same budget gives the keys %q and %q", first.AnswerKey(), again.AnswerKey())
				}
				id := query.NewRunID()
				got, ok := again.Reuse(fitted.Answer, id)
				if !ok {
					t.Fatalf("case %d %s %d: the answer was not reused", c, f, budget)
				}
				page.Result.RunID = id
				fresh := &SearchFit{Format: f, MaxTokens: budget, Counter: counter}
				want, err := fresh.Fit(ctx, page)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again.Out.Structured, fresh.Out.Structured) || again.Out.Rendered != fresh.Out.Rendered {
					t.Fatalf("case %d %s %d: the reused answer differs from a fit under its run id", c, f, budget)
				}
				gotJSON, err1 := json.Marshal(got.Result)
				wantJSON, err2 := json.Marshal(want.Result)
				if err1 != nil || err2 != nil || !bytes.Equal(gotJSON, wantJSON) || got.Result.RunID != id {
					t.Errorf("case %d %s %d: the reused result differs from the fitted one (run id %q, want %q)", c, f, budget, got.Result.RunID, id)
				}
				cnt, err := CounterFor(counter)
				if err != nil {
					t.Fatal(err)
				}
				if n := cnt.Count(string(again.Out.Structured)) + cnt.Count(again.Out.Rendered); n != got.Result.Budget.UsedTokens {
					t.Errorf("case %d %s %d: used_tokens %d, the bytes count %d", c, f, budget, got.Result.Budget.UsedTokens, n)
				}
				if !bytes.Contains(first.Out.Structured, []byte(res.RunID)) || bytes.Contains(again.Out.Structured, []byte(res.RunID)) {
					t.Errorf("case %d %s %d: the first answer's run id is where it should not be", c, f, budget)
				}
				reused++
			}
		}
	}
	if reused == 0 {
		t.Fatal("no answer was reused")
	}
	// Another budget is another answer; a run id of another length is
	// refused.
	if a, b := (&SearchFit{Format: FormatAgent, MaxTokens: 1000, Counter: "o200k_base"}).AnswerKey(), (&SearchFit{Format: FormatAgent, MaxTokens: 999, Counter: "o200k_base"}).AnswerKey(); a == b {
		t.Errorf("budgets 1000 and 999 share the key %q", a)
	}
	res := genResult(r)
	res.RunID = query.NewRunID()
	sf := &SearchFit{Format: FormatAgent, MaxTokens: 4000, Counter: "o200k_base"}
	fitted, err := sf.Fit(ctx, query.RankedPage[[]HitCost]{Result: res})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sf.Reuse(fitted.Answer, "run_1"); ok {
		t.Error("a run id of another length was put in place")
	}
	// A large answer is not kept: it would hold its bytes in the cache.
	big := genResult(r)
	big.RunID = query.NewRunID()
	text := strings.Repeat("a line of a large answer\n", 8000)
	big.Hits = []query.Hit{{EvidenceID: "ev_big", Path: "big.txt", Text: &text, Span: query.Span{StartLine: 1, EndLine: 8000}}}
	sf = &SearchFit{Format: FormatAgent, MaxTokens: 200000, Counter: "o200k_base"}
	fitted, err = sf.Fit(ctx, query.RankedPage[[]HitCost]{Result: big})
	if err != nil {
		t.Fatal(err)
	}
	if size := len(sf.Out.Structured) + len(sf.Out.Rendered); size <= maxKeptAnswerBytes || fitted.Answer != nil {
		t.Errorf("an answer of %d bytes was kept (%v)", size, fitted.Answer != nil)
	}
}
