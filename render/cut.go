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
	base, err := f.estimate(k)
	if err != nil {
		return nil, err
	}
	// The cut answer returns k+1 hits: its tail (next_cursor) is that of
	// k+1.
	tk, err := f.tail(k)
	if err != nil {
		return nil, err
	}
	tk1, err := f.tail(k + 1)
	if err != nil {
		return nil, err
	}
	if base += tk1 - tk; base >= f.budget {
		return nil, nil
	}
	c, err := f.newCut(k, f.budget-base+64)
	if err != nil || c == nil {
		return nil, err
	}
	// probe is the total of cut j: exact but for the widest-number tail.
	hRaw, hEsc := f.headers(k)
	extra := hRaw + hEsc
	if k > 0 {
		extra += f.tally.count(`},{"`)
	}
	probes := map[int]int{}
	probe := func(j int) int {
		if v, ok := probes[j]; ok {
			return v
		}
		_, core, _, block := c.at(j)
		total := base + extra + f.tally.count(core)
		if f.format == FormatMarkdown {
			block = block[:len(block)-1] // the last block, without its blank line
		}
		if f.format != FormatNone {
			total += f.tally.count(block) + f.tally.count(escapeJSON(block))
		}
		probes[j] = total
		return total
	}
	n := len(c.raw)
	first := probe(0)
	if first > f.budget+slack {
		return nil, nil
	}
	// Guess from the encoding, then settle with exact probes: gallop up
	// from a fitting guess, bisect down from one that does not fit.
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
		if probe(g) <= f.budget {
			lo = g
			for step := 1; lo+step < hi; step *= 2 {
				if probe(lo+step) > f.budget {
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
		if probe(m) <= f.budget {
			lo = m
		} else {
			hi = m
		}
	}
	// The probes' tail is the widest: one more line may still fit exactly.
	top := lo
	if lo+1 < n && probe(lo+1) <= f.budget+slack {
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
