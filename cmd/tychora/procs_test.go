package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// storageWatch samples, until stopped, which processes hold a lock on the
// workspace's storage: the owner's flock on .runtime/owner.lock and
// SQLite's POSIX locks on index.db, -wal and -shm (/proc/locks), and which
// of the watched processes have one of the database files open
// (/proc/PID/fd). Only the owner appears in either.
type storageWatch struct {
	files  []string          // owner.lock, then the database files
	inodes map[uint64]string // every inode they had → file name

	mu      sync.Mutex
	pids    []int          // processes whose fds are sampled
	holders map[int]string // pid → a file it held a lock on
	opened  map[int]string // pid → a file it had open
	samples int
	stop    chan struct{}
	done    chan struct{}
}

func watchStorage(ws string) *storageWatch {
	l := workspace.NewLayout(ws)
	w := &storageWatch{inodes: map[uint64]string{}, holders: map[int]string{}, opened: map[int]string{},
		stop: make(chan struct{}), done: make(chan struct{})}
	w.files = []string{l.Lock, l.DB, l.DB + "-wal", l.DB + "-shm"}
	go func() {
		defer close(w.done)
		for {
			w.sample()
			select {
			case <-w.stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return w
}

// add watches the open files of pid too.
func (w *storageWatch) add(pid int) {
	w.mu.Lock()
	w.pids = append(w.pids, pid)
	w.mu.Unlock()
}

func (w *storageWatch) sample() {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The files come and go (-wal and -shm live while an owner does): keep
	// every inode they had.
	for _, p := range w.files {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			w.inodes[st.Ino] = filepath.Base(p)
		}
	}
	locks, _ := os.ReadFile("/proc/locks")
	w.samples++
	sc := bufio.NewScanner(strings.NewReader(string(locks)))
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 4242 fe:00:10215544 0 EOF"
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		pid, err1 := strconv.Atoi(f[4])
		dev := strings.Split(f[5], ":")
		ino, err2 := strconv.ParseUint(dev[len(dev)-1], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if name, ok := w.inodes[ino]; ok {
			w.holders[pid] = name
		}
	}
	for _, pid := range w.pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			// The database files only: trying the lock opens owner.lock
			// (and fails to flock it) in any process that starts.
			target, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err == nil && slices.Contains(w.files[1:], target) {
				w.opened[pid] = filepath.Base(target)
			}
		}
	}
}

// finish stops sampling and returns who held a lock and who had a file
// open.
func (w *storageWatch) finish() (holders, opened map[int]string, samples int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.holders, w.opened, w.samples
}

// procsWorkspace makes procsTree under a temporary root and a workspace
// in it (root/.tychora), initialized.
func procsWorkspace(t *testing.T) (root, ws string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "root")
	procsTree(t, root)
	ws = filepath.Join(root, ".tychora")
	if r := tychora(t, ws, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	return root, ws
}

