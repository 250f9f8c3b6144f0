package sources

import (
	"unicode"
	"unicode/utf8"
)

// The tokenizer of the index, reproduced in Go.
//
// evidence_fts tokenizes with "porter unicode61 remove_diacritics 2
// tokenchars '_'". The ranker needs the same terms on its side of the
// index: to look terms up in the fts5vocab table, and to count term
// frequencies and positions in the candidates it rescores. ForEachToken and
// PorterStem reproduce SQLite's unicode61 and porter tokenizers
// (ext/fts5/fts5_tokenize.c): for ASCII text the output is identical byte
// for byte (a test checks it against FTS5's own vocabulary); outside ASCII,
// case folding uses Go's tables and diacritics are removed for the Latin
// letters of U+00C0..U+017F, which covers what the evaluation and code
// corpora hold. A term the two disagree on only loses its statistics; the
// MATCH expression is always tokenized by FTS5 itself.

// maxPorterToken is FTS5_PORTER_MAX_TOKEN: longer tokens are not stemmed.
const maxPorterToken = 64

// ASCIITokenChar marks the ASCII bytes that belong to tokens: letters,
// digits and '_' (tokenchars '_').
var ASCIITokenChar = func() (t [128]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['_'] = true
	return t
}()

// IsTokenRune reports whether the non-ASCII rune r starts or continues a
// token (unicode61's categories L*, N* and Co).
func IsTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// IsDiacritic reports whether r is a combining diacritical mark: it
// continues a token (and folds to nothing) but never starts one.
func IsDiacritic(r rune) bool { return r >= 0x300 && r <= 0x36f }

// latinFold maps U+00C0..U+017F to their lower-case base letters (0: keep
// the rune's lower-case form): the letters whose canonical decomposition is
// a base letter and combining marks.
var latinFold = func() (t [0x180 - 0xc0]rune) {
	for base, runes := range map[rune]string{
		'a': "ÀÁÂÃÄÅàáâãäåĀāĂăĄą",
		'c': "ÇçĆćĈĉĊċČč",
		'd': "Ďď",
		'e': "ÈÉÊËèéêëĒēĔĕĖėĘęĚě",
		'g': "ĜĝĞğĠġĢģ",
		'h': "Ĥĥ",
		'i': "ÌÍÎÏìíîïĨĩĪīĬĭĮįİ",
		'j': "Ĵĵ",
		'k': "Ķķ",
		'l': "ĹĺĻļĽľ",
		'n': "ÑñŃńŅņŇň",
		'o': "ÒÓÔÕÖòóôõöŌōŎŏŐő",
		'r': "ŔŕŖŗŘř",
		's': "ŚśŜŝŞşŠš",
		't': "ŢţŤť",
		'u': "ÙÚÛÜùúûüŨũŪūŬŭŮůŰűŲų",
		'w': "Ŵŵ",
		'y': "ÝýÿŶŷŸ",
		'z': "ŹźŻżŽž",
	} {
		for _, r := range runes {
			t[r-0xc0] = base
		}
	}
	return t
}()

// FoldRune lower-cases a non-ASCII token rune and removes its diacritics;
// 0 means the rune folds to nothing (a combining mark).
func FoldRune(r rune) rune {
	if IsDiacritic(r) {
		return 0
	}
	// Lower of upper approximates Unicode simple case folding: µ → μ,
	// ϵ → ε, the Angstrom sign → å.
	r = unicode.ToLower(unicode.ToUpper(r))
	if r >= 0xc0 && r < 0x180 {
		if f := latinFold[r-0xc0]; f != 0 {
			return f
		}
	}
	return r
}

