// Command load drives a running tychora owner with MCP clients over
// Streamable HTTP — the go-sdk client, one stateful session per client, the
// owner token of endpoint.json as bearer — calling the search tool with
// small budgets. Each scenario prints its throughput, latency percentiles,
// errors (tool errors count) and the owner's search-cache hit rate (from
// GET /v1/status); the program exits 1 when a bound is missed.
// bench/load.sh builds tychora, indexes a copy of Go's source tree, starts
// the owner and runs this; see bench/README.md.
//
//	go run ./bench/cmd/load -workspace W -corpus DIR [-scenarios a,b,c,d]
//	go run ./bench/cmd/load -gen-distinct DIR -n 2000 > bench/queries/distinct.txt
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	benchcorpus "github.com/tychora/tychora/bench/internal/corpus"
)

func main() {
	ws := flag.String("workspace", "", "the workspace whose owner runs (reads .runtime/endpoint.json)")
	corpus := flag.String("corpus", "", "the indexed tree (scenario d rewrites every file in it)")
	queries := flag.String("queries", "bench/queries", "directory of mix.txt and distinct.txt")
	which := flag.String("scenarios", "a,b,c,d", "scenarios to run, in order")
	clients := flag.Int("clients", 32, "clients (MCP sessions) of scenarios b, c and d")
	budget := flag.Int("budget", 1000, "max_tokens of every search")
	protocol := flag.String("protocol", "2025-11-25", "MCP protocol version the clients ask for (2025-11-25: stateful sessions)")
	nA := flag.Int("n-a", 3000, "calls of scenario a")
	nB := flag.Int("n-b", 20000, "calls of scenario b")
	maxD := flag.Int("max-d", 20000, "most calls of scenario d (it runs while the sync runs)")
	gen := flag.String("gen-distinct", "", "write distinct questions from the Go files under this directory to stdout, and exit")
	n := flag.Int("n", 2000, "with -gen-distinct: how many")
	timeout := flag.Duration("timeout", 15*time.Minute, "the whole run's limit")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the load generator to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		stopProfile = func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "load: cpu profile:", err)
			}
		}
	}
	defer stopProfile()

	if *gen != "" {
		if err := genDistinct(os.Stdout, *gen, *n); err != nil {
			fail(err)
		}
		return
	}
	if *ws == "" {
		fmt.Fprintln(os.Stderr, "load: -workspace is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	ep, err := readEndpoint(*ws)
	if err != nil {
		fail(err)
	}
	mix, err := readQuestions(filepath.Join(*queries, "mix.txt"))
	if err != nil {
		fail(err)
	}
	distinct, err := readQuestions(filepath.Join(*queries, "distinct.txt"))
	if err != nil {
		fail(err)
	}
	var short []string
	for _, q := range mix {
		if len(strings.Fields(q)) <= 3 {
			short = append(short, q)
		}
	}

	l := &load{ep: ep, protocol: *protocol, budget: *budget}
	fmt.Printf("owner pid %d at %s, protocol %s, budget %d tokens, %d mix and %d distinct questions\n",
		ep.PID, ep.URL, *protocol, *budget, len(mix), len(distinct))
	ok := true
	for _, name := range strings.Split(*which, ",") {
		var sc scenario
		switch strings.TrimSpace(name) {
		case "a":
			sc = scenario{name: "a", title: "1 client, short questions", clients: 1, calls: *nA,
				question: cycle(short), p50: 3 * time.Millisecond, p99: 15 * time.Millisecond}
		case "b":
			sc = scenario{name: "b", title: fmt.Sprintf("%d clients, mix of %d (warm)", *clients, len(mix)), clients: *clients, calls: *nB,
				question: cycle(mix), warm: mix, minRate: 1000, p99: 80 * time.Millisecond}
		case "c":
			sc = scenario{name: "c", title: fmt.Sprintf("%d clients, %d distinct (cold)", *clients, len(distinct)), clients: *clients, calls: len(distinct),
				question: cycle(distinct), minRate: 300, p99: 250 * time.Millisecond}
		case "d":
			if *corpus == "" {
				fail(errors.New("scenario d needs -corpus"))
			}
			sc = scenario{name: "d", title: fmt.Sprintf("%d clients, distinct, during a full re-sync", *clients), clients: *clients, calls: *maxD,
				question: varied(distinct, *budget), p99: 250 * time.Millisecond}
			sc.during = func(ctx context.Context) (func() bool, func() (string, error), error) {
				return l.resync(ctx, *corpus)
			}
		default:
			fail(fmt.Errorf("unknown scenario %q", name))
		}
		res, err := l.run(ctx, sc)
		if err != nil {
			fail(fmt.Errorf("scenario %s: %w", sc.name, err))
		}
		if !res.report(sc) {
			ok = false
		}
	}
	if !ok {
		fmt.Println("load: a bound was missed")
		stopProfile()
		os.Exit(1)
	}
	fmt.Println("load: every bound met")
}

// stopProfile writes the -cpuprofile profile out; every exit calls it.
var stopProfile = func() {}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	stopProfile()
	os.Exit(1)
}

