package runtime

import (
	"context"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/workspace"
)

// flightResult is what a shared ranking gives each of its callers: the
// cache entry, and whether this ranking put it there (its stale flags are
// then as fresh as the ranking).
type flightResult struct {
	entry    *cacheEntry
	inserted bool
}

// Search ranks, fits the answer to its token budget on the exact bytes a
// client receives, records the run, and returns what to send.
func (s *Local) Search(ctx context.Context, args interfaces.SearchArgs) (interfaces.SearchOutput, error) {
	start := time.Now()
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		return interfaces.SearchOutput{}, err
	}
	if err := p.Require(workspace.GrantRead); err != nil {
		return interfaces.SearchOutput{}, err
	}
	format, err := render.ParseFormat(args.Render)
	if err != nil {
		return interfaces.SearchOutput{}, err
	}
	own := s.owner
	var (
		req      query.QueryRequest
		replayOf *string
	)
	switch {
	case args.Request != nil && args.ReplayRunID != "":
		return interfaces.SearchOutput{}, workspace.Errorf(workspace.CodeInvalidArgument, "give request or replay_run_id, not both")
	case args.Request != nil:
		req = *args.Request
	case args.ReplayRunID != "":
		run, err := own.runs.GetRun(ctx, p, args.ReplayRunID)
		if err != nil {
			return interfaces.SearchOutput{}, err
		}
		if !run.Retained {
			return interfaces.SearchOutput{}, workspace.Errorf(workspace.CodeReplayUnavailable,
				"run %s kept no request body (set query_history to \"full\" to keep them)", run.ID)
		}
		req = *run.Request
		replayOf = &run.ID
	default:
		return interfaces.SearchOutput{}, workspace.Errorf(workspace.CodeInvalidArgument, `give request ({"question":"..."}) or replay_run_id`)
	}
	norm, err := query.Normalize(req)
	if err != nil {
		return interfaces.SearchOutput{}, err
	}
	maxTokens, counter := own.cfg().DefaultMaxTokens, own.cfg().TokenCounter
	if b := norm.Budget; b != nil {
		if b.MaxTokens > 0 {
			maxTokens = b.MaxTokens
		}
		if b.Counter != "" {
			counter = b.Counter
		}
	}
	if _, err := render.CounterFor(counter); err != nil {
		return interfaces.SearchOutput{}, err
	}

	// The ranking, cached per index generation, scope and request.
	key := strconv.FormatInt(own.generation.Load(), 10) + "|" + workspace.ScopeKey(p) + "|" + query.RequestHash(norm)
	entry := own.cache.get(key)
	fresh := false
	// A search the cache cannot answer waits for its caller's turn
	// (rankGate), which covers the ranking and the fit: the two parts
	// whose cost grows with the request. An answer from the cache is
	// quick and takes no turn.
	endTurn := func() {}
	defer func() { endTurn() }()
	if entry == nil {
		release, err := own.rankGate.acquire(ctx, callerKey(ctx, p), query.Heavy(norm))
		if err != nil {
			return interfaces.SearchOutput{}, err
		}
		endTurn = sync.OnceFunc(release)
		// Ranked while this caller waited (its own earlier search, say)?
		entry = own.cache.peek(key)
	}
	if entry == nil {
		// Identical questions asked at once are ranked once
		// (rankFlights): a caller who gives up does not fail the others,
		// and the ranking stops when every caller has gone. A panic in it
		// is an INTERNAL error for every waiter, not the end of the owner.
		fr, err := own.flights.do(ctx, own.life, key, func(fctx context.Context) (res flightResult, err error) {
			defer func() {
				if rec := recover(); rec != nil {
					own.log.Error("search ranking panicked", workspace.LogPanic, rec, workspace.LogStack, string(debug.Stack()))
					res, err = flightResult{}, workspace.Errorf(workspace.CodeInternal, "internal error")
				}
			}()
			own.rankings.Add(1)
			ranked, err := own.engine.Search(fctx, p, norm)
			if err != nil {
				return flightResult{}, err
			}
			e, inserted := own.cache.put(key, ranked)
			return flightResult{e, inserted}, nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return interfaces.SearchOutput{}, ctx.Err()
			}
			return interfaces.SearchOutput{}, err
		}
		entry, fresh = fr.entry, fr.inserted
	}
	r := entry.ranked
	hits := slices.Clone(r.Hits)
	if !fresh {
		// A ranking from the cache: its files are checked against the disk
		// now. (A fresh one was, while it was ranked.)
		states, err := entry.fileStates(ctx, own.db)
		if err != nil {
			return interfaces.SearchOutput{}, err
		}
		query.MarkStale(hits, states)
	}
	runID := query.NewRunID()
	fit, err := render.Fit(ctx, render.FitInput{
		Result: query.QueryResult{
			RunID:          runID,
			Request:        r.Echo,
			Hits:           hits,
			TotalMatches:   r.TotalMatches,
			NextCursor:     r.NextCursor,
			PendingChanges: own.pendingChanges(p, norm.Filters),
		},
		Costs:      entry.costsFor(format, counter),
		Memo:       own.memo,
		MaxTokens:  maxTokens,
		Counter:    counter,
		Format:     format,
		Pack:       true,
		NextCursor: own.pageCursor(p, &r),
	})
	if err != nil {
		return interfaces.SearchOutput{}, err
	}
	endTurn()
	entry.keepCosts(format, counter, fit.Costs)
	if err := interfaces.CheckResultSize(len(fit.Structured) + len(fit.Rendered)); err != nil {
		return interfaces.SearchOutput{}, err
	}
	run := query.Run{
		ID: runID, CreatedAt: start, Principal: p.ID, RequestHash: query.RequestHash(norm), Request: &norm,
		Render: string(format), TotalMatches: fit.Result.TotalMatches, UsedTokens: fit.Result.Budget.UsedTokens,
		Truncated: fit.Result.Truncated, DurationUS: time.Since(start).Microseconds(), ReplayOf: replayOf,
		Collections: query.RunCollections(p, norm),
	}
	// A citation under a render carries no hash: the run keeps the
	// evidence's, from the ranking, in the answer's order.
	for i, h := range fit.Result.Hits {
		run.Hits = append(run.Hits, query.RunHit{EvidenceID: h.EvidenceID, Hash: hits[i].Hash, Score: h.Score})
	}
	own.runs.Record(run)
	out := interfaces.SearchOutput{Result: fit.Result, Structured: fit.Structured}
	if format != render.FormatNone {
		out.Rendered = &fit.Rendered
	}
	return out, nil
}

// pageCursor gives render.Fit the next page's cursor when the budget
// returns only part of the page: the next page starts right after the last
// hit returned, so that paging never skips what a budget left out. When no
// hit fits at all, it starts one further (that hit cannot fit this budget,
// and a cursor back to the same page would never end).
func (own *Owner) pageCursor(p workspace.Principal, r *query.Ranked) func(int) *string {
	return func(returned int) *string {
		next := max(returned, 1)
		if next >= len(r.Hits) {
			return r.NextCursor
		}
		c, err := own.engine.PageCursor(p, r.Request, r.Offset+next)
		if err != nil {
			own.log.Error("seal search cursor", workspace.LogErr, err)
			return nil
		}
		return &c
	}
}

// rankSlots is how many rankings may run at once with a read pool of
// readers connections.
func rankSlots(readers int) int {
	return max(1, readers-1)
}

// models answers discover models: the token counters.
func models() []any {
	var out []any
	for _, c := range render.Counters() {
		out = append(out, c)
	}
	return out
}

// profiles answers discover profiles.
func profiles() []any {
	var out []any
	for _, p := range query.Profiles() {
		out = append(out, p)
	}
	return out
}
