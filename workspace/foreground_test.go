package workspace

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

func TestForegroundNil(t *testing.T) {
	var f *Foreground
	leave := f.Enter()
	leave()
	if err := f.Yield(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.Busy() != 0 {
		t.Fatal("a nil Foreground is busy")
	}
}

// TestForegroundYield: Yield waits while a request runs and returns as
// the last one leaves; a second leave of the same request changes
// nothing; an ended context ends the wait with its error.
func TestForegroundYield(t *testing.T) {
	f := &Foreground{wait: time.Hour}
	if err := f.Yield(context.Background()); err != nil {
		t.Fatalf("idle: %v", err)
	}
	a, b := f.Enter(), f.Enter()
	if n := f.Busy(); n != 2 {
		t.Fatalf("busy %d, want 2", n)
	}
	done := make(chan error)
	go func() { done <- f.Yield(context.Background()) }()
	for f.Waited() == 0 { // until the Yield waits
		runtime.Gosched()
	}
	a()
	a() // once only
	if n := f.Busy(); n != 1 {
		t.Fatalf("busy %d after one left (twice), want 1", n)
	}
	select {
	case err := <-done:
		t.Fatalf("Yield returned (%v) while a request still ran", err)
	default:
	}
	b()
	if err := <-done; err != nil {
		t.Fatalf("Yield: %v", err)
	}
	if n := f.Waited(); n != 1 {
		t.Errorf("Waited %d, want 1 (the first Yield found no request)", n)
	}
	leave := f.Enter()
	defer leave()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- f.Yield(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Yield with an ended context: %v", err)
	}
}

// TestForegroundYieldBounded: however long the requests run, Yield
// returns after YieldWait: background work still advances.
func TestForegroundYieldBounded(t *testing.T) {
	var f Foreground
	leave := f.Enter()
	defer leave()
	start := time.Now()
	if err := f.Yield(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < YieldWait {
		t.Fatalf("Yield returned after %v while busy, before YieldWait", d)
	}
}

// TestSQLYield: a statement through tychora_yield(key) calls the
// registered function every so many rows; its error fails the statement
// and is kept; an unregistered key yields nothing.
func TestSQLYield(t *testing.T) {
	db, err := OpenDB(context.Background(), t.TempDir()+"/index.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const rows = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) SELECT count(*) FROM n WHERE tychora_yield(?)`
	calls := 0
	key, done := SQLYield(context.Background(), 7, func(ctx context.Context) error {
		calls++
		return ctx.Err()
	})
	var n int
	if err := db.W.QueryRow(rows, key).Scan(&n); err != nil || n != 100 {
		t.Fatalf("count %d, %v", n, err)
	}
	if calls != 100/7 {
		t.Errorf("%d calls over 100 rows, every 7, want %d", calls, 100/7)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	// Unregistered now: no more calls.
	if err := db.W.QueryRow(rows, key).Scan(&n); err != nil || n != 100 || calls != 100/7 {
		t.Fatalf("after done: count %d, %d calls, %v", n, calls, err)
	}
	errStop := errors.New("stop")
	key, done = SQLYield(context.Background(), 10, func(context.Context) error { return errStop })
	if err := db.W.QueryRow(rows, key).Scan(&n); err == nil {
		t.Fatal("a failing yield did not fail the statement")
	}
	if err := done(); !errors.Is(err, errStop) {
		t.Fatalf("done: %v, want the yield's error", err)
	}
}
