package sources

import (
	"encoding/binary"
	"slices"
	"strings"
	"unicode/utf8"
)

// File terms: each indexed file's term counts, kept with the file
// (the file_terms table) so that ranking can score a whole file without reading it.
//
// Ranking adds a BM25 score of a unit's whole file to the unit's own
// (query/rank_file.go). Summed from the units a search happens to hold,
// that score would depend on which units the candidate pool holds; read
// from here it is the same for every search that ranks the file. The
// counts are those the ranker's scorer makes of each leaf unit
// (query/rank.go): the title's tokens and the parts inside its
// identifiers, the text's tokens and the code terms' tokens, each stemmed
// as the index stems, each column cut at MaxScanBytes as the scorer cuts
// it. The path is not counted: it is the same in every unit, and the
// ranker counts it once.

// MaxScanBytes bounds how much of one column is tokenized for ranking and
// counted here: terms past it still match (FTS5 indexes them) but add to
// no score.
const MaxScanBytes = 256 << 10

// termsVersion is the first byte of an encoded count list.
const termsVersion = 1

// TermCounts are one stem's counts in a file: in its units' titles, texts
// and code terms.
type TermCounts struct {
	Title, Text, Code uint32
}

// LeafText is what FileTerms counts of one leaf unit.
type LeafText struct {
	Title, Text, CodeTerms string
}

// FileTerms counts the terms of a file's leaf units and encodes them:
// stems in byte order, each with its three counts.
func FileTerms(leaves []LeafText) []byte {
	// Tokens are counted as they are folded, and each distinct one is
	// stemmed once at the end: a file repeats its words far more often
	// than it has words, and stemming was most of the cost.
	tokens := map[string]*TermCounts{}
	var buf []byte
	add := func(tok []byte, field int) {
		c := tokens[string(tok)]
		if c == nil {
			c = &TermCounts{}
			tokens[string(tok)] = c
		}
		switch field {
		case 0:
			c.Title++
		case 1:
			c.Text++
		default:
			c.Code++
		}
	}
	for _, l := range leaves {
		title := clipScan(l.Title)
		type span struct{ a, b int }
		var whole []span
		buf = ForEachToken(title, buf, func(tok []byte, a, b int) bool {
			add(tok, 0)
			whole = append(whole, span{a, b})
			return true
		})
		// The parts inside a title's identifiers count as title words too
		// (HTTPServer: http, server), as the scorer counts them; a part
		// that is a whole token is counted once.
		EachPart(title, func(_ bool, a, b int) {
			if slices.Contains(whole, span{a, b}) {
				return
			}
			buf = appendLowerASCII(buf[:0], title[a:b])
			if len(buf) > 0 {
				add(buf, 0)
			}
		})
		buf = ForEachToken(clipScan(l.Text), buf, func(tok []byte, _, _ int) bool {
			add(tok, 1)
			return true
		})
		buf = ForEachToken(clipScan(l.CodeTerms), buf, func(tok []byte, _, _ int) bool {
			add(tok, 2)
			return true
		})
	}
	counts := make(map[string]*TermCounts, len(tokens))
	for tok, tc := range tokens {
		buf = append(buf[:0], tok...)
		st := PorterStem(buf)
		c := counts[string(st)]
		if c == nil {
			c = &TermCounts{}
			counts[string(st)] = c
		}
		c.Title += tc.Title
		c.Text += tc.Text
		c.Code += tc.Code
	}
	return encodeTermCounts(counts)
}

// encodeTermCounts encodes counts: stems in byte order, each with its
// three counts.
func encodeTermCounts(counts map[string]*TermCounts) []byte {
	stems := make([]string, 0, len(counts))
	for s := range counts {
		stems = append(stems, s)
	}
	slices.Sort(stems)
	out := make([]byte, 1, 1+len(stems)*8)
	out[0] = termsVersion
	for _, s := range stems {
		c := counts[s]
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
		out = binary.AppendUvarint(out, uint64(c.Title))
		out = binary.AppendUvarint(out, uint64(c.Text))
		out = binary.AppendUvarint(out, uint64(c.Code))
	}
	return out
}

// LookupTerms reports the counts of the stems want (sorted in byte order,
// no duplicates) in an encoded count list: fn gets each stem found, by
// its index in want. It reports false when b is not a count list this
// version reads, or is cut before the last stem wanted (fn may have been
// called for stems before the fault).
func LookupTerms(b []byte, want []string, fn func(i int, c TermCounts)) bool {
	k := 0
	return EachTerm(b, func(stem []byte, c TermCounts) bool {
		for k < len(want) && want[k] < string(stem) {
			k++
		}
		if k < len(want) && want[k] == string(stem) {
			fn(k, c)
			k++
		}
		return k < len(want)
	})
}

// EachTerm calls fn with every stem of an encoded count list, in byte
// order, until fn returns false. The stem's bytes are b's own: fn must
// copy what it keeps. It reports false when b is not a count list this
// version reads; fn may have been called for the stems before the fault.
func EachTerm(b []byte, fn func(stem []byte, c TermCounts) bool) bool {
	if len(b) == 0 || b[0] != termsVersion {
		return false
	}
	b = b[1:]
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return false
		}
		stem := b[w : w+int(n)]
		b = b[w+int(n):]
		var v [3]uint64
		for j := range v {
			x, w := binary.Uvarint(b)
			if w <= 0 {
				return false
			}
			v[j], b = x, b[w:]
		}
		if !fn(stem, TermCounts{Title: clampCount(v[0]), Text: clampCount(v[1]), Code: clampCount(v[2])}) {
			return true
		}
	}
	return true
}

// clampCount keeps a decoded count within uint32.
func clampCount(v uint64) uint32 {
	return uint32(min(v, 1<<32-1))
}

// clipScan cuts s to MaxScanBytes where the scorer cuts it (at the byte:
// a character cut in two ends the last token there, on both sides).
func clipScan(s string) string {
	if len(s) <= MaxScanBytes {
		return s
	}
	return s[:MaxScanBytes]
}

// appendLowerASCII appends s lower-cased (ASCII letters by byte, other
// text as strings.ToLower folds it): how the scorer folds an identifier's
// part before it stems it.
func appendLowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(dst[:len(dst)-i], strings.ToLower(s)...)
		}
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// leafTerms is FileTerms of the leaves of rows.
func leafTerms(rows []evRow) []byte {
	leaves := make([]LeafText, 0, len(rows))
	for i := range rows {
		if r := &rows[i]; r.leaf {
			leaves = append(leaves, LeafText{Title: r.title, Text: r.text, CodeTerms: r.codeTerms})
		}
	}
	return FileTerms(leaves)
}
