package main

import (
	"bufio"
	"bytes"
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

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/jobs"
	tyruntime "github.com/tychora/tychora/runtime"
)

// The fault tests' sizes. TYCHORA_CRASH_FILES and TYCHORA_CRASH_KILLS
// scale the crash test up by hand (bench/crash.sh); the defaults keep it
// within a minute on two shared cores, for CI.
const (
	defaultCrashFiles = 3000
	defaultCrashKills = 20
)

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// writeFaultTree writes n files under dir: Go code, Markdown, a few images
// (assets), a binary and an ignored file (coverage skips). It returns the
// bytes of the files an ingest reads whole.
func writeFaultTree(t testing.TB, dir string, n int) int64 {
	t.Helper()
	var total int64
	write := func(rel string, b []byte) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		total += int64(len(b))
	}
	for i := 0; i < n; i++ {
		var b bytes.Buffer
		pkg := fmt.Sprintf("pkg%02d", i%40)
		if i%4 == 3 {
			fmt.Fprintf(&b, "# Notes %d\n\n", i)
			for s := 0; s < 6; s++ {
				fmt.Fprintf(&b, "## Section %d of note %d\n\n", s, i)
				for k := 0; k < 3; k++ {
					fmt.Fprintf(&b, "The parser %d handles request %d with care, then retries %d times.\n\n", i*7+s, s, k)
				}
			}
			write(filepath.Join(pkg, fmt.Sprintf("note%05d.md", i)), b.Bytes())
			continue
		}
		fmt.Fprintf(&b, "package %s\n\n", pkg)
		for f := 0; f < 8; f++ {
			fmt.Fprintf(&b, "// Handler%d_%d parses request %d.\nfunc Handler%d_%d(x int) int {\n\treturn x * %d\n}\n\n", i, f, f, i, f, i+f)
		}
		write(filepath.Join(pkg, fmt.Sprintf("file%05d.go", i)), b.Bytes())
	}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for i := 0; i < 3; i++ {
		write(fmt.Sprintf("img/pic%d.png", i), append(slices.Clone(png), bytes.Repeat([]byte{byte(i)}, 4096)...))
	}
	write("bin/blob.dat", append([]byte{0, 1, 2, 3}, bytes.Repeat([]byte{0}, 1024)...))
	write(".gitignore", []byte("ignored.txt\n"))
	write("ignored.txt", []byte("never indexed\n"))
	return total
}

// procIO is a process's I/O counters (/proc/PID/io): bytes passed to
// read and write calls. The kernel keeps them live, so they place a kill
// inside a phase far more finely than the job's progress, which is saved
// every 200 ms.
type procIO struct{ rchar, wchar, cpu int64 }

func readProcIO(pid int) (procIO, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return procIO{}, err
	}
	var io procIO
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := bytes.LastIndexByte(st, ')'); i > 0 {
			f := strings.Fields(string(st[i+1:]))
			if len(f) > 13 {
				u, _ := strconv.ParseInt(f[11], 10, 64)
				s, _ := strconv.ParseInt(f[12], 10, 64)
				io.cpu = u + s
			}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "rchar":
			io.rchar = n
		case "wchar":
			io.wchar = n
		}
	}
	return io, nil
}

func (a procIO) sub(b procIO) procIO {
	return procIO{a.rchar - b.rchar, a.wchar - b.wchar, a.cpu - b.cpu}
}

// dbReport is what testdata/dbcheck prints.
type dbReport struct {
	Integrity string            `json:"integrity"`
	FTS       string            `json:"fts"`
	Evidence  int               `json:"evidence"`
	Digest    string            `json:"digest"`
	Lines     []string          `json:"lines"`
	Jobs      map[string]string `json:"jobs"`
	Resumes   int               `json:"resumes"`
}

var (
	dbcheckOnce sync.Once
	dbcheckBin  string
	dbcheckErr  error
)

