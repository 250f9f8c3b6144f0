package sources

import (
	"strconv"
	"strings"
)

const (
	markdownExtractorName    = "markdown"
	markdownExtractorVersion = "5" // 2: heading attribute blocks dropped; 3: long lines are cut into windows; 4: Greek letters named, and hyphens between letters and digits dropped, in the units' code terms; 5: the same, whatever stands around the letter, as the index folds it

	// headingMax is the longest heading kept as a title, in runes.
	headingMax = 200

	// bom is a byte order mark, ignored at the start of a file.
	bom = "\ufeff"

	// fenceLookahead bounds how far an indented fence opener (4+ spaces,
	// as inside a list item) looks for its closer before it is taken for
	// an indented code line instead.
	fenceLookahead = 2000
)

// markdownExtractor splits a markdown document into sections at its
// headings (ATX "# Title" and setext "Title\n====="), each keeping its
// heading path. A section runs from its heading line to the line before the
// next heading of any level; text before the first heading is a section
// with an empty heading path. Lines inside fenced code blocks (``` or ~~~)
// and HTML comments are never headings. Front matter (--- YAML --- or
// +++ TOML +++ on the first line) is a section of its own on
// ChannelMetadata, titled "front matter"; its title field, when it has one,
// is the document title. Otherwise the title is the first level-1 heading,
// else the file name.
type markdownExtractor struct{}

func (markdownExtractor) Name() string    { return markdownExtractorName }
func (markdownExtractor) Version() string { return markdownExtractorVersion }

// mdHeading is a heading found by the scan: the section it opens starts at
// line start (0-based; the first line of a setext heading's paragraph).
type mdHeading struct {
	start int
	level int
	text  string
}

// mdScan is what one pass over a markdown document finds.
type mdScan struct {
	fmEnd    int    // lines [0, fmEnd) are front matter; 0 when none
	fmTitle  string // front matter title
	headings []mdHeading
	fence    []bool // line is part of a fenced code block (markers included)
	opener   []bool // line opens a fence
	fences   int
}

// Extract implements Extractor.
func (markdownExtractor) Extract(p string, text string) (Extracted, error) {
	b := newBuilder(text)
	sc := scanMarkdown(b.lines)

	title := sc.fmTitle
	maxDepth := 0
	for _, h := range sc.headings {
		if title == "" && h.level == 1 && h.text != "" {
			title = h.text
		}
		if h.level > maxDepth {
			maxDepth = h.level
		}
	}
	if title == "" {
		title = fileTitle(p)
	}
	b.document(title)

	score := func(i int) int { return markdownScore(b.lines, sc, i) }
	channel := func(from, to int) string {
		for i := from; i < to; i++ {
			if !sc.fence[i] && !isBlank(b.lines[i]) {
				return ChannelText
			}
		}
		return ChannelCode
	}
	if sc.fmEnd > 0 {
		b.section("front matter", []string{}, 0, sc.fmEnd, score, func(int, int) string { return ChannelMetadata })
	}
	first := len(b.lines)
	if len(sc.headings) > 0 {
		first = sc.headings[0].start
	}
	b.section(title, []string{}, sc.fmEnd, first, score, channel)

	type level struct {
		n    int
		text string
	}
	var stack []level
	for k, h := range sc.headings {
		for len(stack) > 0 && stack[len(stack)-1].n >= h.level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, level{h.level, h.text})
		hp := make([]string, len(stack))
		for i, l := range stack {
			hp[i] = l.text
		}
		end := len(b.lines)
		if k+1 < len(sc.headings) {
			end = sc.headings[k+1].start
		}
		b.section(h.text, hp, h.start, end, score, channel)
	}

	return Extracted{
		Kind:     KindMarkdown,
		Language: LangMarkdown,
		Title:    title,
		Facets: map[string]string{
			"has_front_matter":  strconv.FormatBool(sc.fmEnd > 0),
			"has_code_blocks":   strconv.FormatBool(sc.fences > 0),
			"max_heading_depth": strconv.Itoa(maxDepth),
		},
		Units: b.units,
	}, nil
}

