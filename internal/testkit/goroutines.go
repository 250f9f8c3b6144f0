package testkit

import (
	"bytes"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Goroutines are the goroutines running at one moment, by id, each with
// its stack.
type Goroutines map[string]string

// RunningGoroutines takes the stacks of every goroutine running now.
func RunningGoroutines() Goroutines {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	gs := Goroutines{}
	for _, block := range bytes.Split(buf, []byte("\n\n")) {
		head, _, _ := bytes.Cut(block, []byte("\n"))
		// "goroutine 42 [select]:"
		f := strings.Fields(string(head))
		if len(f) >= 2 && f[0] == "goroutine" {
			gs[f[1]] = string(block)
		}
	}
	return gs
}

// StartedSince is the stacks of the goroutines running now that were not
// running at before, the test binary's own left out.
func StartedSince(before Goroutines) []string {
	var started []string
	for id, stack := range RunningGoroutines() {
		if _, ok := before[id]; !ok && !exempt(stack) {
			started = append(started, stack)
		}
	}
	return started
}

// NoGoroutinesLeft fails t when goroutines that were not running at
// before are still running once wait has passed (they get that long to
// exit: a goroutine told to stop is not gone at once). It names each one
// by its stack.
func NoGoroutinesLeft(t testing.TB, before Goroutines, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		left := StartedSince(before)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			slices.Sort(left)
			t.Fatalf("%d goroutines left running:\n\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exempt are goroutines of the test binary rather than of the code under
// test: the checking goroutine itself, and the testing package's.
func exempt(stack string) bool {
	return strings.Contains(stack, "testkit.RunningGoroutines") ||
		strings.Contains(stack, "testing.(*T).Run") || strings.Contains(stack, "testing.tRunner") ||
		strings.Contains(stack, "testing.runFuzzTests")
}
