package query

import (
	"context"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tychora/tychora/workspace"
)

// Ranker ranks a request that Normalize returned, for a caller, and seals
// the cursors into its pages: *Engine.
type Ranker interface {
	SearchNormalized(ctx context.Context, p workspace.Principal, norm QueryRequest) (Ranked, error)
	PageCursor(p workspace.Principal, norm QueryRequest, offset int) (string, error)
}

// Fitter makes the answer a client receives from a ranked page: the
// budget fitting of package render, which sits above this one
// (render.SearchFit). C is what a fit keeps with a cached ranking for the
// next fit of it (render's per-hit token costs).
type Fitter[C any] interface {
	// Prepare checks what the fit needs of the normalized request (its
	// budget) before anything is ranked, and names what the fit keeps
	// with a ranking: fits under one name share it.
	Prepare(norm QueryRequest) (keep string, err error)
	// Fit fits page; page.Kept is what earlier fits kept under the name
	// Prepare gave (the zero C at first).
	Fit(ctx context.Context, page RankedPage[C]) (Fitted[C], error)
	// Merge folds what one fit counted into what was kept.
	Merge(kept, fresh C) C
}

// Reuser is a Fitter whose answers the Searcher may give again. An answer
// to a cached ranking depends on the page (its hits, their stale flags,
// pending_changes), on what AnswerKey names, and on the run id only
// through its cost in tokens, which is the same for every run id
// (NewRunID): a page fitted once under the same key is the same answer
// under a new run id, without fitting it again.
type Reuser[C any] interface {
	// AnswerKey names what an answer depends on besides the page and the
	// name Prepare gave ("" never reuses one). Call it after Prepare.
	AnswerKey() string
	// Reuse gives the answer an earlier Fit left (Fitted.Answer) under
	// runID; false when it cannot, and the page is fitted again.
	Reuse(answer any, runID string) (Fitted[C], bool)
}

// RankedPage is a ranked page as a Fitter gets it.
type RankedPage[C any] struct {
	// Result is the answer before fitting: its run id, the request echo,
	// the page's hits (full text, stale flags checked), total_matches,
	// pending_changes and next_cursor.
	Result QueryResult
	// Kept is what earlier fits of this ranking kept.
	Kept C
	// NextCursor gives the cursor of the page that follows the first
	// returned hits (render.FitInput.NextCursor).
	NextCursor func(returned int) *string
}

// Fitted is what a Fitter made of a page.
type Fitted[C any] struct {
	// Result is the answer as sent: its hits, totals and budget are what
	// the run records.
	Result QueryResult
	// Keep is what this fit counted, merged into what the ranking keeps.
	Keep C
	// Refused, when set, is why the answer cannot be sent (it is over the
	// result size cap): what the fit counted is still kept, and no run is
	// recorded.
	Refused error
	// Answer, when set, is what a Reuser needs to give this answer again
	// (Reuse); the Searcher keeps it with the ranking.
	Answer any
}

// SearchInput is one search: a request or the id of a run to replay.
type SearchInput struct {
	Request     *QueryRequest
	ReplayRunID string
	// Render names the render format, recorded with the run.
	Render string
	// Unsynced counts the files changed on disk and not yet synced among
	// the sources keep accepts (sources.Watcher.Pending); nil counts none.
	Unsynced func(keep func(sourceID, collection string) bool) int
}

// SearcherOptions configure a Searcher.
type SearcherOptions struct {
	// Ranker ranks (the Engine); DB holds the index's file records, read
	// for the stale flags of a cached ranking.
	Ranker Ranker
	DB     *workspace.DB
	// Runs records every answer and keeps the requests replay reads.
	Runs *Recorder
	// Slots is how many searches rank and fit at once (at least 1).
	Slots int
	// CacheSize is how many rankings are kept (at least 1).
	CacheSize int
	// Logger receives panics of shared rankings; nil is silent.
	Logger *slog.Logger
	// Foreground, when set, counts every search from its cache miss to
	// the end of its turn: background work gives way to them.
	Foreground *workspace.Foreground
}

// Searcher answers searches (docs/architecture.md, "Search service"): it
// resolves a replay, normalizes the request once, admits the search in
// its caller's turn (rankGate), ranks each question once per index
// generation and scope however many callers ask it at once (searchCache,
// rankFlights), refreshes the stale flags of a cached ranking, has the
// answer fitted, and records the run. A Searcher is safe for concurrent
// use.
type Searcher[C any] struct {
	ranker  Ranker
	db      *workspace.DB
	runs    *Recorder
	log     *slog.Logger
	gate    *rankGate
	fg      *workspace.Foreground
	cache   *searchCache[C]
	flights rankFlights[C]
	// generation moves whenever the index may have changed: it is part
	// of every cache key.
	generation atomic.Int64
	// life is the owner's lifetime: rankings shared by several callers
	// run on it.
	life context.Context
}

