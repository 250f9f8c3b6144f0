package render

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// reference counts with codecs of their own, built apart from the
// package's shared counters: the independent recount of every test.
var reference = struct {
	once sync.Once
	m    map[string]tokenizer.Codec
}{}

func refCount(t testing.TB, counter, s string) int {
	t.Helper()
	reference.once.Do(func() {
		reference.m = map[string]tokenizer.Codec{}
		for _, e := range []tokenizer.Encoding{tokenizer.O200kBase, tokenizer.Cl100kBase} {
			c, err := tokenizer.Get(e)
			if err != nil {
				panic(err)
			}
			reference.m[string(e)] = c
		}
	})
	if counter == "" {
		counter = DefaultCounter
	}
	n, err := reference.m[counter].Count(s)
	if err != nil {
		t.Fatalf("reference count: %v", err)
	}
	return n
}

// atoms are the pieces random strings are made of: what JSON, rendered
// blocks and source text put next to each other.
var atoms = []string{
	"a", "Z", "e", "s", "id", "evidence_id", "false", "true", "'s", "'", "0", "7", "42", "1234",
	"{", "}", "[", "]", "\"", ":", ",", "},{\"", "\":\"", "\\n", "\\u003c", "\\\"", "/", "//", "#", "##",
	"```", "<", ">", "&", "-", "_", ".", " ", "  ", "\t", "\n", "\n\n", "\r\n", " \n", "é", "漢字", "🎉",
	"\u00a0", "\u2028", "\u0301", "==> ", "-- ", "<chunk id=\"", "</chunk>\n", "Hello", "HTTPServer", "'S", "'ll",
	"/\n", "\n/", "\\u", "٣٤", "x²", "\n\t", "\n  ", "\t\t", "{\n\t", "\\n\\t",
}

// chars are single characters for strings that mix ASCII classes densely.
var chars = []string{" ", "\t", "\n", "\r", "!", "\"", "#", "$", "%", "&", "'", "(", ")", "*", "+", ",", "-",
	".", "/", "0", "1", "9", ":", ";", "<", "=", ">", "?", "@", "A", "S", "Z", "a", "d", "l", "s", "t", "z",
	"[", "\\", "]", "^", "_", "`", "{", "|", "}", "~", "é", "ſ", "\u0085", "\u2028", "\u0301", "٣"}

// randomString joins n atoms or, one time in two, n single characters.
func randomString(r *rand.Rand, n int) string {
	from := atoms
	if r.IntN(2) == 0 {
		from = chars
		n *= 2
	}
	var b strings.Builder
	for range n {
		b.WriteString(from[r.IntN(len(from))])
	}
	return b.String()
}

// TestSplitsIsExact checks rules A–D against the encoders: wherever splits
// says a string splits, the counts of the two sides add up to the count of
// the whole.
func TestSplitsIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	checked := map[string]int{}
	rounds := 400
	if testing.Short() {
		rounds = 100
	}
	for _, counter := range []string{"o200k_base", "cl100k_base"} {
		c, err := CounterFor(counter)
		if err != nil {
			t.Fatal(err)
		}
		for range rounds {
			s := randomString(r, 4+r.IntN(24))
			checked[counter] += checkSplits(t, c, s, refCount(t, counter, s))
		}
	}
	for counter, n := range checked {
		if n < 200 {
			t.Errorf("%s: only %d split points checked", counter, n)
		}
	}
}

// checkSplits checks that wherever splits says s splits, c's counts of
// the two sides add up to whole, the count of s; it returns how many
// positions it checked.
func checkSplits(t *testing.T, c *Counter, s string, whole int) int {
	t.Helper()
	n := 0
	for p := 1; p < len(s); p++ {
		if !splits(s[:p], s[p:]) {
			continue
		}
		n++
		if got := c.Count(s[:p]) + c.Count(s[p:]); got != whole {
			t.Fatalf("%s: %q | %q: %d + %d = %d, whole %d", c.Name(), s[:p], s[p:], c.Count(s[:p]), c.Count(s[p:]), got, whole)
		}
	}
	return n
}