// ForEachToken calls fn for every token of s, in order: the folded token
// (lower case, diacritics removed, not stemmed) in a buffer fn must not
// keep, and its byte range in s. It returns early when fn returns false.
func ForEachToken(s string, buf []byte, fn func(tok []byte, start, end int) bool) []byte {
	i := 0
	for i < len(s) {
		// Skip separators.
		start := -1
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if ASCIITokenChar[c] {
					start = i
					break
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if IsTokenRune(r) {
				start = i
				break
			}
			i += size
		}
		if start < 0 {
			break
		}
		buf = buf[:0]
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if !ASCIITokenChar[c] {
					break
				}
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf = append(buf, c)
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if !IsTokenRune(r) && !IsDiacritic(r) {
				break
			}
			if f := FoldRune(r); f != 0 {
				buf = utf8.AppendRune(buf, f)
			}
			i += size
		}
		if !fn(buf, start, i) {
			break
		}
	}
	return buf
}

// PorterStem stems a folded token in place, as FTS5's porter tokenizer
// does, and returns the stem (a prefix of b's backing array, possibly one
// byte longer than the stem when step 1b appends an 'e': b must have
// capacity for it).
func PorterStem(b []byte) []byte {
	n := len(b)
	if n > maxPorterToken || n < 3 {
		return b
	}
	// Step 1a.
	if b[n-1] == 's' {
		switch {
		case b[n-2] == 'e':
			if (n > 4 && b[n-4] == 's' && b[n-3] == 's') || (n > 3 && b[n-3] == 'i') {
				n -= 2
			} else {
				n--
			}
		case b[n-2] != 's':
			n--
		}
	}
	b = b[:n]
	// Step 1b.
	if nb, ok := step1b(b); ok {
		b = nb
		if nb2, applied := applyRules(b, step1b2Rules); applied {
			b = nb2
		} else {
			n = len(b)
			c := b[n-1]
			if n >= 2 && !isVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == b[n-2] {
				b = b[:n-1]
			} else if mEq1(b) && oStar(b) {
				b = append(b, 'e')
			}
		}
	} else {
		b = nb
	}
	// Step 1c.
	if n = len(b); b[n-1] == 'y' && hasVowel(b[:n-1]) {
		b[n-1] = 'i'
	}
	b, _ = applyRules(b, step2Rules)
	b, _ = applyRules(b, step3Rules)
	b, _ = applyRules(b, step4Rules)
	// Step 5a.
	if n = len(b); b[n-1] == 'e' {
		if mGt1(b[:n-1]) || (mEq1(b[:n-1]) && !oStar(b[:n-1])) {
			b = b[:n-1]
		}
	}
	// Step 5b.
	if n = len(b); n > 1 && b[n-1] == 'l' && b[n-2] == 'l' && mGt1(b[:n-1]) {
		b = b[:n-1]
	}
	return b
}

func isVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || (yIsVowel && c == 'y')
}

// gobbleVC skips one vowel run then one consonant and returns the index
// after that consonant, 0 when there is none.
func gobbleVC(s []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(s); i++ {
		cons = !isVowel(s[i], cons)
		if !cons {
			break
		}
	}
	for i++; i < len(s); i++ {
		cons = !isVowel(s[i], cons)
		if cons {
			return i + 1
		}
	}
	return 0
}

func mGt0(s []byte) bool { return gobbleVC(s, false) != 0 }

func mGt1(s []byte) bool {
	n := gobbleVC(s, false)
	return n != 0 && gobbleVC(s[n:], true) != 0
}

func mEq1(s []byte) bool {
	n := gobbleVC(s, false)
	return n != 0 && gobbleVC(s[n:], true) == 0
}

// oStar is the *o condition: the stem ends consonant-vowel-consonant and
// the last consonant is not w, x or y.
func oStar(s []byte) bool {
	n := len(s)
	if n == 0 {
		return false
	}
	if c := s[n-1]; c == 'w' || c == 'x' || c == 'y' {
		return false
	}
	mask, cons := 0, false
	for i := 0; i < n; i++ {
		cons = !isVowel(s[i], cons)
		mask <<= 1
		if cons {
			mask++
		}
	}
	return mask&7 == 5
}

