package query

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tychora/tychora/sources"
)

// Snippets.
//
// A hit's snippet is the window of its text, at most snippetBytes long,
// that holds the most of the query: the window maximizing the sum of the
// idf of the distinct terms it contains (plus a little for repeats), found
// with two pointers over the matching tokens. The matches come from the
// same tokenizer scan that ranking uses, limited to the first maxScanBytes
// of the text, so a snippet costs one pass over at most 256 KiB whatever
// the size of the unit. The window is widened to snippetBytes around the
// matches, cut at word boundaries, its white space collapsed, and marked
// with "…" where text was left out.

// snippetBytes is the most bytes of text a snippet shows (before the
// ellipses).
const snippetBytes = 240

// makeSnippet returns the best window of text for the query terms, and
// the byte range [from, to) of the matches on the text's best line
// (bestLine; -1, -1 without any match): the line a place shows first.
func makeSnippet(m *matcher, terms []sterm, text, codeTerms string) (snippet string, from, to int) {
	hits, _ := m.scan(text, nil)
	if missing := missingTerms(hits, terms); missing != 0 && m.anyIn(codeTerms, missing) {
		// A term that matched no whole token is among the text's
		// identifier parts (its code_terms): find where.
		hits = m.partHits(text, hits)
	}
	if len(hits) == 0 {
		end := min(len(text), snippetBytes)
		for end < len(text) && end > 0 && !utf8.RuneStart(text[end]) {
			end--
		}
		return clipWindow(text, 0, end, 0, 0), -1, -1
	}
	counts := make([]int, len(terms))
	bestScore, bestI, bestJ := -1.0, 0, 0
	score := 0.0
	i := 0
	for j := range hits {
		t := hits[j].term
		if counts[t] == 0 {
			score += terms[t].idf
		} else {
			score += terms[t].idf * 0.1
		}
		counts[t]++
		for hits[j].end-hits[i].start > snippetBytes {
			u := hits[i].term
			counts[u]--
			if counts[u] == 0 {
				score -= terms[u].idf
			} else {
				score -= terms[u].idf * 0.1
			}
			i++
		}
		if score > bestScore+1e-9 {
			bestScore, bestI, bestJ = score, i, j
		}
	}
	from, to = int(hits[bestI].start), int(hits[bestJ].end)
	lineFrom, lineTo := bestLine(text, hits, terms, counts)
	// Widen to snippetBytes: up to a third before the matches, the rest
	// after.
	start, end := from, to
	if room := snippetBytes - (to - from); room > 0 {
		start = max(0, from-room/3)
		end = min(len(text), to+room-(from-start))
		if end-start < snippetBytes {
			start = max(0, end-snippetBytes)
		}
	}
	return clipWindow(text, start, end, from, to), lineFrom, lineTo
}

// bestLine is the byte range of the matches on the line, among those of
// hits (in text order), that holds the most of the query: the idf of its
// distinct terms, each repeat a tenth, as the snippet's window is chosen;
// the earliest of equals. The snippet's window is the densest stretch of
// the text, whose repeats can outweigh a line that says it all: for
// "reader writer lock allowing many readers" the window of sync.RWMutex's
// comment is about goroutines that hold the lock, its best line "A
// RWMutex is a reader/writer mutual exclusion lock". counts is scratch
// space of len(terms).
func bestLine(text string, hits []hit, terms []sterm, counts []int) (from, to int) {
	clear(counts)
	best := -1.0
	for a := 0; a < len(hits); {
		end := len(text)
		if k := strings.IndexByte(text[hits[a].end:], '\n'); k >= 0 {
			end = int(hits[a].end) + k
		}
		score := 0.0
		b := a
		for ; b < len(hits) && int(hits[b].start) < end; b++ {
			t := hits[b].term
			if counts[t] == 0 {
				score += terms[t].idf
			} else {
				score += terms[t].idf * 0.1
			}
			counts[t]++
		}
		for _, h := range hits[a:b] {
			counts[h.term] = 0
		}
		if score > best+1e-9 {
			best, from, to = score, int(hits[a].start), int(hits[b-1].end)
		}
		a = b
	}
	return from, to
}

// focusOf is the span of the lines that hold text[from:to), the matches of
// a snippet, in a unit whose text starts at line first; nil when there is
// no match.
func focusOf(text string, first, from, to int) *Span {
	if from < 0 || to <= from || to > len(text) {
		return nil
	}
	a := first + strings.Count(text[:from], "\n")
	b := a + strings.Count(text[from:to-1], "\n")
	return &Span{StartLine: a, EndLine: b}
}