// NewSearcher returns a Searcher whose shared rankings run on ctx: the
// owner's lifetime, whose end cancels them.
func NewSearcher[C any](ctx context.Context, o SearcherOptions) *Searcher[C] {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Searcher[C]{
		ranker: o.Ranker, db: o.DB, runs: o.Runs, log: log,
		gate:  newRankGate(max(1, o.Slots)),
		fg:    o.Foreground,
		cache: newSearchCache[C](max(1, o.CacheSize)),
		life:  ctx,
	}
}

// IndexChanged moves the generation: no ranking cached before it answers
// again. Call it whenever a revision is applied, a source removed or the
// collections change.
func (s *Searcher[C]) IndexChanged() { s.generation.Add(1) }

// CacheStats returns the cache's hit and miss counts: every search that
// gets as far as ranking counts once.
func (s *Searcher[C]) CacheStats() (hits, misses uint64) { return s.cache.stats() }

// Search answers in for p, fitted by fit, and records the run. The caller
// has checked p's grant.
func (s *Searcher[C]) Search(ctx context.Context, p workspace.Principal, in SearchInput, fit Fitter[C]) (QueryResult, error) {
	start := time.Now()
	req, replayOf, err := s.request(ctx, p, in)
	if err != nil {
		return QueryResult{}, err
	}
	norm, err := Normalize(req)
	if err != nil {
		return QueryResult{}, err
	}
	keep, err := fit.Prepare(norm)
	if err != nil {
		return QueryResult{}, err
	}
	reqHash := RequestHash(norm)
	key := strconv.FormatInt(s.generation.Load(), 10) + "|" + workspace.ScopeKey(p) + "|" + reqHash
	t, err := s.ranked(ctx, p, norm, key)
	// The turn covers the ranking and the fit: the two parts whose cost
	// grows with the request.
	defer t.endTurn()
	if err != nil {
		return QueryResult{}, err
	}
	r := t.entry.ranked
	hits := slices.Clone(r.Hits)
	if !t.fresh {
		// A ranking from the cache: its files are checked against the disk
		// now. (A fresh one was, while it was ranked.)
		states, err := t.entry.fileStates(ctx, s.db)
		if err != nil {
			return QueryResult{}, err
		}
		MarkStale(hits, states)
	}
	page := RankedPage[C]{
		Result: QueryResult{
			RunID:          NewRunID(),
			Request:        r.Echo,
			Hits:           hits,
			TotalMatches:   r.TotalMatches,
			NextCursor:     r.NextCursor,
			PendingChanges: unsynced(in.Unsynced, p, norm.Filters),
		},
		Kept:       t.entry.kept(keep),
		NextCursor: s.pageCursor(p, &r),
	}
	// The answer of an earlier fit of this page, under the new run id.
	re, _ := fit.(Reuser[C])
	var answerKey string
	if re != nil {
		if k := re.AnswerKey(); k != "" {
			answerKey = keep + "\x00" + k + "\x00" + pageSignature(&page.Result)
			if ans := t.entry.answer(answerKey); ans != nil {
				if fitted, ok := re.Reuse(ans, page.Result.RunID); ok {
					t.endTurn()
					if fitted.Refused != nil {
						return QueryResult{}, fitted.Refused
					}
					s.record(p, norm, reqHash, in.Render, start, replayOf, hits, fitted.Result)
					return fitted.Result, nil
				}
			}
		}
	}
	fitted, err := fit.Fit(ctx, page)
	if err != nil {
		return QueryResult{}, err
	}
	t.endTurn()
	t.entry.keep(keep, fitted.Keep, fit.Merge)
	if fitted.Refused != nil {
		return QueryResult{}, fitted.Refused
	}
	if answerKey != "" && fitted.Answer != nil {
		t.entry.keepAnswer(answerKey, fitted.Answer)
	}
	s.record(p, norm, reqHash, in.Render, start, replayOf, hits, fitted.Result)
	return fitted.Result, nil
}

// pageSignature is what an answer depends on of a page besides its
// ranking: each hit's stale reason and the pending changes.
func pageSignature(r *QueryResult) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(r.PendingChanges))
	for i := range r.Hits {
		b.WriteByte('|')
		if r.Hits[i].Stale {
			b.WriteString("s:")
		}
		if r.Hits[i].StaleReason != nil {
			b.WriteString(*r.Hits[i].StaleReason)
		}
	}
	return b.String()
}

// request is the request in asks for: its own, or the kept request of the
// run it replays (and that run's id).
func (s *Searcher[C]) request(ctx context.Context, p workspace.Principal, in SearchInput) (QueryRequest, *string, error) {
	switch {
	case in.Request != nil && in.ReplayRunID != "":
		return QueryRequest{}, nil, workspace.Errorf(workspace.CodeInvalidArgument, "give request or replay_run_id, not both")
	case in.Request != nil:
		return *in.Request, nil, nil
	case in.ReplayRunID != "":
		run, err := s.runs.GetRun(ctx, p, in.ReplayRunID)
		if err != nil {
			return QueryRequest{}, nil, err
		}
		if !run.Retained {
			return QueryRequest{}, nil, workspace.Errorf(workspace.CodeReplayUnavailable,
				"run %s kept no request body (set query_history to \"full\" to keep them)", run.ID)
		}
		return *run.Request, &run.ID, nil
	}
	return QueryRequest{}, nil, workspace.Errorf(workspace.CodeInvalidArgument, `give request ({"question":"..."}) or replay_run_id`)
}

