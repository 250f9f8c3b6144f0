package render

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/tychora/tychora/query"
)

// realisticHits returns n hits shaped like lexical search results over a
// Go repository and its docs: code chunks of about 30 lines and markdown
// sections of about 10, about 400 tokens each.
func realisticHits(n int) []query.Hit {
	hits := make([]query.Hit, n)
	for i := range hits {
		var b strings.Builder
		h := query.Hit{
			EvidenceID: fmt.Sprintf("ev_01J9Z%06dQ4M8KX7", i), SourceID: "src_01J9Z00000REPO", RevisionID: "rev_01J9Z0000042",
			Span: query.Span{StartLine: 40 + 7*i}, Score: 17.25 - 0.75*float64(i),
			Hash: fmt.Sprintf("sha256:%064x", i*7919+1),
		}
		if i%3 == 2 {
			h.Kind, h.Path, h.Title = "markdown", fmt.Sprintf("docs/guide-%d.md", i%4), "Operating tychora"
			h.HeadingPath = []string{"Operating tychora", fmt.Sprintf("Budgets and rendering (%d)", i)}
			h.Snippet = "the budget counts what the client receives: the exact bytes of the structured JSON"
			for l := 0; l < 4; l++ {
				fmt.Fprintf(&b, "The budget counts what the client receives (%d): the exact bytes of the `structuredContent` JSON as it travels, plus the rendered text; <b>tags</b> & entities stay escaped.\n", l)
				if l%3 == 2 {
					b.WriteString("\n")
				}
			}
		} else {
			h.Kind, h.Path, h.Title = "code", fmt.Sprintf("internal/search/handler_%d.go", i%5), "handler.go"
			h.HeadingPath = []string{fmt.Sprintf("func (s *Server) handleSearch%d", i)}
			h.Snippet = "func (s *Server) handleSearch(ctx context.Context, req *SearchRequest) (*SearchResult, error)"
			fmt.Fprintf(&b, "// handleSearch%d answers one search request within its token budget.\n", i)
			fmt.Fprintf(&b, "func (s *Server) handleSearch%d(ctx context.Context, req *SearchRequest) (*SearchResult, error) {\n", i)
			for l := 0; l < 3; l++ {
				fmt.Fprintf(&b, "\tif n := len(req.Filters.Paths); n > %d && req.Limit < %d { // café ≤ naïve\n\t\treturn nil, fmt.Errorf(\"search: %%w\", errTooMany)\n\t}\n", l, l*10)
				if l == 1 {
					b.WriteString("\n")
				}
			}
			b.WriteString("\treturn s.index.Search(ctx, req)\n}\n")
		}
		text := b.String()
		h.Text = &text
		h.Span.EndLine = h.Span.StartLine + strings.Count(text, "\n") - 1
		hits[i] = h
	}
	return hits
}

func benchResult(hits []query.Hit) query.QueryResult {
	cursor := "c1.eyJvIjoxNSwicSI6IjlmMmMifQ"
	return query.QueryResult{
		RunID: "run_01J9Z7Q4M8KX7PAYV3B2CD5EFG",
		Request: query.RequestEcho{Question: "how does the search handler apply the token budget?",
			Modalities: []string{"lexical"}, Profile: "balanced", Limit: len(hits)},
		Hits: hits, TotalMatches: 87, NextCursor: &cursor,
	}
}

// BenchmarkFit4000 fits 20 hits (about 7,800 tokens) into a 4,000-token
// budget with cached per-hit costs: the query cache's common case.
func BenchmarkFit4000(b *testing.B) {
	hits := realisticHits(20)
	for _, f := range []Format{FormatNone, FormatAgent, FormatMarkdown, FormatHierarchical} {
		name := string(f)
		if f == FormatNone {
			name = "json"
		}
		for _, counter := range []string{"o200k_base", "cl100k_base"} {
			costs := make([]HitCost, len(hits))
			for i, h := range hits {
				c, err := hitCostOf(counter, f, h)
				if err != nil {
					b.Fatal(err)
				}
				costs[i] = c
			}
			in := FitInput{Result: benchResult(hits), Costs: costs, MaxTokens: 4000, Counter: counter, Format: f}
			b.Run(name+"/"+counter, func(b *testing.B) {
				ctx := context.Background()
				var used int
				for b.Loop() {
					out, err := Fit(ctx, in)
					if err != nil {
						b.Fatal(err)
					}
					used = out.Result.Budget.UsedTokens
				}
				b.ReportMetric(float64(used), "tokens")
			})
		}
	}
}