// dbcheck runs testdata/dbcheck (built once, without the race detector)
// on db.
func dbcheck(t *testing.T, db string, lines bool) dbReport {
	t.Helper()
	dbcheckOnce.Do(func() {
		dbcheckBin = filepath.Join(filepath.Dir(binary), "dbcheck")
		out, err := exec.Command("go", "build", "-o", dbcheckBin, "./testdata/dbcheck").CombinedOutput()
		if err != nil {
			dbcheckErr = fmt.Errorf("build dbcheck: %v: %s", err, out)
		}
	})
	if dbcheckErr != nil {
		t.Fatal(dbcheckErr)
	}
	args := []string{db}
	if lines {
		args = []string{"-lines", db}
	}
	out, err := exec.Command(dbcheckBin, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("dbcheck %s: %v %s", db, err, stderr)
	}
	var r dbReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("dbcheck output %q: %v", out, err)
	}
	return r
}

// crashImage copies a killed owner's index.db and its WAL (not the -shm:
// the copy must recover from the WAL alone, as after a power cut) and
// checks the copy, leaving the original for the next owner to recover.
func crashImage(t *testing.T, ws, dir string) dbReport {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(ws, "index.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			if suffix != "" && os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "index.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dbcheck(t, filepath.Join(dir, "index.db"), false)
}

// killPoint is where a kill lands: in a phase of the ingest, at a
// fraction of that phase's work as the owner's own counters measure it
// (bytes read while extracting, CPU time while applying in memory, bytes
// written while committing and checkpointing).
type killPoint struct {
	phase string // queued, extract, apply, wal, checkpoint
	frac  float64
}

// crashPlan spreads n (at least 4) kill points over the ingest: one right
// after the job is queued; a quarter while files are read and extracted;
// half inside the apply transaction while it builds the revision in
// memory; a quarter while it writes the revision to the WAL (spilling,
// then committing); and the last one after the commit, while the
// checkpoint copies the WAL into the database and before the job is
// marked done.
func crashPlan(n int) []killPoint {
	plan := []killPoint{{phase: "queued"}}
	rest := n - 2
	extract := max(1, rest/4)
	commit := max(1, rest/4)
	apply := rest - extract - commit
	add := func(phase string, k int) {
		for i := 1; i <= k; i++ {
			plan = append(plan, killPoint{phase, float64(i) / float64(k+1)})
		}
	}
	add("extract", extract)
	add("apply", apply)
	add("wal", commit)
	return append(plan, killPoint{"checkpoint", 0.3})
}

// ingestProfile is an uninterrupted ingest's counters, from the add on:
// the bytes read once every file was read (and the CPU time then), the CPU
// time and bytes written when the commit began writing the WAL, the bytes
// written when a reader first saw the revision, and in all.
type ingestProfile struct {
	readAll      int64 // rchar when every file had been read
	extractedCPU int64 // CPU ticks then
	extractedW   int64 // wchar then
	writeCPU     int64 // CPU ticks when the WAL writes of the apply began
	writeStart   int64 // wchar then
	committed    int64 // wchar when a reader first saw the new revision
	total        int64 // wchar when the job was final
	duration     time.Duration
	phases       string // when each phase began, for the log
}

// reached reports whether the counters d (since the owner started) are
// past kill point k.
func (p ingestProfile) reached(k killPoint, d procIO) bool {
	lerp := func(a, b int64) int64 { return a + int64(k.frac*float64(b-a)) }
	switch k.phase {
	case "extract":
		return d.rchar >= lerp(0, p.readAll)
	case "apply":
		// Once every file was read. CPU time varies from run to run with
		// the machine's load: the points stay in the first 60 % of the
		// reference's window.
		return d.rchar >= p.readAll*98/100 &&
			d.cpu >= max(p.extractedCPU+1, p.extractedCPU+int64(0.6*k.frac*float64(p.writeCPU-p.extractedCPU)))
	case "wal":
		return d.wchar >= lerp(p.writeStart, p.committed)
	case "checkpoint":
		return d.wchar >= lerp(p.committed, p.total)
	}
	return true
}

// landed says where a kill at counters d actually fell: still reading
// files, applying in memory, writing the revision to the WAL, or after
// the commit (the crash image holds the revision).
func (p ingestProfile) landed(k killPoint, d procIO, committed bool) string {
	switch {
	case k.phase == "queued":
		return "queued"
	case committed:
		return "post-commit"
	case d.rchar < p.readAll*98/100:
		return "extract"
	case d.wchar < p.extractedW+1<<20:
		return "apply-mem"
	}
	return "apply-wal"
}

type owner struct {
	cmd    *exec.Cmd
	client *httpapi.Client
	base   procIO
	start  time.Duration // from exec to a proven endpoint
}

func startOwnerProc(t *testing.T, ctx context.Context, ws string) owner {
	t.Helper()
	t0 := time.Now()
	cmd := serve(t, ws)
	c, _, err := tyruntime.ConnectLocal(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	base, err := readProcIO(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return owner{cmd: cmd, client: c, base: base, start: time.Since(t0)}
}

func stopOwnerProc(t *testing.T, o owner) {
	t.Helper()
	if err := o.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- o.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("owner exited with %v after SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("owner did not stop within 30s of SIGTERM")
	}
}

// waitNoJobs polls the job list until no job is queued or running.
func waitNoJobs(t *testing.T, ctx context.Context, c *httpapi.Client, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		busy := 0
		for _, st := range []string{jobs.StateQueued, jobs.StateRunning} {
			res, err := c.ManageJob(ctx, interfaces.ManageJobRequest{Action: "list", State: st, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			busy += len(res.Jobs)
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still queued or running after %v", busy, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFinal polls job id until it is final.
func waitFinal(t *testing.T, ctx context.Context, c *httpapi.Client, id string, limit time.Duration) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Job.Final() {
			return j.Job
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not final after %v: %+v", id, limit, j.Job)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCrashSafety kills the owner with SIGKILL at 20 points spread over
// an ingest, chosen on its progress (the owner's live counters of bytes
// read, CPU time and bytes written, placed on an uninterrupted run's
// profile; never on time), restarting it after each. Every crash image
// must pass integrity_check and FTS5's integrity-check and hold either
// none or all of the new revision's evidence; the job resumes each time
// and ends succeeded; and the evidence set (path, level, span, sha256)
// then equals that of the uninterrupted run. Kills follow each other on
// one job until one lands after the commit; the points left go on in a
// fresh workspace.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("long: kills and restarts the owner 20 times")
	}
	if _, err := readProcIO(os.Getpid()); err != nil {
		t.Skipf("no /proc/PID/io to place the kills on: %v", err)
	}
	files := envInt(t, "TYCHORA_CRASH_FILES", defaultCrashFiles)
	kills := envInt(t, "TYCHORA_CRASH_KILLS", defaultCrashKills)
	if kills < 4 {
		t.Fatalf("TYCHORA_CRASH_KILLS=%d: want at least 4", kills)
	}
	ctx := context.Background()
	began := time.Now()
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	treeBytes := writeFaultTree(t, tree, files)

	// The reference: an uninterrupted ingest, whose profile places the
	// kills of the interrupted ones.
	refWS := filepath.Join(root, "ref")
	if r := tychora(t, refWS, "init", "--ingest-root", root); r.code != 0 {
		t.Fatal(r)
	}
	prof, want := referenceRun(t, ctx, refWS, tree, treeBytes)
	t.Logf("reference: %d files, %d bytes, %d evidence rows in %v (%s); %d B read and %d CPU ticks when extracted, %d ticks and %d B written when the WAL writes began, %d B written at the commit, %d B in all",
		files, treeBytes, want.Evidence, prof.duration.Round(time.Millisecond), prof.phases, prof.readAll, prof.extractedCPU,
		prof.writeCPU, prof.writeStart, prof.committed, prof.total)
	if want.Evidence < files || prof.writeCPU < prof.extractedCPU || prof.committed <= prof.writeStart || prof.total < prof.committed {
		t.Fatalf("reference profile is unusable: %+v, %d evidence rows", prof, want.Evidence)
	}

	var (
		table  []string
		landed = map[string]int{}
		n      int
		chains int
	)
	// runChains kills ingests at points, each chain a fresh ingest that
	// ends resumed and checked.
	runChains := func(points []killPoint) {
		t.Helper()
		for len(points) > 0 {
			chains++
			ws := filepath.Join(root, fmt.Sprintf("ws%d", chains))
			if r := tychora(t, ws, "init", "--ingest-root", root); r.code != 0 {
				t.Fatal(r)
			}
			own := startOwnerProc(t, ctx, ws)
			res, err := own.client.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: tree}})
			if err != nil {
				t.Fatal(err)
			}
			jobID := res.Job.ID
			for first := true; len(points) > 0; first = false {
				k := points[0]
				seen, at, reached := killAt(t, ctx, own, prof, k, jobID)
				if !reached {
					// An earlier kill of this chain landed after the commit
					// (or the job went faster): the point needs a fresh ingest.
					if first {
						t.Fatalf("kill point %s %.2f not reached on a fresh ingest (%d B read, %d CPU ticks, %d B written): %+v",
							k.phase, k.frac, at.rchar, at.cpu, at.wchar, seen)
					}
					break
				}
				points = points[1:]
				n++
				_ = own.cmd.Wait()
				img := crashImage(t, ws, filepath.Join(root, fmt.Sprintf("crash%02d", n)))
				if img.Integrity != "ok" || img.FTS != "ok" {
					t.Fatalf("kill %d (%s): integrity_check %q, fts integrity-check %q", n, k.phase, img.Integrity, img.FTS)
				}
				committed := img.Digest == want.Digest
				if !committed && img.Evidence != 0 {
					t.Fatalf("kill %d (%s): the crash image holds %d evidence rows, neither none nor the %d of the revision", n, k.phase, img.Evidence, want.Evidence)
				}
				if st := img.Jobs[jobID]; st != jobs.StateQueued && st != jobs.StateRunning && st != jobs.StateSucceeded {
					t.Fatalf("kill %d: job state %q in the crash image", n, st)
				}
				where := prof.landed(k, at, committed)
				landed[where]++
				row := fmt.Sprintf("%2d %d  %-10s %4.2f  %-11s %9d %4d %10d  %5d/%-5d  %-9s %6d  %v", n, chains, k.phase, k.frac, where,
					at.rchar, at.cpu, at.wchar, seen.Progress.Indexed, seen.Progress.FilesSeen, img.Jobs[jobID], img.Evidence, own.start.Round(time.Millisecond))
				table = append(table, row)
				t.Log(row)
				own = startOwnerProc(t, ctx, ws)
				if committed {
					break
				}
			}
			// The chain's end: the job resumes and succeeds, every job is
			// final, and the evidence is the uninterrupted run's.
			final := waitFinal(t, ctx, own.client, jobID, 5*time.Minute)
			// The owner watches the tree and asks for a sync after each
			// start: those jobs end too before the owner stops.
			waitNoJobs(t, ctx, own.client, time.Minute)
			stopOwnerProc(t, own)
			got := dbcheck(t, filepath.Join(ws, "index.db"), true)
			if final.State != jobs.StateSucceeded || final.Attempt != 1 {
				t.Fatalf("chain %d: the job after its kills: %+v", chains, final)
			}
			if got.Integrity != "ok" || got.FTS != "ok" {
				t.Fatalf("chain %d: final index: integrity_check %q, fts %q", chains, got.Integrity, got.FTS)
			}
			for id, st := range got.Jobs {
				if st != jobs.StateSucceeded && st != jobs.StateFailed && st != jobs.StateCancelled {
					t.Fatalf("chain %d: job %s ended %s", chains, id, st)
				}
			}
			if got.Digest != want.Digest {
				t.Fatalf("chain %d: evidence after the kills differs from the uninterrupted run: %d rows, want %d; first differences: %v",
					chains, got.Evidence, want.Evidence, firstDiffs(got.Lines, want.Lines, 5))
			}
			t.Logf("chain %d: job resumed %d times, then succeeded with the reference's %d evidence rows", chains, got.Resumes, got.Evidence)
		}
	}
	runChains(crashPlan(kills))
	// The kills must spread over the whole ingest (below). Timing on a
	// busy machine can shift every kill aimed at a phase into the next
	// one: such a phase gets up to two more chains of kills aimed at it.
	aim := map[string]string{"extract": "extract", "apply-mem": "apply", "apply-wal": "wal", "post-commit": "checkpoint"}
	for round := 0; round < 2; round++ {
		var again []killPoint
		for _, phase := range []string{"extract", "apply-mem", "apply-wal", "post-commit"} {
			if landed[phase] > 0 || phase == "apply-mem" && prof.writeCPU-prof.extractedCPU < minApplyTicks {
				continue
			}
			t.Logf("no kill landed in phase %s yet: three more aimed at it", phase)
			fracs := []float64{0.25, 0.5, 0.75}
			if phase == "apply-mem" {
				fracs = []float64{0, 0.1, 0.2} // the window's start: late ones land in the WAL's writing
			}
			for _, frac := range fracs {
				again = append(again, killPoint{aim[phase], frac})
			}
		}
		if len(again) == 0 {
			break
		}
		runChains(again)
	}
	t.Logf("kill chain phase      frac  landed       read (B)  cpu written (B)  indexed/seen  image job   rows  start of the killed owner\n%s",
		strings.Join(table, "\n"))
	t.Logf("%d kills over %d ingests of %d files in %v; landed: %v", n, chains, files, time.Since(began).Round(time.Millisecond), landed)
	// The kills must spread over the whole ingest. The apply in memory
	// (every file read, no WAL write yet) is aimed at by CPU time; when
	// the reference spent less than minApplyTicks of it there, the kills
	// cannot be placed in it (on a loaded machine a tick is 10 ms of a
	// window of 30), and a kill there leaves the image a kill in the
	// WAL's writing leaves: nothing of the revision.
	for _, phase := range []string{"extract", "apply-mem", "apply-wal", "post-commit"} {
		if landed[phase] > 0 {
			continue
		}
		if phase == "apply-mem" && prof.writeCPU-prof.extractedCPU < minApplyTicks {
			t.Logf("no kill landed in phase apply-mem: the reference spent %d CPU ticks there", prof.writeCPU-prof.extractedCPU)
			continue
		}
		t.Errorf("no kill landed in phase %s", phase)
	}
}

// minApplyTicks is the CPU time of the reference's apply in memory that
// kills aimed at it need to land there. Kills are aimed at whole ticks of
// the killed owner's CPU, and a killed run's phases drift from the
// reference's by a tick or two: in a clean-clone run on Dec 3 2026 the
// reference spent exactly 3 ticks there (38 to 41), the ten kills aimed
// at it were taken at tick 39, and by then each killed owner was writing
// the WAL already. A window of 5 ticks or more leaves room for the drift.
const minApplyTicks = 5

// referenceRun ingests tree once without interruption through a served
// owner and returns its profile and final index report.
func referenceRun(t *testing.T, ctx context.Context, ws, tree string, treeBytes int64) (ingestProfile, dbReport) {
	t.Helper()
	own := startOwnerProc(t, ctx, ws)
	pid := own.cmd.Process.Pid
	base, err := readProcIO(pid)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	res, err := own.client.AddSources(ctx, interfaces.AddSourcesRequest{Action: "add", Source: &interfaces.SourceInput{Path: tree}})
	if err != nil {
		t.Fatal(err)
	}
	var (
		p     ingestProfile
		prev  procIO
		marks []string
	)
	mark := func(what string) { marks = append(marks, fmt.Sprintf("%s %dms", what, time.Since(t0).Milliseconds())) }
	deadline := time.Now().Add(5 * time.Minute)
	for i := 0; ; i++ {
		cur, err := readProcIO(pid)
		if err != nil {
			t.Fatal(err)
		}
		d := cur.sub(base)
		if p.readAll == 0 && d.rchar >= treeBytes {
			p.readAll, p.extractedCPU, p.extractedW = d.rchar, d.cpu, d.wchar
			mark("extracted")
		}
		// The apply's first WAL writes: a MiB past what the extraction
		// wrote (the spool, progress updates).
		if p.readAll != 0 && p.writeStart == 0 && d.wchar > p.extractedW+1<<20 {
			p.writeStart, p.writeCPU = prev.wchar, prev.cpu
			mark("writing")
		}
		// Only once the commit may be near does the poll ask a reader,
		// so that the reference's CPU time matches an interrupted run's.
		if p.writeStart != 0 && p.committed == 0 {
			ds, err := own.client.Discover(ctx, interfaces.DiscoverArgs{Request: interfaces.DiscoverRequest{Subject: "sources"}})
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			b, _ := json.Marshal(ds.Items[0])
			if json.Unmarshal(b, &m) == nil && m["current_revision_id"] != nil {
				p.committed = d.wchar
				mark("committed")
			}
		}
		if i%16 == 0 || p.committed != 0 {
			j, err := own.client.GetJob(ctx, res.Job.ID)
			if err != nil {
				t.Fatal(err)
			}
			if j.Job.Final() {
				if j.Job.State != jobs.StateSucceeded {
					t.Fatalf("reference job %+v", j.Job)
				}
				end, _ := readProcIO(pid)
				p.total, p.duration = end.sub(base).wchar, time.Since(t0)
				mark("final")
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("reference ingest did not finish in 5 minutes")
		}
		prev = d
		time.Sleep(200 * time.Microsecond)
	}
	p.phases = strings.Join(marks, ", ")
	stopOwnerProc(t, own)
	return p, dbcheck(t, filepath.Join(ws, "index.db"), true)
}

// killAt watches the owner's counters since its start and SIGKILLs it at
// kill point k. It returns the last job handle seen, the counters at the
// kill, and whether the point was reached before the job ended.
func killAt(t *testing.T, ctx context.Context, o owner, p ingestProfile, k killPoint, jobID string) (jobs.Job, procIO, bool) {
	t.Helper()
	pid := o.cmd.Process.Pid
	var seen jobs.Job
	deadline := time.Now().Add(5 * time.Minute)
	for i := 0; ; i++ {
		cur, err := readProcIO(pid)
		if err != nil {
			t.Fatal(err)
		}
		d := cur.sub(o.base)
		if p.reached(k, d) {
			if err := o.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			return seen, d, true
		}
		if i%16 == 0 {
			j, err := o.client.GetJob(ctx, jobID)
			if err != nil {
				t.Fatal(err)
			}
			seen = j.Job
			if seen.Final() {
				return seen, d, false
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("kill point not reached in 5 minutes")
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// firstDiffs lists up to n lines in one sorted set and not the other.
func firstDiffs(got, want []string, n int) []string {
	var out []string
	g, w := 0, 0
	for (g < len(got) || w < len(want)) && len(out) < n {
		switch {
		case w >= len(want) || (g < len(got) && got[g] < want[w]):
			out = append(out, "+"+got[g])
			g++
		case g >= len(got) || want[w] < got[g]:
			out = append(out, "-"+want[w])
			w++
		default:
			g++
			w++
		}
	}
	return out
}
