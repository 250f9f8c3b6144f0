package sources

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Identifier splitting.
//
// A compound is a run of word characters (letters, digits, '_', combining
// marks) in which single '.', '-' and "::" may join word characters:
// "os.ReadFile", "parse-http-request", "std::vector", "x86_64". A compound
// splits into parts at '_', '.', '-', "::", and at case changes:
//
//	parseHTTPRequest, ParseHTTPRequest, parse_http_request,
//	parse-http-request                          -> parse http request
//	HTTPServer                                  -> http server
//	os.ReadFile                                 -> os read file
//	URLs, getIDs                                -> urls; get ids
//	utf8Decode, HTTP2Server, int32Value         -> utf8 decode; http2 server; int32 value
//
// Digits never start a part: they stay with the letters before them
// ("utf8", "x86", "int32"), and an upper-case letter after a digit starts a
// new part. An upper-case run followed by lower case gives its last letter
// to the next part (HTTPServer), except a lone plural "s" (URLs). Parts are
// lower-cased.

// charClass is the class of one rune inside a compound.
type charClass uint8

const (
	classNone  charClass = iota // not a word character
	classLower                  // lower-case letter
	classUpper                  // upper-case (or title-case) letter
	classDigit                  // decimal digit
	classOther                  // letter without case (CJK, ...), combining mark, '_' handled apart
)

// asciiClass holds classOf for ASCII; asciiWord whether a byte belongs in
// a compound ('_' included).
var asciiClass, asciiWord = func() (cls [utf8.RuneSelf]charClass, word [utf8.RuneSelf]bool) {
	for c := 0; c < utf8.RuneSelf; c++ {
		switch {
		case c >= 'a' && c <= 'z':
			cls[c] = classLower
		case c >= 'A' && c <= 'Z':
			cls[c] = classUpper
		case c >= '0' && c <= '9':
			cls[c] = classDigit
		}
		word[c] = cls[c] != classNone || c == '_'
	}
	return cls, word
}()

func classOf(r rune) charClass {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return classUpper
	case unicode.IsLower(r):
		return classLower
	case unicode.IsDigit(r):
		return classDigit
	case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r):
		return classOther
	}
	return classNone
}

// runeAt decodes the rune at s[i] with an ASCII fast path.
func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// isWordRune reports whether r belongs inside a compound ('_' included).
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiWord[r]
	}
	return classOf(r) != classNone
}

// nextCompound finds the next compound in s at or after i and returns its
// bounds; a == len(s) when there is none.
func nextCompound(s string, i int) (a, b int) {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiWord[c] {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) {
			break
		}
		i += size
	}
	a = i
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf && asciiWord[c] {
			i++
			continue
		}
		r, size := runeAt(s, i)
		if isWordRune(r) {
			i += size
			continue
		}
		// A connector joins only when a word character follows it.
		next := i + size
		if r == ':' && next < len(s) && s[next] == ':' {
			next++
		} else if r != '.' && r != '-' {
			break
		}
		if next >= len(s) {
			break
		}
		if r2, _ := runeAt(s, next); !isWordRune(r2) {
			break
		}
		i = next
	}
	return a, i
}

// appendParts appends the byte bounds of each part of the compound s[a:b]
// to dst.
func appendParts(dst [][2]int, s string, a, b int) [][2]int {
	start, prev, prevPos := -1, classNone, 0
	for i := a; i < b; {
		r, size := runeAt(s, i)
		cls := classNone
		if r != '_' && r != '.' && r != '-' && r != ':' {
			cls = classOf(r)
		}
		if cls == classNone {
			if start >= 0 {
				dst = append(dst, [2]int{start, i})
				start = -1
			}
			prev = classNone
			i += size
			continue
		}
		switch {
		case start < 0:
			start = i
		case cls == classUpper && (prev == classLower || prev == classDigit || prev == classOther):
			dst = append(dst, [2]int{start, i})
			start = i
		case cls == classLower && prev == classUpper && prevPos > start && !pluralS(s, r, i+size, b):
			dst = append(dst, [2]int{start, prevPos})
			start = prevPos
		}
		prev, prevPos = cls, i
		i += size
	}
	if start >= 0 {
		dst = append(dst, [2]int{start, b})
	}
	return dst
}