// readQuestions reads one question a line; '#' starts a comment line.
func readQuestions(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		q := strings.TrimSpace(sc.Text())
		if q == "" || strings.HasPrefix(q, "#") {
			continue
		}
		out = append(out, q)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return out, sc.Err()
}

// A question picks call i's question and budget (0: the default budget).
type question func(i int) (string, int)

func cycle(qs []string) question {
	return func(i int) (string, int) { return qs[i%len(qs)], 0 }
}

// varied walks qs again and again, each pass with a budget ten tokens
// smaller, so that no request repeats one made before: every call is
// ranked afresh.
func varied(qs []string, budget int) question {
	return func(i int) (string, int) { return qs[i%len(qs)], budget - 10*(1+i/len(qs)) }
}

type scenario struct {
	name, title string
	clients     int
	calls       int      // the fixed count (scenario d: the most)
	warm        []string // asked once each before the clock starts, not counted
	question    question
	minRate     float64       // calls/s, 0: no bound
	p50, p99    time.Duration // 0: no bound
	// during, when set, starts work that the scenario runs beside: done
	// reports it finished (the clients then stop), wait returns its
	// summary.
	during func(ctx context.Context) (done func() bool, wait func() (string, error), err error)
}

type load struct {
	ep       endpoint
	protocol string
	budget   int
}

type result struct {
	calls      int
	errs       int
	empty      int // answers without hits
	firstErr   []string
	lat        []time.Duration
	at         []time.Duration // when each call started, from the scenario's start (same order as lat until sorted)
	wall       time.Duration
	cache      cacheCounts
	ownerCPU   time.Duration // -1: unknown
	selfCPU    time.Duration
	machineCPU time.Duration // busy CPU time of the whole machine; -1: unknown
	note       string
}

