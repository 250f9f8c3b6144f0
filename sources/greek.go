package sources

import (
	"unicode"
	"unicode/utf8"
)

// Greek letters in Latin text.
//
// Technical writing names a Greek letter either way: "IFN-γ" and
// "IFN-gamma", "TGF-β1" and "TGF-beta1", "αvβ8" and "alphavbeta8", "Δ" and
// "delta". The index keeps the text as it is; CodeTerms adds the named
// form of each compound that holds such a letter, and a question's letters
// are named before it is parsed, so that either spelling finds both.
// Greek text is not touched: only a Greek letter that stands alone, whose
// nearest letters on both sides (if any) are not Greek, is named, so "η"
// and "και" in a Greek sentence stay as they are.

// greekNames are the names of the Greek letters, by lower-case letter
// (and the symbol variants ϵ, ϑ, ϰ, ϖ, ϱ, ϕ, and the letters with
// tonos or dialytika).
var greekNames = map[rune]string{
	'α': "alpha", 'β': "beta", 'γ': "gamma", 'δ': "delta", 'ε': "epsilon", 'ϵ': "epsilon",
	'ζ': "zeta", 'η': "eta", 'θ': "theta", 'ϑ': "theta", 'ι': "iota", 'κ': "kappa", 'ϰ': "kappa",
	'λ': "lambda", 'μ': "mu", 'ν': "nu", 'ξ': "xi", 'ο': "omicron", 'π': "pi", 'ϖ': "pi",
	'ρ': "rho", 'ϱ': "rho", 'σ': "sigma", 'ς': "sigma", 'τ': "tau", 'υ': "upsilon",
	'φ': "phi", 'ϕ': "phi", 'χ': "chi", 'ψ': "psi", 'ω': "omega",
	// with tonos or dialytika
	'ά': "alpha", 'έ': "epsilon", 'ή': "eta", 'ί': "iota", 'ϊ': "iota", 'ΐ': "iota", 'ό': "omicron",
	'ύ': "upsilon", 'ϋ': "upsilon", 'ΰ': "upsilon", 'ώ': "omega",
}

// greekLetter reports a letter of the Greek script (the micro sign
// included: it folds to μ).
func greekLetter(r rune) bool {
	switch {
	case r < 0x370:
		return r == 'µ'
	case r >= 'Α' && r <= 'ω': // the plain letters (U+03A2 is unassigned)
		return r != 0x3a2
	case r <= 0x3ff: // Greek and Coptic: the Coptic letters are U+03E2..U+03EF
		return (r < 0x3e2 || r > 0x3ef) && unicode.IsLetter(r)
	case r >= 0x1f00 && r <= 0x1fff: // Greek Extended
		return unicode.IsLetter(r)
	}
	return r == '\u2126' // the ohm sign
}

// greekName returns the name of the Greek letter r, or "".
func greekName(r rune) string {
	if !greekLetter(r) {
		return ""
	}
	return greekNames[unicode.ToLower(unicode.ToUpper(r))]
}

// NameGreek returns s with each Greek letter standing in Latin text
// written as its name (IFN-γ → IFN-gamma, αvβ8 → alphavbeta8), or s
// itself when there is none.
func NameGreek(s string) string { return nameGreekIn(s, 0, len(s)) }

// nameGreekIn is NameGreek of s[a:b] read in its context s: the letters
// before a and after b decide as they would in NameGreek(s).
func nameGreekIn(s string, a, b int) string {
	ascii := true
	for i := a; i < b; i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s[a:b]
	}
	var out []byte
	// lastGreek: whether the nearest letter before i is Greek, read from
	// s before a only when a Greek letter needs it, so that the text
	// before the compounds of CodeTerms is read once however many there
	// are (each read stops at the nearest letter).
	lastGreek, known := false, false
	for i := a; i < b; {
		r, size := runeAt(s, i)
		if !greekLetter(r) {
			if isLetter(r) {
				lastGreek, known = false, true
			}
			if out != nil {
				out = append(out, s[i:i+size]...)
			}
			i += size
			continue
		}
		// A run of Greek letters, combining marks inside it.
		j, n := i, 0
		for j < b {
			r2, size2 := runeAt(s, j)
			if greekLetter(r2) {
				n++
			} else if !unicode.Is(unicode.Mn, r2) {
				break
			}
			j += size2
		}
		if !known {
			lastGreek, known = prevLetterGreek(s, a), true
		}
		// One letter alone: two are as often a Greek word ("το", "να")
		// as a pair of letters ("γδ" T cells), left as written.
		if n == 1 && greekName(r) != "" && !lastGreek && !nextLetterGreek(s, j) {
			if out == nil {
				out = append(make([]byte, 0, b-a+16), s[a:i]...)
			}
			for k := i; k < j; {
				r2, size2 := runeAt(s, k)
				out = append(out, greekName(r2)...) // marks are dropped
				k += size2
			}
		} else if out != nil {
			out = append(out, s[i:j]...)
		}
		lastGreek = true
		i = j
	}
	if out == nil {
		return s[a:b]
	}
	return string(out)
}

// isLetter reports a letter of any script.
func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		c := asciiClass[r]
		return c == classLower || c == classUpper
	}
	return unicode.IsLetter(r)
}

// prevLetterGreek reports whether the last letter of s before i is
// Greek.
func prevLetterGreek(s string, i int) bool {
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if isLetter(r) {
			return greekLetter(r)
		}
		i -= size
	}
	return false
}

// nextLetterGreek reports whether the first letter of s at or after i is
// Greek.
func nextLetterGreek(s string, i int) bool {
	for i < len(s) {
		r, size := runeAt(s, i)
		if isLetter(r) {
			return greekLetter(r)
		}
		i += size
	}
	return false
}
