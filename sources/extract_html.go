package sources

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

const (
	htmlExtractorName    = "html"
	htmlExtractorVersion = "4" // 2: long items and lines are cut into pieces; 3: Greek letters named, and hyphens between letters and digits dropped, in the units' code terms; 4: the same, whatever stands around the letter, as the index folds it
)

// htmlExtractor reduces an HTML page to its visible text and splits it
// into sections at its headings (h1..h6), with heading paths like
// markdown's. Script, style, noscript, template, svg, iframe, object,
// canvas and the head (but for its title) are dropped. Block elements (p,
// div, li, tr, headings, pre, br, ...) end a line of text; inside them white
// space collapses to single spaces, except in pre, which keeps its lines
// and gives ChannelCode. Entities are decoded.
//
// Line spans refer to lines of the original file: a unit spans from the
// line where its first visible text starts to the line where its last ends,
// so markup-only lines at its edges are outside it and a script inside it
// is within its span but not its text. A unit's Text is the visible text of
// its span, one line per block, not the file's lines (the kind is not
// verbatim_text). Since spans are whole lines, a heading that shares a
// line with the text before it does not start a section of its own, and a
// page on one line (minified) is a single section, cut into chunks of its
// blocks (and windows of its long blocks) that share that line.
//
// The title is the <title>, else the first h1, else the file name.
type htmlExtractor struct{}

func (htmlExtractor) Name() string    { return htmlExtractorName }
func (htmlExtractor) Version() string { return htmlExtractorVersion }

// htmlBlock is one line of visible text: a paragraph, a list item, a
// heading, a pre block.
type htmlBlock struct {
	start, end int // 1-based source lines of its first and last text
	text       string
	heading    int // 1..6 for h1..h6, else 0
	pre        bool
}

// htmlItem is a run of blocks that share source lines: the unit of
// chunking, since spans cannot split a line.
type htmlItem struct {
	start, end int
	text       string
	heading    int
	headText   string
	pre        bool
	tokens     int
	blocks     []htmlBlock
}

// long reports whether an item must be cut into pieces: it is over
// ChunkMaxTokens, or a line of its text is long (MaxLineBytes).
func (it htmlItem) long() bool {
	if it.tokens > ChunkMaxTokens {
		return true
	}
	for _, bl := range it.blocks {
		for line := range strings.SplitSeq(bl.text, "\n") {
			if len(line) > MaxLineBytes {
				return true
			}
		}
	}
	return false
}

// htmlSkip are elements whose content is never visible text.
var htmlSkip = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Iframe: true, atom.Object: true, atom.Canvas: true, atom.Head: true,
}

// htmlBlockTags are elements that end a line of text.
var htmlBlockTags = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Body: true,
	atom.Br: true, atom.Caption: true, atom.Dd: true, atom.Details: true, atom.Dialog: true, atom.Div: true,
	atom.Dl: true, atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true,
	atom.Footer: true, atom.Form: true, atom.Header: true, atom.Hgroup: true, atom.Hr: true, atom.Html: true,
	atom.Legend: true, atom.Li: true, atom.Main: true, atom.Nav: true, atom.Ol: true, atom.Option: true,
	atom.P: true, atom.Section: true, atom.Summary: true, atom.Table: true, atom.Tbody: true,
	atom.Tfoot: true, atom.Thead: true, atom.Tr: true, atom.Ul: true,
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// htmlScan is what the tokenizer pass found.
type htmlScan struct {
	blocks []htmlBlock
	title  string
	lang   string
	pres   int
}

// scanHTML tokenizes the page, tracking source lines.
func scanHTML(text string) htmlScan {
	h := &htmlScanner{z: html.NewTokenizer(strings.NewReader(text))}
	line := 1
	for {
		tt := h.z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := h.z.Raw()
		tokLine := line
		line += strings.Count(string(raw), "\n")
		switch tt {
		case html.TextToken:
			h.text(raw, tokLine)
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			h.tag(tt)
		}
	}
	h.flush()
	h.sc.title = clipTo(strings.Join(strings.Fields(h.title.String()), " "), headingMax)
	return h.sc
}

// htmlScanner is the state of one scanHTML: the block being gathered
// (its text, lines and heading level) and the elements it is inside.
type htmlScanner struct {
	z     *html.Tokenizer
	sc    htmlScan
	skip  []atom.Atom // the open elements whose text is not shown
	cur   strings.Builder
	title strings.Builder

	curStart, curEnd, curHeading, inPre int
	inTitle                             bool
}

// flush ends the current block.
func (h *htmlScanner) flush() {
	t := h.cur.String()
	h.cur.Reset()
	pre := h.inPre > 0
	if pre {
		t = strings.Trim(t, "\r\n")
		if isBlank(t) {
			t = ""
		}
	} else {
		t = strings.Join(strings.Fields(t), " ")
	}
	if t != "" {
		h.sc.blocks = append(h.sc.blocks, htmlBlock{start: h.curStart, end: h.curEnd, text: t, heading: h.curHeading, pre: pre})
	}
	h.curStart, h.curEnd = 0, 0
}