// clipWindow returns text[start:end] moved to word boundaries without
// cutting into text[keepFrom:keepTo], with white space collapsed and
// ellipses where text was cut.
func clipWindow(text string, start, end, keepFrom, keepTo int) string {
	if start > 0 {
		// Start after a space at or after start, unless that skips more
		// than a short word or reaches the kept text.
		for start < keepFrom && !utf8.RuneStart(text[start]) {
			start++
		}
		if k := strings.IndexFunc(text[start:min(keepFrom, start+24)], unicode.IsSpace); k >= 0 {
			start += k
		}
	}
	if end < len(text) {
		for end > keepTo && !utf8.RuneStart(text[end]) {
			end--
		}
		lo := max(keepTo, end-24)
		if k := strings.LastIndexFunc(text[lo:end], unicode.IsSpace); k >= 0 {
			end = lo + k
		}
	}
	s := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 && s != "" {
		s = "…" + s
	}
	if end < len(text) && s != "" {
		s += "…"
	}
	return s
}

// partHits adds to hits, in text order, the parts of identifiers in text
// that match a term ("Multipart" and "Form" of MultipartForm for the
// question "multipart form"): ranking finds them through the code_terms
// column, so the snippet must show where they are.
func (m *matcher) partHits(text string, hits []hit) []hit {
	n := len(hits)
	hits = m.appendParts(text, hits)
	if len(hits) > n {
		slices.SortStableFunc(hits, func(x, y hit) int { return cmp.Compare(x.start, y.start) })
	}
	return hits
}

// appendParts appends a hit for each part of an identifier in text that
// matches a term and is not already one of hits, a whole token the index
// tokenizer made (the "os" of os.ReadFile, the "10" of IL-10): only the
// parts inside a token (the "read" and "file" of ReadFile) are new.
func (m *matcher) appendParts(text string, hits []hit) []hit {
	if len(text) > maxScanBytes {
		text = text[:maxScanBytes]
	}
	n := len(hits)
	var buf []byte
	sources.EachPart(text, func(_ bool, a, b int) {
		// No term starts with this part's first letter: nothing to look
		// up (the common case, and no lower-casing to pay for).
		if c := text[a]; c < utf8.RuneSelf && !m.first[asciiLower(c)] {
			return
		}
		buf = appendLowerPart(buf[:0], text[a:b])
		if len(buf) == 0 || !m.first[buf[0]] || len(buf) >= 2 && !m.pairOK(buf[0], buf[1]) {
			return
		}
		for _, h := range hits[:n] {
			if int(h.start) == a && int(h.end) == b {
				return
			}
		}
		if t := m.lookup(buf); t >= 0 {
			hits = append(hits, hit{term: t, pos: -1, start: int32(a), end: int32(b)})
		}
	})
	return hits
}

// extraParts is how many more words text has counted in identifier parts
// than in index tokens: for each identifier that splits, its parts less the
// tokens it spans ("HTTPServerConfig" 3 − 1, "os.ReadFile" 3 − 2,
// "main.go" 2 − 2).
func (m *matcher) extraParts(text string) int { return extraPartsOf(text) }

// missingTerms is the set (bit i for term i, the first 64) of scoring
// terms (weight > 0) that no hit holds; terms past 64 count as missing.
func missingTerms(hits []hit, terms []sterm) uint64 {
	var want uint64
	for i, t := range terms {
		if t.weight > 0 {
			if i >= 64 {
				return ^uint64(0)
			}
			want |= 1 << i
		}
	}
	for _, h := range hits {
		if h.term < 64 {
			want &^= 1 << h.term
		}
	}
	return want
}

// anyIn reports whether text holds a token of a term in set.
func (m *matcher) anyIn(text string, set uint64) bool {
	if text == "" {
		return false
	}
	hits, _ := m.scan(text, nil)
	for _, h := range hits {
		if h.term >= 64 || set&(1<<h.term) != 0 {
			return true
		}
	}
	return false
}

func asciiLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// appendLowerPart appends s lower-cased: byte by byte when it is ASCII.
func appendLowerPart(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(dst[:len(dst)-i], strings.ToLower(s)...)
		}
		dst = append(dst, asciiLower(s[i]))
	}
	return dst
}
