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
	"github.com/tychora/tychora/workspace"
)

// BenchmarkCancelRunningSync measures how long cancel takes to stop a sync
// in the middle of a large ingest: from the cancel call to the job's
// cancelled state (manage_job cancel waits for it).
//
//	go test -run '^$' -bench CancelRunningSync -benchtime 10x ./runtime/
func BenchmarkCancelRunningSync(b *testing.B) {
	own, tree := benchOwner(b, 6000, func(i int) (string, string) {
		return fmt.Sprintf("d%02d/f%05d.md", i%50, i),
			fmt.Sprintf("# File %d\n\n%s\n", i, strings.Repeat(fmt.Sprintf("line %d of a long document about ingest. ", i), 40))
	})
	ctx := OwnerContext(context.Background())
	svc := own.Service()
	all := workspace.Principal{Grant: workspace.GrantManage}
	res, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: tree}})
	if err != nil {
		b.Fatal(err)
	}
	id := res.Job.ID
	var worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if i > 0 {
			if _, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: "retry", JobID: id}); err != nil {
				b.Fatal(err)
			}
		}
		for {
			j, err := own.queue.Get(ctx, all, id)
			if err != nil {
				b.Fatal(err)
			}
			if j.State == jobs.StateRunning && j.Progress.FilesSeen > 0 {
				break
			}
			if j.Final() {
				b.Fatalf("the sync finished before it could be cancelled (%s)", j.State)
			}
			time.Sleep(time.Millisecond)
		}
		b.StartTimer()
		t0 := time.Now()
		out, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: "cancel", JobID: id})
		d := time.Since(t0)
		b.StopTimer()
		if err != nil || out.Job.State != jobs.StateCancelled {
			b.Fatalf("cancel: %+v %v", out.Job, err)
		}
		worst = max(worst, d)
		b.StartTimer()
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}

// benchOwner starts an owner on a fresh workspace beside a tree of n files
// (file(i) gives each one's slash path and content), closed when b ends.
func benchOwner(b *testing.B, n int, file func(i int) (rel, content string)) (own *Owner, tree string) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), ".tychora")
	if _, err := Init(dir, InitOptions{}); err != nil {
		b.Fatal(err)
	}
	tree = filepath.Join(filepath.Dir(dir), "tree")
	for i := range n {
		rel, content := file(i)
		p := filepath.Join(tree, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	own, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = own.Close(context.Background()) })
	return own, tree
}
