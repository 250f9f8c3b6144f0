package sources

import (
	"reflect"
	"strings"
	"testing"
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
// sections do, and every chunk is within the token range or one line.
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
			if n > ChunkMaxTokens && u.StartLine != u.EndLine {
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
	if last := ex.Units[len(ex.Units)-1]; last.Level != LevelChunk || last.StartLine != last.EndLine || EstimateTokens(last.Text) <= ChunkMaxTokens {
		t.Errorf("the huge line should be a chunk of its own, got %s %d..%d", last.Level, last.StartLine, last.EndLine)
	}
}
