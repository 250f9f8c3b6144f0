package render

import "strings"

// Exact counting by parts.
//
// A tiktoken encoder first splits its input into pieces with a regular
// expression, then byte-pair-merges inside each piece; no token crosses a
// piece boundary. So if position p of a string X+Y is a piece boundary both
// of X+Y and of X and Y alone, count(X+Y) = count(X) + count(Y), exactly.
// splits recognizes positions that are piece boundaries for both the
// o200k_base and the cl100k_base split expressions from the characters
// around them alone (the last two before, the first after, or for rule B
// the indentation after and the character that ends it), whatever
// precedes or follows:
//
//	A  two ASCII punctuation characters, the first not '/', then an ASCII
//	   letter or digit ("[{\"|e", "\":|4"): the first is inside an atomic
//	   "[^\s\p{L}\p{N}]+" run, which takes the second and stops at the
//	   letter or digit. (A '/' may instead end the "[\r\n/]*" tail of an
//	   o200k run — "\n/" — leaving the next character free to start a
//	   piece with the letter: "\\n".)
//	B  '\n', then a printable ASCII character other than '/' ("\n|#"),
//	   or spaces and tabs and then any printable ASCII character
//	   ("\n|\t//"): every alternative that can cover a line feed
//	   ("\s*[\r\n]+", which ends at the last line feed of its run of
//	   white space, or the "[\r\n/]*" tail of a punctuation run, which
//	   a space or a tab ends) stops at it. An indented line of code
//	   starts a piece of its own.
//	C  an ASCII letter, then ASCII punctuation other than '\'' ("e|}"):
//	   letter pieces only extend over letters and "'s"-style suffixes.
//	D  an ASCII digit, then ASCII punctuation other than '\'' or an ASCII
//	   letter ("1|,"): digits form "\p{N}{1,3}" pieces of their own.
//
// Every piece starts where the previous one ends and the expressions have no
// look-behind, so the pieces left of such a position and right of it are the
// same in X, in Y and in X+Y. The property tests recount whole outputs to
// keep this honest.

func isLetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }
func isDigit(b byte) bool  { return b >= '0' && b <= '9' }
func isPunct(b byte) bool  { return b > ' ' && b < 0x7f && !isLetter(b) && !isDigit(b) }

// splits reports whether the boundary between prev and next is a piece
// boundary by rules A–D above. An empty side always splits.
func splits(prev, next string) bool {
	if prev == "" || next == "" {
		return true
	}
	p, n := prev[len(prev)-1], next[0]
	switch {
	case (isLetter(n) || isDigit(n)) && isPunct(p) && len(prev) >= 2 && isPunct(prev[len(prev)-2]) && prev[len(prev)-2] != '/':
		return true // A
	case p == '\n':
		if n == ' ' || n == '\t' {
			i := 1
			for i < len(next) && (next[i] == ' ' || next[i] == '\t') {
				i++
			}
			return i < len(next) && next[i] > ' ' && next[i] < 0x7f // B, indented
		}
		return n > ' ' && n < 0x7f && n != '/' // B
	case isLetter(p):
		return isPunct(n) && n != '\'' // C
	case isDigit(p):
		return isPunct(n) && n != '\'' || isLetter(n) // D
	}
	return false
}

// tally counts strings with one counter and remembers every count it made
// or was given, keyed by the exact string.
type tally struct {
	c    *Counter
	memo map[string]int
	// whole disables counting by parts (Verify's fallback): sum counts the
	// concatenation in one go.
	whole bool
	// shared, when set, is consulted and fed after memo: counts and
	// encodings other fits made of the same strings.
	shared *Memo
}

func newTally(c *Counter) *tally { return &tally{c: c, memo: make(map[string]int, 64)} }

