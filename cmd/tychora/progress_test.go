package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tychora/tychora/jobs"
)

// TestProgressLine: the line counts files as they are read, and says the
// index is being written once every file is read and the job still runs.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &progressLine{w: &buf, on: true, started: time.Now()}
	j := jobs.Job{State: jobs.StateRunning, Progress: jobs.Progress{FilesSeen: 10, Indexed: 4, Unchanged: 2, Skipped: 1}}
	p.update(j)
	if got := buf.String(); !strings.Contains(got, "running") || !strings.Contains(got, "7/10 files") {
		t.Errorf("reading: %q", got)
	}
	buf.Reset()
	j.Progress.Indexed = 7
	p.update(j)
	if got := buf.String(); !strings.Contains(got, "writing the index") || !strings.Contains(got, "10/10 files") {
		t.Errorf("applying: %q", got)
	}
	buf.Reset()
	j.State = jobs.StateSucceeded
	p.update(j)
	if got := buf.String(); !strings.Contains(got, "succeeded") {
		t.Errorf("done: %q", got)
	}
	p.finish()
	// Off (not a terminal, or --json): nothing is drawn.
	buf.Reset()
	off := &progressLine{w: &buf}
	off.update(j)
	off.finish()
	if buf.Len() != 0 {
		t.Errorf("drawn while off: %q", buf.String())
	}
}

// slowNote prints its note once the time passed and the work goes on,
// never when the work ends first or when it is off.
func TestSlowNote(t *testing.T) {
	w := &signalWriter{wrote: make(chan struct{}, 1)}
	stop := slowNote(w, true, time.Millisecond, "building")
	select {
	case <-w.wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("no note from slow work")
	}
	stop()
	if got := w.String(); got != "building\n" {
		t.Errorf("slow work: %q, want the note once", got)
	}
	quiet := &signalWriter{wrote: make(chan struct{}, 1)}
	slowNote(quiet, true, time.Hour, "building")()
	slowNote(quiet, false, time.Nanosecond, "building")()
	if got := quiet.String(); got != "" {
		t.Errorf("quick or off: %q, want nothing", got)
	}
}

// signalWriter records what is written and signals each write.
type signalWriter struct {
	mu    sync.Mutex
	b     strings.Builder
	wrote chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
