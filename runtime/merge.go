package runtime

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// merger runs the index merge (sources.Indexer.Optimize) once sync jobs
// have stopped for mergeQuiet, after a job applied a revision
// (docs/ingest.md, "Maintenance"). The revision is searchable when it
// commits: a job, and whoever waits for it, is done then, not after a
// merge that only makes searches faster. The quiet time lets the syncs
// that come in a row (a checkout's, an agent's edits) run first; a job
// that starts during a merge reads and extracts meanwhile, and its write
// waits for the merge to commit (FTS5's merge is one step SQLite cannot
// interrupt, so stopping it would only throw its work away).
type merger struct {
	ix    func() *sources.Indexer
	log   *slog.Logger
	quiet time.Duration // how long no job runs before a merge (0: mergeQuiet)

	mu      sync.Mutex
	running int  // sync jobs running
	dirty   bool // a revision was applied since the last merge began
	closed  bool
	timer   *time.Timer        // armed while the quiet time runs
	cancel  context.CancelFunc // of the merge in progress, nil when none
	done    chan struct{}
}

// mergeQuiet is how long no sync job runs before the index is merged.
const mergeQuiet = 2 * time.Second

// begin tells m that a job starts: no merge starts while it runs.
func (m *merger) begin() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running++
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
}

// end tells m that a job ended, and whether it applied a revision; the
// last job to end arms the quiet time before a merge.
func (m *merger) end(applied bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running--
	m.dirty = m.dirty || applied
	if m.running > 0 || !m.dirty || m.closed {
		return
	}
	if m.timer != nil {
		m.timer.Stop()
	}
	quiet := m.quiet
	if quiet <= 0 {
		quiet = mergeQuiet
	}
	m.timer = time.AfterFunc(quiet, m.merge)
}

// merge starts the merge, unless a job runs, one is in progress, or m is
// closed.
func (m *merger) merge() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.timer = nil
	if m.running > 0 || m.closed || m.cancel != nil || !m.dirty {
		return
	}
	m.dirty = false
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	m.cancel, m.done = cancel, done
	ix := m.ix()
	go func() {
		defer close(done)
		start := time.Now()
		ran, err := ix.Optimize(ctx)
		m.mu.Lock()
		m.cancel, m.done = nil, nil
		if err != nil {
			m.dirty = true // the next quiet time tries again
		}
		m.mu.Unlock()
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && m.log != nil:
			m.log.Warn("index merge did not complete", workspace.LogErr, err)
		case ran && m.log != nil:
			m.log.Info("index merged", workspace.LogMS, time.Since(start).Milliseconds())
		}
	}()
}

// pending reports whether a merge is due (its quiet time runs, or a job
// that applied a revision still runs) or in progress.
func (m *merger) pending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cancel != nil || m.timer != nil || (m.dirty && m.running > 0)
}

// close stops a merge in progress (it rolls back: the count of changes
// stays for the next owner) and starts no other.
func (m *merger) close() {
	m.mu.Lock()
	m.closed = true
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	cancel, done := m.cancel, m.done
	m.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
