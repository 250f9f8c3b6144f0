package render

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestFitMemo: a shared Memo never changes an answer. The same results are
// fitted again and again with a new run id each time, as the search cache
// does, by several goroutines at once, through a roomy memo and through one
// so small that its generations turn over all the time; every answer must
// be byte for byte the answer of a fit without a memo.
func TestFitMemo(t *testing.T) {
	cases := 4
	if testing.Short() || raceEnabled {
		cases = 2
	}
	r := rand.New(rand.NewPCG(11, 12))
	type job struct {
		in   FitInput
		want *FitOutput
	}
	var jobs []job
	ctx := context.Background()
	for c := range cases {
		res := genResult(r)
		for fi, f := range formats {
			in := FitInput{Result: res, Counter: []string{"o200k_base", "cl100k_base"}[(c+fi)%2], Format: f}
			for range 3 {
				in.Result.RunID = fmt.Sprintf("run_%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<16), r.IntN(1<<16), r.Uint64()>>16)
				least := minimum(t, in)
				for _, m := range []int{least, least + 40, least + 400, 1000, 4000} {
					if m < least {
						continue
					}
					in.MaxTokens = m
					want, err := Fit(ctx, in)
					if err != nil {
						t.Fatalf("case %d %s %d: %v", c, f, m, err)
					}
					jobs = append(jobs, job{in, want})
				}
			}
		}
	}
	for _, limit := range []int{64 << 20, 2 << 10} {
		memo := NewMemo(limit)
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each goroutine fits every job once, from its own place in
				// the list, so that the memo serves fits of other goroutines.
				for i := range jobs {
					j := jobs[(i+g*len(jobs)/3)%len(jobs)]
					in := j.in
					in.Memo = memo
					got, err := Fit(ctx, in)
					if err != nil {
						errs <- err
						return
					}
					if !bytes.Equal(got.Structured, j.want.Structured) || got.Rendered != j.want.Rendered {
						errs <- fmt.Errorf("memo limit %d: %s %s budget %d: the answer differs from the one without a memo:\n%s\n%s",
							limit, in.Counter, in.Format, in.MaxTokens, got.Structured, j.want.Structured)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

// TestHeadSegs: the head is cut after the run id only where counting by
// parts stays exact.
func TestHeadSegs(t *testing.T) {
	for _, head := range []string{
		`{"run_id":"run_0f3a9c2e-11aa-4bb0-9c1d-2e3f4a5b6c7d","request":{"question":"q"},"hits":[{"`,
		`{"run_id":"run_1","request":{},"hits":[{"`,
		`{"run_id":"","hits":[{"`,
		`{"request":{},"hits":[{"`,
		`{"run_id":"x`,
	} {
		segs := headSegs(head)
		joined := ""
		for _, s := range segs {
			joined += s
		}
		if joined != head {
			t.Fatalf("headSegs(%q) = %q", head, segs)
		}
		for _, counter := range []string{"o200k_base", "cl100k_base"} {
			c, _ := CounterFor(counter)
			if got, want := newTally(c).sum(segs), refCount(t, counter, head); got != want {
				t.Fatalf("%s: %q counts %d by parts, %d whole", counter, head, got, want)
			}
		}
	}
	if segs := headSegs(`{"run_id":"run_1","request":{}`); len(segs) != 2 || segs[0] != `{"run_id":"run_1` {
		t.Fatalf("the run id is not cut off: %q", segs)
	}
}