// turn is a search's ranking and, while it ranks and fits, its turn at
// the gate.
type turn[C any] struct {
	entry   *cacheEntry[C]
	fresh   bool   // ranked for this search: its stale flags are fresh
	endTurn func() // gives the turn back; safe to call more than once
}

// ranked finds the ranking of norm under key: from the cache, or ranked
// in the caller's turn, once for every caller that asks it meanwhile. A
// search the cache answers is quick and takes no turn.
func (s *Searcher[C]) ranked(ctx context.Context, p workspace.Principal, norm QueryRequest, key string) (turn[C], error) {
	t := turn[C]{endTurn: func() {}}
	if t.entry = s.cache.get(key); t.entry != nil {
		return t, nil
	}
	leave := s.fg.Enter()
	release, err := s.gate.acquire(ctx, callerKey(ctx, p), Heavy(norm))
	if err != nil {
		leave()
		return t, err
	}
	t.endTurn = sync.OnceFunc(func() {
		release()
		leave()
	})
	// Ranked while this caller waited (its own earlier search, say)?
	if t.entry = s.cache.peek(key); t.entry != nil {
		return t, nil
	}
	// Identical questions asked at once are ranked once (rankFlights): a
	// caller who gives up does not fail the others, and the ranking stops
	// when every caller has gone. A panic in it is an INTERNAL error for
	// every waiter, not the end of the owner.
	fr, err := s.flights.do(ctx, s.life, key, func(fctx context.Context) (res flightResult[C], err error) {
		defer func() {
			if rec := recover(); rec != nil {
				s.log.Error("search ranking panicked", workspace.LogPanic, rec, workspace.LogStack, string(debug.Stack()))
				res, err = flightResult[C]{}, workspace.Errorf(workspace.CodeInternal, "internal error")
			}
		}()
		ranked, err := s.ranker.SearchNormalized(fctx, p, norm)
		if err != nil {
			return flightResult[C]{}, err
		}
		e, inserted := s.cache.put(key, ranked)
		return flightResult[C]{e, inserted}, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return t, ctx.Err()
		}
		return t, err
	}
	t.entry, t.fresh = fr.entry, fr.inserted
	return t, nil
}

// pageCursor gives the fit the next page's cursor when the budget returns
// only part of the page: the next page starts right after the last hit
// returned, so that paging never skips what a budget left out. When no
// hit fits at all, it starts one further (that hit cannot fit this
// budget, and a cursor back to the same page would never end).
func (s *Searcher[C]) pageCursor(p workspace.Principal, r *Ranked) func(int) *string {
	return func(returned int) *string {
		next := max(returned, 1)
		if next >= len(r.Hits) {
			return r.NextCursor
		}
		c, err := s.ranker.PageCursor(p, r.Request, r.Offset+next)
		if err != nil {
			s.log.Error("seal search cursor", workspace.LogErr, err)
			return nil
		}
		return &c
	}
}

// record queues the run of an answer. A citation under a render carries
// no hash and no score: the run keeps the evidence's, from the ranking
// (hits), in the answer's order.
func (s *Searcher[C]) record(p workspace.Principal, norm QueryRequest, reqHash, render string, start time.Time, replayOf *string, hits []Hit, res QueryResult) {
	run := Run{
		ID: res.RunID, CreatedAt: start, Principal: p.ID, RequestHash: reqHash, Request: &norm,
		Render: render, TotalMatches: res.TotalMatches, UsedTokens: res.Budget.UsedTokens,
		Truncated: res.Truncated, DurationUS: time.Since(start).Microseconds(), ReplayOf: replayOf,
		Collections: RunCollections(p, norm),
	}
	for i, h := range res.Hits {
		run.Hits = append(run.Hits, RunHit{EvidenceID: h.EvidenceID, Hash: hits[i].Hash, Score: hits[i].Score})
	}
	s.runs.Record(run)
}

// unsynced counts the pending changes of the sources a search with
// filters f by p covers.
func unsynced(count func(keep func(sourceID, collection string) bool) int, p workspace.Principal, f *Filters) int {
	if count == nil {
		return 0
	}
	return count(func(id, collection string) bool {
		if !p.CanSee(collection) {
			return false
		}
		if f != nil && len(f.Collections) > 0 && !slices.Contains(f.Collections, collection) {
			return false
		}
		if f != nil && len(f.Sources) > 0 && !slices.Contains(f.Sources, id) {
			return false
		}
		return true
	})
}
