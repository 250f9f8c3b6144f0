package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tychora/tychora/jobs"
)

// progressLine draws a job's progress on one terminal line of stderr. It
// draws nothing when stderr is not a terminal or --json was asked for, so
// scripts see only the final JSON.
type progressLine struct {
	w       io.Writer
	on      bool
	frame   int
	started time.Time
	drawn   bool
}

func newProgress(e *env, asJSON bool) *progressLine {
	return &progressLine{w: e.stderr, on: !asJSON && isTerminal(e.stderr), started: time.Now()}
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// update redraws the line for j.
func (p *progressLine) update(j jobs.Job) {
	if !p.on {
		return
	}
	p.frame++
	pr := j.Progress
	done := pr.Indexed + pr.Unchanged + pr.Skipped
	bar := ""
	if pr.FilesSeen > 0 {
		const width = 24
		n := int(int64(width) * done / max(pr.FilesSeen, 1))
		n = min(n, width)
		bar = "[" + strings.Repeat("█", n) + strings.Repeat("░", width-n) + "] "
	}
	state := string(j.State)
	if j.State == jobs.StateRunning && pr.FilesSeen > 0 && done >= pr.FilesSeen {
		// Every file is read: the revision is being written (one
		// transaction; the counts do not move until it commits).
		state = "writing the index"
	}
	line := fmt.Sprintf("\r%s %s %s%d/%d files · %d indexed · %d unchanged · %d skipped · %s · %s",
		spinner[p.frame%len(spinner)], state, bar, done, pr.FilesSeen, pr.Indexed, pr.Unchanged, pr.Skipped,
		humanBytes(pr.Bytes), time.Since(p.started).Round(100*time.Millisecond))
	fmt.Fprint(p.w, line+"\x1b[K")
	p.drawn = true
}

// finish ends the line.
func (p *progressLine) finish() {
	if p.on && p.drawn {
		fmt.Fprintln(p.w)
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// slowSearchAfter is how long a search without an owner runs before
// slowNote says why.
const slowSearchAfter = time.Second

// slowNote prints note and a newline on w once after, unless stop (the
// function it returns) is called first; when on is false it does nothing.
// stop waits for a note being printed, so nothing follows the answer.
func slowNote(w io.Writer, on bool, after time.Duration, note string) (stop func()) {
	if !on {
		return func() {}
	}
	done := make(chan struct{})
	t := time.AfterFunc(after, func() {
		fmt.Fprintln(w, note)
		close(done)
	})
	return func() {
		if !t.Stop() {
			<-done
		}
	}
}
