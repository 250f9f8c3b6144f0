package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// watchEnv is an owner that watches, with one folder source under root.
type watchEnv struct {
	t    *testing.T
	own  *Owner
	root string // the source's directory
	src  string // its id
}

// newWatchEnv starts a watching owner (with opts' watch tuning) over a
// tree made by files (relative path → content) and adds it as a source.
func newWatchEnv(t *testing.T, opts Options, files map[string]string) *watchEnv {
	t.Helper()
	dir := newWorkspace(t)
	setWatch(t, dir, true)
	root := filepath.Join(filepath.Dir(dir), "proj")
	for rel, body := range files {
		writeFile(t, filepath.Join(root, rel), body)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	opts.Dir = dir
	if opts.WatchDebounce == 0 {
		opts.WatchDebounce = 50 * time.Millisecond
	}
	own, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close(context.Background()) })
	e := &watchEnv{t: t, own: own, root: root}
	res, err := own.Service().AddSources(OwnerContext(context.Background()), interfaces.AddSourcesRequest{
		Action: "add", Source: &interfaces.SourceInput{Path: root}})
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, own, res.Job.ID); j.State != jobs.StateSucceeded {
		t.Fatalf("add: %+v", j)
	}
	e.src = res.Job.SourceID
	e.eventually("the source is watched", func() string {
		if st, ok := own.watch().State(e.src); !ok || st.Mode != sources.WatchWatching {
			return fmt.Sprintf("state %+v %v", st, ok)
		}
		return ""
	})
	return e
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// eventually calls check until it returns "" (10 s at most).
func (e *watchEnv) eventually(what string, check func() string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: still %s", what, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// indexed is the index's view of the source: path → sha256 of each file
// indexed from it.
func (e *watchEnv) indexed() map[string]string {
	e.t.Helper()
	rows, err := e.own.db.R.Query(`SELECT path, sha256 FROM files WHERE source_id = ? AND status <> 'skipped'`, e.src)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var p, sha string
		if err := rows.Scan(&p, &sha); err != nil {
			e.t.Fatal(err)
		}
		out[p] = sha
	}
	return out
}

