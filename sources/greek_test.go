package sources

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestNameGreek: a question's Greek letter standing in Latin text is
// written as its name; Greek text, pairs of letters, letters without a
// name and the units µ, Ω and μ before a letter stay.
func TestNameGreek(t *testing.T) {
	for in, want := range map[string]string{
		"IFN-γ":                  "IFN-gamma",
		"TNF-α and IL-6":         "TNF-alpha and IL-6",
		"αvβ8 integrin":          "alphavbeta8 integrin",
		"γδ T cells":             "γδ T cells", // two letters: left as written
		"TGF-β1":                 "TGF-beta1",
		"Δ9-THC":                 "delta9-THC",
		"ΔG < 0":                 "deltaG < 0",
		"Δt":                     "deltat",
		"interferon (γ)":         "interferon (gamma)",
		"κ-opioid, σ1":           "kappa-opioid, sigma1",
		"μ-opioid receptor":      "mu-opioid receptor",
		"5 μm, 2 μM, 3 µg, 1 kΩ": "5 μm, 2 μM, 3 µg, 1 kΩ", // units
		"10 \u2126 and 2 MΩ":     "10 omega and 2 MΩ",      // the ohm sign folds to ω
		"µ-opioid":               "mu-opioid",              // the micro sign to μ
		"ά-x":                    "alpha-x",
		"γ\u0301-x":              "gamma-x",
		"η γάτα και ο σκύλος":    "η γάτα και ο σκύλος",
		"το IFN-γ":               "το IFN-gamma",
		"το IFN-γ είναι":         "το IFN-γ είναι", // Greek prose
		"IFN-α/β":                "IFN-α/β",        // α's nearest letter after is β
		"αvβ γ":                  "αvβ γ",          // β's is γ: the compound stays whole
		"λόγος":                  "λόγος",
		"ϝ":                      "ϝ",
		"plain ASCII, nothing":   "plain ASCII, nothing",
		"naïve café":             "naïve café",
		"π":                      "pi",
		"αβγ":                    "αβγ",
		"Ω-3 fatty acids; ω-6":   "omega-3 fatty acids; omega-6",
		"ΓΔ":                     "ΓΔ",
		"β-catenin/TCF":          "beta-catenin/TCF",
		"the β₂-adrenergic type": "the beta₂-adrenergic type",
	} {
		if got := NameGreek(in); got != want {
			t.Errorf("NameGreek(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCodeTermsNameGreek: a unit that writes a Greek letter alone holds
// the named compound among its code terms, once, whatever stands around
// it (a question names it or reads it as written, and either finds the
// unit); pairs of letters and units give none.
func TestCodeTermsNameGreek(t *testing.T) {
	for text, wants := range map[string][]string{
		"IFN-γ and TNF-α; IFN-γ again, interferon γ": {"ifn-gamma", "tnf-alpha", "gamma"},
		"Type I IFN-α/β receptor":                    {"ifn-alpha", "beta"},
		"η IFN-γ είναι":                              {"ifn-gamma", "eta"},
		"αvβ8 και; later αvβ8 in mice":               {"alphavbeta8"},
		"Aβ-42 and Aβ42":                             {"abeta-42", "abeta42"},
	} {
		terms := " " + CodeTerms(text) + " "
		for _, w := range wants {
			if strings.Count(terms, " "+w+" ") != 1 {
				t.Errorf("CodeTerms(%q) = %q: want %q once", text, terms, w)
			}
		}
	}
	for _, text := range []string{"γδ T cells", "5 μm, 3 µg, 1 kΩ", "plain words"} {
		if terms := CodeTerms(text); strings.Contains(terms, "gamma") || strings.Contains(terms, "mu") || strings.Contains(terms, "omega") {
			t.Errorf("CodeTerms(%q) = %q: nothing named wanted", text, terms)
		}
	}
}

// TestGreekAsTheIndexFolds: spellings the index folds to the same tokens
// (µ and μ, the ohm sign and Ω and ω, upper and lower case, a diacritic)
// give the same named forms in code terms and in a question, so none of
// them loses the others.
func TestGreekAsTheIndexFolds(t *testing.T) {
	for _, group := range [][]string{
		{"µ-opioid receptor", "μ-opioid receptor", "Μ-OPIOID receptor"},
		{"10 kΩ resistor", "10 k\u2126 resistor", "10 kω resistor", "10 k\u0301Ω resistor", "10 KΩ resistor"},
		{"Ω-3 acids", "\u2126-3 acids", "ω-3 acids"},
		{"5 µm", "5 μm", "5 μM", "5 µM"},
		{"IFN-γ", "ifn-Γ"},
	} {
		for _, text := range group[1:] {
			if a, b := namedTokens(text), namedTokens(group[0]); a != b {
				t.Errorf("the index names %q as %q, %q as %q", text, a, group[0], b)
			}
			if a, b := indexTokens(NameGreek(text)), indexTokens(NameGreek(group[0])); a != b {
				t.Errorf("a question %q is read as %q, %q as %q", text, a, group[0], b)
			}
		}
	}
}

// namedTokens is the index's tokens of each compound of text as
// CodeTerms names it.
func namedTokens(text string) string {
	var out []string
	for _, c := range Compounds(text) {
		out = append(out, indexTokens(nameGreekWord(c)))
	}
	return strings.Join(out, " | ")
}

// indexTokens is the index's tokens of s (folded, not stemmed).
func indexTokens(s string) string {
	var out []string
	ForEachToken(s, nil, func(tok []byte, _, _ int) bool {
		out = append(out, string(tok))
		return true
	})
	return strings.Join(out, " ")
}

// FuzzNameGreek: NameGreek never fails, leaves ASCII as it is, keeps
// valid UTF-8 valid, is idempotent, and names each compound of a question
// as CodeTerms names it (nameGreekWord) or not at all, so that a question
// never asks for a form the index lacks.
func FuzzNameGreek(f *testing.F) {
	for _, s := range []string{"IFN-γ", "αvβ8", "γδ T cells", "η γάτα", "γ\u0301-x", "ΑΒΓ δ", "a.β::γ-δ", "\xff\xfeγ", "µ", "μm μ-x", "αvβ γ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := NameGreek(s)
		ascii := true
		for i := 0; i < len(s); i++ {
			ascii = ascii && s[i] < utf8.RuneSelf
		}
		if ascii && got != s {
			t.Fatalf("NameGreek(%q) = %q: ASCII changed", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("NameGreek(%q) = %q: not UTF-8", s, got)
		}
		if again := NameGreek(got); again != got {
			t.Fatalf("NameGreek(%q) = %q, then %q", s, got, again)
		}
		if !utf8.ValidString(s) {
			return
		}
		orig, named := Compounds(s), Compounds(got)
		if len(orig) != len(named) {
			t.Fatalf("%q: %d compounds, %d once named", s, len(orig), len(named))
		}
		for k := range orig {
			if named[k] != orig[k] && named[k] != nameGreekWord(orig[k]) {
				t.Fatalf("%q: compound %q named %q, the index's form is %q", s, orig[k], named[k], nameGreekWord(orig[k]))
			}
		}
	})
}

// BenchmarkCodeTermsGreek: CodeTerms over text that is not Latin: Greek
// prose, compounds without a letter (Arabic-Indic digits) far from any
// letter, and Greek letters in Latin text. Its bytes a second stay those
// of a text four times shorter (the reads before and after each compound
// stop at the nearest letter).
func BenchmarkCodeTermsGreek(b *testing.B) {
	for _, n := range []int{1, 4} {
		var sb strings.Builder
		for i := 0; i < 2000*n; i++ {
			sb.WriteString("η γάτα κοιμάται ١٢ ٣٤ ٥٦ ٧٨ ")
			if i%50 == 0 {
				sb.WriteString("IFN-γ, TGF-β1 and αvβ8 in mice. ")
			}
		}
		sb.WriteString(strings.Repeat("١ ", 20000*n) + "γ")
		text := sb.String()
		b.Run(fmt.Sprintf("x%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				CodeTerms(text)
			}
		})
	}
}