// run connects the scenario's clients, then lets them call until the count
// is reached (or, with during, until that work is done).
func (l *load) run(ctx context.Context, sc scenario) (*result, error) {
	sessions := make([]*mcp.ClientSession, sc.clients)
	for i := range sessions {
		cs, err := connect(ctx, l.ep, l.protocol)
		if err != nil {
			return nil, fmt.Errorf("connect client %d: %w", i, err)
		}
		sessions[i] = cs
	}
	defer func() {
		for _, cs := range sessions {
			_ = cs.Close()
		}
	}()
	for _, q := range sc.warm {
		if _, err := search(ctx, sessions[0], searchArgs(q, l.budget), l.budget); err != nil {
			return nil, fmt.Errorf("warm up with %q: %w", q, err)
		}
	}
	before, err := ownerStatus(ctx, l.ep)
	if err != nil {
		return nil, err
	}
	ownerBefore, ownerOK := cpuTicks(l.ep.PID)
	selfBefore := selfCPU()
	busyBefore, totalBefore, machineOK := machineTicks()

	done := func() bool { return false }
	var wait func() (string, error)
	if sc.during != nil {
		if done, wait, err = sc.during(ctx); err != nil {
			return nil, err
		}
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		res      = &result{}
		wg       sync.WaitGroup
		argCache sync.Map // question|budget → json.RawMessage
	)
	start := time.Now()
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat, at []time.Duration
			var errs, empty int
			var first []string
			for ctx.Err() == nil && !done() {
				i := int(next.Add(1) - 1)
				if i >= sc.calls {
					break
				}
				q, b := sc.question(i)
				if b == 0 {
					b = l.budget
				}
				key := fmt.Sprintf("%d|%s", b, q)
				args, ok := argCache.Load(key)
				if !ok {
					args, _ = argCache.LoadOrStore(key, searchArgs(q, b))
				}
				t0 := time.Now()
				n, err := search(ctx, cs, args.(json.RawMessage), b)
				lat = append(lat, time.Since(t0))
				at = append(at, t0.Sub(start))
				if err == nil && n == 0 {
					empty++
				}
				if err != nil {
					errs++
					if len(first) < 3 {
						first = append(first, fmt.Sprintf("%q: %v", q, err))
					}
				}
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.at = append(res.at, at...)
			res.errs += errs
			res.empty += empty
			if len(res.firstErr) < 3 {
				res.firstErr = append(res.firstErr, first...)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.wall = time.Since(start)
	res.calls = len(res.lat)
	res.selfCPU = selfCPU() - selfBefore
	res.ownerCPU = -1
	if ownerAfter, ok := cpuTicks(l.ep.PID); ok && ownerOK {
		res.ownerCPU = time.Duration(ownerAfter-ownerBefore) * 10 * time.Millisecond
	}
	res.machineCPU = -1
	if busyAfter, totalAfter, ok := machineTicks(); ok && machineOK && totalAfter > totalBefore {
		// Ticks of all CPUs over the wall time: busy CPU time.
		cores := float64(totalAfter-totalBefore) / (res.wall.Seconds() * 100)
		res.machineCPU = time.Duration(float64(busyAfter-busyBefore) / float64(totalAfter-totalBefore) * cores * float64(res.wall))
	}
	if wait != nil {
		note, err := wait()
		if err != nil {
			return nil, err
		}
		res.note = note
	}
	after, err := ownerStatus(ctx, l.ep)
	if err != nil {
		return nil, err
	}
	res.cache = cacheCounts{Hits: after.Hits - before.Hits, Misses: after.Misses - before.Misses}
	return res, ctx.Err()
}

// report prints the scenario's figures and reports whether it met its
// bounds.
func (r *result) report(sc scenario) bool {
	timeline := ""
	if *timelineStep > 0 && r.wall > *timelineStep {
		timeline = r.timeline(*timelineStep)
	}
	slices.Sort(r.lat)
	pct := func(p float64) time.Duration {
		if len(r.lat) == 0 {
			return 0
		}
		i := int(float64(len(r.lat))*p+0.999999) - 1
		return r.lat[max(0, min(len(r.lat)-1, i))]
	}
	rate := float64(r.calls) / r.wall.Seconds()
	p50, p99 := pct(0.50), pct(0.99)
	lookups := r.cache.Hits + r.cache.Misses
	hitRate := 0.0
	if lookups > 0 {
		hitRate = 100 * float64(r.cache.Hits) / float64(lookups)
	}
	fmt.Printf("\n%s) %s\n", sc.name, sc.title)
	fmt.Printf("   calls %d in %.2f s, errors %d: %.0f calls/s, p50 %s, p99 %s, max %s\n",
		r.calls, r.wall.Seconds(), r.errs, rate, msf(p50), msf(p99), msf(pct(1)))
	if r.calls > 0 {
		fmt.Printf("   answers with hits: %.1f%%\n", 100*float64(r.calls-r.errs-r.empty)/float64(r.calls))
	}
	fmt.Printf("   owner cache: %.1f%% hits (%d hits, %d misses)", hitRate, r.cache.Hits, r.cache.Misses)
	if r.ownerCPU >= 0 && r.calls > 0 {
		fmt.Printf("; cpu: owner %.2f ms/call, load generator %.2f ms/call", ms(r.ownerCPU)/float64(r.calls), ms(r.selfCPU)/float64(r.calls))
	}
	fmt.Println()
	if r.ownerCPU >= 0 && r.machineCPU >= 0 {
		w := r.wall.Seconds()
		others := max(0, r.machineCPU-r.ownerCPU-r.selfCPU)
		fmt.Printf("   cores busy: owner %.2f, load generator %.2f, other processes %.2f (of %d)\n",
			r.ownerCPU.Seconds()/w, r.selfCPU.Seconds()/w, others.Seconds()/w, goruntime.NumCPU())
	}
	if r.note != "" {
		fmt.Printf("   %s\n", r.note)
	}
	if timeline != "" {
		fmt.Print(timeline)
	}
	for _, e := range r.firstErr {
		fmt.Printf("   error: %s\n", e)
	}
	ok := true
	miss := func(format string, a ...any) {
		fmt.Printf("   MISSED: "+format+"\n", a...)
		ok = false
	}
	if r.errs > 0 {
		miss("%d errors (bound: 0)", r.errs)
	}
	if uint64(r.calls) != lookups {
		miss("the owner ranked %d searches for %d calls", lookups, r.calls)
	}
	if sc.minRate > 0 && rate < sc.minRate {
		miss("%.0f calls/s < %.0f", rate, sc.minRate)
	}
	if sc.p50 > 0 && p50 >= sc.p50 {
		miss("p50 %s >= %s", msf(p50), msf(sc.p50))
	}
	if sc.p99 > 0 && p99 >= sc.p99 {
		miss("p99 %s >= %s", msf(p99), msf(sc.p99))
	}
	if ok {
		var bounds []string
		if sc.minRate > 0 {
			bounds = append(bounds, fmt.Sprintf(">= %.0f calls/s", sc.minRate))
		}
		if sc.p50 > 0 {
			bounds = append(bounds, "p50 < "+msf(sc.p50))
		}
		if sc.p99 > 0 {
			bounds = append(bounds, "p99 < "+msf(sc.p99))
		}
		bounds = append(bounds, "0 errors")
		fmt.Printf("   met: %s\n", strings.Join(bounds, ", "))
	}
	return ok
}

// timelineStep, when set, splits each scenario's latencies by when the
// calls started.
var timelineStep = flag.Duration("timeline", 0, "also print p50/p99 per window of this length (e.g. 5s)")

// timeline prints the calls, p50 and p99 of each window of step.
func (r *result) timeline(step time.Duration) string {
	windows := map[int][]time.Duration{}
	last := 0
	for i, a := range r.at {
		w := int(a / step)
		windows[w] = append(windows[w], r.lat[i])
		last = max(last, w)
	}
	var b strings.Builder
	for w := 0; w <= last; w++ {
		l := windows[w]
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		fmt.Fprintf(&b, "   %5.0f s: %5d calls, p50 %s, p99 %s\n", (time.Duration(w) * step).Seconds(), len(l),
			msf(l[len(l)/2]), msf(l[min(len(l)-1, int(float64(len(l))*0.99+0.999999)-1)]))
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func msf(d time.Duration) string { return fmt.Sprintf("%.1f ms", ms(d)) }

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resync rewrites every file of the corpus (one more newline at its end,
// so every file's content changes and is extracted again), then asks the
// owner for a sync of the source over MCP and follows the job.
func (l *load) resync(ctx context.Context, corpus string) (func() bool, func() (string, error), error) {
	files, err := benchcorpus.Rewrite(corpus)
	if err != nil {
		return nil, nil, fmt.Errorf("rewrite the corpus: %w", err)
	}
	cs, err := connect(ctx, l.ep, l.protocol)
	if err != nil {
		return nil, nil, err
	}
	var srcs struct {
		Items []struct {
			ID   string `json:"id"`
			Path string `json:"path"`
		} `json:"items"`
	}
	if err := callTool(ctx, cs, "discover", map[string]any{"request": map[string]any{"subject": "sources"}}, &srcs); err != nil {
		cs.Close()
		return nil, nil, err
	}
	if len(srcs.Items) != 1 {
		cs.Close()
		return nil, nil, fmt.Errorf("want one source, have %d", len(srcs.Items))
	}
	var started jobResult
	if err := callTool(ctx, cs, "add_sources", map[string]any{"action": "sync", "source_id": srcs.Items[0].ID}, &started); err != nil {
		cs.Close()
		return nil, nil, err
	}
	t0 := time.Now()
	var (
		finished atomic.Bool
		final    jobResult
		ferr     error
		stopped  = make(chan struct{})
	)
	go func() {
		defer close(stopped)
		defer cs.Close()
		defer finished.Store(true)
		for {
			var j jobResult
			if ferr = callTool(ctx, cs, "manage_job", map[string]any{"action": "get", "job_id": started.Job.ID}, &j); ferr != nil {
				return
			}
			switch j.Job.State {
			case "succeeded", "failed", "cancelled":
				final = j
				return
			}
			select {
			case <-ctx.Done():
				ferr = ctx.Err()
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	wait := func() (string, error) {
		<-stopped
		if ferr != nil {
			return "", ferr
		}
		if final.Job.State != "succeeded" {
			return "", fmt.Errorf("sync job %s %s: %s", final.Job.ID, final.Job.State, final.Job.Error)
		}
		return fmt.Sprintf("sync of %d rewritten files: job %s, %.1f s (indexed %d, unchanged %d), the calls ran while it did",
			files, final.Job.State, time.Since(t0).Seconds(), final.Job.Progress.Indexed, final.Job.Progress.Unchanged), nil
	}
	return finished.Load, wait, nil
}

type jobResult struct {
	Job struct {
		ID       string          `json:"id"`
		State    string          `json:"state"`
		Error    json.RawMessage `json:"error"`
		Progress struct {
			Indexed   int `json:"indexed"`
			Unchanged int `json:"unchanged"`
		} `json:"progress"`
	} `json:"job"`
}