// onDisk is path → sha256 of the regular files under the source, but
// for those in skip (directories or files, relative).
func (e *watchEnv) onDisk(skip ...string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.root, p)
		rel = filepath.ToSlash(rel)
		if slices.Contains(skip, rel) || d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			out[rel] = hex.EncodeToString(h[:])
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// settles waits until the index holds exactly the files on disk (less
// skip) with their content.
func (e *watchEnv) settles(what string, skip ...string) {
	e.t.Helper()
	e.eventually(what, func() string {
		got, want := e.indexed(), e.onDisk(skip...)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Sprintf("index %v, disk %v", keys(got), keys(want))
		}
		return ""
	})
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// watchJobs counts the sync jobs watching queued for the source.
func (e *watchEnv) watchJobs() int {
	e.t.Helper()
	var n int
	if err := e.own.db.R.QueryRow(`SELECT count(*) FROM jobs WHERE source_id = ? AND principal = ?`, e.src, WatchPrincipal).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestWatchChanges: each kind of change on disk reaches the index without
// a sync asked for.
func TestWatchChanges(t *testing.T) {
	e := newWatchEnv(t, Options{}, map[string]string{
		"a.md":         "# Alpha\n\nfirst words\n",
		"docs/b.md":    "# Beta\n\nsecond words\n",
		"docs/c.md":    "# Gamma\n\nthird words\n",
		".gitignore":   "build/\n",
		"build/out.md": "# Output\n\nnever indexed\n",
	})
	e.settles("the first sync", "build")
	if w := e.own.watch().Watched(e.src); slices.Contains(w, filepath.Join(e.root, "build")) || !slices.Contains(w, filepath.Join(e.root, "docs")) {
		t.Fatalf("watched %v: want docs and not the ignored build", w)
	}

	steps := []struct {
		name string
		skip []string
		do   func()
	}{
		{"an edit", []string{"build"}, func() { writeFile(t, filepath.Join(e.root, "a.md"), "# Alpha\n\nedited words\n") }},
		{"an atomic save", []string{"build"}, func() {
			tmp := filepath.Join(e.root, "docs", ".b.md.swp")
			writeFile(t, tmp, "# Beta\n\nsaved atomically\n")
			if err := os.Rename(tmp, filepath.Join(e.root, "docs", "b.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a new file", []string{"build"}, func() { writeFile(t, filepath.Join(e.root, "new.md"), "# New\n\nfresh words\n") }},
		{"a rename", []string{"build"}, func() {
			if err := os.Rename(filepath.Join(e.root, "new.md"), filepath.Join(e.root, "renamed.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a move into a folder", []string{"build"}, func() {
			if err := os.Rename(filepath.Join(e.root, "renamed.md"), filepath.Join(e.root, "docs", "moved.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a delete", []string{"build"}, func() {
			if err := os.Remove(filepath.Join(e.root, "docs", "c.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a new folder and its files", []string{"build"}, func() {
			writeFile(t, filepath.Join(e.root, "new", "deep", "x.md"), "# X\n\nnested words\n")
			writeFile(t, filepath.Join(e.root, "new", "y.md"), "# Y\n\nmore words\n")
		}},
		{"a file written into the new folder later", []string{"build"}, func() {
			writeFile(t, filepath.Join(e.root, "new", "deep", "z.md"), "# Z\n\nlater words\n")
		}},
		{"a moved folder", []string{"build"}, func() {
			if err := os.Rename(filepath.Join(e.root, "new"), filepath.Join(e.root, "old")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file in the moved folder", []string{"build"}, func() {
			writeFile(t, filepath.Join(e.root, "old", "deep", "w.md"), "# W\n\nafter the move\n")
		}},
		{"a removed folder", []string{"build"}, func() {
			if err := os.RemoveAll(filepath.Join(e.root, "old")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a .gitignore edit that ignores a file", []string{"build", "docs/b.md"}, func() {
			writeFile(t, filepath.Join(e.root, ".gitignore"), "build/\ndocs/b.md\n")
		}},
		{"a .gitignore edit that brings a folder back", []string{"docs/b.md"}, func() {
			writeFile(t, filepath.Join(e.root, ".gitignore"), "docs/b.md\n")
		}},
		{"a file in the folder brought back", []string{"docs/b.md"}, func() {
			writeFile(t, filepath.Join(e.root, "build", "two.md"), "# Two\n\nwatched now\n")
		}},
	}
	for _, s := range steps {
		s.do()
		e.settles(s.name, s.skip...)
	}
	if w := e.own.watch().Watched(e.src); !slices.Contains(w, filepath.Join(e.root, "build")) || slices.Contains(w, filepath.Join(e.root, "old")) {
		t.Fatalf("watched %v: want build, and not the removed old", w)
	}
	// The words of the last change are searchable.
	out, err := e.own.Service().Search(OwnerContext(context.Background()), interfaces.SearchArgs{Request: &query.QueryRequest{Question: "watched now"}})
	if err != nil || len(out.Result.Hits) == 0 || out.Result.Hits[0].Path != "build/two.md" {
		t.Fatalf("search after the last change: %v %+v", err, out.Result.Hits)
	}
}

// TestWatchBurstIsFewSyncs: 500 writes in a burst are one or a few syncs.
func TestWatchBurstIsFewSyncs(t *testing.T) {
	// The burst's length depends on the machine's load: MaxDelay is set
	// beyond it, so the count tests the coalescing, not the clock.
	e := newWatchEnv(t, Options{WatchDebounce: 200 * time.Millisecond, WatchMaxDelay: 10 * time.Second}, map[string]string{"seed.md": "# Seed\n"})
	before := e.watchJobs()
	for i := range 500 {
		writeFile(t, filepath.Join(e.root, fmt.Sprintf("f%03d.md", i%100)), fmt.Sprintf("# File %d\n\nwrite %d\n", i%100, i))
	}
	e.settles("the burst")
	if n := e.watchJobs() - before; n < 1 || n > 3 {
		t.Fatalf("500 writes made %d sync jobs, want 1 to 3", n)
	}
}

// TestWatchRepositoryHead: a commit that moves HEAD (a ref changes, no
// file of the tree does) gives a revision with the new commit.
func TestWatchRepositoryHead(t *testing.T) {
	dir := newWorkspace(t)
	setWatch(t, dir, true)
	repo := filepath.Join(filepath.Dir(dir), "repo")
	c1, c2 := strings.Repeat("a", 40), strings.Repeat("b", 40)
	writeFile(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(repo, ".git", "refs", "heads", "main"), c1+"\n")
	writeFile(t, filepath.Join(repo, "main.go"), "package main\n")
	own, err := Start(context.Background(), Options{Dir: dir, WatchDebounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close(context.Background()) })
	ctx := OwnerContext(context.Background())
	res, err := own.Service().AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: repo}})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, own, res.Job.ID)
	e := &watchEnv{t: t, own: own, root: repo, src: res.Job.SourceID}
	head := func() string {
		revs, err := revisions(own, e.src)
		if err != nil || len(revs) == 0 || revs[0].Commit == nil {
			return ""
		}
		return *revs[0].Commit
	}
	if head() != c1 {
		t.Fatalf("first revision's commit %q", head())
	}
	e.eventually("the source is watched", func() string {
		if _, ok := own.watch().State(e.src); !ok {
			return "not watched"
		}
		return ""
	})
	writeFile(t, filepath.Join(repo, ".git", "refs", "heads", "main"), c2+"\n")
	e.eventually("the new commit", func() string {
		if h := head(); h != c2 {
			return "at " + h
		}
		return ""
	})
	// A checkout of another branch: HEAD names it.
	writeFile(t, filepath.Join(repo, ".git", "refs", "heads", "other"), c1+"\n")
	writeFile(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/other\n")
	e.eventually("the other branch", func() string {
		if h := head(); h != c1 {
			return "at " + h
		}
		return ""
	})
}

// TestWatchLimitFallsBackToRescans: when the watch limit runs out, the
// source is rescanned periodically, says so, and still takes changes in.
func TestWatchLimitFallsBackToRescans(t *testing.T) {
	dir := newWorkspace(t)
	setWatch(t, dir, true)
	root := filepath.Join(filepath.Dir(dir), "proj")
	for _, d := range []string{"a", "b", "c", "d"} {
		writeFile(t, filepath.Join(root, d, "n.md"), "# "+d+"\n")
	}
	own, err := Start(context.Background(), Options{Dir: dir, WatchDebounce: 50 * time.Millisecond, MaxWatches: 3, WatchRescan: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close(context.Background()) })
	ctx := OwnerContext(context.Background())
	res, err := own.Service().AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: root}})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, own, res.Job.ID)
	e := &watchEnv{t: t, own: own, root: root, src: res.Job.SourceID}
	e.eventually("polling", func() string {
		st, ok := own.watch().State(e.src)
		if !ok || st.Mode != sources.WatchPolling || !strings.Contains(st.Reason, "max_user_watches") {
			return fmt.Sprintf("%+v", st)
		}
		return ""
	})
	st, err := own.Service().Status(ctx)
	if err != nil || st.Watch == nil || len(st.Watch.Sources) != 1 || st.Watch.Sources[0].Mode != sources.WatchPolling {
		t.Fatalf("status: %v %+v", err, st.Watch)
	}
	page, err := own.Service().Discover(ctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "sources"}})
	if err != nil {
		t.Fatal(err)
	}
	var item query.SourceItem
	if err := json.Unmarshal(page.Items[0], &item); err != nil || item.Watch == nil || item.Watch.Mode != sources.WatchPolling || item.Watch.Reason == "" {
		t.Fatalf("discover sources: %s", page.Items[0])
	}
	writeFile(t, filepath.Join(root, "b", "later.md"), "# Later\n")
	e.settles("a change seen by a rescan")
}

// TestWatchPendingChanges: between a change and its sync, search and
// status say that changes wait; after it, they say none do.
func TestWatchPendingChanges(t *testing.T) {
	e := newWatchEnv(t, Options{WatchDebounce: 3 * time.Second}, map[string]string{"a.md": "# A\n\nalpha\n"})
	ctx := OwnerContext(context.Background())
	writeFile(t, filepath.Join(e.root, "fresh.md"), "# Fresh\n\nunsynced words\n")
	e.eventually("a pending change", func() string {
		out, err := e.own.Service().Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "unsynced"}})
		if err != nil {
			return err.Error()
		}
		if out.Result.PendingChanges < 1 {
			return fmt.Sprintf("pending %d", out.Result.PendingChanges)
		}
		return ""
	})
	st, err := e.own.Service().Status(ctx)
	if err != nil || st.Watch == nil || st.Watch.PendingChanges < 1 || st.Watch.Sources[0].PendingChanges < 1 {
		t.Fatalf("status while a change waits: %v %+v", err, st.Watch)
	}
	// A search narrowed to the source counts it too.
	out, err := e.own.Service().Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "unsynced", Filters: &query.Filters{Sources: []string{e.src}}}})
	if err != nil || out.Result.PendingChanges < 1 {
		t.Fatalf("the source's own search: %v pending %d", err, out.Result.PendingChanges)
	}
	e.settles("the sync")
	e.eventually("nothing pending", func() string {
		out, err := e.own.Service().Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: "unsynced"}})
		if err != nil {
			return err.Error()
		}
		if out.Result.PendingChanges != 0 || len(out.Result.Hits) == 0 {
			return fmt.Sprintf("pending %d, %d hits", out.Result.PendingChanges, len(out.Result.Hits))
		}
		return ""
	})
}

