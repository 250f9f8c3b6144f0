package render

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Target is budget.target: what the budget counts — the structuredContent
// JSON of an MCP CallToolResult as it travels (DESIGN §6).
const Target = "mcp-structured-json@2.2.0"

// FitInput is what Fit sizes.
type FitInput struct {
	// Result is the answer before fitting: run_id, the request echo,
	// total_matches, next_cursor and truncated (kept when already true),
	// with Hits the ranked page, each with its full text. Budget,
	// ContentTotals and Rendered are ignored and filled by Fit.
	Result query.QueryResult
	// Costs optionally holds a cached cost per hit, by index (FitOutput.Costs
	// of an earlier fit). Missing or stale entries are computed.
	Costs []HitCost
	// MaxTokens is the budget; it must be positive (the caller applies the
	// workspace's default_max_tokens).
	MaxTokens int
	// Counter names the token counter; "" is DefaultCounter.
	Counter string
	// Format is the render format; FormatNone keeps the text in the JSON.
	Format Format
	// Memo, when set, shares exact counts between fits (see Memo): a
	// ranking fitted again costs little more than its new strings. The
	// answer is the same with or without it.
	Memo *Memo
	// Verify recounts the final bytes whole and, should the count by parts
	// ever disagree, fits again counting whole strings only. It costs one
	// full count (about 1–3 ms for 4,000 tokens).
	Verify bool
	// Pack plans the answer before fitting it (pack.go): as many distinct
	// places as the budget can show, each at least the lines that match
	// the question (Hit.Focus), then more lines of each in rank order. A
	// hit shown in part carries its lines in Text and their span in
	// Excerpt. Without Pack, hits are shown whole in rank order and the
	// last cut after its first lines.
	Pack bool
	// NextCursor, when set, gives next_cursor for an answer that returns
	// only the first returned hits of the page (a cut hit counts as
	// returned), returned < len(Result.Hits): the next page must then start
	// right after the last hit the client saw, not after the whole page.
	// An answer with every hit keeps Result.NextCursor. It must give the
	// same cursor for the same argument within one Fit.
	NextCursor func(returned int) *string
}

// FitOutput is a fitted answer: exactly what to send.
type FitOutput struct {
	// Result is the fitted answer; under a render its Rendered holds the
	// rendered text. Structured is its encoding.
	Result query.QueryResult
	// Structured holds the structuredContent bytes: json.Marshal(Result),
	// compact and HTML-escaped. Hand them to the SDK as json.RawMessage.
	// Under a render they carry the rendered text in "rendered", so that a
	// client that shows a model only structuredContent shows it the answer.
	Structured []byte
	// Rendered is the text block (MCP) and the "rendered" field; "" without
	// a render.
	Rendered string
	// Costs has one entry per input hit: the cost of each hit Fit counted
	// whole (the zero HitCost for the others, among them a hit found not
	// to fit before it was counted to its end), for the caller's cache.
	Costs []HitCost
}

// Fit sizes an answer to its budget on the exact bytes a client receives
// (DESIGN §6; docs/render.md). It keeps the best hits whole in rank order
// while they fit, cuts the next at a line boundary when at least one line
// fits (marking it and the answer truncated), and ends the list at the
// first hit that does not fit. budget.used_tokens — which sits inside the
// counted JSON — equals the tokens of Structured plus those of Rendered. A
// budget below the empty answer is an OUTPUT_BUDGET_EXCEEDED error naming
// the minimum.
func Fit(ctx context.Context, in FitInput) (*FitOutput, error) {
	if in.MaxTokens <= 0 {
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "budget.max_tokens must be positive")
	}
	if _, err := ParseFormat(string(in.Format)); err != nil {
		return nil, err
	}
	c, err := CounterFor(in.Counter)
	if err != nil {
		return nil, err
	}
	if in.Pack && len(in.Result.Hits) > 0 {
		return packFit(ctx, c, in)
	}
	return fitOnce(ctx, c, in)
}

