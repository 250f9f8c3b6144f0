// Command bounded checks that a running tychora owner bounds the work of
// one request and shares itself fairly between callers (issue 16). It
// talks to /v1/search with tokens it creates through the owner token of
// endpoint.json, and measures three things:
//
//   - glob: the nested-brace glob ("{"×250 + "a" + ",b}"×250) alone and 64
//     copies of it in one request: how long the answer takes (refused or
//     matched);
//   - fair: four read tokens each send, in a loop, the heaviest request the
//     limits accept (64 globs at the glob limits, a 1,000-word question,
//     every filter), while a fifth token asks distinct questions one after
//     another: the fifth's latency percentiles;
//   - cancel: a heavy search is cancelled by its client (the connection
//     closes); how long the owner's CPU goes on after the cancel.
//
// bench/bounded.sh builds tychora, indexes a copy of Go's source tree,
// starts the owner and runs this; see bench/README.md.
//
//	go run ./bench/cmd/bounded -workspace W -questions bench/queries/distinct.txt
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

type endpoint struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	PID   int    `json:"pid"`
}

func main() {
	ws := flag.String("workspace", "", "the workspace whose owner runs")
	questions := flag.String("questions", "bench/queries/distinct.txt", "questions of the fifth client")
	words := flag.String("words", "", "a Go file whose words make the 1,000-word question")
	fifthN := flag.Int("n", 300, "searches of the fifth client")
	offset := flag.Int("offset", 0, "the fifth client's first question (each run should ask questions the owner has not ranked yet)")
	heavyN := flag.Int("heavy", 4, "heavy clients beside the fifth (0: the fifth alone, for a baseline)")
	globCalls := flag.Int("calls", 20, "calls of each glob request")
	only := flag.String("only", "", "measure only glob or fair (the fifth client, -heavy beside it), for a profile of that part")
	flag.Parse()
	if *only != "" && *only != "glob" && *only != "fair" {
		fail(fmt.Errorf("-only %q: use glob or fair", *only))
	}
	b, err := os.ReadFile(filepath.Join(*ws, ".runtime", "endpoint.json"))
	if err != nil {
		fail(err)
	}
	var ep endpoint
	if err := json.Unmarshal(b, &ep); err != nil || !strings.HasPrefix(ep.URL, "http://127.0.0.1:") {
		fail(fmt.Errorf("endpoint.json: %v", err))
	}
	qs, err := readLines(*questions)
	if err != nil {
		fail(err)
	}
	vocab, err := wordsOf(*words)
	if err != nil {
		fail(err)
	}
	src, err := firstSource(ep)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()

	if *only != "fair" {
		globs(ctx, ep, *globCalls)
	}
	if *only == "glob" {
		return
	}
	heavy := heavyRequest(vocab, src)
	if *only == "" {
		d, st, err := search(ctx, ep.URL, ep.Token, heavy(0))
		if err != nil || st != 200 {
			fail(fmt.Errorf("the heaviest request: HTTP %d %v", st, err))
		}
		fmt.Printf("heaviest accepted request alone (cold): %s\n", ms(d))
	}
	fair(ctx, ep, tokensFor(ep), heavy, qs, *heavyN, *fifthN, *offset)
	if *only == "" {
		cancels(ep, heavy)
	}
}

// globs sends the nested-brace glob alone and 64 copies of it in one
// request, calls times each.
func globs(ctx context.Context, ep endpoint, calls int) {
	nested := strings.Repeat("{", 250) + "a" + strings.Repeat(",b}", 250)
	copies := make([]string, 64)
	for i := range copies {
		copies[i] = strings.Repeat("{", 250) + fmt.Sprintf("%02d", i) + strings.Repeat(",b}", 250)
	}
	for _, c := range []struct {
		name  string
		globs []string
	}{{"nested glob", []string{nested}}, {"64 nested globs", copies}} {
		var lat []time.Duration
		status := 0
		for range calls {
			d, st, err := search(ctx, ep.URL, ep.Token, map[string]any{"question": "goroutine scheduler", "filters": map[string]any{"paths": c.globs}})
			if err != nil {
				fail(err)
			}
			lat, status = append(lat, d), st
		}
		fmt.Printf("glob: %-16s HTTP %d, %d calls: p50 %s, max %s\n", c.name, status, calls, ms(pct(lat, 50)), ms(pct(lat, 100)))
	}
}

