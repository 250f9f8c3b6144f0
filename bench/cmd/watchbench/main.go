// Command watchbench measures watching on a copy of a large tree (Go's
// $(go env GOROOT)/src, made a git repository by bench/watch.sh): the
// time from a write or rename to the change being searchable over single
// edits, a git checkout that changes many files, watch set-up time, the
// memory watching adds, and the CPU an idle watching owner uses.
//
//	go run ./bench/cmd/watchbench -tree /tmp/copy-of-src -edits 200 -spread 60s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

type report struct {
	Tree        string  `json:"tree"`
	Files       int     `json:"files"`
	WatchedDirs int     `json:"watched_dirs"`
	SetupMS     float64 `json:"watch_setup_ms"`
	AddedRSSMB  float64 `json:"added_rss_mb"`
	// AddedAnonMB is the part of AddedRSSMB that is the process's own
	// memory (RssAnon); the rest is pages of index.db that the read
	// connections map (RssFile): the system's page cache, shared and
	// reclaimable.
	AddedAnonMB    float64 `json:"added_anon_mb"`
	AddedFileMB    float64 `json:"added_file_mb"`
	IdleCPUPercent float64 `json:"idle_cpu_percent_of_one_core"`
	IdleSeconds    float64 `json:"idle_seconds"`
	Edits          int     `json:"edits"`
	EditP50MS      float64 `json:"edit_p50_ms"`
	EditP95MS      float64 `json:"edit_p95_ms"`
	EditMaxMS      float64 `json:"edit_max_ms"`
	CheckoutFiles  int     `json:"checkout_files"`
	CheckoutMS     float64 `json:"checkout_searchable_ms"`
	CheckoutJobs   int     `json:"checkout_sync_jobs"`
	// CheckoutRevisions are the stats of the revisions the checkout made.
	CheckoutRevisions []json.RawMessage `json:"checkout_revisions"`
}

