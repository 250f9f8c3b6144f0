package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// longLineNeedle is the one identifier in the middle of the long line.
const longLineNeedle = "renderWidgetTreeOnce"

// longLineOwner starts an owner with max_file_bytes set to maxFileBytes
// (0: the default) beside a tree of one file, bundle.min.js: a single line
// of about size bytes of minified JavaScript with longLineNeedle in its
// middle. It ingests the tree and returns the owner, closed when tb ends.
func longLineOwner(tb testing.TB, size int, maxFileBytes int64) *Owner {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), ".tychora")
	s, err := Init(dir, InitOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if maxFileBytes > 0 {
		s.MaxFileBytes = maxFileBytes
		if err := workspace.SaveSettings(workspace.NewLayout(dir), s); err != nil {
			tb.Fatal(err)
		}
	}
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		if i == 5000 {
			for sb.Len() < size/2 {
				fmt.Fprintf(&sb, "function f%d(a,b){return a+b*%d};var v%d=f%d(1,2);", i, i, i, i)
				i++
			}
			sb.WriteString("function " + longLineNeedle + "(t){return t.map(function(n){return n.draw()})};")
		}
		fmt.Fprintf(&sb, "function f%d(a,b){return a+b*%d};var v%d=f%d(1,2);", i, i, i, i)
	}
	tree := filepath.Join(filepath.Dir(dir), "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "bundle.min.js"), []byte(sb.String()+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	own, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = own.Close(context.Background()) })
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	res, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: tree}})
	if err != nil {
		tb.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Minute); ; {
		j, err := svc.GetJob(ctx, res.Job.ID)
		if err != nil {
			tb.Fatal(err)
		}
		if j.Job.State == jobs.StateSucceeded {
			if j.Job.Progress.Indexed != 1 {
				tb.Fatalf("ingest: %+v", j.Job.Progress)
			}
			return own
		}
		if j.Job.Final() || time.Now().After(deadline) {
			tb.Fatalf("ingest: %+v", j.Job)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSearchOneLongLineFile: a file of one long line, at the default
// max_file_bytes and past it with the setting raised, answers a search
// that matches it with a hit the default budget shows: the window that
// holds the match, on line 1.
func TestSearchOneLongLineFile(t *testing.T) {
	for _, c := range []struct {
		name         string
		size         int
		maxFileBytes int64
	}{
		{"1 MB", 1 << 20, 0},
		{"raised", workspace.DefaultMaxFileBytes + 1<<20, workspace.DefaultMaxFileBytes + 2<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			own := longLineOwner(t, c.size, c.maxFileBytes)
			ctx := OwnerContext(context.Background())
			out, err := own.Service().Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: longLineNeedle}})
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			if len(r.Hits) == 0 {
				t.Fatalf("no hit of %d matches (budget %+v)", r.TotalMatches, r.Budget)
			}
			h := r.Hits[0]
			if h.Text == nil || !strings.Contains(*h.Text, longLineNeedle) || h.Span.StartLine != 1 || h.Span.EndLine != 1 {
				t.Fatalf("hit %s %d..%d does not show the match", h.Path, h.Span.StartLine, h.Span.EndLine)
			}
			if r.Budget.UsedTokens > workspace.DefaultMaxTokens {
				t.Fatalf("used %d tokens", r.Budget.UsedTokens)
			}
		})
	}
}

// BenchmarkSearchLongLine measures Local.Search, with the default budget,
// over a workspace whose one file is a single 20 MB line of minified
// JavaScript (max_file_bytes raised to 32 MiB to let it in): a rare
// identifier found in one place of the line, and common words found all
// along it. Each call ranks afresh: its budget, one token less than the
// call before's (from the default 4,000 down), makes it miss the ranking
// cache.
//
//	go test -run '^$' -bench SearchLongLine -benchtime 20x ./runtime/
func BenchmarkSearchLongLine(b *testing.B) {
	own := longLineOwner(b, 20_000_000, 32<<20)
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	calls := 0
	for _, q := range []string{longLineNeedle, "function return"} {
		b.Run(strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				budget := &query.Budget{MaxTokens: workspace.DefaultMaxTokens - calls%1000}
				calls++
				out, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: q, Budget: budget}})
				if err != nil {
					b.Fatal(err)
				}
				if len(out.Result.Hits) == 0 {
					b.Fatalf("no hit of %d matches", out.Result.TotalMatches)
				}
			}
		})
	}
}