// markdownScore rates line i as a place to start a chunk.
func markdownScore(lines []string, sc mdScan, i int) int {
	switch {
	case sc.opener[i]:
		return breakBest
	case sc.fence[i]:
		return breakAvoid
	case isBlank(lines[i]):
		return breakOK
	case i > 0 && (isBlank(lines[i-1]) || sc.fence[i-1]):
		return breakBest
	case isTableRow(lines[i]) && i > 0 && isTableRow(lines[i-1]):
		return breakAvoid
	case isListItem(lines[i]):
		return breakGood
	}
	return breakOK
}

// scanMarkdown finds front matter, fences and headings.
func scanMarkdown(lines []string) mdScan {
	sc := mdScan{fence: make([]bool, len(lines)), opener: make([]bool, len(lines))}
	sc.fmEnd, sc.fmTitle = frontMatter(lines)

	var fenceCh byte
	var fenceLen int
	inFence, inComment := false, false
	para := -1 // first line of the current paragraph, -1 outside one
	var look closerCache
	for i := sc.fmEnd; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		if i == 0 {
			line = strings.TrimPrefix(line, bom)
		}
		if inFence {
			sc.fence[i] = true
			if fenceCloses(line, fenceCh, fenceLen) {
				inFence = false
			}
			continue
		}
		if inComment {
			if strings.Contains(line, "-->") {
				inComment = false
			}
			para = -1
			continue
		}
		if isBlank(line) {
			para = -1
			continue
		}
		if ch, n, indent, ok := fenceOpens(line); ok && (indent <= 3 || look.hasCloser(lines, i+1, ch, n)) {
			inFence, fenceCh, fenceLen = true, ch, n
			sc.fence[i], sc.opener[i] = true, true
			sc.fences++
			para = -1
			continue
		}
		if t := strings.TrimLeft(line, " "); strings.HasPrefix(t, "<!--") {
			if !strings.Contains(t[4:], "-->") {
				inComment = true
			}
			para = -1
			continue
		}
		if level, text, ok := atxHeading(line); ok {
			sc.headings = append(sc.headings, mdHeading{start: i, level: level, text: clipTo(stripAttributes(text), headingMax)})
			para = -1
			continue
		}
		if level := setextLevel(line); level > 0 && para >= 0 && setextParagraph(lines[para]) {
			var sb strings.Builder
			for k := para; k < i && sb.Len() <= 4*headingMax; k++ {
				if sb.Len() > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(strings.TrimSpace(lines[k]))
			}
			sc.headings = append(sc.headings, mdHeading{start: para, level: level, text: clipTo(stripAttributes(sb.String()), headingMax)})
			para = -1
			continue
		}
		if para < 0 {
			para = i
		}
	}
	return sc
}

// frontMatter returns the end (exclusive) of front matter starting on the
// first line, and its title field; 0 when the document has none.
func frontMatter(lines []string) (int, string) {
	if len(lines) < 2 {
		return 0, ""
	}
	open := strings.TrimRight(strings.TrimPrefix(lines[0], bom), " \t\r")
	if open != "---" && open != "+++" {
		return 0, ""
	}
	sep := ":"
	if open == "+++" {
		sep = "="
	}
	title := ""
	for i := 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		if l == open || open == "---" && l == "..." {
			return i + 1, title
		}
		if title == "" && strings.HasPrefix(l, "title") {
			rest := strings.TrimLeft(l[len("title"):], " \t")
			if strings.HasPrefix(rest, sep) {
				title = clipTo(unquote(strings.TrimSpace(rest[1:])), headingMax)
			}
		}
	}
	return 0, ""
}

// unquote strips one level of matching single or double quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// leadingSpaces counts the spaces a line starts with.
func leadingSpaces(s string) int {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}

// atxHeading parses "## Title ##" (up to three leading spaces).
func atxHeading(line string) (int, string, bool) {
	i := leadingSpaces(line)
	if i > 3 {
		return 0, "", false
	}
	j := i
	for j < len(line) && line[j] == '#' {
		j++
	}
	level := j - i
	if level < 1 || level > 6 || j < len(line) && line[j] != ' ' && line[j] != '\t' {
		return 0, "", false
	}
	text := strings.TrimSpace(line[j:])
	k := len(text)
	for k > 0 && text[k-1] == '#' {
		k--
	}
	switch {
	case k == 0:
		text = ""
	case text[k-1] == ' ' || text[k-1] == '\t':
		text = strings.TrimSpace(text[:k])
	}
	return level, text, true
}

