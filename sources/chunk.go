package sources

import (
	"slices"
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
// joined with "\n", or a window of one long line (see MaxLineBytes), and
// the leaves cover every non-blank line once; an HTML leaf's Text is the
// visible text of its lines.
//
// A section (a heading's text, a declaration, a run of paragraphs) of at
// most ChunkMaxTokens is kept whole: it is a leaf and carries its text. A
// larger section is cut into chunks at line boundaries, each chunk aiming at
// ChunkTargetTokens and staying within ChunkMinTokens..ChunkMaxTokens where
// the lines allow: the cut goes where it hurts least (before a paragraph, a
// fence, a statement at the body's indentation) among the places that keep
// the chunk in range. A line is cut only when it is long (see
// MaxLineBytes). A last chunk smaller than half of ChunkMinTokens is
// merged into the one before it when the two fit in ChunkMaxTokens.
const (
	ChunkMinTokens    = 200
	ChunkTargetTokens = 300
	ChunkMaxTokens    = 512
)

// MaxLineBytes and MaxLineTokens bound a line of a unit's text. A line
// longer than either (minified code, a data dump, a very long paragraph
// written as one line) is cut into windows (lineWindows): each window is a
// leaf of its own spanning that one line, within both bounds, and its
// Text is that part of the line. The bounds are far above a paragraph of
// prose written as one line (an abstract of 300 words is about 2 KiB and
// 500 tokens, and is not cut), and below the default budget of 4,000
// tokens: since a token is at least one byte, no line of a unit is over
// 3,584 tokens in any encoding, so a budget can show part of any unit,
// cut at its lines.
const (
	MaxLineBytes  = 3584
	MaxLineTokens = 1024
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

// isLongLine reports whether a line must be cut into windows.
func isLongLine(line string, tokens int) bool {
	return len(line) > MaxLineBytes || tokens > MaxLineTokens
}

// lineWindows returns where the windows of a long line end: window k is
// line[ends[k-1]:ends[k]] (the first starts at 0, the last ends at
// len(line)), so the windows in order are the line. Each window is as long
// as MaxLineBytes and MaxLineTokens (EstimateTokens of the window) allow,
// backed off to the last white space in its second half, or failing that
// to the last place in its second half that does not split a word (a run
// of letters, digits and underscores, or of non-ASCII characters), or
// failing that cut where the limits fall; never inside a UTF-8 sequence.
// A line within both limits is one window.
func lineWindows(line string) []int {
	var ends []int
	for start := 0; start < len(line); {
		end := windowReach(line, start)
		if end < len(line) {
			end = windowBreak(line, start, end)
		}
		ends = append(ends, end)
		start = end
	}
	return ends
}

// windowReach returns the furthest end of a window starting at start that
// stays within MaxLineBytes and MaxLineTokens. It counts as EstimateTokens
// does over line[start:end]: a run cut by the window's end costs what is
// left of it. It always takes at least one character.
func windowReach(line string, start int) int {
	limit := min(len(line), start+MaxLineBytes)
	left := MaxLineTokens
	i := start
	for i < limit {
		c := line[i]
		switch {
		case c >= utf8.RuneSelf:
			_, size := utf8.DecodeRuneInString(line[i:])
			if left == 0 || i+size > limit {
				return i
			}
			left--
			i += size
		case !isSpaceByte(c):
			word := isWordByte(c)
			per := 2 // bytes per token: 7 for a word run, 2 for punctuation
			if word {
				per = 7
			}
			j := i + 1
			for j < limit && (word && isWordByte(line[j]) || !word && line[j] < utf8.RuneSelf && !isWordByte(line[j]) && !isSpaceByte(line[j])) {
				j++
			}
			need := (j - i + per - 1) / per
			if need > left {
				return i + left*per
			}
			left -= need
			i = j
		default:
			i++
		}
	}
	return i
}

// windowBreak moves the end of a window [start, end) back to a better
// place in its second half: next to white space, else between two
// characters that are not both part of a word; end itself when there is
// none.
func windowBreak(line string, start, end int) int {
	low := start + (end-start)/2 + 1
	for p := end; p >= low; p-- {
		if isSpaceByte(line[p-1]) || isSpaceByte(line[p]) {
			return p
		}
	}
	wordish := func(c byte) bool { return isWordByte(c) || c >= utf8.RuneSelf }
	for p := end; p >= low; p-- {
		if utf8.RuneStart(line[p]) && !(wordish(line[p-1]) && wordish(line[p])) {
			return p
		}
	}
	return end
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
	total, long := 0, false
	for i := from; i < to; i++ {
		total += tok[i]
		long = long || isLongLine(b.lines[i], tok[i])
	}
	var parts [][2]int
	if long || total > ChunkMaxTokens && to-from > 1 {
		scores := make([]int, to-from)
		sizes := slices.Clone(tok[from:to])
		for i := range scores {
			scores[i] = score(from + i)
			if isLongLine(b.lines[from+i], sizes[i]) {
				sizes[i] = ChunkMaxTokens + 1 // alone in its part
			}
		}
		parts = packItems(sizes, scores)
	}
	if len(parts) == 0 {
		parts = [][2]int{{0, to - from}}
	}
	leaves := b.pieces(from, parts)
	if level == LevelChunk || len(leaves) <= 1 {
		// A leaf: the whole range in one unit (or, for chunks directly
		// under the document, one unit per piece).
		for _, p := range leaves {
			b.leaf(level, parent, title, headingPath, p, channel)
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
	for _, p := range leaves {
		b.leaf(LevelChunk, idx, title, headingPath, p, channel)
	}
}

// piece is the text of one leaf: the lines [from, to) trimmed of blank
// lines at both ends, or one window of the long line from.
type piece struct {
	from, to int
	text     string
}

// pieces turns parts (ranges relative to from) into the pieces of their
// leaves: a part made of one long line gives one piece per window that is
// not all white space; a part of blank lines gives none.
func (b *builder) pieces(from int, parts [][2]int) []piece {
	tok := b.lineTokens()
	var out []piece
	for _, p := range parts {
		lo, hi := b.trim(from+p[0], from+p[1])
		if lo >= hi {
			continue
		}
		if line := b.lines[lo]; hi-lo > 1 || !isLongLine(line, tok[lo]) {
			out = append(out, piece{lo, hi, b.text(lo, hi)})
			continue
		}
		line, start := b.lines[lo], 0
		for _, end := range lineWindows(line) {
			if w := line[start:end]; !isBlank(w) {
				out = append(out, piece{lo, lo + 1, w})
			}
			start = end
		}
	}
	return out
}

// leaf adds one unit carrying the text of a piece.
func (b *builder) leaf(level string, parent int, title string, headingPath []string, p piece, channel func(from, to int) string) {
	b.units = append(b.units, Unit{
		Level:       level,
		Parent:      parent,
		Title:       title,
		HeadingPath: headingPath,
		StartLine:   p.from + 1,
		EndLine:     p.to,
		Channel:     channel(p.from, p.to),
		Text:        p.text,
	})
}

// paragraphScore prefers cutting where a paragraph starts.
func (b *builder) paragraphScore(i int) int {
	if i > 0 && isBlank(b.lines[i-1]) && !isBlank(b.lines[i]) {
		return breakBest
	}
	return breakOK
}