// verifyFits makes every fit verified, as FitInput.Verify does: in builds
// with the race detector (verify_race.go), and when the environment sets
// TYCHORA_VERIFY_FIT=1 (a debug setting: docs/render.md).
var verifyFits = os.Getenv("TYCHORA_VERIFY_FIT") == "1"

// fitOnce fits in as it is.
func fitOnce(ctx context.Context, c *Counter, in FitInput) (*FitOutput, error) {
	out, err := newFitter(ctx, c, in, false).fit()
	if err != nil || !(in.Verify || verifyFits) {
		return out, err
	}
	s := c.CountBytes(out.Structured)
	if s == out.Result.ContentTotals.StructuredTokens && c.Count(out.Rendered) == out.Result.ContentTotals.RenderedTokens {
		return out, nil
	}
	return newFitter(ctx, c, in, true).fit()
}

// fitter holds one Fit's state. What every answer it returns keeps:
//   - used_tokens = structured_tokens + rendered_tokens, and each is the
//     count of the bytes that travel (the digits of both included);
//   - hits are a prefix of the page in rank order, the last maybe cut
//     after a whole line; nothing is pulled up past a hit left out;
//   - next_cursor resumes right after the last hit returned;
//   - a part's count is used only for the exact string it counts
//     (tally, by string; cached costs, by fingerprint).
type fitter struct {
	ctx    context.Context
	c      *Counter
	tally  *tally // every count of this fit, by exact string
	format Format
	// answer is the input result without hits or rendered text: what
	// skeleton fills in for each plan.
	answer       query.QueryResult
	hits         []query.Hit
	total        int       // len(hits): the page before fitting
	budget       int       // max_tokens
	wasTruncated bool      // the page was truncated before fitting
	cached       []HitCost // FitInput.Costs
	costs        []HitCost // what this fit counted whole, for the caller
	frags        []*parts  // each hit's parts, built on first use

	// Estimates, exact but for the tail: tails[r] is the tokens of `}` +
	// tail with every number at its widest for an answer of r hits (its
	// next_cursor depends on r); structBefore[k] the structured tokens
	// before that tail and textBefore[k] the rendered tokens, for k whole
	// hits.
	tails                    map[int]int
	structBefore, textBefore []int
	// escBefore[k] is the tokens the rendered text of k whole hits costs
	// again inside the structured JSON, in "rendered".
	escBefore []int
	// cursor and cursors: FitInput.NextCursor and its answers by returned.
	cursor  func(int) *string
	cursors map[int]*string
	// guess starts the next fixed point: the last structured count found
	// or estimated.
	guess int
	// head is the skeletons' JSON up to their hits array (see split).
	head string
	// noNote leaves the note of an answer without hits (droppedText) out:
	// packFit measures the envelope of an answer that holds hits so.
	noNote bool
}

func newFitter(ctx context.Context, c *Counter, in FitInput, whole bool) *fitter {
	f := &fitter{ctx: ctx, c: c, tally: newTally(c), format: in.Format, answer: in.Result,
		hits: append([]query.Hit(nil), in.Result.Hits...), budget: in.MaxTokens,
		wasTruncated: in.Result.Truncated, cached: in.Costs, cursor: in.NextCursor}
	f.tally.whole = whole
	if !whole {
		f.tally.shared = in.Memo
	}
	f.total = len(f.hits)
	f.answer.Hits, f.answer.Rendered = nil, nil
	f.costs = make([]HitCost, f.total)
	f.frags = make([]*parts, f.total)
	return f
}

// part returns the parts of hit i, whole, seeding the tally with cached
// counts that still match.
func (f *fitter) part(i int) (*parts, error) {
	if p := f.frags[i]; p != nil {
		return p, nil
	}
	if err := f.ctx.Err(); err != nil {
		return nil, err
	}
	p, err := partsOf(f.format, &f.hits[i])
	if err != nil {
		return nil, err
	}
	p.it = newItem(&f.hits[i], IsBare(&f.hits[i]))
	cost := HitCost{Counter: f.c.name, Format: f.format, JSONSum: fingerprint(p.core), RenderedSum: fingerprint(p.block)}
	if i < len(f.cached) && f.cached[i].Counter == f.c.name && f.cached[i].Format == f.format && !f.tally.whole {
		if f.cached[i].JSONSum == cost.JSONSum {
			f.tally.memo[p.core] = f.cached[i].JSONTokens
		}
		if f.cached[i].RenderedSum == cost.RenderedSum && p.block != "" {
			f.tally.memo[p.block] = f.cached[i].RenderedTokens
		}
	}
	// The counts, and so the cost, come when estimate has counted it whole.
	p.cost, f.frags[i] = cost, &p
	return &p, nil
}

