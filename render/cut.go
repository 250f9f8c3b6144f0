package render

import (
	"encoding/json"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// cutPlan cuts one hit at its line boundaries. Cut j keeps the first j+1
// lines, ending with their "\n": a prefix of the text. The string whose size
// varies with j — the escaped text in the JSON, or the text in the rendered
// block — is counted through a prefixCounter, so a probe costs little more
// than the lines around the cut.
type cutPlan struct {
	f   *fitter
	hit *query.Hit
	raw []int // cut offsets in the text: after a "\n", before the end

	// Without a render: the hit's fragment is coreHead + esc[:escCuts[j]] + coreTail.
	esc, coreHead, coreTail string
	escCuts                 []int
	// With a render: the fragment is citeCore; the block carries san[:sanCuts[j]].
	citeCore string
	san      string
	sanCuts  []int

	pc *prefixCounter
}

// lineCuts returns the offsets just after each "\n" of s, except at its end.
func lineCuts(s string) []int {
	var cuts []int
	for i := 0; i < len(s)-1; i++ {
		if s[i] == '\n' {
			cuts = append(cuts, i+1)
		}
	}
	return cuts
}

// newCut prepares hit k for cutting, encoding about need tokens of the
// varying string ahead of time. It returns nil when the hit has no line
// boundary to cut at.
func (f *fitter) newCut(k, need int) (*cutPlan, error) {
	h := &f.hits[k]
	if h.Text == nil {
		return nil, nil
	}
	raw := lineCuts(*h.Text)
	if len(raw) == 0 {
		return nil, nil
	}
	c := &cutPlan{f: f, hit: h, raw: raw}
	hc := *h
	hc.Truncated = true
	if f.format != FormatNone {
		hc = citationOf(hc)
		core, err := coreOf(&hc)
		if err != nil {
			return nil, err
		}
		c.citeCore = core
		c.san = validUTF8(*h.Text)
		c.sanCuts = lineCuts(c.san)
		if len(c.sanCuts) != len(raw) {
			return nil, workspace.Errorf(workspace.CodeInternal, "cut hit %s: line boundaries disagree", h.EvidenceID)
		}
		c.pc = newPrefixCounter(f.tally, c.san, need)
		return c, nil
	}
	// The JSON string escapes character by character, so the escaped prefix
	// of a cut is a prefix of the escaped text: find where each "\n" ends.
	b, err := json.Marshal(*h.Text)
	if err != nil {
		return nil, workspace.Wrap(workspace.CodeInternal, err, "encode hit text")
	}
	c.esc = string(b[1 : len(b)-1])
	for i := 0; i < len(c.esc)-1; i++ {
		if c.esc[i] != '\\' {
			continue
		}
		switch c.esc[i+1] {
		case 'n':
			if i+2 < len(c.esc) {
				c.escCuts = append(c.escCuts, i+2)
			}
		case 'u':
			i += 4
		}
		i++
	}
	if len(c.escCuts) != len(raw) {
		return nil, workspace.Errorf(workspace.CodeInternal, "cut hit %s: line boundaries disagree", h.EvidenceID)
	}
	empty, x := "", "x"
	hc.Text = &empty
	b0, err := json.Marshal(&hc)
	if err != nil {
		return nil, workspace.Wrap(workspace.CodeInternal, err, "encode hit")
	}
	hc.Text = &x
	b1, _ := json.Marshal(&hc)
	i := 0
	for i < len(b0) && i < len(b1) && b0[i] == b1[i] {
		i++
	}
	if i < 3 || i >= len(b0) || b0[i-1] != '"' || b0[i] != '"' {
		return nil, workspace.Errorf(workspace.CodeInternal, "cut hit %s: text not found in its encoding", h.EvidenceID)
	}
	c.coreHead, c.coreTail = string(b0[2:i]), string(b0[i:len(b0)-1])
	c.pc = newPrefixCounter(f.tally, c.esc, need)
	return c, nil
}

// at returns cut j: the hit as it travels, its structured fragment, its
// item and its block (render only). The exact counts of the new strings
// are left in the tally's memo.
func (c *cutPlan) at(j int) (query.Hit, string, item, string) {
	h := *c.hit
	h.Truncated = true
	t := c.f.tally
	if c.f.format == FormatNone {
		text := (*c.hit.Text)[:c.raw[j]]
		h.Text = &text
		core := c.coreHead + c.esc[:c.escCuts[j]] + c.coreTail
		if _, ok := t.memo[core]; !ok {
			t.memo[core] = c.pc.count(c.coreHead, c.escCuts[j], c.coreTail)
		}
		return h, core, item{}, ""
	}
	h = citationOf(h)
	start := c.hit.Span.StartLine
	if c.hit.Excerpt != nil {
		start = c.hit.Excerpt.StartLine
	}
	it := item{h: c.hit, text: c.san[:c.sanCuts[j]], cut: true, start: start, shown: start + j}
	head, tail := blockParts(c.f.format, it)
	block := head + it.text + tail
	counted, ctail := block, tail
	if c.f.format == FormatMarkdown {
		// A cut block is the last one: it travels without its blank line.
		counted, ctail = block[:len(block)-1], tail[:len(tail)-1]
	}
	if _, ok := t.memo[counted]; !ok {
		t.memo[counted] = c.pc.count(head, c.sanCuts[j], ctail)
	}
	return h, c.citeCore, it, block
}

// tryCut returns the answer of hits [0,k) whole and hit k cut at the last
// line boundary that fits, or nil when not even its first line fits.
func (f *fitter) tryCut(k int) (*FitOutput, error) {
	if k >= f.total {
		return nil, nil
	}
	base, err := f.cutBase(k)
	if err != nil || base >= f.budget {
		return nil, err
	}
	c, err := f.newCut(k, f.budget-base+64)
	if err != nil || c == nil {
		return nil, err
	}
	pr := f.newCutProbe(k, base, c)
	if pr.at(0) > f.budget+slack {
		return nil, nil
	}
	lo := f.lastFitting(pr, c)
	// The probes' tail is the widest: one more line may still fit exactly.
	top := lo
	if lo+1 < len(c.raw) && pr.at(lo+1) <= f.budget+slack {
		top = lo + 1
	}
	for j := top; j >= 0 && j > lo-4; j-- {
		out, err := f.finalize(plan{k: k, cut: j}, c)
		if err != nil {
			return nil, err
		}
		if out != nil && out.Result.Budget.UsedTokens <= f.budget {
			return out, nil
		}
	}
	return nil, nil
}

// cutBase is the estimated total of hits [0,k) whole with the tail of an
// answer of k+1 hits (the cut answer returns k+1: its next_cursor is that
// of k+1).
func (f *fitter) cutBase(k int) (int, error) {
	base, err := f.estimate(k)
	if err != nil {
		return 0, err
	}
	tk, err := f.tail(k)
	if err != nil {
		return 0, err
	}
	tk1, err := f.tail(k + 1)
	if err != nil {
		return 0, err
	}
	return base + tk1 - tk, nil
}

// cutProbe gives the total of an answer with hit k cut after line j+1:
// exact but for the widest-number tail, each j counted once.
type cutProbe struct {
	f      *fitter
	c      *cutPlan
	base   int // cutBase(k)
	extra  int // hit k's headers and the connector before it
	totals map[int]int
}

func (f *fitter) newCutProbe(k, base int, c *cutPlan) *cutProbe {
	hRaw, hEsc := f.headers(k)
	extra := hRaw + hEsc
	if k > 0 {
		extra += f.tally.count(`},{"`)
	}
	return &cutProbe{f: f, c: c, base: base, extra: extra, totals: map[int]int{}}
}

func (pr *cutProbe) at(j int) int {
	if v, ok := pr.totals[j]; ok {
		return v
	}
	f := pr.f
	_, core, _, block := pr.c.at(j)
	total := pr.base + pr.extra + f.tally.count(core)
	if f.format == FormatMarkdown {
		block = block[:len(block)-1] // the last block, without its blank line
	}
	if f.format != FormatNone {
		total += f.tally.count(block) + f.tally.count(escapeJSON(block))
	}
	pr.totals[j] = total
	return total
}

// lastFitting is the last cut whose probe fits the budget (0 when none
// but the first nearly does): a guess from the encoding, settled with
// exact probes, galloping up from a fitting guess and bisecting down from
// one that does not fit.
func (f *fitter) lastFitting(pr *cutProbe, c *cutPlan) int {
	n := len(c.raw)
	first := pr.at(0)
	cuts := c.escCuts
	if f.format != FormatNone {
		cuts = c.sanCuts
	}
	e0 := c.pc.estimate(cuts[0])
	lo, hi := 0, n // probe(lo) fits (or nearly); cut n would be the whole hit, which does not
	g := lo
	for a, b := 1, n-1; a <= b; {
		m := (a + b) / 2
		if first+c.pc.estimate(cuts[m])-e0 <= f.budget {
			g, a = m, m+1
		} else {
			b = m - 1
		}
	}
	if g > lo {
		if pr.at(g) <= f.budget {
			lo = g
			for step := 1; lo+step < hi; step *= 2 {
				if pr.at(lo+step) > f.budget {
					hi = lo + step
					break
				}
				lo += step
			}
		} else {
			hi = g
		}
	}
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if pr.at(m) <= f.budget {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}
