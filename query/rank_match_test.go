package query

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tychora/tychora/sources"
)

// TestStemKeepsFirstTwoBytes checks what matcher.pairs relies on: a stem
// of three bytes or more starts with its token's first two bytes. Every
// token of one to six letters over an alphabet of vowels, y, s and the
// consonants of common endings is stemmed.
func TestStemKeepsFirstTwoBytes(t *testing.T) {
	const alphabet = "aeiolnstyd"
	tok := make([]byte, 0, 6)
	var walk func()
	n := 0
	walk = func() {
		if len(tok) >= 2 {
			n++
			st := sources.PorterStem(slices.Clone(tok))
			if len(st) >= 3 && (st[0] != tok[0] || st[1] != tok[1]) {
				t.Fatalf("PorterStem(%q) = %q: the first two bytes changed", tok, st)
			}
		}
		if len(tok) == cap(tok) {
			return
		}
		for i := range len(alphabet) {
			tok = append(tok, alphabet[i])
			walk()
			tok = tok[:len(tok)-1]
		}
	}
	walk()
	if n < 1000000 {
		t.Fatalf("only %d tokens stemmed", n)
	}
}

// TestMatcherPairFilter: scanning with the two-byte filter finds the same
// hits, and the same identifier parts, as scanning without it, over this
// package's own sources and questions made of their words.
func TestMatcherPairFilter(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatal("no sources to scan", err)
	}
	var texts []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	texts = append(texts, "Ärger über Café naïve ÉLAN été ies ays as is a I Über-Straße")
	words := strings.Fields("read reader readers is a as ies ays i search searching scan stems matcher pairs ärger café elan été über the " +
		"http server handle keep alive connections parse decimal string integer overflow checks select statement")
	for k := 0; k+5 <= len(words); k++ {
		var stems []string
		for _, w := range words[k : k+5] {
			stems = append(stems, string(sources.PorterStem([]byte(w))))
		}
		m := newMatcher(stems)
		all := newMatcher(stems)
		for i := range all.pairs {
			all.pairs[i] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		}
		if len(all.pairs) == 0 || len(all.pairs) > 5 {
			t.Fatalf("stems %q: %d rows of pairs", stems, len(all.pairs))
		}
		for _, text := range texts {
			got, gn := m.scan(text, nil)
			want, wn := all.scan(text, nil)
			if gn != wn || !slices.Equal(got, want) {
				t.Fatalf("stems %q: %d hits (%d tokens) with the filter, %d (%d) without", stems, len(got), gn, len(want), wn)
			}
			if got, want := m.appendParts(text, got), all.appendParts(text, want); !slices.Equal(got, want) {
				t.Fatalf("stems %q: %d hits with identifier parts with the filter, %d without", stems, len(got), len(want))
			}
		}
	}
}
