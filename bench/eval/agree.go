package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Rank safety: the pooled search against an exhaustive ranking.
//
// Stage A picks a bounded pool and stage B ranks only that pool. The
// exhaustive engine (query.Engine.Exhaustive) hands stage B every unit that
// matches any clause, so the same final ranking sees everything; where the
// two first pages differ, the pool lost a unit the ranking wanted.

// agreement counts how often the pooled first page equals the exhaustive
// one: the same first hit, and the same set of units on the page.
type agreement struct {
	questions, first, top int
}

func (a *agreement) add(pooled, full []query.Hit) {
	a.questions++
	if len(pooled) > 0 && len(full) > 0 && pooled[0].EvidenceID == full[0].EvidenceID || len(pooled) == 0 && len(full) == 0 {
		a.first++
	}
	ids := func(hs []query.Hit) []string {
		out := make([]string, len(hs))
		for i, h := range hs {
			out[i] = h.EvidenceID
		}
		slices.Sort(out)
		return out
	}
	if slices.Equal(ids(pooled), ids(full)) {
		a.top++
	}
}

func (a agreement) String() string {
	if a.questions == 0 {
		return "no questions"
	}
	return fmt.Sprintf("first hit %d/%d (%.1f%%), top-10 set %d/%d (%.1f%%)",
		a.first, a.questions, 100*float64(a.first)/float64(a.questions),
		a.top, a.questions, 100*float64(a.top)/float64(a.questions))
}

// exhaustiveOf is an engine over the same index that ranks every match.
func exhaustiveOf(e *query.Engine) *query.Engine {
	return &query.Engine{DB: e.DB, Cursors: e.Cursors, Collections: e.Collections, Exhaustive: true}
}

// firstPages runs req's first page (limit 10) on both engines.
func firstPages(ctx context.Context, pooled, full *query.Engine, p workspace.Principal, req query.QueryRequest) ([]query.Hit, []query.Hit, error) {
	req.Limit = query.DefaultLimit
	a, err := pooled.Search(ctx, p, req)
	if err != nil {
		return nil, nil, err
	}
	b, err := full.Search(ctx, p, req)
	if err != nil {
		return nil, nil, err
	}
	if os.Getenv("TYCHORA_EVAL_AGREE_TRACE") != "" && !slices.EqualFunc(a.Hits, b.Hits, func(x, y query.Hit) bool { return x.EvidenceID == y.EvidenceID }) {
		fmt.Printf("  differ: %q\n", req.Question)
		for i := range max(len(a.Hits), len(b.Hits)) {
			var x, y string
			if i < len(a.Hits) {
				x = fmt.Sprintf("%.2f %s %s", a.Hits[i].Score, a.Hits[i].Path, a.Hits[i].Title)
			}
			if i < len(b.Hits) {
				y = fmt.Sprintf("%.2f %s %s", b.Hits[i].Score, b.Hits[i].Path, b.Hits[i].Title)
			}
			fmt.Printf("    %-60.60s | %-60.60s\n", x, y)
		}
	}
	return a.Hits, b.Hits, nil
}

// measureAgreement ranks each question's first page with and without the
// pool, and pages the exhaustive ranking to 10 files for its file ranks.
func measureAgreement(ctx context.Context, e *query.Engine, qs []codeQuestion, profile string, limit int) (agreement, []int, error) {
	var agree agreement
	var ranks []int
	full := exhaustiveOf(e)
	p := workspace.Principal{ID: "eval", Grant: workspace.GrantRead}
	for _, q := range qs {
		req := query.QueryRequest{Question: q.text, Profile: profile}
		a, b, err := firstPages(ctx, e, full, p, req)
		if err != nil {
			return agree, nil, fmt.Errorf("%d: %w", q.line, err)
		}
		agree.add(a, b)
		req.Limit = limit
		files, _, err := tychoraFiles(ctx, full, p, req)
		if err != nil {
			return agree, nil, fmt.Errorf("%d: %w", q.line, err)
		}
		ranks = append(ranks, fileRank(files, q.want))
	}
	return agree, ranks, nil
}
