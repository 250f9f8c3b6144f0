package sources

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestNameGreek: a Greek letter standing in Latin text is
// written as its name; Greek text and letters without a name stay.
func TestNameGreek(t *testing.T) {
	for in, want := range map[string]string{
		"IFN-γ":                  "IFN-gamma",
		"TNF-α and IL-6":         "TNF-alpha and IL-6",
		"αvβ8 integrin":          "alphavbeta8 integrin",
		"γδ T cells":             "γδ T cells", // two letters: left as written
		"TGF-β1":                 "TGF-beta1",
		"Δ9-THC":                 "delta9-THC",
		"ΔG < 0":                 "deltaG < 0",
		"5 µm":                   "5 mum",
		"interferon (γ)":         "interferon (gamma)",
		"κ-opioid, σ1":           "kappa-opioid, sigma1",
		"ά-x":                    "alpha-x",
		"γ\u0301-x":              "gamma-x",
		"η γάτα και ο σκύλος":    "η γάτα και ο σκύλος",
		"το IFN-γ":               "το IFN-gamma",
		"λόγος":                  "λόγος",
		"ϝ":                      "ϝ",
		"plain ASCII, nothing":   "plain ASCII, nothing",
		"naïve café":             "naïve café",
		"π":                      "pi",
		"αβγ":                    "αβγ", // three letters: a Greek word
		"Ω-3 fatty acids; ω-6":   "omega-3 fatty acids; omega-6",
		"x\u0370y":               "x\u0370y",
		"ΓΔ":                     "ΓΔ",
		"το IFN-γ είναι":         "το IFN-γ είναι", // Greek prose
		"β-catenin/TCF":          "beta-catenin/TCF",
		"the β₂-adrenergic type": "the beta₂-adrenergic type",
	} {
		if got := NameGreek(in); got != want {
			t.Errorf("NameGreek(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCodeTermsNameGreek: a unit that writes a Greek letter holds its
// name among its code terms, once; Greek text gives none.
func TestCodeTermsNameGreek(t *testing.T) {
	terms := " " + CodeTerms("IFN-γ and TNF-α; IFN-γ again, interferon γ") + " "
	for _, want := range []string{" ifn-gamma ", " tnf-alpha ", " gamma "} {
		if !strings.Contains(terms, want) {
			t.Errorf("CodeTerms: %q lacks %q", terms, want)
		}
	}
	if n := strings.Count(terms, "ifn-gamma"); n != 1 {
		t.Errorf("CodeTerms: ifn-gamma %d times in %q, want once", n, terms)
	}
	if terms := CodeTerms("η γάτα και ο σκύλος"); terms != "" {
		t.Errorf("CodeTerms of Greek text = %q, want none", terms)
	}
}

// FuzzNameGreek: NameGreek never fails, leaves ASCII as it is, keeps
// valid UTF-8 valid, is idempotent, and names each compound as
// CodeTerms does in context (nameGreekIn), compound for compound.
func FuzzNameGreek(f *testing.F) {
	for _, s := range []string{"IFN-γ", "αvβ8", "γδ T cells", "η γάτα", "γ\u0301-x", "ΑΒΓ δ", "a.β::γ-δ", "\xff\xfeγ", "µ"} {
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
		named := Compounds(got)
		k := 0
		for i := 0; i < len(s); k++ {
			a, b := nextCompound(s, i)
			if a >= len(s) {
				break
			}
			if k >= len(named) || nameGreekIn(s, a, b) != named[k] {
				t.Fatalf("%q: compound %d %q named %q in context, %v in the whole", s, k, s[a:b], nameGreekIn(s, a, b), named)
			}
			i = b
		}
		if k != len(named) {
			t.Fatalf("%q: %d compounds, %d once named", s, k, len(named))
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