// TestWatchOptOut: a source added with watch false is left to syncs, and
// says so; the watch setting off watches nothing.
func TestWatchOptOut(t *testing.T) {
	e := newWatchEnv(t, Options{}, map[string]string{"a.md": "# A\n"})
	ctx := OwnerContext(context.Background())
	off := false
	other := filepath.Join(filepath.Dir(e.root), "quiet")
	writeFile(t, filepath.Join(other, "q.md"), "# Q\n")
	res, err := e.own.Service().AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: other, Watch: &off}})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, e.own, res.Job.ID)
	src, err := sources.GetSource(ctx, e.own.db, res.Job.SourceID)
	if err != nil || src.Watch {
		t.Fatalf("source %+v %v: want watch false", src, err)
	}
	if st := e.own.watchView().Of(src); st.Mode != sources.WatchOff || !strings.Contains(st.Reason, "opted out") {
		t.Fatalf("state %+v", st)
	}
	writeFile(t, filepath.Join(other, "q2.md"), "# Q2\n")
	// The watched source's change goes through; the other's does not.
	writeFile(t, filepath.Join(e.root, "b.md"), "# B\n")
	e.settles("the watched source")
	time.Sleep(300 * time.Millisecond)
	var n int
	if err := e.own.db.R.QueryRow(`SELECT count(*) FROM files WHERE source_id = ?`, src.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the unwatched source has %d files (%v), want 1", n, err)
	}
}

