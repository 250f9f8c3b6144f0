package sources

import (
	"strings"
	"unicode/utf8"
)

// Chunk sizes, in tokens as EstimateTokens counts them.
//
// Levels and text: leaves carry text. Every extraction is a tree of units:
// Units[0] is the document, its children are sections (or, for text and
// data files, chunks), and a section that is too large has chunks. Only
// the leaves (units without children: chunks, and sections small enough
// to stay whole) carry Text, and they are what gets indexed; the document
// and chunked sections have Text == "", so no text is stored twice. For
// verbatim kinds a leaf's Text is exactly its lines StartLine..EndLine
// joined with "\n", and the leaves cover every non-blank line once; an HTML
// leaf's Text is the visible text of its lines.
//
// A section (a heading's text, a declaration, a run of paragraphs) of at
// most ChunkMaxTokens is kept whole: it is a leaf and carries its text. A
// larger section is cut into chunks at line boundaries, each chunk aiming at
// ChunkTargetTokens and staying within ChunkMinTokens..ChunkMaxTokens where
// the lines allow: the cut goes where it hurts least (before a paragraph, a
// fence, a statement at the body's indentation) among the places that keep
// the chunk in range. A line is never cut, so a single line longer than
// ChunkMaxTokens (minified code, a huge table row) becomes a chunk of its
// own, however large. A last chunk smaller than half of ChunkMinTokens is
// merged into the one before it when the two fit in ChunkMaxTokens.
const (
	ChunkMinTokens    = 200
	ChunkTargetTokens = 300
	ChunkMaxTokens    = 512
)

// Break scores tell the chunker how good a place the start of an item is
// for a new chunk.
const (
	breakAvoid = 0 // inside a fence, a string, a table: cut only if forced
	breakOK    = 1 // any other line
	breakGood  = 2 // a statement or list item at the outer level
	breakBest  = 3 // a paragraph, block or fence starts here
)

// EstimateTokens is a cheap, single-pass estimate of how many tokens a
// BPE tokenizer such as o200k_base makes of s. Each run of ASCII letters,
// digits and underscores counts one token per seven bytes (rounded up), each
// run of ASCII punctuation one per two bytes (rounded up), each non-ASCII
// character one, and whitespace nothing. Against o200k_base it comes to
// 0.94-0.96 of the real count on Go source and 0.89-1.04 on markdown, HTML
// and Python (0.82 on table-heavy code), which is all chunking needs; exact
// counts for budgets are the render package's business.
//
// The estimate is additive over lines: the estimate of lines joined by "\n"
// is the sum of their estimates.
func EstimateTokens(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			_, size := utf8.DecodeRuneInString(s[i:])
			n++
			i += size
		case isWordByte(c):
			j := i + 1
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			n += (j - i + 6) / 7
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		default:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && !isWordByte(s[j]) && !isSpaceByte(s[j]) {
				j++
			}
			n += (j - i + 1) / 2
			i = j
		}
	}
	return n
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// splitLines splits text into its lines. A final "\n" ends the last line;
// it does not start an empty one, so "a\nb\n" and "a\nb" both have two
// lines and "" has none. A "\r" before a "\n" stays part of its line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	text = strings.TrimSuffix(text, "\n")
	return strings.Split(text, "\n")
}

// isBlank reports whether a line holds only white space.
func isBlank(line string) bool {
	for i := 0; i < len(line); i++ {
		if !isSpaceByte(line[i]) {
			return false
		}
	}
	return true
}

// packItems groups consecutive items into chunks and returns them as
// half-open index ranges [from, to). tok[i] is item i's token estimate,
// score[i] (breakAvoid..breakBest) how good a place the start of item i is
// for a new chunk. See the Chunk* constants for the rules.
func packItems(tok, score []int) [][2]int {
	n := len(tok)
	var out [][2]int
	var sums []int
	for start := 0; start < n; {
		sum, best, bestScore, bestDist := 0, -1, -1, 0
		i := start
		for ; i < n; i++ {
			if i > start && sum >= ChunkMinTokens {
				dist := sum - ChunkTargetTokens
				if dist < 0 {
					dist = -dist
				}
				if s := score[i]; s > bestScore || s == bestScore && dist < bestDist {
					best, bestScore, bestDist = i, s, dist
				}
			}
			if i > start && sum+tok[i] > ChunkMaxTokens {
				break
			}
			sum += tok[i]
		}
		cut := i
		if i < n && best > start && bestScore > breakAvoid {
			cut = best
		}
		s := 0
		for k := start; k < cut; k++ {
			s += tok[k]
		}
		out = append(out, [2]int{start, cut})
		sums = append(sums, s)
		start = cut
	}
	if k := len(out); k >= 2 && sums[k-1] < ChunkMinTokens/2 && sums[k-2]+sums[k-1] <= ChunkMaxTokens {
		out[k-2][1] = out[k-1][1]
		out = out[:k-1]
	}
	return out
}

