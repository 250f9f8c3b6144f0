package render

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Packing (FitInput.Pack) chooses, before fitting, what of each hit an
// answer shows, so that the budget holds the most useful evidence per
// token: more distinct places before more lines of one place.
//
//  1. Places: in rank order, every hit that fits with at least its focus
//     (the first focusLines lines of Hit.Focus, the lines of its best
//     matches; its first line when nothing matched) is a place, until the
//     budget is spent.
//  2. Lines: what is left goes to the places in rank order, each grown
//     from its focus by whole lines, after and before in turn, up to the
//     whole unit.
//
// A hit shown in part has Text = those lines (whole lines, never cut
// inside one) and Excerpt = their span; Span still names the whole
// evidence. The plan works on estimates (bytes per token); Fit then
// sizes the planned hits exactly, and a plan that missed is planned again
// in a room corrected by what Fit measured.

// focusLines bounds the lines a place starts with: one, so that a small
// budget shows as many places as it can (each place costs its citation and
// its header twice beyond its lines).
const focusLines = 1

// packHit is one hit as the planner sees it.
type packHit struct {
	lines  []string // the text's lines, each with its "\n" but maybe the last
	cost   []int    // estimated tokens of each line, as it travels
	over   int      // estimated tokens of the hit without its text
	lo, hi int      // the lines shown, inclusive, as indices into lines
	whole  bool
	// bare is a place shown by its citation and header alone: its least
	// showing (one line, a paragraph) would take more than its share of
	// the budget. bareOver is what it costs so (its header differs),
	// counted when a bare place is considered (bareCost).
	bare     bool
	bareOver int
	headCost int // the header's tokens in over (both copies)
	// counted marks the lines whose cost is exact; lineCost counts the
	// others with c (nil: a hit prepared without exact counts) when the
	// planner grows a place by them.
	counted  []bool
	c        *Counter
	rendered bool
	// excerptCost is what the hit's JSON costs more when it shows part
	// of its unit (its "excerpt" span; without a render, where the JSON
	// carries the text), counted with the focus's line numbers.
	excerptCost int
}