func mGt1ST(s []byte) bool {
	n := len(s)
	return n > 0 && (s[n-1] == 's' || s[n-1] == 't') && mGt1(s)
}

// hasVowel is the *v* condition.
func hasVowel(s []byte) bool {
	for i := range s {
		if isVowel(s[i], i > 0) {
			return true
		}
	}
	return false
}

type porterRule struct {
	suffix string
	cond   func([]byte) bool // nil: always
	output string
}

// applyRules finds the first rule whose suffix ends b with a non-empty
// stem before it and, when its condition holds for that stem, replaces the
// suffix. Only the first matching suffix is considered, as in SQLite's
// generated step functions. applied reports a replacement.
func applyRules(b []byte, rules []porterRule) ([]byte, bool) {
	n := len(b)
	for _, r := range rules {
		k := len(r.suffix)
		if n <= k || string(b[n-k:]) != r.suffix {
			continue
		}
		if r.cond != nil && !r.cond(b[:n-k]) {
			return b, false
		}
		return append(b[:n-k], r.output...), true
	}
	return b, false
}

// step1b removes "eed"→"ee", "ed" and "ing"; ok reports that "ed" or
// "ing" was removed (which triggers the step 1b fix-ups).
func step1b(b []byte) ([]byte, bool) {
	n := len(b)
	switch {
	case n > 3 && string(b[n-3:]) == "eed":
		if mGt0(b[:n-3]) {
			return b[:n-1], false
		}
		return b, false
	case n > 2 && string(b[n-2:]) == "ed":
		if hasVowel(b[:n-2]) {
			return b[:n-2], true
		}
	case n > 3 && string(b[n-3:]) == "ing":
		if hasVowel(b[:n-3]) {
			return b[:n-3], true
		}
	}
	return b, false
}

var step1b2Rules = []porterRule{
	{"at", nil, "ate"}, {"bl", nil, "ble"}, {"iz", nil, "ize"},
}

var step2Rules = []porterRule{
	{"ational", mGt0, "ate"}, {"tional", mGt0, "tion"},
	{"enci", mGt0, "ence"}, {"anci", mGt0, "ance"},
	{"izer", mGt0, "ize"},
	{"logi", mGt0, "log"},
	{"bli", mGt0, "ble"}, {"alli", mGt0, "al"}, {"entli", mGt0, "ent"}, {"eli", mGt0, "e"}, {"ousli", mGt0, "ous"},
	{"ization", mGt0, "ize"}, {"ation", mGt0, "ate"}, {"ator", mGt0, "ate"},
	{"alism", mGt0, "al"}, {"iveness", mGt0, "ive"}, {"fulness", mGt0, "ful"}, {"ousness", mGt0, "ous"},
	{"aliti", mGt0, "al"}, {"iviti", mGt0, "ive"}, {"biliti", mGt0, "ble"},
}

var step3Rules = []porterRule{
	{"ical", mGt0, "ic"},
	{"ness", mGt0, ""},
	{"icate", mGt0, "ic"}, {"iciti", mGt0, "ic"},
	{"ful", mGt0, ""},
	{"ative", mGt0, ""},
	{"alize", mGt0, "al"},
}

var step4Rules = []porterRule{
	{"al", mGt1, ""},
	{"ance", mGt1, ""}, {"ence", mGt1, ""},
	{"er", mGt1, ""},
	{"ic", mGt1, ""},
	{"able", mGt1, ""}, {"ible", mGt1, ""},
	{"ant", mGt1, ""}, {"ement", mGt1, ""}, {"ment", mGt1, ""}, {"ent", mGt1, ""},
	{"ion", mGt1ST, ""}, {"ou", mGt1, ""},
	{"ism", mGt1, ""},
	{"ate", mGt1, ""}, {"iti", mGt1, ""},
	{"ous", mGt1, ""},
	{"ive", mGt1, ""},
	{"ize", mGt1, ""},
}