// TestWatchRandomBurst: after a random burst of creates, edits, renames
// and deletes across folders, the index settles on the tree, and a sync
// of the tree then finds nothing to change.
func TestWatchRandomBurst(t *testing.T) {
	e := newWatchEnv(t, Options{}, map[string]string{"seed.md": "# Seed\n"})
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	dirs := []string{"", "a", "a/b", "c"}
	var files []string
	for i := range 400 {
		switch op := rng.IntN(10); {
		case op < 4 || len(files) == 0: // create
			p := filepath.Join(dirs[rng.IntN(len(dirs))], fmt.Sprintf("n%d.md", i))
			writeFile(t, filepath.Join(e.root, p), fmt.Sprintf("# Note %d\n\nbody %d\n", i, rng.Int()))
			files = append(files, p)
		case op < 7: // edit
			p := files[rng.IntN(len(files))]
			writeFile(t, filepath.Join(e.root, p), fmt.Sprintf("# Edited\n\nbody %d\n", rng.Int()))
		case op < 9: // rename, maybe into another folder
			k := rng.IntN(len(files))
			to := filepath.Join(dirs[rng.IntN(len(dirs))], fmt.Sprintf("r%d.md", i))
			if err := os.MkdirAll(filepath.Dir(filepath.Join(e.root, to)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(e.root, files[k]), filepath.Join(e.root, to)); err != nil {
				t.Fatal(err)
			}
			files[k] = to
		default: // delete
			k := rng.IntN(len(files))
			if err := os.Remove(filepath.Join(e.root, files[k])); err != nil {
				t.Fatal(err)
			}
			files = slices.Delete(files, k, k+1)
		}
		if rng.IntN(50) == 0 {
			time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond) // let some syncs start mid-burst
		}
	}
	e.settles("the burst")
	e.eventually("the watcher is idle", func() string {
		if st, _ := e.own.watch().State(e.src); st.PendingChanges != 0 {
			return fmt.Sprintf("%d pending", st.PendingChanges)
		}
		var active int
		_ = e.own.db.R.QueryRow(`SELECT count(*) FROM jobs WHERE source_id = ? AND state IN ('queued', 'running')`, e.src).Scan(&active)
		if active != 0 {
			return fmt.Sprintf("%d jobs active", active)
		}
		return ""
	})
	st, err := e.own.idx().Sync(context.Background(), e.src, sources.SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.NewRevision || st.Indexed != 0 || st.Deleted != 0 {
		t.Fatalf("a sync after the burst still changed the index: %+v", st.Progress)
	}
}

// TestStdioOwnerWatches: the owner a stdio bridge becomes (no owner ran)
// watches its sources like serve's.
func TestStdioOwnerWatches(t *testing.T) {
	dir := newWorkspace(t)
	setWatch(t, dir, true)
	root := filepath.Join(filepath.Dir(dir), "proj")
	writeFile(t, filepath.Join(root, "a.md"), "# A\n\nfirst\n")
	p := workspace.Principal{ID: "stdio", Grant: workspace.GrantManage}
	ctx := workspace.WithPrincipal(context.Background(), p)
	b := NewBridge(Options{Dir: dir, WatchDebounce: 50 * time.Millisecond}, p)
	defer b.Close(context.Background())
	res, err := b.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: root}})
	if err != nil {
		t.Fatal(err)
	}
	own := b.Owner()
	if own == nil {
		t.Fatal("the bridge did not become the owner")
	}
	waitJob(t, own, res.Job.ID)
	e := &watchEnv{t: t, own: own, root: root, src: res.Job.SourceID}
	e.eventually("the source is watched", func() string {
		if w := own.watch(); w == nil {
			return "no watcher"
		} else if _, ok := w.State(e.src); !ok {
			return "not watched"
		}
		return ""
	})
	writeFile(t, filepath.Join(root, "b.md"), "# B\n\nsecond\n")
	e.settles("a change under the stdio owner")
}

