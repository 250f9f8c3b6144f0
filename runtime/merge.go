package runtime

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tychora/tychora/sources"
)

// merger runs the index merge (sources.Indexer.Optimize) once no sync job
// runs, after a job applied a revision (docs/ingest.md, "Merging the
// index"). The revision is searchable when it commits: a job, and whoever
// waits for it, is done then, not after a merge that only makes searches
// faster. A job that starts stops a merge in progress (it rolls back, and
// the next idle moment tries again), so that a merge never holds the
// index's one writer while a sync waits for it.
type merger struct {
	ix  func() *sources.Indexer
	log *slog.Logger

	mu      sync.Mutex
	running int  // sync jobs running
	dirty   bool // a revision was applied since the last merge began
	closed  bool
	cancel  context.CancelFunc // of the merge in progress, nil when none
	done    chan struct{}
}

// begin tells m that a job starts: a merge in progress stops (and has
// rolled back when begin returns).
func (m *merger) begin() {
	m.mu.Lock()
	m.running++
	cancel, done := m.cancel, m.done
	m.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// end tells m that a job ended, and whether it applied a revision; the
// last job to end starts a merge when one may be due.
func (m *merger) end(applied bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running--
	m.dirty = m.dirty || applied
	if m.running > 0 || !m.dirty || m.closed || m.cancel != nil {
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
			m.dirty = true // stopped by a job, or failed: the next idle moment tries again
		}
		m.mu.Unlock()
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && m.log != nil:
			m.log.Warn("index merge did not complete", "err", err)
		case ran && m.log != nil:
			m.log.Info("index merged", "ms", time.Since(start).Milliseconds())
		}
	}()
}

// close stops a merge in progress and starts no other.
func (m *merger) close() {
	m.mu.Lock()
	m.closed = true
	cancel, done := m.cancel, m.done
	m.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