// procsTree writes a small tree to search.
func procsTree(t *testing.T, dir string) {
	t.Helper()
	for i := range 30 {
		p := filepath.Join(dir, fmt.Sprintf("area%d", i%5), fmt.Sprintf("note%02d.md", i))
		body := fmt.Sprintf("# Note %d\n\nThe walrus %d keeps ledger entries for harbour%d.\n\n## Details\n\nTide tables and anchor chains, entry %d.\n", i, i, i%7, i)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ownerCacheCounts(t *testing.T, ctx context.Context, ws string) (interfaces.CacheCounts, tyruntime.Endpoint) {
	t.Helper()
	c, ep, err := tyruntime.ConnectLocal(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The endpoint's owner token manages every collection: it sees the
	// counters.
	if st.SearchCache == nil {
		t.Fatal("status has no search_cache for the owner token")
	}
	return *st.SearchCache, ep
}

// TestManySearchProcesses: 20 sibling `tychora search` processes started at
// once all delegate to the running owner. The owner ranks exactly 20
// searches, and no other process ever holds a lock on, or has open, the
// owner lock or the database.
func TestManySearchProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 21 processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, ws := procsWorkspace(t)
	owner := serve(t, ws)
	if r := tychora(t, ws, "add", "--wait", root); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	before, ep := ownerCacheCounts(t, ctx, ws)
	if ep.PID != owner.Process.Pid {
		t.Fatalf("endpoint names pid %d, the owner is %d", ep.PID, owner.Process.Pid)
	}

	w := watchStorage(ws)
	const n = 20
	cmds := make([]*exec.Cmd, n)
	outs := make([]*strings.Builder, n)
	start := time.Now()
	for i := range cmds {
		outs[i] = &strings.Builder{}
		cmds[i] = exec.CommandContext(ctx, binary, "--workspace", ws, "search", "--json", "--budget", "800", fmt.Sprintf("walrus %d ledger", i))
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
		w.add(cmds[i].Process.Pid)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("search %d: %v: %s", i, err, outs[i])
		}
		var res struct {
			RunID string `json:"run_id"`
			Hits  []any  `json:"hits"`
		}
		if err := json.Unmarshal([]byte(outs[i].String()), &res); err != nil || res.RunID == "" || len(res.Hits) == 0 {
			t.Fatalf("search %d printed %q (%v)", i, outs[i], err)
		}
	}
	elapsed := time.Since(start)
	holders, opened, samples := w.finish()

	after, ep2 := ownerCacheCounts(t, ctx, ws)
	ranked := (after.Hits + after.Misses) - (before.Hits + before.Misses)
	t.Logf("%d search processes in %v; the owner (pid %d) ranked %d searches; %d samples of /proc/locks and the processes' fds",
		n, elapsed.Round(time.Millisecond), owner.Process.Pid, ranked, samples)
	if ranked != n {
		t.Errorf("the owner ranked %d searches for %d processes", ranked, n)
	}
	if ep2.PID != owner.Process.Pid {
		t.Errorf("the owner changed: pid %d, then %d", owner.Process.Pid, ep2.PID)
	}
	for pid, file := range holders {
		if pid != owner.Process.Pid {
			t.Errorf("pid %d (not the owner) held a lock on %s", pid, file)
		}
	}
	if _, ok := holders[owner.Process.Pid]; !ok {
		t.Errorf("the sampler never saw the owner's locks: %v", holders)
	}
	for pid, file := range opened {
		t.Errorf("search process %d had %s open", pid, file)
	}
}

// TestFiveStdioProcesses: five `serve --stdio` processes on one workspace
// make one owner and four bridges, all answering tool calls; when the
// owner's client goes away (its stdin closes), the other four keep
// answering and one of them takes over as the owner.
func TestFiveStdioProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 5 processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, ws := procsWorkspace(t)
	if r := tychora(t, ws, "add", "--wait", root); r.code != 0 { // in-process: no owner runs yet
		t.Fatalf("add: %+v", r)
	}

	const n = 5
	type proc struct {
		cs  *mcp.ClientSession
		cmd *exec.Cmd
	}
	procs := make([]proc, n)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Add(1)
		go func() { // all at once: they race for the lock
			defer wg.Done()
			cs, cmd := stdioClient(t, ctx, ws)
			procs[i] = proc{cs, cmd}
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, p := range procs {
			_ = p.cs.Close()
		}
	})
	pids := func(ps []proc) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.cmd.Process.Pid)
		}
		return out
	}
	// callAll has every process answer rounds search calls at once.
	callAll := func(ps []proc, rounds int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, len(ps)*rounds)
		for i, p := range ps {
			for r := range rounds {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{
						"request": map[string]any{"question": fmt.Sprintf("walrus ledger %d", i*rounds+r), "budget": map[string]any{"max_tokens": 800}}}})
					switch {
					case err != nil:
						errs <- fmt.Errorf("process %d: %w", p.cmd.Process.Pid, err)
					case res.IsError:
						b, _ := json.Marshal(res.Content)
						errs <- fmt.Errorf("process %d: tool error %s", p.cmd.Process.Pid, b)
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	waitOwner := func(among []int) int {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ep, err := tyruntime.ReadEndpoint(workspace.NewLayout(ws))
			if err == nil && ep.State == tyruntime.StateRunning && slices.Contains(among, ep.PID) {
				return ep.PID
			}
			if time.Now().After(deadline) {
				t.Fatalf("no owner among %v: %+v %v", among, ep, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	w := watchStorage(ws)
	for _, pid := range pids(procs) {
		w.add(pid)
	}
	callAll(procs, 10)
	ownerPID := waitOwner(pids(procs))
	callAll(procs, 10)
	holders, opened, samples := w.finish()
	for pid, file := range holders {
		if pid != ownerPID {
			t.Errorf("bridge pid %d held a lock on %s", pid, file)
		}
	}
	for pid, file := range opened {
		if pid != ownerPID {
			t.Errorf("bridge pid %d had %s open", pid, file)
		}
	}
	if opened[ownerPID] == "" {
		t.Errorf("the owner (pid %d) was never seen with its storage open (%d samples)", ownerPID, samples)
	}
	t.Logf("5 stdio processes: owner pid %d, bridges %v; every one answered 20 searches; %d samples", ownerPID, slices.DeleteFunc(pids(procs), func(p int) bool { return p == ownerPID }), samples)

	// The owner's client exits: its stdin closes and the process ends.
	var rest []proc
	for _, p := range procs {
		if p.cmd.Process.Pid == ownerPID {
			start := time.Now()
			if err := p.cs.Close(); err != nil {
				t.Fatalf("closing the owner's client: %v", err)
			}
			if st := p.cmd.ProcessState; st == nil || !st.Exited() {
				t.Fatalf("the owner's process has not exited: %v", st)
			}
			// The bridges wait for the lock while the owner stops: a
			// shutdown that waited on its clients' unused connections
			// took five seconds. (That only shows when a bridge holds
			// such a connection at the time: TestCloseWithUnusedConnection
			// in runtime is the test of it; the bound here is loose for
			// a slow machine.)
			took := time.Since(start)
			t.Logf("the owner exited %v after its stdin closed", took.Round(time.Millisecond))
			if took > 4500*time.Millisecond {
				t.Errorf("the owner took %v to exit", took)
			}
			continue
		}
		rest = append(rest, p)
	}
	start := time.Now()
	callAll(rest, 4)
	newOwner := waitOwner(pids(rest))
	t.Logf("the four others answered again within %v; pid %d took over as the owner", time.Since(start).Round(time.Millisecond), newOwner)
	callAll(rest, 4)
	if ep, err := tyruntime.ReadEndpoint(workspace.NewLayout(ws)); err != nil || ep.PID != newOwner {
		t.Fatalf("the owner changed again: %+v %v", ep, err)
	}
}