func (t *tally) count(s string) int {
	if s == "" {
		return 0
	}
	if allDigits(s) {
		// Every counter cuts a run of digits into groups of three from
		// its start, each one token (TestDigitRuns): numbers, run ids and
		// search cursors need no encoding and no memo entry.
		return (len(s) + 2) / 3
	}
	if n, ok := t.memo[s]; ok {
		return n
	}
	if t.shared != nil {
		if n, ok := t.shared.count(t.c, s); ok {
			t.memo[s] = n
			return n
		}
	}
	n := t.c.Count(s)
	t.memo[s] = n
	if t.shared != nil {
		t.shared.putCount(t.c, s, n)
	}
	return n
}

// tokenEnds is the counter's tokenEnds, through the shared memo when
// there is one.
func (t *tally) tokenEnds(s string) []int {
	if t.shared != nil {
		return t.shared.tokenEnds(t.c, s)
	}
	return t.c.tokenEnds(s)
}

// sum returns the exact token count of the concatenation of segs, counting
// across boundaries that do not split as one string.
func (t *tally) sum(segs []string) int {
	if t.whole {
		return t.c.Count(strings.Join(segs, ""))
	}
	total := 0
	var group []string
	flush := func() {
		switch len(group) {
		case 0:
		case 1:
			total += t.count(group[0])
		default:
			total += t.count(strings.Join(group, ""))
		}
		group = group[:0]
	}
	for _, s := range segs {
		if s == "" {
			continue
		}
		if len(group) > 0 && splits(group[len(group)-1], s) {
			flush()
		}
		group = append(group, s)
	}
	flush()
	return total
}

// boundStep is about how many bytes upTo counts at a time.
const boundStep = 512

// upTo counts s while the count stays within limit: it returns the exact
// count and true, or, once more than limit tokens are counted, that
// partial count (above limit and at most the exact one) and false. s is
// counted in pieces (nextPieceEnd): a rendered block by its lines, raw
// and escaped, a hit's JSON by its fields. Those are what packing counted
// (pack.go, countPieces) and what other answers show again, so their
// counts are found in the memos.
func (t *tally) upTo(s string, limit int) (int, bool) {
	if n, ok := t.memo[s]; ok {
		return n, true
	}
	if t.whole {
		return t.count(s), true
	}
	if t.shared != nil {
		if n, ok := t.shared.count(t.c, s); ok {
			t.memo[s] = n
			return n, true
		}
	}
	total := 0
	long := len(s) > 2*boundStep
	for start := 0; start < len(s); {
		end := nextPieceEnd(s, start, long)
		if end == len(s) && start == 0 {
			return t.count(s), true // one piece: count (and remember) it once
		}
		total += t.count(s[start:end])
		start = end
		if total > limit && start < len(s) {
			return total, false
		}
	}
	t.memo[s] = total
	if t.shared != nil {
		t.shared.putCount(t.c, s, total)
	}
	return total, true
}

// nextPieceEnd returns the end of the piece of s that starts at start
// (upTo, countPieces): the first position after it where s splits and a
// line ends (after a line feed, or after the two bytes of its JSON
// escape) or a JSON field starts (after `,"`, before a letter); when
// long, also any position where it splits at least boundStep bytes on
// (text without such positions, CJK say, stays one piece: the hit that
// ends an answer is not tokenized whole only to learn that it does not
// fit); or len(s). A `\n` or `,"` inside a string value only adds a
// position to check: splits decides.
func nextPieceEnd(s string, start int, long bool) int {
	for i := start + 1; i < len(s); i++ {
		cut := s[i-1] == '\n' ||
			i >= 2 && (s[i-2] == '\\' && s[i-1] == 'n' || s[i-2] == ',' && s[i-1] == '"' && isLetter(s[i]))
		if (cut || long && i >= start+boundStep) && splits(s[:i], s[i:]) {
			return i
		}
	}
	return len(s)
}

// pieces cuts s into upTo's pieces.
func pieces(s string) []string {
	var out []string
	long := len(s) > 2*boundStep
	for start := 0; start < len(s); {
		end := nextPieceEnd(s, start, long)
		out = append(out, s[start:end])
		start = end
	}
	return out
}

