package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory and unmounts
// it when the test ends; it skips the test when that is not possible.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): run as root where mounts are allowed", err)
	}
	// Registered after TempDir's own cleanup, so it runs first.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

// writeTextTree writes n Markdown files of about size bytes each under
// dir, each with a word of its own (word + index).
func writeTextTree(t *testing.T, dir, word string, n, size int) {
	t.Helper()
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s %d\n\n", word, i)
		for s := 0; b.Len() < size; s++ {
			fmt.Fprintf(&b, "## Part %d\n\nThe %s%d paragraph %d tells the story of line %d, and of %d more.\n\n", s, word, i, s, s*7, i+s)
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%10), fmt.Sprintf("%s%04d.md", word, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func waitJob(t *testing.T, own *Owner, id string) jobs.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(OwnerContext(context.Background()), 2*time.Minute)
	defer cancel()
	j, err := own.queue.Wait(ctx, workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage}, id, nil)
	if err != nil {
		t.Fatalf("wait for job %s: %v", id, err)
	}
	return j
}

// sourceEvidence lists a source's evidence as path|level|span|sha256.
func sourceEvidence(t *testing.T, db *sql.DB, sourceID string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT path, level, start_line, end_line, sha256 FROM evidence WHERE source_id = ?`, sourceID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p, l, sha string
		var a, b int
		if err := rows.Scan(&p, &l, &a, &b, &sha); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s|%s|%d|%d|%s", p, l, a, b, sha))
	}
	slices.Sort(out)
	return out
}

// TestDiskFull ingests into a workspace on a small tmpfs until the disk is
// full: the job fails with UNAVAILABLE saying so (not INTERNAL, no SQLite
// text), the index stays readable and whole (integrity_check), and a
// source indexed before keeps all its evidence and stays searchable.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs and fills it")
	}
	// 16 MiB: once space is freed, the retried ingest must fit with its
	// WAL and the checkpoint that copies the WAL into index.db (about
	// twice the index), or the retry finds the disk full again.
	mnt := mountTmpfs(t, 16<<20)
	root := t.TempDir()
	writeTextTree(t, filepath.Join(root, "small"), "kestrel", 20, 1500)
	// 360 KB of text, whose index (evidence, FTS, WAL) outgrows the
	// 256 KiB the ballast leaves free.
	writeTextTree(t, filepath.Join(root, "big"), "osprey", 60, 6000)
	ws := filepath.Join(mnt, "ws")
	if _, err := Init(ws, InitOptions{IngestRoots: []string{root}}); err != nil {
		t.Fatal(err)
	}
	// Unwatched: a watching owner syncs every source when it starts, and
	// the retries below would meet that sync.
	own, err := Start(context.Background(), Options{Dir: ws, ShutdownWait: 5 * time.Second, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close(context.Background()) })
	ctx := OwnerContext(context.Background())
	svc := own.Service()

	add := func(dir string) jobs.Job {
		t.Helper()
		res, err := svc.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: filepath.Join(root, dir)}})
		if err != nil {
			t.Fatalf("add %s: %v", dir, err)
		}
		return waitJob(t, own, res.Job.ID)
	}
	small := add("small")
	if small.State != jobs.StateSucceeded {
		t.Fatalf("small source: %+v", small)
	}
	search := func(q string) int {
		t.Helper()
		out, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: q, Limit: 50}})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return out.Result.TotalMatches
	}
	before := sourceEvidence(t, own.db.R, small.SourceID)
	matches := search("kestrel")
	if len(before) == 0 || matches == 0 {
		t.Fatalf("small source: %d evidence rows, %d matches", len(before), matches)
	}

	// A ballast file leaves 256 KiB free on the disk.
	free := func() int64 {
		var st syscall.Statfs_t
		if err := syscall.Statfs(mnt, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Bavail) * st.Bsize
	}
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, free()-256<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	big := add("big")
	if big.State != jobs.StateFailed || big.Error == nil {
		t.Fatalf("ingest into a full disk: %+v, want failed", big)
	}
	t.Logf("a 16 MiB disk with 256 KiB free: the ingest of 360 KB of text failed in %v with %s %q; %d bytes free after",
		time.Since(t0).Round(time.Millisecond), big.Error.Code, big.Error.Message, free())
	if big.Error.Code != workspace.CodeUnavailable || !strings.Contains(big.Error.Message, "disk") || !strings.Contains(big.Error.Message, "full") {
		t.Errorf("job error %s %q: want UNAVAILABLE saying the disk is full", big.Error.Code, big.Error.Message)
	}
	for _, leak := range []string{"SQL", "sqlite", "(13)", mnt} {
		if strings.Contains(big.Error.Message, leak) {
			t.Errorf("job error %q shows %q", big.Error.Message, leak)
		}
	}
	// Nothing of the earlier source was lost, and the index is whole.
	if after := sourceEvidence(t, own.db.R, small.SourceID); !slices.Equal(after, before) {
		t.Errorf("small source after the failed ingest: %d evidence rows, had %d", len(after), len(before))
	}
	if got := search("kestrel"); got != matches {
		t.Errorf("search kestrel after the failed ingest: %d matches, had %d", got, matches)
	}
	if got := search("osprey"); got != 0 {
		t.Errorf("search osprey: %d matches from a failed ingest", got)
	}
	var ok string
	if err := own.db.R.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check after the disk filled: %q %v", ok, err)
	}
	// An image, stored as an asset file, finds the disk full too.
	img := filepath.Join(root, "pics")
	if err := os.MkdirAll(img, 0o755); err != nil {
		t.Fatal(err)
	}
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 1<<20)...)
	if err := os.WriteFile(filepath.Join(img, "falcon.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	pics := add("pics")
	if pics.State != jobs.StateFailed || pics.Error == nil || pics.Error.Code != workspace.CodeUnavailable || !strings.Contains(pics.Error.Message, "disk is full") {
		t.Errorf("an image into a full disk: %+v %+v", pics, pics.Error)
	}

	// The owner stops, and starts again on the full disk.
	if err := own.Close(context.Background()); err != nil {
		t.Errorf("close on a full disk: %v", err)
	}
	own2, err := Start(context.Background(), Options{Dir: ws, NoWatch: true})
	if err != nil {
		t.Fatalf("restart on the full disk: %v", err)
	}
	defer own2.Close(context.Background())
	svc = own2.Service()
	if got := search("kestrel"); got != matches {
		t.Fatalf("search after the restart: %d matches, had %d", got, matches)
	}
	// With space again, the failed jobs are retried and succeed.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	for _, j := range []jobs.Job{big, pics} {
		if _, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: "retry", JobID: j.ID}); err != nil {
			t.Fatalf("retry %s: %v", j.ID, err)
		}
		if r := waitJob(t, own2, j.ID); r.State != jobs.StateSucceeded || r.Attempt != 2 {
			t.Fatalf("retried job with space: %+v %+v", r, r.Error)
		}
	}
	if got := search("osprey"); got == 0 {
		t.Error("search osprey after the retry: no match")
	}
}
