package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// Budgeted answers: does the first relevant document reach the client?
//
// For each query and budget, the eval makes the call a client makes when
// it asks with a budget only — the request {"question": q, "budget":
// {"max_tokens": B}} (plus -profile when given), so the page a budget
// without a limit gets (query.BudgetPage: max_tokens/60 within 10..50) and the workspace's
// default token counter, o200k_base — with render
// agent@1, and builds the answer as runtime.(*Local).Search does:
// query.Normalize, Engine.Search, then render.Fit over the ranked page with
// a fresh run id, the request echo, total_matches and next_cursor, the
// budget's max_tokens, the counter and the format, packed (FitInput.Pack),
// sharing one render.Memo
// (the service's cached hit costs and Memo change the cost of a fit, never
// its answer). The hits of the fitted answer (fit.Result.Hits, whole or
// cut at a line boundary) map to documents by path, as collect does.
//
// The ranking is deterministic, and so is the answer: every answer has a
// new run id, but every run id costs the same tokens (query.NewRunID), so
// the room left for hits does not change. Each query is still ranked once
// per budget and fitted -budgetreps times, each fit with a new run id, and
// the shares are means over those answers (with the range of the counts);
// the range is now a check that the answers agree.
//
//   - The first relevant document of a query is the best-ranked document
//     with a qrels grade > 0 in the eval's own ranking of that query (the
//     depth-100 run that nDCG@10 and Recall@100 score: documents by best
//     hit score, ties by document id descending). The query counts when
//     that document has a hit in the fitted answer. A query whose ranking
//     holds no relevant document counts as a miss.
//   - Any relevant: the fitted answer holds a hit of some document with a
//     qrels grade > 0.
//   - The denominator is every query with a relevant document in the
//     qrels (the queries nDCG@10 averages over).
//
// The answer counted is the one produced under the budget: the run fails
// if budget.used_tokens exceeds max_tokens, or if a whole recount of the
// bytes sent (structured JSON plus rendered text) does.

type budgetStats struct {
	budget     int
	queries    int
	reps       int
	first, any []int // per repetition: answers holding the first / any relevant document
	firstCut   int   // answers holding the first relevant document only as a cut hit (all repetitions)
	pageFirst  int   // the page before fitting holds the first relevant document
	pageAny    int
	noneRanked int // queries whose ranking holds no relevant document
	hitsKept   int // over all repetitions
	hitsAll    int
	truncated  int // answers marked truncated (all repetitions)
	usedSum    int // over all repetitions
	usedMax    int
	recount    int // answers whose whole recount ≠ budget.used_tokens (still within budget)
}