// builder accumulates the units of one extraction over the lines of a
// verbatim file (markdown, code, text), enforcing the rules the Extractor
// contract promises: every span is trimmed of blank lines at both ends,
// leaves carry exactly the text of their lines, and parents come first.
type builder struct {
	lines  []string
	tok    []int // token estimate per line, filled lazily
	units  []Unit
	filled bool
}

func newBuilder(text string) *builder {
	return &builder{lines: splitLines(text)}
}

func (b *builder) lineTokens() []int {
	if !b.filled {
		b.tok = make([]int, len(b.lines))
		for i, l := range b.lines {
			b.tok[i] = EstimateTokens(l)
		}
		b.filled = true
	}
	return b.tok
}

// document adds Units[0], spanning every line of the file. An empty file's
// document spans 1..0.
func (b *builder) document(title string) {
	b.units = append(b.units, Unit{
		Level:     LevelDocument,
		Parent:    -1,
		Title:     title,
		StartLine: 1,
		EndLine:   len(b.lines),
		Channel:   ChannelText,
	})
}

// trim narrows the 0-based, half-open line range [from, to) to exclude
// blank lines at both ends. It returns from == to when all lines are blank.
func (b *builder) trim(from, to int) (int, int) {
	for from < to && isBlank(b.lines[from]) {
		from++
	}
	for to > from && isBlank(b.lines[to-1]) {
		to--
	}
	return from, to
}

// text returns the lines [from, to) joined by "\n".
func (b *builder) text(from, to int) string {
	return strings.Join(b.lines[from:to], "\n")
}

// section adds a section over the 0-based, half-open range [from, to) and,
// when it is larger than ChunkMaxTokens, its chunks. score gives the break
// score of a line (nil: blank-line paragraphs); channel gives the channel of
// a span (nil: ChannelText). A range of blank lines adds nothing. The
// section is parented to the document.
func (b *builder) section(title string, headingPath []string, from, to int, score func(i int) int, channel func(from, to int) string) {
	b.span(LevelSection, 0, title, headingPath, from, to, score, channel)
}

// chunks adds the range [from, to) as chunks directly under the document,
// with no section between (plain text has no structure to name).
func (b *builder) chunks(title string, from, to int, score func(i int) int, channel func(from, to int) string) {
	b.span(LevelChunk, 0, title, nil, from, to, score, channel)
}

func (b *builder) span(level string, parent int, title string, headingPath []string, from, to int, score func(i int) int, channel func(from, to int) string) {
	from, to = b.trim(from, to)
	if from >= to {
		return
	}
	if channel == nil {
		channel = func(int, int) string { return ChannelText }
	}
	if score == nil {
		score = b.paragraphScore
	}
	tok := b.lineTokens()
	total := 0
	for i := from; i < to; i++ {
		total += tok[i]
	}
	var parts [][2]int
	if total > ChunkMaxTokens && to-from > 1 {
		scores := make([]int, to-from)
		for i := range scores {
			scores[i] = score(from + i)
		}
		parts = packItems(tok[from:to], scores)
	}
	if level == LevelChunk || len(parts) <= 1 {
		// A leaf: the whole range in one unit (or, for chunks directly
		// under the document, one unit per part).
		if len(parts) <= 1 {
			parts = [][2]int{{0, to - from}}
		}
		for _, p := range parts {
			b.leaf(level, parent, title, headingPath, from+p[0], from+p[1], channel)
		}
		return
	}
	idx := len(b.units)
	b.units = append(b.units, Unit{
		Level:       level,
		Parent:      parent,
		Title:       title,
		HeadingPath: headingPath,
		StartLine:   from + 1,
		EndLine:     to,
		Channel:     channel(from, to),
	})
	for _, p := range parts {
		b.leaf(LevelChunk, idx, title, headingPath, from+p[0], from+p[1], channel)
	}
}

// leaf adds one unit carrying text, after trimming blank edge lines.
func (b *builder) leaf(level string, parent int, title string, headingPath []string, from, to int, channel func(from, to int) string) {
	from, to = b.trim(from, to)
	if from >= to {
		return
	}
	b.units = append(b.units, Unit{
		Level:       level,
		Parent:      parent,
		Title:       title,
		HeadingPath: headingPath,
		StartLine:   from + 1,
		EndLine:     to,
		Channel:     channel(from, to),
		Text:        b.text(from, to),
	})
}

// paragraphScore prefers cutting where a paragraph starts.
func (b *builder) paragraphScore(i int) int {
	if i > 0 && isBlank(b.lines[i-1]) && !isBlank(b.lines[i]) {
		return breakBest
	}
	return breakOK
}