// countPieces is c.Count(s), counted by upTo's pieces: what packing
// counts of a hit is then found again when the fit counts it.
func countPieces(c *Counter, s string) int {
	n := 0
	for _, p := range pieces(s) {
		n += c.Count(p)
	}
	return n
}

// splitNumbers cuts s around its runs of ASCII digits where they split,
// so that when only numbers change — used_tokens and its neighbours during
// the fixed point — the text between them is found in the memo.
func splitNumbers(s string) []string {
	var segs []string
	start := 0
	cut := func(at int) {
		if at > start && at < len(s) && splits(s[:at], s[at:]) {
			segs = append(segs, s[start:at])
			start = at
		}
	}
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		cut(i)
		cut(j)
		i = j
	}
	return append(segs, s[start:])
}

// prefixCounter counts head + s[:m] + tail exactly for many m (the line
// boundaries a cut may fall on) without recounting all of s[:m] each time:
// s is encoded once, and the tokens between two splitting positions of s are
// read off that encoding.
type prefixCounter struct {
	t    *tally
	s    string
	lim  int   // s[:lim] was encoded
	ends []int // token ends of s[:lim]; nil: no encoding
	a0   int   // first splitting position of s inside s[:lim], or -1
}

// newPrefixCounter encodes enough of s to cover about need tokens.
func newPrefixCounter(t *tally, s string, need int) *prefixCounter {
	p := &prefixCounter{t: t, s: s, a0: -1}
	if t.whole {
		return p
	}
	lim := min(len(s), 5*(need+16))
	for {
		lim = runeEnd(s, lim)
		p.lim, p.ends = lim, t.tokenEnds(s[:lim])
		if p.ends == nil || lim == len(s) || len(p.ends) > need+16 {
			break
		}
		// Text of long tokens (rules of '=', runs of spaces) covers need
		// in more than 5 bytes a token: encode more, never past the end.
		lim = min(len(s), 2*lim)
	}
	for a := 2; a < p.lim; a++ {
		if splits(s[:a], s[a:]) {
			if _, ok := tokensBefore(p.ends, a); ok {
				p.a0 = a
				break
			}
		}
	}
	return p
}

// runeEnd moves i forward to the start of a rune (or len(s)).
func runeEnd(s string, i int) int {
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return i
}

// estimate approximates the tokens of s[:m] from the encoding of s (exact
// when m is a splitting position, off by a token or two otherwise).
func (p *prefixCounter) estimate(m int) int {
	if p.ends == nil {
		return m // an upper bound
	}
	if m > p.lim {
		// Beyond the encoded part: extrapolate at the observed density.
		return len(p.ends) + (m-p.lim)*len(p.ends)/max(p.lim, 1) + 1
	}
	n, _ := tokensBefore(p.ends, m)
	return n
}

// count returns the exact token count of head + s[:m] + tail, for
// 0 < m <= len(s).
//
// A position a < m that splits in s splits in head+s[:m]+tail too: what
// rule B reads after a (an indentation and the character that ends it)
// lies before m, which is the start of a line.
func (p *prefixCounter) count(head string, m int, tail string) int {
	if p.ends != nil && p.a0 > 0 && p.a0 < m {
		for a := min(m-1, p.lim-1); a >= p.a0; a-- {
			if !splits(p.s[:a], p.s[a:]) {
				continue
			}
			ta, ok := tokensBefore(p.ends, a)
			if !ok {
				continue // not a token end after all: do not trust it
			}
			t0, _ := tokensBefore(p.ends, p.a0)
			return p.t.count(head+p.s[:p.a0]) + (ta - t0) + p.t.count(p.s[a:m]+tail)
		}
	}
	return p.t.count(head + p.s[:m] + tail)
}

// allDigits reports whether s is ASCII digits only.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
