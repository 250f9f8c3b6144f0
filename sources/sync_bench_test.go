package sources

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tychora/tychora/workspace"
)

// benchCorpus writes a deterministic corpus of Go and Markdown files.
func benchCorpus(b *testing.B, dir string, files int) {
	b.Helper()
	for i := range files {
		var sb strings.Builder
		var name string
		if i%3 == 0 {
			name = fmt.Sprintf("docs/d%02d/guide%04d.md", i%17, i)
			fmt.Fprintf(&sb, "# Guide %d\n\n", i)
			for s := range 12 {
				fmt.Fprintf(&sb, "## Section %d.%d\n\nThe parseHTTPRequest helper reads a request; see `ReadFile%d` and os.Open.\n", i, s, s)
				for p := range 6 {
					fmt.Fprintf(&sb, "Paragraph %d of section %d talks about indexing, tokens and budgets in plain words.\n", p, s)
				}
				sb.WriteString("\n```go\nfunc example() error { return nil }\n```\n\n")
			}
		} else {
			name = fmt.Sprintf("pkg/p%02d/file%04d.go", i%23, i)
			fmt.Fprintf(&sb, "// Package p%d is generated for the benchmark.\npackage p%d\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\n", i%23, i%23)
			for f := range 25 {
				fmt.Fprintf(&sb, "// handleRequest%d handles one request of kind %d.\nfunc handleRequest%d(path string, n int) (int, error) {\n", f, f, f)
				sb.WriteString("\tb, err := os.ReadFile(path)\n\tif err != nil {\n\t\treturn 0, fmt.Errorf(\"read: %w\", err)\n\t}\n")
				sb.WriteString("\tfor i := 0; i < n; i++ {\n\t\tn += len(b) % (i + 1)\n\t}\n\treturn n, nil\n}\n\n")
			}
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngest syncs a directory into a fresh workspace: a generated
// corpus, or $TYCHORA_BENCH_DIR when set. "initial" is a first sync,
// "resync" a sync of the unchanged tree.
func BenchmarkIngest(b *testing.B) {
	dir := os.Getenv("TYCHORA_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "corpus")
		benchCorpus(b, dir, 600)
	}
	dir, err := filepath.Abs(dir)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	report := func(b *testing.B, files, bytes int64) {
		secs := b.Elapsed().Seconds()
		if secs > 0 {
			b.ReportMetric(float64(files)/secs, "files/s")
			b.ReportMetric(float64(bytes)/(1<<20)/secs, "MB/s")
		}
	}
	b.Run("initial", func(b *testing.B) {
		var files, bytes int64
		for b.Loop() {
			b.StopTimer()
			ix, src, done := benchIndexer(ctx, b, dir)
			b.StartTimer()
			st, err := ix.Sync(ctx, src.ID, SyncOptions{})
			if err != nil {
				b.Fatal(err)
			}
			files += st.Indexed
			bytes += st.Bytes
			b.StopTimer()
			done()
			b.StartTimer()
		}
		report(b, files, bytes)
	})
	b.Run("resync", func(b *testing.B) {
		ix, src, done := benchIndexer(ctx, b, dir)
		defer done()
		if _, err := ix.Sync(ctx, src.ID, SyncOptions{}); err != nil {
			b.Fatal(err)
		}
		var files int64
		for b.Loop() {
			st, err := ix.Sync(ctx, src.ID, SyncOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if st.Indexed != 0 {
				b.Fatalf("resync indexed %d files", st.Indexed)
			}
			files += st.FilesSeen
		}
		report(b, files, 0)
	})
}

// copyGoTree copies the non-testdata files of the named directories of
// $(go env GOROOT)/src into dst.
func copyGoTree(b *testing.B, dst string, dirs ...string) {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if e.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !e.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out := filepath.Join(dst, rel)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			return os.WriteFile(out, data, 0o644)
		})
		if err != nil {
			b.Skipf("copy of Go's tree: %v", err)
		}
	}
}

// BenchmarkSyncChanged is a sync of a copy of part of Go's tree after
// 1,000 of its .go files changed (a line with a token of its own appended
// to each, as bench/watch.sh's checkout does): the removal of their old
// evidence, the new evidence and the lexical index, in one revision.
func BenchmarkSyncChanged(b *testing.B) {
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "tree")
	copyGoTree(b, dir, "net", "go", "crypto", "encoding")
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		b.Fatal(err)
	}
	var goFiles []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".go") {
			goFiles = append(goFiles, p)
		}
		return nil
	})
	const changed = 1000
	if len(goFiles) < changed {
		b.Skipf("%d .go files in the copy, want %d", len(goFiles), changed)
	}
	ix, src, done := benchIndexer(ctx, b, dir)
	defer done()
	if _, err := ix.Sync(ctx, src.ID, SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Optimize(ctx); err != nil {
		b.Fatal(err)
	}
	round := 0
	var applyMS, units, kept int64
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		for i, f := range goFiles[:changed] {
			fh, err := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(fh, "\n// zqco%04dr%d\n", i, round)
			fh.Close()
		}
		round++
		cpu0 := cpuTime()
		b.StartTimer()
		st, err := ix.Sync(ctx, src.ID, SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - cpu0
		b.StartTimer()
		if st.Indexed != changed {
			b.Fatalf("sync indexed %d files, want %d", st.Indexed, changed)
		}
		applyMS += st.ApplyMS
		units += st.Units
		kept += st.KeptUnits
		// The owner merges the index once syncs pause; so does each round.
		b.StopTimer()
		if _, err := ix.Optimize(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(applyMS)/float64(b.N), "apply-ms/op")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(units)/float64(b.N), "units/op")
	b.ReportMetric(float64(kept)/float64(b.N), "kept-units/op")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchIndexer is an Indexer over a new workspace in b's temporary
// directory with dir added as a folder source (not synced yet); done
// closes its database.
func benchIndexer(ctx context.Context, b *testing.B, dir string) (*Indexer, Source, func()) {
	ws := filepath.Join(b.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	db, err := workspace.OpenDB(ctx, filepath.Join(ws, "index.db"))
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewPolicy([]string{dir}, ws)
	if err != nil {
		b.Fatal(err)
	}
	ix := NewIndexer(db, p, NewAssets(filepath.Join(ws, "assets")), Options{TempDir: ws})
	src, _, err := ix.Add(ctx, SourceInput{Path: dir, Kind: KindFolder})
	if err != nil {
		b.Fatal(err)
	}
	return ix, src, func() { db.Close() }
}