// stripAttributes drops a trailing attribute block from a heading's text,
// the "{#anchor .class}" of Pandoc, kramdown, MkDocs and Hugo: it names
// the heading's anchor, and is not part of its title. A brace group that
// holds anything else ("Use {braces}") stays.
func stripAttributes(text string) string {
	if !strings.HasSuffix(text, "}") {
		return text
	}
	open := strings.LastIndexByte(text, '{')
	if open <= 0 || text[open-1] != ' ' && text[open-1] != '\t' {
		return text
	}
	inner := strings.TrimSpace(text[open+1 : len(text)-1])
	if inner == "" {
		return text
	}
	for _, f := range strings.Fields(inner) {
		if f[0] != '#' && f[0] != '.' && !strings.Contains(f, "=") || len(f) < 2 {
			return text
		}
	}
	return strings.TrimSpace(text[:open])
}

// setextLevel returns 1 for a "===" underline, 2 for "---", else 0.
func setextLevel(line string) int {
	i := leadingSpaces(line)
	if i > 3 || i >= len(line) || line[i] != '=' && line[i] != '-' {
		return 0
	}
	c := line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if !isBlank(line[j:]) {
		return 0
	}
	if c == '=' {
		return 1
	}
	return 2
}

// setextParagraph reports whether a paragraph starting with line can be a
// setext heading (list items, quotes, tables and HTML cannot).
func setextParagraph(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || isListItem(line) || isTableRow(line) {
		return false
	}
	return t[0] != '>' && t[0] != '<'
}

// fenceOpens parses a fence opener: three or more backticks or tildes
// (a backtick fence's info string may not hold a backtick).
func fenceOpens(line string) (ch byte, n, indent int, ok bool) {
	indent = leadingSpaces(line)
	if indent >= len(line) || line[indent] != '`' && line[indent] != '~' {
		return 0, 0, 0, false
	}
	ch = line[indent]
	j := indent
	for j < len(line) && line[j] == ch {
		j++
	}
	n = j - indent
	if n < 3 || ch == '`' && strings.IndexByte(line[j:], '`') >= 0 {
		return 0, 0, 0, false
	}
	return ch, n, indent, true
}

// fenceCloses reports whether line closes a fence of n ch characters.
func fenceCloses(line string, ch byte, n int) bool {
	t := strings.TrimLeft(line, " \t")
	j := 0
	for j < len(t) && t[j] == ch {
		j++
	}
	return j >= n && isBlank(t[j:])
}

// closerCache remembers, per fence character, a range of lines known to
// hold no closer of at least some length, so that many indented openers
// without closers cost linear time rather than fenceLookahead each.
type closerCache struct {
	until [2]int // lines from the last query up to until[k] ...
	n     [2]int // ... hold no closer of n[k] or more characters
}

// hasCloser looks for a closer within fenceLookahead lines of from.
func (cc *closerCache) hasCloser(lines []string, from int, ch byte, n int) bool {
	k := 0
	if ch == '~' {
		k = 1
	}
	limit := min(from+fenceLookahead, len(lines))
	start := from
	if n >= cc.n[k] && cc.n[k] > 0 && cc.until[k] > start {
		start = cc.until[k]
	}
	for i := start; i < limit; i++ {
		if fenceCloses(lines[i], ch, n) {
			return true
		}
	}
	// [from, limit) now holds no closer of n or more (when the cache was
	// used, n >= its length, so the cached stretch qualifies too).
	cc.until[k], cc.n[k] = limit, n
	return false
}

// isListItem reports whether line starts a list item ("- ", "* ", "+ ",
// "1. ", "1) ").
func isListItem(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	j := 0
	for j < len(t) && j < 9 && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	return j > 0 && j+1 < len(t) && (t[j] == '.' || t[j] == ')') && (t[j+1] == ' ' || t[j+1] == '\t')
}

// isTableRow reports whether line looks like a pipe-table row.
func isTableRow(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, " \t"), "|")
}
