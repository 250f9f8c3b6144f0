package sources

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a\r", "b\r"}},
		{"a\n\n", []string{"a", ""}},
	}
	for _, tt := range tests {
		if got := splitLines(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"   \n\t", 0},
		{"hello world", 2},
		{"function", 2},
		{"parseHTTPRequest", 3},
		{"a := b", 3},
		{"f();", 3},
		{"日本語", 3},
		{"x\ny", 2},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	// Additive over lines.
	text := "func main() {\n\tfmt.Println(\"héllo\")\n}\n"
	sum := 0
	for _, l := range splitLines(text) {
		sum += EstimateTokens(l)
	}
	if got := EstimateTokens(text); got != sum {
		t.Errorf("EstimateTokens(text) = %d, sum over lines %d", got, sum)
	}
}

func TestPackItems(t *testing.T) {
	tests := []struct {
		name  string
		tok   []int
		score []int
		want  [][2]int
	}{
		{"one", []int{10}, []int{1}, [][2]int{{0, 1}}},
		{"fits", []int{100, 100, 100}, []int{1, 1, 1}, [][2]int{{0, 3}}},
		{"prefers best break", []int{150, 100, 100, 100, 100}, []int{1, 1, 3, 1, 1}, [][2]int{{0, 2}, {2, 5}}},
		{"huge item alone", []int{50, 2000, 50}, []int{1, 1, 1}, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{"avoid is last resort", []int{300, 300, 300}, []int{1, 0, 0}, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{"tiny tail merges", []int{300, 200, 50}, []int{1, 1, 1}, [][2]int{{0, 1}, {1, 3}}},
	}
	for _, tt := range tests {
		got := packItems(tt.tok, tt.score)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: packItems = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestPackItemsInvariants(t *testing.T) {
	tok := make([]int, 500)
	score := make([]int, 500)
	for i := range tok {
		tok[i] = (i*37)%60 + 1
		score[i] = i % 4
	}
	tok[100] = 900
	parts := packItems(tok, score)
	next := 0
	for _, p := range parts {
		if p[0] != next || p[1] <= p[0] {
			t.Fatalf("parts %v not contiguous at %v", parts, p)
		}
		next = p[1]
		sum := 0
		for _, n := range tok[p[0]:p[1]] {
			sum += n
		}
		if sum > ChunkMaxTokens && p[1]-p[0] > 1 {
			t.Errorf("part %v has %d tokens", p, sum)
		}
	}
	if next != len(tok) {
		t.Fatalf("parts end at %d, want %d", next, len(tok))
	}
}

// TestLeavesCarryText checks the level rule on a long document: the
// document and chunked sections carry no text, chunks and unchunked
// sections do, every chunk is within the token range, and a line too
// long for it is cut into windows.
func TestLeavesCarryText(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("# Short\n\nA small section.\n\n# Long\n\n")
	for i := 0; i < 120; i++ {
		sb.WriteString("This paragraph has a handful of words in it, enough to count.\n")
		if i%5 == 4 {
			sb.WriteString("\n")
		}
	}
	sb.WriteString("\n# Huge line\n\n" + strings.Repeat("word ", 3000) + "\n")
	text := sb.String()
	ex, err := markdownExtractor{}.Extract("doc.md", text)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkUnits(text, ex, true); err != nil {
		t.Fatal(err)
	}
	var sections, chunks int
	for i, u := range ex.Units[1:] {
		switch u.Level {
		case LevelSection:
			sections++
		case LevelChunk:
			chunks++
			n := EstimateTokens(u.Text)
			limit := ChunkMaxTokens
			if u.StartLine == u.EndLine {
				limit = MaxLineTokens // a window of a long line
			}
			if n > limit {
				t.Errorf("chunk %d (%d..%d) has %d tokens", i+1, u.StartLine, u.EndLine, n)
			}
			if ex.Units[u.Parent].Text != "" {
				t.Errorf("chunk %d's section carries text", i+1)
			}
		}
	}
	if sections != 3 || chunks < 2 {
		t.Errorf("got %d sections and %d chunks, want 3 and at least 2", sections, chunks)
	}
	// The huge line (15,000 bytes) is the Huge line section's windows:
	// chunks on its one line, each within the limits, that make the line.
	huge := strings.Count(text, "\n")
	var windows []string
	for _, u := range ex.Units {
		if u.Level == LevelChunk && u.StartLine == huge {
			if u.EndLine != huge || len(u.Text) > MaxLineBytes || EstimateTokens(u.Text) > MaxLineTokens {
				t.Errorf("window %d..%d of %d bytes, %d tokens", u.StartLine, u.EndLine, len(u.Text), EstimateTokens(u.Text))
			}
			windows = append(windows, u.Text)
		}
	}
	if len(windows) < 4 || strings.Join(windows, "") != strings.Repeat("word ", 3000) {
		t.Errorf("the huge line is %d windows that do not make the line", len(windows))
	}
}

func TestLineWindows(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string // the windows; nil: only the invariants
	}{
		{"short", "a short line", []string{"a short line"}},
		{"empty", "", nil},
		{"at white space", strings.Repeat("abcdefg ", 600), []string{strings.Repeat("abcdefg ", 448), strings.Repeat("abcdefg ", 152)}},
		{"between words", strings.Repeat("abcdef;", 700), []string{strings.Repeat("abcdef;", 512), strings.Repeat("abcdef;", 188)}},
		{"tokens first", strings.Repeat("a;", 600), []string{strings.Repeat("a;", 512), strings.Repeat("a;", 88)}},
		{"one word", strings.Repeat("x", 8000), []string{strings.Repeat("x", 3584), strings.Repeat("x", 3584), strings.Repeat("x", 832)}},
		{"runes", strings.Repeat("日本語", 400), nil},
		{"mixed", strings.Repeat("héllo, wörld; ", 400), nil},
		{"spaces", "a" + strings.Repeat(" ", 5000) + "b", nil},
		{"invalid UTF-8", strings.Repeat("\xff\xfe", 3000), nil},
	}
	for _, tt := range tests {
		ends := lineWindows(tt.line)
		got := checkWindows(t, tt.name, tt.line, ends)
		if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %d windows of %v bytes, want %d of %v", tt.name, len(got), lens(got), len(tt.want), lens(tt.want))
		}
	}
}

// checkWindows checks what lineWindows promises of ends and returns the
// windows.
func checkWindows(t *testing.T, name, line string, ends []int) []string {
	t.Helper()
	var out []string
	start := 0
	for _, end := range ends {
		if end <= start || end > len(line) {
			t.Fatalf("%s: window %d..%d of a line of %d bytes", name, start, end, len(line))
		}
		w := line[start:end]
		if len(w) > MaxLineBytes || EstimateTokens(w) > MaxLineTokens {
			t.Fatalf("%s: window %d..%d: %d bytes, %d tokens", name, start, end, len(w), EstimateTokens(w))
		}
		if end < len(line) && insideRune(line, end) {
			t.Fatalf("%s: window ends at %d, inside a character", name, end)
		}
		out = append(out, w)
		start = end
	}
	if start != len(line) {
		t.Fatalf("%s: windows end at %d of %d", name, start, len(line))
	}
	if !isLongLine(line, EstimateTokens(line)) && len(ends) > 1 {
		t.Fatalf("%s: a line within the limits is %d windows", name, len(ends))
	}
	return out
}

func lens(ws []string) []int {
	out := make([]int, len(ws))
	for i, w := range ws {
		out[i] = len(w)
	}
	return out
}

// TestExtractOneLongLine: every extractor cuts a file of one 1 MB line
// into leaves on line 1 within the limits, and a long line between
// others into windows of its own line only.
func TestExtractOneLongLine(t *testing.T) {
	const size = 1 << 20
	rep := func(f func(i int) string) string {
		var sb strings.Builder
		for i := 0; sb.Len() < size; i++ {
			sb.WriteString(f(i))
		}
		return sb.String()
	}
	prose := rep(func(i int) string { return fmt.Sprintf("the quick brown fox %d jumps over the lazy dog, ", i) })
	js := rep(func(i int) string {
		return fmt.Sprintf("function f%d(a,b){return a+b*%d};var v%d=f%d(1,2);", i, i, i, i)
	})
	page := "<html><head><title>Page</title><script>var x=1;</script></head><body>" +
		rep(func(i int) string {
			if i%50 == 0 {
				return fmt.Sprintf("<h2>Part %d</h2><p>%s</p>", i, strings.Repeat("long paragraph words ", 200))
			}
			return fmt.Sprintf("<p>item %d with <b>bold</b> text &amp; more</p><div>cell %d</div>", i, i)
		}) + "</body></html>"
	cases := []struct {
		name     string
		x        Extractor
		line     string
		verbatim bool
	}{
		{"text", textExtractor{kind: KindText}, prose, true},
		{"data", textExtractor{kind: KindData, language: "json"}, `{"a":[` + rep(func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"},`, i, i) }) + `0]}`, true},
		{"code", newCodeExtractor(LangJavaScript), js, true},
		{"code no spaces", newCodeExtractor(LangGo), strings.Repeat("QUJDRA", size/6), true},
		{"markdown", markdownExtractor{}, "# Title " + prose, true},
		{"markdown cjk", markdownExtractor{}, strings.Repeat("日本語の文章", size/18), true},
		{"html", htmlExtractor{}, page, false},
	}
	for _, c := range cases {
		for _, shape := range []struct {
			name   string
			text   string
			line   int // the long line
			before int // lines before it
		}{
			{"alone", c.line + "\n", 1, 0},
			{"between", "first line\n\nsecond line\n" + c.line + "\nlast line\n", 4, 3},
		} {
			name := c.name + " " + shape.name
			ex, err := c.x.Extract("f", shape.text)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkUnits(shape.text, ex, c.verbatim); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			onLine := 0
			for i, u := range ex.Units[1:] {
				if u.Text == "" {
					continue
				}
				if len(u.Text) > MaxLineBytes+shape.before*16 {
					t.Errorf("%s: leaf %d (%d..%d) of %d bytes", name, i+1, u.StartLine, u.EndLine, len(u.Text))
				}
				if u.StartLine <= shape.line && u.EndLine >= shape.line {
					onLine++
					if c.verbatim && (u.StartLine != shape.line || u.EndLine != shape.line) {
						t.Errorf("%s: window %d spans %d..%d, want line %d", name, i+1, u.StartLine, u.EndLine, shape.line)
					}
				}
			}
			if onLine < len(c.line)/MaxLineBytes {
				t.Errorf("%s: %d leaves on the long line, want at least %d", name, onLine, len(c.line)/MaxLineBytes)
			}
		}
	}
}

// insideRune reports whether byte i of s is inside a UTF-8 sequence: a
// character that starts before i and runs past it. A stray continuation
// byte of invalid UTF-8 is a character of its own (utf8.DecodeRune reads
// it so), and a cut before it is no cut inside a sequence.
func insideRune(s string, i int) bool {
	for p := i - 1; p >= 0 && p >= i-3; p-- {
		if utf8.RuneStart(s[p]) {
			_, size := utf8.DecodeRuneInString(s[p:])
			return p+size > i
		}
	}
	return false
}