func parseBudgets(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-budgets: %q is not a positive number of tokens", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// firstRelevant is the best-ranked relevant document of a run, "" if none.
func firstRelevant(run queryRun, rel map[string]int) string {
	for _, d := range rankDocs(run.hits, run.id, false) {
		if rel[d.doc] > 0 {
			return d.doc
		}
	}
	return ""
}

func budgetAnswers(ctx context.Context, engine *query.Engine, p workspace.Principal, queries []evalQuery,
	runs []queryRun, qrels map[string]map[string]int, profile string, budgets []int, reps int) ([]budgetStats, error) {
	counterName := workspace.DefaultTokenCounter
	counter, err := render.CounterFor(counterName)
	if err != nil {
		return nil, err
	}
	format := budgetFormat
	memo := render.NewMemo(32 << 20)
	byID := map[string]queryRun{}
	for _, r := range runs {
		byID[r.id] = r
	}
	var out []budgetStats
	for _, b := range budgets {
		st := budgetStats{budget: b, reps: reps, first: make([]int, reps), any: make([]int, reps)}
		for _, q := range queries {
			rel := qrels[q.ID]
			if !hasRelevant(rel) {
				continue
			}
			st.queries++
			first := firstRelevant(byID[q.ID], rel)
			if first == "" {
				st.noneRanked++
			}

			req := query.QueryRequest{Question: q.Text, Profile: profile, Budget: &query.Budget{MaxTokens: b}}
			norm, err := query.Normalize(req)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.ID, err)
			}
			maxTokens := norm.Budget.MaxTokens
			r, err := engine.Search(ctx, p, norm)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.ID, err)
			}
			page := map[string]bool{}
			for _, d := range collect(nil, r.Hits) {
				page[d.doc] = true
			}
			if first != "" && page[first] {
				st.pageFirst++
			}
			for d := range page {
				if rel[d] > 0 {
					st.pageAny++
					break
				}
			}
			st.hitsAll += len(r.Hits)

			// Each repetition is the answer to one call: a new run id, whose
			// token count moves the room left for hits by a few tokens.
			for rep := range reps {
				fit, err := render.Fit(ctx, render.FitInput{
					Result: query.QueryResult{
						RunID:        query.NewRunID(),
						Request:      r.Echo,
						Hits:         slices.Clone(r.Hits),
						TotalMatches: r.TotalMatches,
						NextCursor:   r.NextCursor,
					},
					Memo:      memo,
					MaxTokens: maxTokens,
					Counter:   counterName,
					Format:    format,
					Pack:      true,
				})
				if err != nil {
					return nil, fmt.Errorf("query %s, budget %d: %w", q.ID, b, err)
				}
				if err := render.CheckResultSize(len(fit.Structured) + len(fit.Rendered)); err != nil {
					return nil, fmt.Errorf("query %s, budget %d: %w", q.ID, b, err)
				}
				used := fit.Result.Budget.UsedTokens
				if fit.Result.Budget.MaxTokens != b || used > b {
					return nil, fmt.Errorf("query %s: the answer for budget %d reports max_tokens %d, used_tokens %d: over budget",
						q.ID, b, fit.Result.Budget.MaxTokens, used)
				}
				whole := counter.CountBytes(fit.Structured) + counter.Count(fit.Rendered)
				if whole > b {
					return nil, fmt.Errorf("query %s: the answer for budget %d counts %d tokens recounted whole (used_tokens says %d): over budget",
						q.ID, b, whole, used)
				}
				if whole != used {
					st.recount++
				}
				if len(fit.Result.Hits) > 0 && fit.Rendered == "" {
					return nil, fmt.Errorf("query %s, budget %d: no %s text rendered", q.ID, b, format)
				}

				// Documents in the answer: true when some hit of it is whole.
				kept := map[string]bool{}
				for _, h := range fit.Result.Hits {
					d := collect(nil, []query.Hit{h})[0].doc
					kept[d] = kept[d] || !h.Truncated
				}
				if isWhole, ok := kept[first]; ok && first != "" {
					st.first[rep]++
					if !isWhole {
						st.firstCut++
					}
				}
				for d := range kept {
					if rel[d] > 0 {
						st.any[rep]++
						break
					}
				}
				st.hitsKept += len(fit.Result.Hits)
				if fit.Result.Truncated {
					st.truncated++
				}
				st.usedSum += used
				st.usedMax = max(st.usedMax, used)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

func hasRelevant(rel map[string]int) bool {
	for _, g := range rel {
		if g > 0 {
			return true
		}
	}
	return false
}

func printBudgetStats(stats []budgetStats, limit int) {
	if len(stats) == 0 {
		return
	}
	// share is the mean over the repetitions, with the counts' range.
	share := func(ns []int, of int) string {
		if of == 0 || len(ns) == 0 {
			return "—"
		}
		sum := 0
		for _, n := range ns {
			sum += n
		}
		lo, hi := slices.Min(ns), slices.Max(ns)
		counts := strconv.Itoa(lo)
		if hi != lo {
			counts += "–" + strconv.Itoa(hi)
		}
		return fmt.Sprintf("%.3f (%s/%d)", float64(sum)/float64(len(ns)*of), counts, of)
	}
	s0 := stats[0]
	fmt.Printf("  %s answers under a token budget: request = question + budget.max_tokens (page of up to %d, counter %s),\n", budgetFormat, limit, workspace.DefaultTokenCounter)
	fmt.Printf("  ranked by the engine and fitted by render.Fit as the service does, %d answers (run ids) per query and budget.\n", s0.reps)
	fmt.Printf("  first relevant = the best-ranked relevant document of the ranking scored above; a query counts when the\n")
	fmt.Printf("  answer holds a hit of it (whole or cut); a query with no relevant document ranked is a miss.\n")
	fmt.Printf("  Shares are means over the answers (range of query counts).\n")
	fmt.Printf("    %-7s  %-22s  %-22s  %-13s  %-14s  %s\n", "budget", "first relevant", "any relevant", "hits/answer", "used mean/max", "truncated")
	for _, s := range stats {
		n := max(s.queries*s.reps, 1)
		fmt.Printf("    %-7d  %-22s  %-22s  %-13s  %-14s  %d/%d\n", s.budget, share(s.first, s.queries), share(s.any, s.queries),
			fmt.Sprintf("%.2f of %.2f", float64(s.hitsKept)/float64(n), float64(s.hitsAll)/float64(max(s.queries, 1))),
			fmt.Sprintf("%d/%d", s.usedSum/n, s.usedMax), s.truncated, s.queries*s.reps)
	}
	for _, s := range stats {
		fmt.Printf("    budget %d: first relevant only as a cut hit in %d of %d answers; whole recount ≠ used_tokens in %d (all within budget)\n",
			s.budget, s.firstCut, s.queries*s.reps, s.recount)
	}
	fmt.Printf("    the page of %d before fitting: first relevant %s, any relevant %s; no relevant document ranked: %d queries\n",
		limit, share([]int{s0.pageFirst}, s0.queries), share([]int{s0.pageAny}, s0.queries), s0.noneRanked)
}

// budgetFormat is the render of the budgeted answers (-render).
var budgetFormat = render.FormatAgent

// fitBudgeted is the answer a client gets when it asks question with a
// budget only: normalized, ranked, and fitted (packed) as
// runtime.(*Local).Search does.
func fitBudgeted(ctx context.Context, engine *query.Engine, p workspace.Principal, question, profile string, budget int, memo *render.Memo) (*render.FitOutput, error) {
	norm, err := query.Normalize(query.QueryRequest{Question: question, Profile: profile, Budget: &query.Budget{MaxTokens: budget}})
	if err != nil {
		return nil, err
	}
	r, err := engine.Search(ctx, p, norm)
	if err != nil {
		return nil, err
	}
	fit, err := render.Fit(ctx, render.FitInput{
		Result:    query.QueryResult{RunID: query.NewRunID(), Request: r.Echo, Hits: slices.Clone(r.Hits), TotalMatches: r.TotalMatches, NextCursor: r.NextCursor},
		Memo:      memo,
		MaxTokens: norm.Budget.MaxTokens,
		Counter:   workspace.DefaultTokenCounter,
		Format:    budgetFormat,
		Pack:      true,
	})
	if err != nil {
		return nil, err
	}
	c, err := render.CounterFor(workspace.DefaultTokenCounter)
	if err != nil {
		return nil, err
	}
	if whole := c.CountBytes(fit.Structured) + c.Count(fit.Rendered); whole != fit.Result.Budget.UsedTokens || whole > budget {
		return nil, fmt.Errorf("the answer for budget %d recounts %d tokens, used_tokens says %d", budget, whole, fit.Result.Budget.UsedTokens)
	}
	// A citation names its file by its place on disk; the measures match
	// paths relative to the source, which the ranking's hits hold.
	paths := make(map[string]string, len(r.Hits))
	for _, h := range r.Hits {
		paths[h.EvidenceID] = h.Path
	}
	for i := range fit.Result.Hits {
		if h := &fit.Result.Hits[i]; h.Path == "" {
			h.Path = paths[h.EvidenceID]
		}
	}
	return fit, nil
}