// plan is one candidate answer: hits [0,k) whole, then, when cut >= 0, hit
// k cut after line cut+1.
type plan struct {
	k, cut int
}

func (p plan) returned() int {
	if p.cut >= 0 {
		return p.k + 1
	}
	return p.k
}

func (f *fitter) fit() (*FitOutput, error) {
	if f.total == 0 {
		return f.empty()
	}
	if err := f.startEstimates(); err != nil {
		return nil, err
	}
	// Whole hits, in rank order, while the estimate fits. The estimate errs
	// high by a few tokens at most (the widest numbers, a markdown blank
	// line), so a next hit within that slack gets an exact try.
	k, est := 0, 0
	var err error
	for ; k < f.total; k++ {
		est, err = f.estimate(k + 1)
		if err != nil {
			return nil, err
		}
		if est > f.budget {
			break
		}
	}
	if k == f.total || est <= f.budget+slack {
		out, err := f.finalize(plan{k: min(k+1, f.total), cut: -1}, nil)
		if err != nil {
			return nil, err
		}
		if out != nil && out.Result.Budget.UsedTokens <= f.budget {
			if k+1 < f.total { // the exact try won a hit: keep going
				return f.grow(out, k+1)
			}
			return out, nil
		}
		if k == f.total {
			k--
		}
	}
	for ; k >= 0; k-- {
		out, err := f.tryCut(k)
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
		if k == 0 {
			break
		}
		out, err = f.finalize(plan{k: k, cut: -1}, nil)
		if err != nil {
			return nil, err
		}
		if out != nil && out.Result.Budget.UsedTokens <= f.budget {
			return out, nil
		}
	}
	return f.empty()
}

// empty is the answer without hits, the floor: a budget it does not fit is
// refused.
func (f *fitter) empty() (*FitOutput, error) {
	f.guess = 0
	out, err := f.finalize(plan{k: 0, cut: -1}, nil)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, workspace.Errorf(workspace.CodeInternal, "used_tokens has no fixed point")
	}
	if out.Result.Budget.UsedTokens > f.budget {
		return nil, f.tooSmall()
	}
	return out, nil
}

// slack bounds how far an estimate may exceed the exact total.
const slack = 16

// grow continues from out, an exact fit of k whole hits, adding whole hits
// while their exact fit holds, then trying to cut the next.
func (f *fitter) grow(out *FitOutput, k int) (*FitOutput, error) {
	for ; k < f.total; k++ {
		est, err := f.estimate(k + 1)
		if err != nil {
			return nil, err
		}
		if est > f.budget+slack {
			break
		}
		next, err := f.finalize(plan{k: k + 1, cut: -1}, nil)
		if err != nil {
			return nil, err
		}
		if next == nil || next.Result.Budget.UsedTokens > f.budget {
			break
		}
		out = next
	}
	if k < f.total {
		cut, err := f.tryCut(k)
		if err != nil {
			return nil, err
		}
		if cut != nil {
			return cut, nil
		}
	}
	return out, nil
}

// skeleton is the answer's JSON without hits for plan p with the given
// structured and rendered counts.
func (f *fitter) skeleton(p plan, s, r int) query.QueryResult {
	res := f.answer
	res.NextCursor = f.cursorAt(p.returned())
	res.Truncated = f.wasTruncated || p.returned() < f.total || p.cut >= 0
	res.Budget = query.BudgetInfo{MaxTokens: f.budget, UsedTokens: s + r, Counter: f.c.name,
		Target: Target, RenderTarget: f.format.Target()}
	res.ContentTotals = query.ContentTotals{HitsAvailable: f.total, HitsReturned: p.returned(),
		StructuredTokens: s, RenderedTokens: r}
	if f.format != FormatNone {
		// A placeholder: finalize spells the rendered text in its place.
		empty := ""
		res.Rendered = &empty
	}
	return res
}

