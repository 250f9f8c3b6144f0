package query

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tychora/tychora/sources"
)

// longLineNeedle is the one identifier in the middle of minifiedLine.
const longLineNeedle = "renderWidgetTreeOnce"

// minifiedLine returns about size bytes of minified JavaScript on one line
// with longLineNeedle in its middle.
func minifiedLine(size int) string {
	var sb strings.Builder
	needle := false
	for i := 0; sb.Len() < size; i++ {
		if !needle && sb.Len() >= size/2 {
			sb.WriteString("function " + longLineNeedle + "(t){return t.map(function(n){return n.draw()})};")
			needle = true
		}
		fmt.Fprintf(&sb, "function f%d(a,b){return a+b*%d};var v%d=f%d(1,2);", i, i, i, i)
	}
	return sb.String()
}

// TestSearchLongLineFile: a search that matches a file of one 1 MB line
// finds the window that holds the match, on line 1, and no hit of the file
// carries more of the line than a window.
func TestSearchLongLineFile(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("web", "default", map[string]string{
		"bundle.min.js": minifiedLine(1<<20) + "\n",
		"app.js":        "// renders the widget tree\nfunction renderTree(t) {\n  return t.draw()\n}\n",
	})
	res := env.search(env.all, QueryRequest{Question: longLineNeedle})
	if len(res.Hits) == 0 {
		t.Fatalf("no hit of %d matches", res.TotalMatches)
	}
	h := res.Hits[0]
	if !strings.HasSuffix(h.Path, "bundle.min.js") || h.Span.StartLine != 1 || h.Span.EndLine != 1 || h.Text == nil || !strings.Contains(*h.Text, longLineNeedle) {
		t.Fatalf("first hit %s %d..%d does not hold the match", h.Path, h.Span.StartLine, h.Span.EndLine)
	}
	res = env.search(env.all, QueryRequest{Question: "function return", Limit: 50})
	if len(res.Hits) < 10 {
		t.Fatalf("%d hits of %d matches", len(res.Hits), res.TotalMatches)
	}
	for _, h := range res.Hits {
		if h.Text == nil || len(*h.Text) > sources.MaxLineBytes {
			t.Fatalf("hit %s %d..%d carries %d bytes", h.Path, h.Span.StartLine, h.Span.EndLine, len(*h.Text))
		}
	}
}

// BenchmarkSearchLongLine measures Engine.Search over an index that holds
// one file of a single 8 MiB line (max_file_bytes at its default): a rare
// identifier found in one place of the line, and common words found all
// along it.
//
//	go test -run '^$' -bench SearchLongLine -benchtime 20x ./query/
func BenchmarkSearchLongLine(b *testing.B) {
	env := newSearchEnv(b)
	env.folder("web", "default", map[string]string{"bundle.min.js": minifiedLine(8<<20-64) + "\n"})
	ctx := context.Background()
	for _, q := range []string{longLineNeedle, "function return"} {
		b.Run(strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				res, err := env.engine.Search(ctx, env.all, QueryRequest{Question: q})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Hits) == 0 {
					b.Fatal("no hits")
				}
			}
		})
	}
}