// tokensFor creates the five read tokens of the fair part.
func tokensFor(ep endpoint) []string {
	var tokens []string
	for i := range 5 {
		tok, err := createToken(ep, fmt.Sprintf("bounded-%d", i))
		if err != nil {
			fail(err)
		}
		tokens = append(tokens, tok)
	}
	return tokens
}

// fair has heavyN clients loop on the heaviest request while a fifth asks
// fifthN distinct questions from qs[offset:], one after another.
func fair(ctx context.Context, ep endpoint, tokens []string, heavy func(int) map[string]any, qs []string, heavyN, fifthN, offset int) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var heavyMu sync.Mutex
	var heavyLat []time.Duration
	for i := range heavyN {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				d, st, err := search(ctx, ep.URL, tokens[i], heavy(i*1_000_000+n))
				if err != nil || st != 200 {
					fmt.Fprintf(os.Stderr, "heavy client %d: HTTP %d %v\n", i, st, err)
					return
				}
				heavyMu.Lock()
				heavyLat = append(heavyLat, d)
				heavyMu.Unlock()
			}
		}()
	}
	if heavyN > 0 {
		time.Sleep(2 * time.Second) // the heavy clients are under way
	}
	var fifth []time.Duration
	for i := range fifthN {
		d, st, err := search(ctx, ep.URL, tokens[4], map[string]any{"question": qs[(offset+i)%len(qs)], "budget": map[string]any{"max_tokens": 1000}})
		if err != nil || st != 200 {
			fail(fmt.Errorf("fifth client: HTTP %d %v", st, err))
		}
		fifth = append(fifth, d)
	}
	close(stop)
	wg.Wait()
	fmt.Printf("fair: fifth client beside %d heavy, %d distinct questions: p50 %s, p90 %s, p99 %s, max %s\n",
		heavyN, len(fifth), ms(pct(fifth, 50)), ms(pct(fifth, 90)), ms(pct(fifth, 99)), ms(pct(fifth, 100)))
	if heavyN > 0 {
		fmt.Printf("fair: %d heavy clients, %d requests: p50 %s, p99 %s\n", heavyN, len(heavyLat), ms(pct(heavyLat, 50)), ms(pct(heavyLat, 99)))
	}
}

// cancels starts ten heavy searches and cancels each: how long the
// owner's CPU goes on.
func cancels(ep endpoint, heavy func(int) map[string]any) {
	var freed []time.Duration
	for i := range 10 {
		f, err := cancelOnce(ep, heavy(9_000_000+i))
		if err != nil {
			fail(err)
		}
		freed = append(freed, f)
	}
	fmt.Printf("cancel: CPU freed after the client cancelled, 10 heavy searches: p50 %s, max %s\n", ms(pct(freed, 50)), ms(pct(freed, 100)))
}