func TestSplitsRules(t *testing.T) {
	for _, tc := range []struct {
		prev, next string
		want       bool
	}{
		{`"hits":[{"`, `evidence_id`, true}, // A
		{`[{`, `"e`, false},
		{`{`, `e`, false},     // A needs two punctuation characters
		{"\n/\\", `n`, false}, // … the first not '/'
		{`/{`, `e`, false},
		{"```\n", "## x", true}, // B
		{"x\n", "/usr", false},
		{"x\n", " y", true}, // B, indented
		{"x\n", "\t\t// y", true},
		{"{\n", "\t}", true},
		{"x\n", "  ", false},
		{"x\n", " \n", false},
		{"x\n", "\t\r\n", false},
		{"x\n", "\té", false},
		{"x\n", "\t\u00a0y", false},
		{"x\n", "\ny", false},
		{`false`, `},{"`, true}, // C
		{`dog`, `'s`, false},
		{`":`, `42`, true}, // A, digits
		{`/:`, `42`, false},
		{`42`, `,"`, true}, // D
		{`42`, `7`, false},
		{``, `x`, true},
		{` `, `x`, false},
	} {
		if got := splits(tc.prev, tc.next); got != tc.want {
			t.Errorf("splits(%q, %q) = %v, want %v", tc.prev, tc.next, got, tc.want)
		}
	}
}

// TestPrefixCounterIsExact compares prefix counts with whole counts at
// every line boundary of random texts, inside random heads and tails.
func TestPrefixCounterIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rounds := 60
	if testing.Short() {
		rounds = 20
	}
	for _, counter := range []string{"o200k_base", "cl100k_base"} {
		c, err := CounterFor(counter)
		if err != nil {
			t.Fatal(err)
		}
		for range rounds {
			var b strings.Builder
			for range 2 + r.IntN(30) {
				b.WriteString(randomString(r, r.IntN(12)))
				b.WriteString("\n")
			}
			s := b.String()
			head, tail := randomString(r, r.IntN(4)), randomString(r, r.IntN(4))
			pc := newPrefixCounter(newTally(c), s, r.IntN(200))
			for _, m := range lineCuts(s) {
				want := refCount(t, counter, head+s[:m]+tail)
				if got := pc.count(head, m, tail); got != want {
					t.Fatalf("%s: count(%q, %q, %q) = %d, want %d", counter, head, s[:m], tail, got, want)
				}
			}
		}
	}
}

// TestPrefixCounterLongTokens: text of more than 5 bytes a token (rules
// of '=' and runs of spaces, common in source files) makes the prefix
// counter encode beyond its first guess; it must stop at the end of the
// text.
func TestPrefixCounterLongTokens(t *testing.T) {
	for _, counter := range []string{"o200k_base", "cl100k_base"} {
		c, err := CounterFor(counter)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{strings.Repeat("=", 79), "//" + strings.Repeat(" ", 60) + "x", strings.Repeat("-", 200)} {
			for lines := 1; lines <= 12; lines++ {
				s := strings.Repeat(line+"\n", lines)
				for need := 0; need < 40; need += 3 {
					pc := newPrefixCounter(newTally(c), s, need)
					for _, m := range lineCuts(s) {
						if got, want := pc.count("{", m, "}"), refCount(t, counter, "{"+s[:m]+"}"); got != want {
							t.Fatalf("%s: %d lines of %q, need %d, cut %d: %d tokens, want %d", counter, lines, line, need, m, got, want)
						}
					}
				}
			}
		}
	}
}

// TestDigitGroupsAreOneToken backs the fixed point's argument: every run of
// one to three digits is one token in both encodings, so a number's count
// depends only on how many digits it has.
func TestDigitGroupsAreOneToken(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		c, err := CounterFor(name)
		if err != nil {
			t.Fatal(err)
		}
		for d, lim := 1, 10; d <= 3; d, lim = d+1, lim*10 {
			for n := range lim {
				if s := fmt.Sprintf("%0*d", d, n); c.Count(s) != 1 {
					t.Fatalf("%s: %q is %d tokens", name, s, c.Count(s))
				}
			}
		}
	}
}