// split encodes res around its hits array: head ends with "[", tail starts
// with "]". It finds the array by encoding res with no hit and with one
// empty hit, so it depends on no field name or order.
func split(res query.QueryResult) (head, tail string, err error) {
	res.Hits = []query.Hit{}
	b0, err := json.Marshal(res)
	if err != nil {
		return "", "", workspace.Wrap(workspace.CodeInternal, err, "encode result")
	}
	res.Hits = []query.Hit{{}}
	b1, err := json.Marshal(res)
	if err != nil {
		return "", "", workspace.Wrap(workspace.CodeInternal, err, "encode result")
	}
	i := 0
	for i < len(b0) && i < len(b1) && b0[i] == b1[i] {
		i++
	}
	if i == 0 || i >= len(b0) || b0[i-1] != '[' || b0[i] != ']' {
		return "", "", workspace.Errorf(workspace.CodeInternal, "encode result: hits array not found")
	}
	return string(b0[:i]), string(b0[i:]), nil
}

// split is split(res) for the skeletons of this fit, which differ only
// after their hits: once a head is known, one encoding finds the tail. (An
// encoding that starts with the head and then closes the array has its
// hits exactly there: everything before them is the same with one hit.)
func (f *fitter) split(res query.QueryResult) (head, tail string, err error) {
	if f.head != "" {
		res.Hits = []query.Hit{}
		b, err := json.Marshal(res)
		if err == nil && len(b) > len(f.head) && string(b[:len(f.head)]) == f.head && b[len(f.head)] == ']' {
			return f.head, string(b[len(f.head):]), nil
		}
	}
	head, tail, err = split(res)
	if err == nil {
		f.head = head
	}
	return head, tail, err
}

// structSegs lays out the structured JSON as segments that split (rules A
// and C): head`{"` core `},{"` core … core `}`tail.
func structSegs(head string, cores []string, tail string) []string {
	if len(cores) == 0 {
		return splitNumbers(head + tail)
	}
	segs := make([]string, 0, 2*len(cores)+2)
	segs = append(segs, headSegs(head+`{"`)...)
	for i, c := range cores {
		if i > 0 {
			segs = append(segs, `},{"`)
		}
		segs = append(segs, c)
	}
	return append(segs, splitNumbers(`}`+tail)...)
}

// headSegs cuts the answer's head after the run id, which is new in every
// answer, when the cut splits: the rest of the head (the request echo, the
// same in every answer to a request) is then found in a shared Memo.
func headSegs(head string) []string {
	const key = `"run_id":"`
	i := strings.Index(head, key)
	if i < 0 {
		return []string{head}
	}
	j := strings.IndexByte(head[i+len(key):], '"')
	if j < 0 {
		return []string{head}
	}
	at := i + len(key) + j
	if !splits(head[:at], head[at:]) {
		return []string{head}
	}
	return []string{head[:at], head[at:]}
}

// cursorAt is next_cursor for an answer of returned hits.
func (f *fitter) cursorAt(returned int) *string {
	if f.cursor == nil || returned >= f.total {
		return f.answer.NextCursor
	}
	if c, ok := f.cursors[returned]; ok {
		return c
	}
	if f.cursors == nil {
		f.cursors = map[int]*string{}
	}
	c := f.cursor(returned)
	f.cursors[returned] = c
	return c
}