// text takes a text token that starts on line tokLine.
func (h *htmlScanner) text(raw []byte, tokLine int) {
	if h.inTitle {
		h.title.Write(h.z.Text())
		return
	}
	if len(h.skip) > 0 {
		return
	}
	first, last := visibleLines(raw, tokLine)
	if first == 0 {
		if h.inPre > 0 {
			h.cur.Write(h.z.Text())
		} else if h.cur.Len() > 0 {
			h.cur.WriteByte(' ')
		}
		return
	}
	if h.curStart == 0 {
		h.curStart = first
	}
	h.curEnd = last
	h.cur.Write(h.z.Text())
}

// tag takes a start, end or self-closing tag.
func (h *htmlScanner) tag(tt html.TokenType) {
	name, hasAttr := h.z.TagName()
	a := atom.Lookup(name)
	start := tt != html.EndTagToken
	if start && a == atom.Html && hasAttr {
		for {
			k, v, more := h.z.TagAttr()
			if string(k) == "lang" {
				h.sc.lang = strings.ToLower(strings.TrimSpace(string(v)))
			}
			if !more {
				break
			}
		}
	}
	if a == atom.Title {
		h.inTitle = tt == html.StartTagToken
		return
	}
	if a == atom.Body && start {
		h.skip = h.skip[:0]
	}
	if htmlSkip[a] {
		if tt == html.StartTagToken {
			h.skip = append(h.skip, a)
		} else if tt == html.EndTagToken {
			for k := len(h.skip) - 1; k >= 0; k-- {
				if h.skip[k] == a {
					h.skip = h.skip[:k]
					break
				}
			}
		}
		return
	}
	if len(h.skip) > 0 {
		return
	}
	if lvl := headingLevel(a); lvl > 0 {
		h.flush()
		h.curHeading = 0
		if tt == html.StartTagToken {
			h.curHeading = lvl
		}
		return
	}
	switch {
	case a == atom.Pre:
		h.flush()
		if tt == html.StartTagToken {
			h.inPre++
			h.sc.pres++
		} else if tt == html.EndTagToken && h.inPre > 0 {
			h.inPre--
		}
	case htmlBlockTags[a]:
		h.flush()
	case a == atom.Td || a == atom.Th:
		h.cur.WriteByte(' ')
	}
}

// visibleLines returns the lines of the first and last non-space bytes of
// a text token that starts on line; 0, 0 when it is all white space.
func visibleLines(raw []byte, line int) (int, int) {
	first, last := -1, -1
	for i, c := range raw {
		if !isSpaceByte(c) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return 0, 0
	}
	a := line
	for _, c := range raw[:first] {
		if c == '\n' {
			a++
		}
	}
	b := a
	for _, c := range raw[first:last] {
		if c == '\n' {
			b++
		}
	}
	return a, b
}

// Extract implements Extractor.
func (htmlExtractor) Extract(p string, text string) (Extracted, error) {
	sc := scanHTML(text)
	items := groupBlocks(sc.blocks)

	title := sc.title
	for _, it := range items {
		if title == "" && it.heading == 1 {
			title = it.headText
		}
	}
	if title == "" {
		title = fileTitle(p)
	}
	units := []Unit{{
		Level:     LevelDocument,
		Parent:    -1,
		Title:     title,
		StartLine: 1,
		EndLine:   len(splitLines(text)),
		Channel:   ChannelText,
	}}

	type level struct {
		n    int
		text string
	}
	var stack []level
	first := len(items)
	for k, it := range items {
		if it.heading > 0 {
			first = k
			break
		}
	}
	units = htmlSection(units, title, []string{}, items[:first])
	for k := first; k < len(items); {
		h := items[k]
		m := k + 1
		for m < len(items) && items[m].heading == 0 {
			m++
		}
		for len(stack) > 0 && stack[len(stack)-1].n >= h.heading {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, level{h.heading, h.headText})
		hp := make([]string, len(stack))
		for i, l := range stack {
			hp[i] = l.text
		}
		units = htmlSection(units, h.headText, hp, items[k:m])
		k = m
	}

	facets := map[string]string{"has_code_blocks": strconv.FormatBool(sc.pres > 0)}
	if sc.lang != "" {
		facets["lang"] = sc.lang
	}
	return Extracted{Kind: KindHTML, Language: LangHTML, Title: title, Facets: facets, Units: units}, nil
}