// estimateText is the planner's token estimate of s as it travels: once
// in the JSON (escaped), and, under a render, once more in the text.
func estimateText(s string, rendered bool) int {
	esc := len(s) + strings.Count(s, "\t") + strings.Count(s, `"`) + strings.Count(s, `\`) + strings.Count(s, "\n")
	n := esc
	if rendered {
		n += len(s)
	}
	return (n*10 + 31) / 32 // about 3.2 bytes a token
}

// countText is what s costs as it travels, counted: once escaped in the
// JSON, and, under a render, once more in the text.
func countText(c *Counter, s string, rendered bool) int {
	n := c.Count(escapeJSON(s))
	if rendered {
		n += c.Count(s)
	}
	return n
}

// newPackHit prepares h: its lines, their costs and its focus. With
// exact, what the hit costs without its text is counted exactly: its
// JSON, and under a render its header, in the text and escaped in
// "rendered"; without, it is estimatedCitation (the hits planned after
// the last place that fits: the fitter counts what it keeps of them).
func newPackHit(c *Counter, h *query.Hit, f Format, exact bool) packHit {
	p := packHit{over: 4, whole: true}
	if h.Text != nil && *h.Text != "" {
		text := *h.Text
		for len(text) > 0 {
			i := strings.IndexByte(text, '\n')
			if i < 0 {
				i = len(text) - 1
			}
			p.lines = append(p.lines, text[:i+1])
			text = text[i+1:]
		}
		p.cost = make([]int, len(p.lines))
		for i, l := range p.lines {
			p.cost[i] = estimateText(l, f != FormatNone)
		}
		if fo := h.Focus; fo != nil {
			a, b := fo.StartLine-h.Span.StartLine, fo.EndLine-h.Span.StartLine
			if a >= 0 && a < len(p.lines) && b >= a {
				p.lo, p.hi = a, min(b, len(p.lines)-1, a+focusLines-1)
			}
		}
	}
	if !exact {
		p.over += estimatedCitation
		return p
	}
	p.c, p.rendered, p.counted = c, f != FormatNone, make([]bool, len(p.lines))
	// The lines a place may start with are counted exactly too (its
	// focus, and its first line, which stands in for a long focus): the
	// estimate runs high on code, and a place is planned on them.
	exactLines := []int{0}
	if p.lo != 0 {
		exactLines = append(exactLines, p.lo)
	}
	if p.hi != p.lo {
		exactLines = append(exactLines, p.hi)
	}
	for _, i := range exactLines {
		if i < len(p.lines) {
			p.lineCost(i)
		}
	}
	sh := *h
	sh.Text = nil
	if f != FormatNone {
		sh = citationOf(sh)
		// The header as the place will show it: its focus lines first
		// (the header's context depends on the first line shown).
		head, _ := blockParts(f, newItem(p.focused(h), false))
		p.headCost = c.Count(head) + c.Count(escapeJSON(head))
		p.over += p.headCost
	}
	if core, err := coreOf(&sh); err == nil {
		p.over += countPieces(c, core)
		if f == FormatNone && len(p.lines) > 1 {
			// The field alone: the hit's JSON is not counted again.
			span, err := json.Marshal(query.Span{StartLine: h.Span.StartLine + p.lo, EndLine: h.Span.StartLine + p.hi})
			if err == nil {
				p.excerptCost = c.Count(`,"excerpt":` + string(span))
			}
		}
	}
	return p
}

// bareCost is what h costs as a bare place: its citation (with
// "truncated") and the header that says its lines were left out, both
// copies, instead of the header of its focus.
func (p *packHit) bareCost(c *Counter, f Format, h *query.Hit) int {
	bh := bareOf(h)
	head, _ := blockParts(f, newItem(&bh, true))
	return p.over - p.headCost + c.Count(head) + c.Count(escapeJSON(head)) + c.Count(`,"truncated":true`)
}

// bareOf is h planned as a bare place: no text, truncated. Fit shows it
// by its citation and header (IsBare).
func bareOf(h *query.Hit) query.Hit {
	b := *h
	b.Text, b.Excerpt, b.Truncated = nil, nil, true
	return b
}

// IsBare reports whether h is a bare place: a hit the planner shows
// without its text (Truncated, no Text), because its least showing would
// take more than its share of the budget.
func IsBare(h *query.Hit) bool { return h.Truncated && h.Text == nil }

// focused is h showing only its planned lines, as an excerpt when they
// are not all of it.
func (p *packHit) focused(h *query.Hit) *query.Hit {
	if len(p.lines) == 0 || p.lo == 0 && p.hi == len(p.lines)-1 {
		return h
	}
	fh := *h
	text := strings.Join(p.lines[p.lo:p.hi+1], "")
	fh.Text = &text
	fh.Excerpt = &query.Span{StartLine: h.Span.StartLine + p.lo, EndLine: h.Span.StartLine + p.hi}
	return &fh
}

// estimatedCitation is the allowance for a hit's citation and header when
// they are not counted exactly: about what one costs (docs/render.md).
const estimatedCitation = 100

func (p *packHit) shownCost() int {
	if p.bare {
		return p.bareOver
	}
	n := p.over
	if p.whole || p.lo == 0 && p.hi == len(p.lines)-1 {
		for _, c := range p.cost {
			n += c
		}
		return n
	}
	n += p.excerptCost
	for i := p.lo; i <= p.hi; i++ {
		n += p.cost[i]
	}
	return n
}

// wholeCost is what the hit costs shown whole.
func (p *packHit) wholeCost() int {
	n := p.over
	for _, c := range p.cost {
		n += c
	}
	return n
}

// lineCost is the cost of line i, counted exactly when the hit was
// prepared with exact counts. The fit counts a block line by line where
// its lines split (tally.upTo), so what the planner counts here is found
// there again.
func (p *packHit) lineCost(i int) int {
	if p.c != nil && !p.counted[i] {
		p.cost[i], p.counted[i] = countText(p.c, p.lines[i], p.rendered), true
	}
	return p.cost[i]
}

// grow widens the excerpt by whole lines, after and before in turn,
// while room allows; it returns what is left of room. The lines it adds
// are counted exactly (lineCost), and so is the whole unit when its
// estimate fits: the plan is then nearer what the fit finds.
func (p *packHit) grow(room int) int {
	if p.bare {
		p.bare = false
		if d := p.shownCost() - p.bareOver; d <= room {
			room -= d
		} else {
			p.bare = true
			return room
		}
	}
	if w := p.wholeCost(); w-p.shownCost() <= room {
		for i := range p.lines {
			p.lineCost(i)
		}
		if w := p.wholeCost(); w-p.shownCost() <= room {
			room -= w - p.shownCost()
			p.whole = true
			return room
		}
	}
	after := true
	for p.lo > 0 || p.hi < len(p.lines)-1 {
		next := -1
		if after && p.hi < len(p.lines)-1 || p.lo == 0 {
			next = p.hi + 1
		} else {
			next = p.lo - 1
		}
		if p.lineCost(next) > room {
			break
		}
		room -= p.cost[next]
		if next > p.hi {
			p.hi = next
		} else {
			p.lo = next
		}
		after = !after
	}
	return room
}

// trimBlank drops the lines at either end of an excerpt that show
// nothing (blank; only closing brackets and separators such as "}" or
// "});"; an empty comment line, "//", "#", " *"): they cost their tokens
// twice.
func (p *packHit) trimBlank() {
	for p.hi > p.lo && showsNothing(p.lines[p.hi]) {
		p.hi--
	}
	for p.lo < p.hi && showsNothing(p.lines[p.lo]) {
		p.lo++
	}
}

// showsNothing reports whether line is blank, or only closing brackets,
// separators and comment marks.
func showsNothing(line string) bool {
	return strings.Trim(line, " \t\r\n})];,/#*-") == ""
}

// longLine is what a focus line may cost (both copies) before a place
// starts at its unit's first line instead: about 200 bytes, longer than
// a line of code and shorter than a paragraph.
const longLine = 100

// packPlan plans hits into room tokens (the budget less the answer's
// envelope: the empty answer without its note), returning the hits to
// fit, how many are planned places, and the estimated cost of each. With
// atFocus it leaves out the lines phase: every place at its focus, and
// the hits after them too, for the fit to take in as many as fit. near
// reports that, under a render, the first hit left out missed by less
// than the estimate may be off (nearMiss a place).
func packPlan(c *Counter, f Format, hits []query.Hit, room int, atFocus bool) (planned []query.Hit, places int, est []int, near bool) {
	// Hits are prepared (their costs counted exactly) as the places are
	// planned, in rank order: the hits after the first that does not fit
	// get estimates only (a page of 50 would otherwise cost 150 exact
	// counts a search, most of them for hits that are never shown).
	ps := make([]packHit, len(hits))
	// Places: each hit at its focus (or whole when that is about as
	// cheap), in rank order, while they fit.
	// A focus line that is a paragraph (over longLine tokens, or a
	// quarter of the room) gives way to the unit's first line when that
	// is cheaper (a title, a signature): a place is worth more than one
	// long line, and the lines phase grows it again when room is left.
	share := min(room/4, longLine)
	bareShare := room / 4
	full := false
	for i := range ps {
		ps[i] = newPackHit(c, &hits[i], f, !full)
		p := &ps[i]
		if len(p.lines) > 0 {
			p.whole = false
			if p.shownCost()-p.over > share && p.lo > 0 && p.cost[0] < p.cost[p.lo] {
				p.lo, p.hi = 0, 0
			}
			// Whole when the rest of the unit costs no more than its
			// focus: more would take the room of the next place.
			if p.wholeCost()-p.shownCost() <= max(p.shownCost()-p.over, 8) {
				p.whole = true
			}
			// Under a render, a least showing over a quarter of the room,
			// or a paragraph over what is left of it, makes a bare place
			// when its citation fits: the header names the place, and the
			// lines phase shows its lines when room is left. (Without a
			// render the JSON is the answer, and a hit keeps its text.)
			least := 0
			for j := p.lo; j <= p.hi; j++ {
				least += p.cost[j]
			}
			if !full && f != FormatNone && p.headCost > 0 &&
				(least > bareShare || least > longLine && p.over+least > room) {
				if p.bareOver = p.bareCost(c, f, &hits[i]); p.bareOver < p.over+least {
					p.bare, p.whole = true, false
				}
			}
		}
		if full {
			continue
		}
		cost := p.shownCost()
		if cost > room {
			// Another place is worth more than the rest of the units
			// before it taken whole: show those at their focus again.
			room += reclaim(ps[:i], cost-room)
		}
		if cost <= room {
			room -= cost
			places++
			continue
		}
		full = true
		// Under a render, the first place that does not fit at its focus
		// is named bare when its citation fits: one more place rather
		// than more lines of those before it (the lines phase gives it
		// its focus back when room is left).
		if !p.bare && f != FormatNone && p.headCost > 0 && len(p.lines) > 0 {
			if bo := p.bareCost(c, f, &hits[i]); bo <= room {
				p.bareOver, p.bare, p.whole = bo, true, false
				room -= bo
				places++
				continue
			}
		}
		near = f != FormatNone && cost-room <= nearMiss*(places+1)
	}
	// Lines: what is left, in rank order.
	for i := 0; i < places && room > 0 && !atFocus; i++ {
		if !ps[i].whole {
			room = ps[i].grow(room)
		}
	}
	out := make([]query.Hit, len(hits))
	est = make([]int, len(hits))
	for i := range hits {
		out[i] = hits[i]
		p := &ps[i]
		est[i] = p.shownCost()
		if p.bare {
			out[i] = bareOf(&hits[i])
			continue
		}
		if p.whole || len(p.lines) == 0 || p.lo == 0 && p.hi == len(p.lines)-1 {
			continue
		}
		p.trimBlank()
		out[i] = *p.focused(&hits[i])
	}
	return out, places, est, near
}

// nearMiss is how far a place's estimate may run from what the fit counts
// under a render (its header counted apart from the block before it): a
// hit left out by less than this for each place may still fit.
const nearMiss = 4

// reclaim turns places taken whole back into their focus, the latest
// first, until need tokens are freed, and returns what it freed; when
// they cannot free that much it changes nothing and returns 0.
func reclaim(ps []packHit, need int) int {
	gain := func(p *packHit) int {
		if !p.whole || p.bare || len(p.lines) == 0 || p.lo == 0 && p.hi == len(p.lines)-1 {
			return 0
		}
		p.whole = false
		g := p.wholeCost() - p.shownCost()
		p.whole = true
		return max(g, 0)
	}
	avail := 0
	for i := range ps {
		avail += gain(&ps[i])
	}
	if avail < need {
		return 0
	}
	freed := 0
	for i := len(ps) - 1; i >= 0 && freed < need; i-- {
		if g := gain(&ps[i]); g > 0 {
			ps[i].whole = false
			freed += g
		}
	}
	return freed
}

// packFit plans and fits in, planning again (at most twice) when the fit
// left out planned places or a tenth of the budget: the room planned in is
// corrected by what the returned places cost exactly against their
// estimate, and kept between a room whose plan came back whole and one
// whose plan did not; a last plan shows the places at their focus when
// the next hit missed by about the estimate's error.
// The answer kept is the one with the most places, then (but for a plan
// at the focus) the most tokens used.
func packFit(ctx context.Context, c *Counter, in FitInput) (*FitOutput, error) {
	// The envelope: an answer with no hit, without the note that an
	// answer left empty holds instead of hits (its tokens would be
	// charged to every plan, and an answer with hits does not pay them).
	ef := newFitter(ctx, c, in, false)
	ef.noNote = true
	empty, err := ef.finalize(plan{k: 0, cut: -1}, nil)
	if err != nil {
		return nil, err
	}
	if empty == nil || empty.Result.Budget.UsedTokens > in.MaxTokens {
		return fitOnce(ctx, c, in) // refused there, with the minimum
	}
	env := empty.Result.Budget.UsedTokens
	room := in.MaxTokens - env
	// The largest room whose plan came back whole, and the smallest whose
	// plan did not.
	lo, hi := -1, -1
	var best *FitOutput
	atFocus := false // the last plan: the places at their focus, for a near miss
	for round := 0; round < 3; round++ {
		planned, places, est, near := packPlan(c, in.Format, in.Result.Hits, room, atFocus)
		pin := in
		pin.Result.Hits = planned
		out, err := fitOnce(ctx, c, pin)
		if err != nil {
			if best != nil && workspace.ErrorCode(err) == workspace.CodeOutputBudgetExceeded {
				break // a later plan refused (a budget below its least answer): keep the one that fit
			}
			return nil, err
		}
		got := out.Result.ContentTotals.HitsReturned
		if best == nil || got > best.Result.ContentTotals.HitsReturned ||
			!atFocus && got == best.Result.ContentTotals.HitsReturned && out.Result.Budget.UsedTokens > best.Result.Budget.UsedTokens {
			best = out
		}
		used := out.Result.Budget.UsedTokens
		if got >= places && (got == len(planned) || used*10 >= in.MaxTokens*9) {
			// The places came back, and the next missed by about the
			// estimate's error: the places at their focus alone may leave
			// the fit room for it (a last plan, kept if it holds more).
			if !near || atFocus || got > places || got == len(planned) {
				break
			}
			atFocus = true
			round = max(round, 1)
			continue
		}
		if atFocus {
			break
		}
		// Correct the room by what the returned places cost exactly (by
		// a third when not even the first planned place came back).
		want := 0
		for i := range min(got, len(est)) {
			want += est[i]
		}
		next := room * 2 / 3
		if want > 0 && used > env {
			next = int(float64(room) * float64(want) / float64(used-env))
		}
		if got < places {
			if hi < 0 || room < hi {
				hi = room
			}
		} else {
			lo = max(lo, room)
		}
		// A correction that leaves the bounds (the estimate is off by
		// more than the returned places show) lands between them instead:
		// halfway, or an eighth beyond the one bound known.
		if hi >= 0 && next >= hi || lo >= 0 && next <= lo {
			switch {
			case lo >= 0 && hi >= 0:
				next = (lo + hi) / 2
			case hi >= 0:
				next = hi - hi/8
			default:
				next = lo + lo/8
			}
		}
		if next <= 0 || next == room {
			break
		}
		room = next
	}
	return best, nil
}
