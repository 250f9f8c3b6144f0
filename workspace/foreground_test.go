package workspace

import (
	"context"
	"errors"
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