func main() {
	tree := flag.String("tree", "", "a git repository to watch (bench/watch.sh makes one)")
	edits := flag.Int("edits", 200, "single-file edits")
	spread := flag.Duration("spread", time.Minute, "the edits are spread over this long")
	idle := flag.Duration("idle", time.Minute, "how long the idle owner is measured")
	branch := flag.String("branch", "bench-other", "a branch of the tree that changes the files of -checkout-list")
	list := flag.String("checkout-list", "", "the files the branch changes, one a line, in token order (zqco0000x, ...)")
	idleProfile := flag.String("idle-cpuprofile", "", "write a CPU profile of the idle window to this file")
	checkoutProfile := flag.String("checkout-cpuprofile", "", "write a CPU profile of the checkout to this file")
	flag.Parse()
	if *tree == "" {
		fail(fmt.Errorf("-tree is required"))
	}
	ctx := context.Background()
	root := filepath.Dir(*tree)
	ws := filepath.Join(root, ".tychora")
	if _, err := tyruntime.Init(ws, tyruntime.InitOptions{IngestRoots: []string{root}}); err != nil {
		fail(err)
	}
	setWatch(ws, false)
	rep := report{Tree: *tree}

	// The first sync, with watching off.
	own := start(ctx, ws)
	octx := tyruntime.OwnerContext(ctx)
	svc := own.Service()
	res, err := svc.AddSources(octx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: *tree}})
	if err != nil {
		fail(err)
	}
	j := waitJob(octx, svc, res.Job.ID)
	srcID := j.SourceID
	rep.Files = int(j.Progress.Indexed)
	fmt.Fprintf(os.Stderr, "watchbench: first sync: %d files indexed\n", j.Progress.Indexed)
	// The merge of the index that follows a large revision is work, not
	// idling: it ends before anything is measured.
	waitMerged(own)

	// Added memory and set-up time: watching turned on in the running
	// owner (a settings reload), against the same owner before.
	rssBefore := settledRSS()
	anonBefore, fileBefore := statusKB("RssAnon:"), statusKB("RssFile:")
	t0 := time.Now()
	setWatch(ws, true)
	for !watching(octx, svc, srcID) {
		time.Sleep(2 * time.Millisecond)
	}
	// The reload waits settingsDebounce (150 ms) after the file changed:
	// set-up is what follows it.
	rep.SetupMS = float64(time.Since(t0).Microseconds())/1000 - 150
	rep.AddedRSSMB = float64(settledRSS()-rssBefore) / (1 << 20)
	rep.AddedAnonMB = float64(statusKB("RssAnon:")-anonBefore) / (1 << 10)
	rep.AddedFileMB = float64(statusKB("RssFile:")-fileBefore) / (1 << 10)
	rep.WatchedDirs = countDirs(*tree)

	// Idle: no change on disk for the whole window.
	time.Sleep(2 * time.Second)
	waitMerged(own)
	stopProfile := profile(*idleProfile, 1000)
	cpu0, wall0 := cpuTime(), time.Now()
	time.Sleep(*idle)
	stopProfile()
	rep.IdleSeconds = time.Since(wall0).Seconds()
	rep.IdleCPUPercent = 100 * (cpuTime() - cpu0).Seconds() / rep.IdleSeconds

	// Single edits, half written in place and half saved atomically
	// (temporary file renamed over the original).
	coFiles := readList(*list)
	goFiles := slices.DeleteFunc(listGo(*tree), func(p string) bool { return slices.Contains(coFiles, p) })
	rng := rand.New(rand.NewPCG(1, 2))
	var lat []time.Duration
	pause := *spread / time.Duration(max(*edits, 1))
	for i := range *edits {
		p := goFiles[rng.IntN(len(goFiles))]
		token := fmt.Sprintf("zqedit%05dx", i)
		b, err := os.ReadFile(p)
		if err != nil {
			fail(err)
		}
		body := append(b, []byte("\n// "+token+"\n")...)
		began := time.Now()
		if i%2 == 0 {
			err = os.WriteFile(p, body, 0o644)
		} else {
			tmp := p + ".tmp~"
			if err = os.WriteFile(tmp, body, 0o644); err == nil {
				err = os.Rename(tmp, p)
			}
		}
		if err != nil {
			fail(err)
		}
		waitFound(octx, svc, token, 1, 30*time.Second)
		d := time.Since(began)
		lat = append(lat, d)
		if rest := pause - d; rest > 0 {
			time.Sleep(rest)
		}
	}
	slices.Sort(lat)
	rep.Edits = len(lat)
	rep.EditP50MS = ms(lat[len(lat)/2])
	rep.EditP95MS = ms(lat[len(lat)*95/100])
	rep.EditMaxMS = ms(lat[len(lat)-1])
	// The edits are committed so that the checkout below starts clean.
	git(*tree, "commit", "-qam", "bench edits")

	// A checkout of a branch that changes many files: searchable when the
	// syncs it caused are done and what they indexed is found.
	rep.CheckoutFiles = len(strings.Fields(git(*tree, "diff", "--name-only", "HEAD", *branch)))
	before := time.Now()
	jobsBefore := countJobs(octx, svc, srcID)
	stopProfile = profile(*checkoutProfile, 0)
	git(*tree, "checkout", "-q", *branch)
	time.Sleep(50 * time.Millisecond)
	for !idleSource(octx, svc, srcID) {
		time.Sleep(5 * time.Millisecond)
	}
	// Every changed file carries its own token: a sample is searched.
	for _, k := range []int{0, len(coFiles) / 2, len(coFiles) - 1} {
		waitFound(octx, svc, fmt.Sprintf("zqco%04dx", k), 1, 30*time.Second)
	}
	rep.CheckoutMS = ms(time.Since(before))
	stopProfile()
	rep.CheckoutJobs = countJobs(octx, svc, srcID) - jobsBefore
	if revs, err := svc.Inspect(octx, interfaces.InspectArgs{Request: interfaces.InspectRequest{Subject: "revisions", SourceID: srcID, Limit: rep.CheckoutJobs}}); err == nil {
		b, _ := json.Marshal(revs.Result)
		var page struct {
			Items []struct {
				Stats json.RawMessage `json:"stats"`
			} `json:"items"`
		}
		_ = json.Unmarshal(b, &page)
		for _, it := range page.Items {
			rep.CheckoutRevisions = append(rep.CheckoutRevisions, it.Stats)
		}
	}
	if err := own.Close(ctx); err != nil {
		fail(err)
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Println(string(out))
}

