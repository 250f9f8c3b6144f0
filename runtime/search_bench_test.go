package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
)

// BenchmarkSearchWarm measures Local.Search answering from the ranking
// cache — what most calls of a busy owner are: the stale check, the exact
// fit of a 1,000-token budget and the run record. "cold" ranks every call
// afresh (a new question each time), for comparison.
//
//	go test -run '^$' -bench SearchWarm -benchmem ./runtime/
func BenchmarkSearchWarm(b *testing.B) {
	own, tree := benchOwner(b, 300, func(i int) (string, string) {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package pkg%02d\n\n", i%30)
		for f := range 12 {
			fmt.Fprintf(&sb, "// Parse%d_%d reads the request header %d and returns its value,\n// or an error when the header is malformed.\nfunc Parse%d_%d(r *Request) (string, error) {\n", i, f, f, i, f)
			for l := range 6 {
				fmt.Fprintf(&sb, "\tif v := r.Header.Get(\"X-Field-%d\"); v != \"\" && len(v) > %d {\n\t\treturn v, nil\n\t}\n", l, l)
			}
			sb.WriteString("\treturn \"\", errMalformed\n}\n\n")
		}
		return fmt.Sprintf("pkg%02d/file%03d.go", i%30, i), sb.String()
	})
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	res, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: tree}})
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		j, err := svc.GetJob(ctx, res.Job.ID)
		if err != nil {
			b.Fatal(err)
		}
		if j.Job.State == jobs.StateSucceeded {
			break
		}
		if j.Job.State == jobs.StateFailed || time.Now().After(deadline) {
			b.Fatalf("ingest: %+v", j.Job)
		}
		time.Sleep(20 * time.Millisecond)
	}
	search := func(b *testing.B, q string) {
		out, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: q, Budget: &query.Budget{MaxTokens: 1000}}})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Result.Hits) == 0 || out.Result.Budget.UsedTokens > 1000 {
			b.Fatalf("answer: %d hits, %d tokens", len(out.Result.Hits), out.Result.Budget.UsedTokens)
		}
	}
	b.Run("warm", func(b *testing.B) {
		search(b, "request header malformed")
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			search(b, "request header malformed")
		}
	})
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			search(b, fmt.Sprintf("Parse%d_%d header v%d", i%300, i%12, i))
		}
	})
}