// tail is the tokens of `}` + tail for an answer of r hits with every
// number at its widest (max_tokens for the counts, n hits returned),
// truncated or not. Without FitInput.NextCursor every r has the same tail.
func (f *fitter) tail(r int) (int, error) {
	if f.cursor == nil || r >= f.total {
		r = f.total
	}
	if t, ok := f.tails[r]; ok {
		return t, nil
	}
	ps := []plan{{k: r, cut: -1}}
	if r > 0 {
		ps = append(ps, plan{k: r - 1, cut: 0})
	}
	t := 0
	for _, p := range ps {
		_, tail, err := f.split(f.skeleton(p, f.budget, f.budget))
		if err != nil {
			return 0, err
		}
		t = max(t, f.tally.sum(splitNumbers(`}`+tail)))
	}
	f.tails[r] = t
	return t, nil
}

// startEstimates sets the estimate of zero hits.
func (f *fitter) startEstimates() error {
	f.tails = map[int]int{}
	head, _, err := f.split(f.skeleton(plan{k: f.total, cut: -1}, f.budget, f.budget))
	if err != nil {
		return err
	}
	f.structBefore, f.textBefore, f.escBefore = []int{f.tally.sum(headSegs(head + `{"`))}, []int{0}, []int{0}
	return nil
}

// estimate is the total of k whole hits, exact but for the widest-number
// tail (segments split where parts meet, so the parts' counts add up).
// Once the total is sure to pass max+slack, counting stops and estimate
// returns what it has counted, which is more than max+slack and at most
// the total: the hit that ends an answer is rarely tokenized whole.
func (f *fitter) estimate(k int) (int, error) {
	for i := len(f.structBefore) - 1; i < k; i++ {
		p, err := f.part(i)
		if err != nil {
			return 0, err
		}
		sep := 0
		if i > 0 {
			sep = f.tally.count(`},{"`)
		}
		h, hEsc := f.headers(i)
		tail, err := f.tail(i + 1)
		if err != nil {
			return 0, err
		}
		base := f.structBefore[i] + sep + f.textBefore[i] + f.escBefore[i] + h + hEsc + tail
		// In range even for a max of MaxInt: base exceeds slack (the tail
		// alone does), and wrapping in between cancels out.
		room := f.budget + slack - base
		core, exact := f.tally.upTo(p.core, room)
		if !exact {
			return base + core, nil
		}
		block, exact := f.tally.upTo(p.block, room-core)
		if !exact {
			return base + core + block, nil
		}
		esc, exact := f.tally.upTo(p.esc, room-core-block)
		if !exact {
			return base + core + block + esc, nil
		}
		f.costs[i] = p.cost
		f.costs[i].JSONTokens, f.costs[i].RenderedTokens = core, block
		f.structBefore = append(f.structBefore, f.structBefore[i]+sep+core)
		f.textBefore = append(f.textBefore, f.textBefore[i]+block+h)
		f.escBefore = append(f.escBefore, f.escBefore[i]+esc+hEsc)
	}
	tail, err := f.tail(k)
	if err != nil {
		return 0, err
	}
	f.guess = f.structBefore[k] + f.escBefore[k] + tail
	return f.structBefore[k] + f.textBefore[k] + f.escBefore[k] + tail, nil
}

// headers counts the hierarchical-evidence@1 elements hit i opens (and
// closes) after hits [0,i): its document and its section, when new; raw
// in the text block, esc as spelled again in the JSON's "rendered".
func (f *fitter) headers(i int) (raw, esc int) {
	if f.format != FormatHierarchical {
		return 0, 0
	}
	h := &f.hits[i]
	dk, sk := documentKey(h), sectionKey(h)
	newDoc, newSec := true, sk != ""
	for j := range i {
		if documentKey(&f.hits[j]) == dk {
			newDoc = false
			if sectionKey(&f.hits[j]) == sk {
				newSec = false
				break
			}
		}
	}
	var els []string
	if newDoc {
		els = append(els, documentOpen(h), documentClose)
	}
	if newSec {
		els = append(els, sectionOpen(h), sectionClose)
	}
	for _, e := range els {
		raw += f.tally.count(e)
		esc += f.tally.count(escapeJSON(e))
	}
	return raw, esc
}

