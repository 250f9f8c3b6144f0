package main

import (
	"bytes"
	"strings"
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