// profile starts a CPU profile written to file ("" for none) at rate
// samples a second (0: the default, 100), and returns what stops it. An
// idle process needs a high rate to get any samples at all.
func profile(file string, rate int) func() {
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		fail(err)
	}
	if rate > 0 {
		runtime.SetCPUProfileRate(rate)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fail(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fail(err)
		}
	}
}

// waitMerged waits until the owner has no index merge due or running.
func waitMerged(own *tyruntime.Owner) {
	for own.Merging() {
		time.Sleep(50 * time.Millisecond)
	}
}

func start(ctx context.Context, ws string) *tyruntime.Owner {
	own, err := tyruntime.Start(ctx, tyruntime.Options{Dir: ws})
	if err != nil {
		fail(err)
	}
	return own
}

func setWatch(ws string, on bool) {
	l := workspace.NewLayout(ws)
	s, err := workspace.LoadSettings(l)
	if err != nil {
		fail(err)
	}
	s.Watch = &on
	if err := workspace.SaveSettings(l, s); err != nil {
		fail(err)
	}
}

func watching(ctx context.Context, svc interfaces.Service, id string) bool {
	st, err := svc.Status(ctx)
	if err != nil || st.Watch == nil {
		return false
	}
	for _, s := range st.Watch.Sources {
		if s.SourceID == id {
			return s.Mode == sources.WatchWatching
		}
	}
	return false
}

// idleSource: no job queued or running and no change waiting.
func idleSource(ctx context.Context, svc interfaces.Service, id string) bool {
	st, err := svc.Status(ctx)
	if err != nil || st.Watch == nil {
		return false
	}
	return st.Jobs.Queued == 0 && st.Jobs.Running == 0 && st.Watch.PendingChanges == 0
}

func countJobs(ctx context.Context, svc interfaces.Service, id string) int {
	n, cursor := 0, ""
	for {
		res, err := svc.ManageJob(ctx, interfaces.ManageJobRequest{Action: "list", Limit: 100, Cursor: cursor})
		if err != nil {
			fail(err)
		}
		for _, j := range res.Jobs {
			if j.SourceID == id {
				n++
			}
		}
		if res.NextCursor == nil {
			return n
		}
		cursor = *res.NextCursor
	}
}

func waitJob(ctx context.Context, svc interfaces.Service, id string) jobs.Job {
	for {
		res, err := svc.GetJob(ctx, id)
		if err != nil {
			fail(err)
		}
		if res.Job.Final() {
			if res.Job.State != jobs.StateSucceeded {
				fail(fmt.Errorf("job %s %s", id, res.Job.State))
			}
			return res.Job
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFound polls search until question has at least n hits.
func waitFound(ctx context.Context, svc interfaces.Service, question string, n int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		out, err := svc.Search(ctx, interfaces.SearchArgs{Request: &query.QueryRequest{Question: question, Limit: 5}})
		if err != nil {
			fail(err)
		}
		if len(out.Result.Hits) >= n {
			return
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("%q not searchable after %s", question, limit))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readList reads absolute paths, one a line.
func readList(p string) []string {
	if p == "" {
		fail(fmt.Errorf("-checkout-list is required"))
	}
	b, err := os.ReadFile(p)
	if err != nil {
		fail(err)
	}
	return strings.Fields(string(b))
}

func listGo(tree string) []string {
	var out []string
	_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func countDirs(tree string) int {
	n := 0
	_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			n++
		}
		return nil
	})
	return n
}

func git(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		fail(fmt.Errorf("git %v: %v: %s", args, err, out))
	}
	return string(out)
}

// settledRSS is the resident set after a GC that returns the freed
// memory to the system (without that, what the last sync freed stays
// resident for minutes, and the difference says more about when the
// runtime's scavenger ran than about watching), and a pause.
func settledRSS() int64 {
	debug.FreeOSMemory()
	time.Sleep(500 * time.Millisecond)
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return kb << 10
		}
	}
	return 0
}

// statusKB reads one kB figure of /proc/self/status (key with its colon).
func statusKB(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == key {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return kb
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "watchbench:", err)
	os.Exit(1)
}