// TestWatchCatchesUpAtStart: what changed while no owner ran is taken in
// when the next owner starts, without a sync asked for.
func TestWatchCatchesUpAtStart(t *testing.T) {
	e := newWatchEnv(t, Options{}, map[string]string{"a.md": "# A\n\nbefore\n"})
	dir := e.own.Layout().Dir
	if err := e.own.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(e.root, "a.md"), "# A\n\nchanged while down\n")
	writeFile(t, filepath.Join(e.root, "new.md"), "# New\n\nwritten while down\n")
	own, err := Start(context.Background(), Options{Dir: dir, WatchDebounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close(context.Background()) })
	e.own = own
	e.settles("the changes made while no owner ran")
}

// idle waits until the watcher has nothing pending for the source and no
// job of it is queued or running.
func (e *watchEnv) idle(what string) {
	e.t.Helper()
	e.eventually(what, func() string {
		if !e.own.watch().Quiet(e.src) {
			return "the watcher waits for a sync"
		}
		var active int
		_ = e.own.db.R.QueryRow(`SELECT count(*) FROM jobs WHERE source_id = ? AND state IN ('queued', 'running')`, e.src).Scan(&active)
		if active != 0 {
			return fmt.Sprintf("%d jobs active", active)
		}
		return ""
	})
}

// revisions lists the source's revisions, newest first, as inspect
// revisions answers them.
func revisions(own *Owner, src string) ([]query.RevisionSummary, error) {
	var all []query.RevisionSummary
	cursor := ""
	for {
		out, err := own.Service().Inspect(OwnerContext(context.Background()), interfaces.InspectArgs{Request: interfaces.InspectRequest{
			Subject: "revisions", SourceID: src, Limit: 200, Cursor: cursor}})
		if err != nil {
			return nil, err
		}
		var page struct {
			Items      []query.RevisionSummary `json:"items"`
			NextCursor *string                 `json:"next_cursor"`
		}
		if err := json.Unmarshal(out.Result, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all, nil
		}
		cursor = *page.NextCursor
	}
}

// revisionPaths lists, oldest first, the paths counts of the source's
// revisions after the first n: 0 for a sync that walked the whole source.
func (e *watchEnv) revisionPaths(n int) []int64 {
	e.t.Helper()
	revs, err := revisions(e.own, e.src)
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Reverse(revs)
	var out []int64
	for _, r := range revs[min(n, len(revs)):] {
		var st sources.Stats
		if err := json.Unmarshal(r.Stats, &st); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, st.Paths)
	}
	return out
}

