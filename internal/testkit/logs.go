package testkit

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// Logs is a slog.Handler that keeps every record, for tests that check
// what was logged. Its zero value is ready; use it as slog.New(&logs).
type Logs struct {
	mu     sync.Mutex
	recs   []slog.Record
	logged chan struct{} // closed and replaced at each record
}

func (l *Logs) Enabled(context.Context, slog.Level) bool { return true }

func (l *Logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	if l.logged != nil {
		close(l.logged)
		l.logged = nil
	}
	return nil
}

func (l *Logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *Logs) WithGroup(string) slog.Handler      { return l }

// Records are the records kept so far.
func (l *Logs) Records() []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// At lists "LEVEL message" of each record logged at level or above.
func (l *Logs) At(level slog.Level) []string {
	var out []string
	for _, r := range l.Records() {
		if r.Level >= level {
			out = append(out, r.Level.String()+" "+r.Message)
		}
	}
	return out
}

// Count is the number of records with msg.
func (l *Logs) Count(msg string) int {
	n := 0
	for _, r := range l.Records() {
		if r.Message == msg {
			n++
		}
	}
	return n
}

// WaitFor waits (10 s at most) until a record with msg is logged, woken
// by each record rather than polling.
func (l *Logs) WaitFor(t testing.TB, msg string) slog.Record {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		i := slices.IndexFunc(l.recs, func(r slog.Record) bool { return r.Message == msg })
		if i >= 0 {
			r := l.recs[i]
			l.mu.Unlock()
			return r
		}
		if l.logged == nil {
			l.logged = make(chan struct{})
		}
		logged := l.logged
		l.mu.Unlock()
		select {
		case <-logged:
		case <-timeout:
			t.Fatalf("never logged %q; logged %q", msg, l.At(slog.LevelDebug))
			return slog.Record{}
		}
	}
}

// Attr is the value of the record's attribute key, and whether it has one.
func Attr(r slog.Record, key string) (slog.Value, bool) {
	var v slog.Value
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v, found = a.Value, true
			return false
		}
		return true
	})
	return v, found
}