// finalize builds plan p exactly. It iterates structured_tokens (and
// used_tokens, its sum with rendered_tokens) to a fixed point, since their
// digits are part of what they count: write a guess, count, write the
// count, until the count is what is written. Only the digits of the two
// numbers change between rounds, and each 1–3 digit group is one token in
// both encodings, so the count moves with the number of digit groups and
// settles in one to three rounds. Should it ever cycle, finalize returns
// nil, nil and the caller tries a smaller plan. cut supplies the cut hit.
func (f *fitter) finalize(p plan, cut *cutPlan) (*FitOutput, error) {
	hits := make([]query.Hit, 0, p.returned())
	cores := make([]string, 0, p.returned())
	items := make([]item, 0, p.returned())
	blocks := make([]string, 0, p.returned())
	for i := range p.k {
		pt, err := f.part(i)
		if err != nil {
			return nil, err
		}
		h := f.hits[i]
		h.Truncated = IsBare(&h)
		if f.format != FormatNone {
			h = citationOf(h)
		}
		hits = append(hits, h)
		cores = append(cores, pt.core)
		items = append(items, pt.it)
		blocks = append(blocks, pt.block)
	}
	if p.cut >= 0 {
		h, core, it, block := cut.at(p.cut)
		hits = append(hits, h)
		cores = append(cores, core)
		items = append(items, it)
		blocks = append(blocks, block)
	}
	var rendered string
	var escSegs []string
	r := 0
	if f.format != FormatNone {
		segs := renderSegments(f.format, items, blocks, true)
		if len(items) == 0 && f.total > 0 && !f.noNote {
			segs = []string{droppedText(f.format, f.total)}
		}
		r = f.tally.sum(segs)
		rendered = strings.Join(segs, "")
		escSegs = make([]string, len(segs))
		for i, seg := range segs {
			escSegs[i] = escapeJSON(seg)
		}
	}
	s := f.guess
	seen := map[int]bool{}
	for range 12 {
		res := f.skeleton(p, s, r)
		head, tail, err := f.split(res)
		if err != nil {
			return nil, err
		}
		var segs []string
		if f.format == FormatNone {
			segs = structSegs(head, cores, tail)
		} else {
			// The tail ends in the placeholder `"rendered":""}`: the
			// rendered text goes between its quotes, spelled as JSON.
			if !strings.HasSuffix(tail, `""}`) {
				return nil, workspace.Errorf(workspace.CodeInternal, "encode result: rendered not found")
			}
			segs = structSegs(head, cores, tail[:len(tail)-2])
			// The first block's first line runs on from `"rendered":"`
			// (no split between them): its other lines still count
			// apart, as estimate counted them.
			if len(escSegs) > 0 {
				segs = append(segs, pieces(escSegs[0])...)
				segs = append(segs, escSegs[1:]...)
			}
			segs = append(segs, `"}`)
		}
		s2 := f.tally.sum(segs)
		if s2 == s {
			f.guess = s
			res.Hits = hits
			if f.format != FormatNone {
				res.Rendered = &rendered
			}
			return &FitOutput{Result: res, Structured: []byte(strings.Join(segs, "")),
				Rendered: rendered, Costs: f.costs}, nil
		}
		if seen[s2] {
			break // oscillation
		}
		seen[s] = true
		s = s2
	}
	return nil, nil
}

// tooSmall is the refusal of a budget below the empty answer. The minimum
// depends on the digits of max_tokens itself, so it is the least m whose
// empty answer fits in m.
func (f *fitter) tooSmall() error {
	best := -1
	g := *f
	for d, lo := 1, 1; d <= 10; d, lo = d+1, lo*10 {
		g.budget = lo
		out, err := g.finalize(plan{k: 0, cut: -1}, nil)
		if err != nil || out == nil {
			continue
		}
		m := max(out.Result.Budget.UsedTokens, lo)
		if m < lo*10 && (best < 0 || m < best) {
			best = m
		}
	}
	return workspace.Errorf(workspace.CodeOutputBudgetExceeded,
		"budget.max_tokens %d is below the smallest answer: at least %d tokens are needed (with %s)",
		f.budget, best, f.c.name)
}