// TestWatchPathLimitedSyncs: the syncs watching asks for look only at the
// paths that changed, unless the change needs a walk (a new directory, a
// .gitignore edit, a HEAD move); each change ends with the index a fresh
// walk of the whole source would make.
func TestWatchPathLimitedSyncs(t *testing.T) {
	dir := newWorkspace(t)
	setWatch(t, dir, true)
	repo := filepath.Join(filepath.Dir(dir), "repo")
	c1, c2 := strings.Repeat("a", 40), strings.Repeat("b", 40)
	writeFile(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(repo, ".git", "refs", "heads", "main"), c1+"\n")
	for rel, body := range map[string]string{
		".gitignore": "*.log\n", "a.md": "# A\n\nalpha\n", "docs/b.md": "# B\n\nbeta\n", "docs/c.md": "# C\n\ngamma\n",
	} {
		writeFile(t, filepath.Join(repo, rel), body)
	}
	own, err := Start(context.Background(), Options{Dir: dir, WatchDebounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close(context.Background()) })
	res, err := own.Service().AddSources(OwnerContext(context.Background()), interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: repo}})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, own, res.Job.ID)
	e := &watchEnv{t: t, own: own, root: repo, src: res.Job.SourceID}
	e.eventually("the source is watched", func() string {
		if st, ok := own.watch().State(e.src); !ok || st.Mode != sources.WatchWatching {
			return "not watched"
		}
		return ""
	})
	rm := func(rel string) {
		if err := os.RemoveAll(filepath.Join(repo, rel)); err != nil {
			t.Fatal(err)
		}
	}
	mv := func(from, to string) {
		if err := os.Rename(filepath.Join(repo, from), filepath.Join(repo, to)); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name   string
		walked bool // a walk of the whole source is needed
		skip   []string
		do     func()
	}{
		{"an edit", false, nil, func() { writeFile(t, filepath.Join(repo, "a.md"), "# A\n\nedited\n") }},
		{"an atomic save", false, nil, func() {
			writeFile(t, filepath.Join(repo, "docs", "b.md.tmp~"), "# B\n\nsaved\n")
			mv("docs/b.md.tmp~", "docs/b.md")
		}},
		{"a create in an existing directory", false, []string{"docs/x.log"}, func() {
			writeFile(t, filepath.Join(repo, "docs", "new.md"), "# New\n\nfresh\n")
			writeFile(t, filepath.Join(repo, "docs", "x.log"), "ignored\n")
		}},
		{"a delete", false, []string{"docs/x.log"}, func() { rm("docs/c.md") }},
		{"a rename", false, []string{"docs/x.log"}, func() { mv("docs/new.md", "renamed.md") }},
		{"a create in a new directory", true, []string{"docs/x.log"}, func() {
			writeFile(t, filepath.Join(repo, "fresh", "deep", "f.md"), "# F\n\nnested\n")
		}},
		{"a .gitignore edit", true, []string{"docs/x.log", "fresh"}, func() {
			writeFile(t, filepath.Join(repo, ".gitignore"), "*.log\nfresh/\n")
		}},
		{"a HEAD move", true, []string{"docs/x.log", "fresh"}, func() {
			writeFile(t, filepath.Join(repo, ".git", "refs", "heads", "main"), c2+"\n")
		}},
	}
	// The owner's own set-up of its watches may ask for a walk of a
	// source it finds unwatched: that walk is over before the steps.
	e.eventually("the watch set-up", func() string {
		if !own.watchReady.Load() {
			return "not ready"
		}
		return ""
	})
	e.idle("the first syncs")
	for _, s := range steps {
		before := len(e.revisionPaths(0))
		s.do()
		if s.name == "a HEAD move" {
			e.eventually("the new commit", func() string {
				if revs, _ := revisions(own, e.src); len(revs) == 0 || revs[0].Commit == nil || *revs[0].Commit != c2 {
					return "not yet"
				}
				return ""
			})
		}
		e.settles(s.name, s.skip...)
		e.idle(s.name)
		paths := e.revisionPaths(before)
		if len(paths) == 0 {
			t.Fatalf("%s: no revision", s.name)
		}
		walked := slices.Contains(paths, 0)
		if walked != s.walked || (!s.walked && slices.Contains(paths, 0)) {
			t.Fatalf("%s: revisions' paths %v; a walk wanted: %v", s.name, paths, s.walked)
		}
		st, err := own.idx().Sync(context.Background(), e.src, sources.SyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.NewRevision || st.Indexed != 0 || st.Deleted != 0 {
			t.Fatalf("%s: a walk after it still changed the index: %+v", s.name, st.Progress)
		}
	}
}