// BenchmarkFit4000Uncached is BenchmarkFit4000 without cached costs: every
// hit up to the cut is counted once.
func BenchmarkFit4000Uncached(b *testing.B) {
	in := FitInput{Result: benchResult(realisticHits(20)), MaxTokens: 4000}
	ctx := context.Background()
	for b.Loop() {
		if _, err := Fit(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCount counts the structured JSON of a 4,000-token answer whole.
func BenchmarkCount(b *testing.B) {
	out, err := Fit(context.Background(), FitInput{Result: benchResult(realisticHits(20)), MaxTokens: 4000})
	if err != nil {
		b.Fatal(err)
	}
	s := string(out.Structured)
	for _, counter := range []string{"o200k_base", "cl100k_base"} {
		c, err := CounterFor(counter)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(counter, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			var n int
			for b.Loop() {
				n = c.Count(s)
			}
			b.ReportMetric(float64(n), "tokens")
		})
	}
}

// BenchmarkFit1000Cold fits a fresh ranking of 10 hits into 1,000 tokens,
// without cached costs or a memo: a cold search at the budget agents
// commonly ask for (bench/load.sh scenario c).
func BenchmarkFit1000Cold(b *testing.B) {
	for _, f := range formats {
		in := FitInput{Result: benchResult(realisticHits(10)), MaxTokens: 1000, Format: f}
		b.Run(string(f), func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := Fit(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFit4000Cursors is BenchmarkFit4000 (agent@1, o200k_base) with
// the page cursors of a search (FitInput.NextCursor): the tail of every
// answer size is counted with its own cursor. Compare with
// BenchmarkFit4000/agent/o200k_base.
func BenchmarkFit4000Cursors(b *testing.B) {
	hits := realisticHits(20)
	costs := make([]HitCost, len(hits))
	for i, h := range hits {
		c, err := hitCostOf("o200k_base", FormatAgent, h)
		if err != nil {
			b.Fatal(err)
		}
		costs[i] = c
	}
	// Search cursors are number cursors: 45 digits.
	cursor := func(n int) *string {
		sum := sha256.Sum256([]byte(strconv.Itoa(15 + n)))
		c := fmt.Sprintf("%06d%039s", 15+n, new(big.Int).SetBytes(sum[:16]).String())
		return &c
	}
	in := FitInput{Result: benchResult(hits), Costs: costs, MaxTokens: 4000, Counter: "o200k_base", Format: FormatAgent, NextCursor: cursor}
	ctx := context.Background()
	for b.Loop() {
		if _, err := Fit(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// focused gives each hit the focus a search gives it (Hit.Focus): its
// second and third lines, the question's best matches.
func focused(hits []query.Hit) []query.Hit {
	for i := range hits {
		f := query.Span{StartLine: hits[i].Span.StartLine + 1, EndLine: hits[i].Span.StartLine + 2}
		hits[i].Focus = &f
	}
	return hits
}

// BenchmarkFitPacked is the fit a search runs (render.SearchFit): packed
// (FitInput.Pack), so that as many places as the budget can show each
// show at least their focus, under agent@1 and as JSON, at 1,000 tokens
// cold (no cached costs, no memo) and at 4,000 with cached costs.
func BenchmarkFitPacked(b *testing.B) {
	for _, f := range []Format{FormatNone, FormatAgent} {
		name := string(f)
		if f == FormatNone {
			name = "json"
		}
		b.Run("1000Cold/"+name, func(b *testing.B) {
			in := FitInput{Result: benchResult(focused(realisticHits(10))), MaxTokens: 1000, Format: f, Pack: true}
			benchFit(b, in)
		})
		b.Run("4000/"+name, func(b *testing.B) {
			hits := focused(realisticHits(20))
			costs := make([]HitCost, len(hits))
			for i, h := range hits {
				c, err := hitCostOf(DefaultCounter, f, h)
				if err != nil {
					b.Fatal(err)
				}
				costs[i] = c
			}
			in := FitInput{Result: benchResult(hits), Costs: costs, MaxTokens: 4000, Format: f, Pack: true}
			benchFit(b, in)
		})
	}
}

// benchFit fits in in a loop and reports the tokens and places of the
// answer.
func benchFit(b *testing.B, in FitInput) {
	ctx := context.Background()
	var used, n int
	for b.Loop() {
		out, err := Fit(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		used, n = out.Result.Budget.UsedTokens, len(out.Result.Hits)
	}
	b.ReportMetric(float64(used), "tokens")
	b.ReportMetric(float64(n), "places")
}