func TestSplitNumbers(t *testing.T) {
	got := splitNumbers(`}],"total_matches":87,"budget":{"max_tokens":4000,"used_tokens":3988},"run":"r2d2"}`)
	want := []string{`}],"total_matches":`, `87`, `,"budget":{"max_tokens":`, `4000`, `,"used_tokens":`, `3988`, `},"run":"r2`, `d2`, `"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("splitNumbers = %q", got)
	}
}

func TestTallySum(t *testing.T) {
	c, err := CounterFor("")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		segs := make([]string, 1+r.IntN(8))
		for i := range segs {
			segs[i] = randomString(r, r.IntN(6))
		}
		if got, want := newTally(c).sum(segs), refCount(t, "", strings.Join(segs, "")); got != want {
			t.Fatalf("sum(%q) = %d, want %d", segs, got, want)
		}
	}
}

// TestUpToMatchesCount checks counting by pieces against whole counts on
// long generated text, raw and JSON-escaped, in both encodings: exact
// when it says so, and between the limit and the whole count when it
// stops early. It keeps the splitting rules honest on text like hits'.
func TestUpToMatchesCount(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n := 300
	if testing.Short() || raceEnabled {
		n = 60
	}
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		c, err := CounterFor(name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			var b strings.Builder
			for b.Len() < 1100+r.IntN(4000) {
				if tx := genText(r); tx != nil {
					b.WriteString(*tx)
				}
				b.WriteString("\n")
			}
			s := b.String()
			if i%2 == 1 {
				j, _ := json.Marshal(s)
				s = string(j)
			}
			whole := c.Count(s)
			if got, exact := newTally(c).upTo(s, math.MaxInt); !exact || got != whole {
				t.Fatalf("%s %d: upTo = %d (exact %v), Count = %d, on %q", name, i, got, exact, whole, s)
			}
			limit := r.IntN(whole + 1)
			got, exact := newTally(c).upTo(s, limit)
			if exact && got != whole || !exact && (got <= limit || got > whole) {
				t.Fatalf("%s %d: upTo(limit %d) = %d (exact %v), Count = %d", name, i, limit, got, exact, whole)
			}
		}
	}
}

// TestDigitRuns: in every counter a run of ASCII digits alone costs one
// token per group of three, which tally.count relies on.
func TestDigitRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, info := range Counters() {
		c, err := CounterFor(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 64; n++ {
			for range 40 {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte('0' + r.IntN(10))
				}
				if got, want := c.Count(string(b)), (n+2)/3; got != want {
					t.Fatalf("%s: %q is %d tokens, want %d", info.Name, b, got, want)
				}
			}
		}
	}
}

// TestSplitsIndentedLines checks rule B's indented lines, and the pieces
// upTo and countPieces count, on texts of code-like lines (indentation,
// blank and white lines, CRLF, comments), raw and escaped as JSON.
func TestSplitsIndentedLines(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	indents := []string{"", " ", "  ", "\t", "\t\t", " \t", "\t ", "    "}
	words := []string{"x", "if err != nil {", "}", "// c", "/", "/* a */", "'s", `"q"`, "42", "é", "\u00a0y", "{",
		"->", `\n`, "", " ", "\t", "\r", "漢", "Ab", "#", "-- /a/b.go:1-2 x", `,"text":"`, `","hash":"`}
	ends := []string{"\n", "\n", "\n", "\r\n", " \n", "\t\n", "\n\n", "\n \n"}
	rounds := 3000
	if testing.Short() {
		rounds = 500
	}
	for _, counter := range []string{"o200k_base", "cl100k_base"} {
		c, err := CounterFor(counter)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for range rounds {
			var b strings.Builder
			for range 1 + r.IntN(6) {
				b.WriteString(indents[r.IntN(len(indents))])
				for range r.IntN(3) {
					b.WriteString(words[r.IntN(len(words))])
				}
				b.WriteString(ends[r.IntN(len(ends))])
			}
			s := b.String()
			if r.IntN(2) == 0 {
				s = escapeJSON(s)
			}
			whole := refCount(t, counter, s)
			checked += checkSplits(t, c, s, whole)
			if got, exact := newTally(c).upTo(s, math.MaxInt); !exact || got != whole {
				t.Fatalf("%s: upTo(%q) = %d, whole %d", counter, s, got, whole)
			}
			if got := countPieces(c, s); got != whole {
				t.Fatalf("%s: countPieces(%q) = %d, whole %d", counter, s, got, whole)
			}
		}
		if checked < 1000 {
			t.Errorf("%s: only %d split points checked", counter, checked)
		}
	}
}