// heavyRequest returns the heaviest request the limits accept, made new
// by n (so that no answer comes from the cache): 64 globs, each 1,024
// bytes with braces 4 deep and 15 wildcards, none with a literal prefix,
// 64 brace-free patterns in all (the request's limit), each matching the
// Go files under some folder (a class of 900 'o's pads it); a 1,000-word
// question; every filter.
func heavyRequest(vocab []string, source string) func(n int) map[string]any {
	globs := make([]string, 64)
	for i := range globs {
		head := fmt.Sprintf("**/{{{{*%s*}}}}/**/?*?*?*?*.g[", bigram(i))
		globs[i] = head + strings.Repeat("o", 1024-len(head)-1) + "]"
	}
	run := strconv.FormatInt(time.Now().UnixNano(), 36) // new at every run
	return func(n int) map[string]any {
		q := make([]string, 0, 1000)
		for k := range 999 {
			q = append(q, vocab[(n*7919+k*104729)%len(vocab)])
		}
		q = append(q, "w"+run+"x"+strconv.Itoa(n))
		return map[string]any{
			"question": strings.Join(q, " "),
			"filters": map[string]any{
				"collections": []string{"default"},
				"sources":     []string{source},
				"kinds":       []string{"code", "markdown", "text"},
				"languages":   []string{"go", "c", "shell"},
				"paths":       globs,
				"facets":      map[string]string{"is_test": "false", "generated": "false"},
			},
			// The echo of 64 KB of globs and the question alone is
			// about 30,000 tokens.
			"budget": map[string]any{"max_tokens": 100000},
		}
	}
}

func bigram(i int) string {
	const letters = "etaoinsrhldcum"
	return string([]byte{letters[i%len(letters)], letters[(i/len(letters))%len(letters)]})
}

// cancelOnce starts a heavy search, closes its connection after 100 ms,
// and returns how long the owner's CPU time went on growing after that:
// the first moment after which it grew by less than 1 ms in 20 ms.
func cancelOnce(ep endpoint, req map[string]any) (time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		search(ctx, ep.URL, ep.Token, req)
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	at := time.Now()
	<-done
	type sample struct {
		t   time.Time
		cpu time.Duration
	}
	var ss []sample
	for time.Since(at) < 2*time.Second {
		c, err := cpuOf(ep.PID)
		if err != nil {
			return 0, err
		}
		ss = append(ss, sample{time.Now(), c})
		// Quiet for the last 20 ms?
		for k := len(ss) - 1; k >= 0; k-- {
			if ss[len(ss)-1].t.Sub(ss[k].t) >= 20*time.Millisecond {
				if ss[len(ss)-1].cpu-ss[k].cpu < time.Millisecond {
					return ss[k].t.Sub(at), nil
				}
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, errors.New("cancel: the owner's CPU never went quiet in 2 s")
}

// cpuOf sums the time on CPU of every thread of pid (schedstat, in ns).
func cpuOf(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("schedstat of %d: %v", pid, err)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(n)
		}
	}
	return sum, nil
}

func search(ctx context.Context, url, token string, req map[string]any) (time.Duration, int, error) {
	body, _ := json.Marshal(map[string]any{"request": req})
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/search", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	hr.Header.Set("Authorization", "Bearer "+token)
	hr.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return 0, 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start), resp.StatusCode, err
}

func createToken(ep endpoint, name string) (string, error) {
	body, _ := json.Marshal(map[string]any{"grant": "read", "name": name})
	hr, _ := http.NewRequest(http.MethodPost, ep.URL+"/v1/tokens", bytes.NewReader(body))
	hr.Header.Set("Authorization", "Bearer "+ep.Token)
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		return "", fmt.Errorf("create token: HTTP %d %v", resp.StatusCode, err)
	}
	return out.Token, nil
}

func firstSource(ep endpoint) (string, error) {
	body := []byte(`{"request":{"subject":"sources"}}`)
	hr, _ := http.NewRequest(http.MethodPost, ep.URL+"/v1/discover", bytes.NewReader(body))
	hr.Header.Set("Authorization", "Bearer "+ep.Token)
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Items) == 0 {
		return "", fmt.Errorf("discover sources: %v", err)
	}
	return out.Items[0].ID, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// wordsOf returns the distinct alphabetic words of a file.
func wordsOf(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(string(b), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) {
		if len(w) > 2 && len(w) <= 6 && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	if len(out) < 100 {
		return nil, fmt.Errorf("%s: too few words", path)
	}
	return out, nil
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bounded:", err)
	os.Exit(1)
}