// pluralS reports whether the lower-case rune r, ending at j, is a lone "s"
// closing an acronym (URLs, IDs).
func pluralS(s string, r rune, j, b int) bool {
	if r != 's' {
		return false
	}
	if j >= b {
		return true
	}
	r2, _ := runeAt(s, j)
	return classOf(r2) != classLower
}

// plainWord reports whether w is an ASCII word that cannot split: lower
// case and digits, perhaps capitalised ("return", "Server", "utf8").
func plainWord(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i == 0 && c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// allDigits reports whether s has no letters: only digits and connectors.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && c != '-' && c != ':' && c != '_' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// appendLower appends s lower-cased to dst.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(dst, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Compounds cuts text into its compounds (see above) in order: the
// identifiers and words a question or a text holds, before any split.
// "call os.ReadFile(path)" gives ["call", "os.ReadFile", "path"].
func Compounds(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		a, b := nextCompound(text, i)
		if a >= len(text) {
			break
		}
		out = append(out, text[a:b])
		i = b
	}
	return out
}

// EachPart calls fn with the byte bounds of each part of every compound in
// text that splits into more than one part, in order, as CodeTerms splits
// them: for "x := MultipartForm" it gives the bounds of "Multipart" and of
// "Form". first is true for the first part of each compound.
func EachPart(text string, fn func(first bool, a, b int)) {
	var bounds [][2]int
	for i := 0; i < len(text); {
		a, b := nextCompound(text, i)
		if a >= len(text) {
			break
		}
		bounds = appendParts(bounds[:0], text, a, b)
		if len(bounds) > 1 {
			for k, p := range bounds {
				fn(k == 0, p[0], p[1])
			}
		}
		i = b
	}
}

// SplitIdentifier returns the lower-cased parts of every identifier in s,
// in order, as CodeTerms splits them: "parseHTTPRequest" gives
// ["parse", "http", "request"], "os.ReadFile" gives ["os", "read", "file"],
// and a question "where is utf8Decode" gives ["where", "is", "utf8",
// "decode"]. Words that do not split come back whole and lower-cased.
func SplitIdentifier(s string) []string {
	var parts []string
	var buf []byte
	var bounds [][2]int
	for i := 0; i < len(s); {
		a, b := nextCompound(s, i)
		if a >= len(s) {
			break
		}
		bounds = appendParts(bounds[:0], s, a, b)
		for _, p := range bounds {
			buf = appendLower(buf[:0], s[p[0]:p[1]])
			parts = append(parts, string(buf))
		}
		i = b
	}
	return parts
}

