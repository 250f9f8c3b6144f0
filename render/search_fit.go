package render

import (
	"bytes"
	"context"
	"slices"
	"strconv"

	"github.com/tychora/tychora/query"
)

// SearchFit fits the answers of query.Searcher (a query.Fitter): each
// ranked page is packed into its budget with Fit, and the per-hit costs a
// fit counted are kept with the cached ranking for the next fit of it. A
// SearchFit serves one search: Prepare resolves its budget and Fit leaves
// the answer in Out.
type SearchFit struct {
	// Format is the render format.
	Format Format
	// MaxTokens and Counter are the budget when the request names none
	// (the workspace's default_max_tokens and token_counter).
	MaxTokens int
	Counter   string
	// Memo shares exact counts between fits (FitInput.Memo).
	Memo *Memo
	// Limit, when set, refuses an answer by its size in bytes (structured
	// plus rendered): the result size cap of the edge.
	Limit func(bytes int) error

	// Out is the fitted answer, once Fit has run.
	Out *FitOutput
}

var _ query.Fitter[[]HitCost] = (*SearchFit)(nil)

// Prepare applies the request's budget over the defaults and checks its
// counter; the costs a fit keeps are per format and counter.
func (f *SearchFit) Prepare(norm query.QueryRequest) (string, error) {
	if b := norm.Budget; b != nil {
		if b.MaxTokens > 0 {
			f.MaxTokens = b.MaxTokens
		}
		if b.Counter != "" {
			f.Counter = b.Counter
		}
	}
	if _, err := CounterFor(f.Counter); err != nil {
		return "", err
	}
	return string(f.Format) + "|" + f.Counter, nil
}

// Fit packs page into the budget on the exact bytes a client receives.
func (f *SearchFit) Fit(ctx context.Context, page query.RankedPage[[]HitCost]) (query.Fitted[[]HitCost], error) {
	out, err := Fit(ctx, FitInput{
		Result:     page.Result,
		Costs:      page.Kept,
		Memo:       f.Memo,
		MaxTokens:  f.MaxTokens,
		Counter:    f.Counter,
		Format:     f.Format,
		Pack:       true,
		NextCursor: page.NextCursor,
	})
	if err != nil {
		return query.Fitted[[]HitCost]{}, err
	}
	f.Out = out
	fitted := query.Fitted[[]HitCost]{Result: out.Result, Keep: out.Costs}
	if len(out.Structured)+len(out.Rendered) <= maxKeptAnswerBytes {
		fitted.Answer = out
	}
	if f.Limit != nil {
		fitted.Refused = f.Limit(len(out.Structured) + len(out.Rendered))
	}
	return fitted, nil
}

var _ query.Reuser[[]HitCost] = (*SearchFit)(nil)

// maxKeptAnswerBytes bounds the answers kept to be given again (structured
// and rendered bytes): each cached ranking keeps at most one, so the
// owner's cache of 1,024 rankings (runtime.searchCacheSize) holds at most
// 64 MiB of them. An answer of 1,000
// tokens is about 8 KB, one of 4,000 about 30 KB; a larger one is fitted
// each time it is asked for.
const maxKeptAnswerBytes = 64 << 10

// AnswerKey names the budget an answer was fitted to: the format, the
// counter and the token budget (the result size cap is checked again at
// each reuse).
func (f *SearchFit) AnswerKey() string {
	return string(f.Format) + "|" + f.Counter + "|" + strconv.Itoa(f.MaxTokens)
}

// runIDHead is how every structured answer starts: its run id is the
// first field (query.QueryResult).
const runIDHead = `{"run_id":"`

// Reuse gives an answer Fit made (a *FitOutput) under runID: the same
// bytes but for the run id, which costs the same tokens whatever its
// digits (query.NewRunID, TestRunIDTokens), so its budget.used_tokens is
// still exact. False when the answer does not start with its run id or
// the new one is of another length.
func (f *SearchFit) Reuse(answer any, runID string) (query.Fitted[[]HitCost], bool) {
	prev, ok := answer.(*FitOutput)
	if !ok || len(runID) != len(prev.Result.RunID) || !bytes.HasPrefix(prev.Structured, []byte(runIDHead+prev.Result.RunID+`"`)) {
		return query.Fitted[[]HitCost]{}, false
	}
	structured := slices.Clone(prev.Structured)
	copy(structured[len(runIDHead):], runID)
	out := &FitOutput{Result: prev.Result, Structured: structured, Rendered: prev.Rendered}
	out.Result.RunID = runID
	f.Out = out
	fitted := query.Fitted[[]HitCost]{Result: out.Result, Answer: out}
	if f.Limit != nil {
		fitted.Refused = f.Limit(len(out.Structured) + len(out.Rendered))
	}
	return fitted, true
}

// Merge keeps, hit by hit, the costs this fit counted (a zero HitCost
// counted nothing) over those kept.
func (f *SearchFit) Merge(kept, fresh []HitCost) []HitCost {
	merged := append([]HitCost(nil), kept...)
	for len(merged) < len(fresh) {
		merged = append(merged, HitCost{})
	}
	for i, c := range fresh {
		if c.Counter != "" {
			merged[i] = c
		}
	}
	return merged
}
