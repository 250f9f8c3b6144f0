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
// form of each compound that holds a Greek letter standing alone (no
// other Greek letter beside it: "γδ" stays), and a question's compounds
// are named the same way before it is parsed, so that either spelling
// finds both. A question written in Greek is read as written: its
// compound is named only when the nearest letters around each of its
// Greek letters are not Greek ("η γάτα" stays), so a question names a
// compound as the index does or not at all. Naming follows the index's
// folding (µ is μ, the ohm sign ω, case does not count), and units are
// left: μ before a letter (μm, µM; μ-opioid is named) and ω after one
// (kΩ; ω-3 is named).

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

// greekLetter reports a letter of the Greek script, or a sign the index
// folds to one (the micro sign to μ, the ohm sign to ω): naming follows
// the index's folding, so texts that give the same tokens are named alike.
func greekLetter(r rune) bool {
	switch {
	case r < 0x370:
		return r == 'µ'
	case r == '\u2126': // the ohm sign
		return true
	case r >= 'Α' && r <= 'ω': // the plain letters (U+03A2 is unassigned)
		return r != 0x3a2
	case r <= 0x3ff: // Greek and Coptic: the Coptic letters are U+03E2..U+03EF
		return (r < 0x3e2 || r > 0x3ef) && unicode.IsLetter(r)
	case r >= 0x1f00 && r <= 0x1fff: // Greek Extended
		return unicode.IsLetter(r)
	}
	return false
}

// greekName returns the name of the Greek letter r, or "".
func greekName(r rune) string {
	if !greekLetter(r) {
		return ""
	}
	return greekNames[FoldRune(r)]
}

// NameGreek returns s with the Greek letters of each compound named as
// CodeTerms names them (IFN-γ → IFN-gamma, αvβ8 → alphavbeta8), unless a
// Greek letter of the compound has a Greek letter as its nearest letter
// on either side (Greek text); s itself when nothing is named.
func NameGreek(s string) string {
	var out []byte
	last := 0 // s[last:] is not copied to out yet
	for i := 0; i < len(s); {
		a, b := nextCompound(s, i)
		if a >= len(s) {
			break
		}
		i = b
		w := s[a:b]
		named := nameGreekWord(w)
		if named == w || !greekAlone(s, a, b) {
			continue
		}
		out = append(append(out, s[last:a]...), named...)
		last = b
	}
	if out == nil {
		return s
	}
	return string(append(out, s[last:]...))
}

// nameGreekWord writes each Greek letter of the compound w that stands
// alone (no Greek letter beside it) as its name: what CodeTerms adds. w
// itself when there is none.
func nameGreekWord(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	var out []byte
	last := 0 // w[last:] is not copied to out yet
	for i := 0; i < len(w); {
		r, size := runeAt(w, i)
		if !greekLetter(r) {
			i += size
			continue
		}
		// A run of Greek letters, combining marks inside it.
		j, n := i, 0
		for j < len(w) {
			r2, size2 := runeAt(w, j)
			if greekLetter(r2) {
				n++
			} else if !IsDiacritic(r2) {
				break
			}
			j += size2
		}
		name := greekName(r)
		unit := name == "mu" && j < len(w) && nextIsLetter(w, j) || // μm, µg
			name == "omega" && prevIsLetter(w, i) // kΩ, MΩ, in either case
		if n == 1 && name != "" && !unit {
			out = append(append(out, w[last:i]...), name...) // marks are dropped
			last = j
		}
		i = j
	}
	if out == nil {
		return w
	}
	return string(append(out, w[last:]...))
}

// prevIsLetter reports whether the rune before w[i], diacritics passed
// over, is a letter.
func prevIsLetter(w string, i int) bool {
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(w[:i])
		if !IsDiacritic(r) {
			return isLetter(r)
		}
		i -= size
	}
	return false
}

// nextIsLetter reports whether the rune at w[i] is a letter.
func nextIsLetter(w string, i int) bool {
	r, _ := runeAt(w, i)
	return isLetter(r)
}

// greekAlone reports whether no Greek letter of s[a:b] has a Greek letter
// as its nearest letter on either side (within s).
func greekAlone(s string, a, b int) bool {
	for i := a; i < b; {
		r, size := runeAt(s, i)
		if !greekLetter(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(s) {
			r2, size2 := runeAt(s, j)
			if !IsDiacritic(r2) {
				break
			}
			j += size2
		}
		if prevLetterGreek(s, i) || nextLetterGreek(s, j) {
			return false
		}
		i = j
	}
	return true
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