// CodeTerms returns extra terms for a full-text column that let a search
// for the words of an identifier find it: for every distinct compound in
// text that splits into two or more parts (see SplitIdentifier), its
// lower-cased parts, space-separated, in order of first appearance. A part
// made of letters and then digits is followed by its letters alone
// (Parse12_3 gives "parse12 parse 3", so that "parse" finds it; see
// letterStem). Plain words yield nothing (the body column's tokenizer
// already has them) but those letters ("int64" gives "int"), and neither do
// compounds made only of digits ("1.2.3"). The whole identifier is left to
// the body column. A compound that holds a Greek letter standing in Latin
// text is also given with the letter named (IFN-γ gives "ifn-gamma" before
// its parts; see NameGreek), and one with a hyphen between letters and a
// digit joined, after naming (IL-6 gives "il6", Aβ-42 "abeta42"; see
// JoinLetterDigit), once per unit like the parts.
//
// It runs on every indexed byte: one pass, no regular expressions; it
// allocates the result, a set of the compounds already seen and each
// compound's other forms.
func CodeTerms(text string) string {
	out := make([]byte, 0, len(text)/8)
	var seen map[string]struct{}
	var bounds [][2]int
	for i := 0; i < len(text); {
		a, b := nextCompound(text, i)
		if a >= len(text) {
			break
		}
		i = b
		word := text[a:b]
		if plainWord(word) {
			// A plain word yields only its letters, when digits end it.
			if n := letterStem(word); n > 0 && firstSight(&seen, word) {
				out = appendTerm(out, word[:n])
			}
			continue
		}
		// Other forms of the compound, each once per unit (the keys start
		// with a byte no compound holds); a plain word has none.
		out = appendForms(out, word, &seen)
		bounds = appendParts(bounds[:0], text, a, b)
		if len(bounds) < 2 || allDigits(word) || !firstSight(&seen, word) {
			continue
		}
		for _, p := range bounds {
			part := text[p[0]:p[1]]
			out = appendTerm(out, part)
			if n := letterStem(part); n > 0 {
				out = appendTerm(out, part[:n])
			}
		}
	}
	return string(out)
}

// appendForms appends the other forms of the compound w that CodeTerms
// gives, each once (seen): its Greek letters named, its hyphens between
// letters and digits dropped.
func appendForms(out []byte, w string, seen *map[string]struct{}) []byte {
	named, hyphen := w, false
	for k := 0; k < len(w); k++ {
		if c := w[k]; c >= utf8.RuneSelf {
			named, hyphen = nameGreekWord(w), true // nameGreekWord reads the rest
			break
		} else if c == '-' {
			hyphen = true
		}
	}
	if named != w && firstSight(seen, "\x00"+named) {
		out = appendTerm(out, named)
	}
	if hyphen {
		if joined := JoinLetterDigit(named); joined != named && firstSight(seen, "\x00"+joined) {
			out = appendTerm(out, joined)
		}
	}
	return out
}

// firstSight adds key to the set *seen (made on first use) and reports
// whether it was not there.
func firstSight(seen *map[string]struct{}, key string) bool {
	if _, ok := (*seen)[key]; ok {
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{})
	}
	(*seen)[key] = struct{}{}
	return true
}

// appendTerm appends one lower-cased term to a space-separated list.
func appendTerm(out []byte, term string) []byte {
	if len(out) > 0 {
		out = append(out, ' ')
	}
	return appendLower(out, term)
}

// letterStem returns the length of the ASCII letters that begin w when at
// least two of them do and only digits follow ("parse12" gives 5, "utf8"
// 3, "int64" 3), else 0 ("x86", "sha256sum", "v2beta", "parse").
func letterStem(w string) int {
	n := 0
	for n < len(w) && (w[n]|0x20 >= 'a' && w[n]|0x20 <= 'z') {
		n++
	}
	if n < 2 || n == len(w) {
		return 0
	}
	for i := n; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return 0
		}
	}
	return n
}

// JoinLetterDigit returns w without each hyphen that stands between two
// ASCII letters or more and a digit (IL-6 → IL6, GLP-1R → GLP1R, UTF-8
// → UTF8), or w itself. One letter is left (x-1, n-1: code's arithmetic).
func JoinLetterDigit(w string) string {
	var b []byte
	last := 0 // w[last:] is not copied to b yet
	for i := 2; i+1 < len(w); i++ {
		if w[i] == '-' && asciiLetter(w[i-2]) && asciiLetter(w[i-1]) && w[i+1] >= '0' && w[i+1] <= '9' {
			b = append(b, w[last:i]...)
			last = i + 1
		}
	}
	if b == nil {
		return w
	}
	return string(append(b, w[last:]...))
}

func asciiLetter(c byte) bool { c |= 0x20; return c >= 'a' && c <= 'z' }