// groupBlocks merges blocks that share a source line into items.
func groupBlocks(blocks []htmlBlock) []htmlItem {
	var items []htmlItem
	for _, bl := range blocks {
		if n := len(items); n > 0 && bl.start <= items[n-1].end {
			it := &items[n-1]
			if bl.end > it.end {
				it.end = bl.end
			}
			it.pre = it.pre && bl.pre
			it.tokens += EstimateTokens(bl.text)
			it.blocks = append(it.blocks, bl)
			continue
		}
		it := htmlItem{start: bl.start, end: bl.end, pre: bl.pre, tokens: EstimateTokens(bl.text), blocks: []htmlBlock{bl}}
		if bl.heading > 0 {
			it.heading, it.headText = bl.heading, clipTo(bl.text, headingMax)
		}
		items = append(items, it)
	}
	for i := range items {
		texts := make([]string, len(items[i].blocks))
		for k, bl := range items[i].blocks {
			texts[k] = bl.text
		}
		items[i].text = strings.Join(texts, "\n")
	}
	return items
}

// htmlPiece is the text of one leaf and the source lines it spans.
type htmlPiece struct {
	start, end int
	text       string
	pre        bool
}

// htmlSection appends a section over items (and its chunks when large).
// An item that is long is alone in its chunk and cut into pieces.
func htmlSection(units []Unit, title string, headingPath []string, items []htmlItem) []Unit {
	if len(items) == 0 {
		return units
	}
	total, long := 0, false
	tok := make([]int, len(items))
	score := make([]int, len(items))
	for i, it := range items {
		total += it.tokens
		tok[i] = it.tokens
		score[i] = breakBest
		if it.long() {
			long = true
			tok[i] = ChunkMaxTokens + 1
		}
	}
	var parts [][2]int
	if long || total > ChunkMaxTokens && len(items) > 1 {
		parts = packItems(tok, score)
	}
	if len(parts) == 0 {
		parts = [][2]int{{0, len(items)}}
	}
	var pieces []htmlPiece
	for _, pt := range parts {
		its := items[pt[0]:pt[1]]
		if len(its) == 1 && its[0].long() {
			pieces = append(pieces, its[0].pieces()...)
			continue
		}
		p := htmlPiece{start: its[0].start, end: its[len(its)-1].end, pre: true}
		texts := make([]string, len(its))
		for i, it := range its {
			texts[i] = it.text
			p.pre = p.pre && it.pre
		}
		p.text = strings.Join(texts, "\n")
		pieces = append(pieces, p)
	}
	leaf := func(level string, parent int, p htmlPiece) Unit {
		channel := ChannelText
		if p.pre {
			channel = ChannelCode
		}
		return Unit{
			Level: level, Parent: parent, Title: title, HeadingPath: headingPath,
			StartLine: p.start, EndLine: p.end, Channel: channel, Text: p.text,
		}
	}
	if len(pieces) <= 1 {
		return append(units, leaf(LevelSection, 0, pieces[0]))
	}
	all := htmlPiece{start: items[0].start, end: items[len(items)-1].end, pre: true}
	for _, it := range items {
		all.pre = all.pre && it.pre
	}
	idx := len(units)
	units = append(units, leaf(LevelSection, 0, all))
	units[idx].Text = ""
	for _, p := range pieces {
		units = append(units, leaf(LevelChunk, idx, p))
	}
	return units
}

// pieces cuts a long item: its lines of text (a block is one line, a pre
// block keeps its lines) are grouped into chunks, each spanning the source
// lines of its blocks, and a line longer than the limits is cut into
// windows (lineWindows) that span its block's lines.
func (it htmlItem) pieces() []htmlPiece {
	var lines []htmlPiece
	var tok, score []int
	for _, bl := range it.blocks {
		for k, line := range strings.Split(bl.text, "\n") {
			if isBlank(line) {
				continue
			}
			n := EstimateTokens(line)
			s := breakOK
			if k == 0 {
				s = breakBest
			}
			if isLongLine(line, n) {
				n = ChunkMaxTokens + 1
			}
			lines = append(lines, htmlPiece{start: bl.start, end: bl.end, text: line, pre: bl.pre})
			tok, score = append(tok, n), append(score, s)
		}
	}
	var out []htmlPiece
	for _, pt := range packItems(tok, score) {
		ls := lines[pt[0]:pt[1]]
		if len(ls) == 1 && tok[pt[0]] > ChunkMaxTokens {
			start := 0
			for _, end := range lineWindows(ls[0].text) {
				if w := ls[0].text[start:end]; !isBlank(w) {
					out = append(out, htmlPiece{start: ls[0].start, end: ls[0].end, text: w, pre: ls[0].pre})
				}
				start = end
			}
			continue
		}
		p := htmlPiece{start: ls[0].start, end: ls[0].end, pre: true}
		texts := make([]string, len(ls))
		for i, l := range ls {
			texts[i] = l.text
			p.start, p.end = min(p.start, l.start), max(p.end, l.end)
			p.pre = p.pre && l.pre
		}
		p.text = strings.Join(texts, "\n")
		out = append(out, p)
	}
	return out
}
