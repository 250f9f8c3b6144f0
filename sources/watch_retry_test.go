package sources

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWatchRetriesFailedSyncs: the changes a failed sync took are asked
// for again, later after each failure in a row; a cancelled sync's
// changes wait for the next change; a success ends the backoff.
func TestWatchRetriesFailedSyncs(t *testing.T) {
	dir := t.TempDir()
	asked := make(chan []string, 16)
	w := NewWatcher(WatchOptions{
		Debounce: 10 * time.Millisecond,
		RetryMin: 200 * time.Millisecond,
		RetryMax: 2 * time.Second,
		Changed: func(_ string, paths []string) (bool, error) {
			asked <- paths
			return false, nil
		},
	})
	defer w.Close()
	src := Source{ID: "src_retry", Kind: KindFolder, Path: dir, CollectionID: "default", Watch: true}
	w.Watch(src, []string{dir})

	next := func(what string) ([]string, time.Duration) {
		t.Helper()
		start := time.Now()
		select {
		case p := <-asked:
			return p, time.Since(start)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no sync asked for", what)
		}
		return nil, 0
	}
	none := func(what string, d time.Duration) {
		t.Helper()
		select {
		case p := <-asked:
			t.Fatalf("%s: a sync of %v was asked for", what, p)
		case <-time.After(d):
		}
	}
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("words "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	write("a.txt")
	if p, _ := next("a write"); !slices.Equal(p, []string{"a.txt"}) {
		t.Fatalf("asked for %v, want [a.txt]", p)
	}
	// The sync fails: the same change is asked for again, after RetryMin.
	if p, _ := w.BeginSync(src.ID); !slices.Equal(p, []string{"a.txt"}) {
		t.Fatalf("the sync took %v", p)
	}
	w.EndSync(src.ID, SyncFailed, nil)
	if st, _ := w.State(src.ID); st.PendingChanges != 1 {
		t.Fatalf("after a failure %d changes pending, want 1", st.PendingChanges)
	}
	p, waited := next("after a failed sync")
	if !slices.Equal(p, []string{"a.txt"}) || waited < 190*time.Millisecond {
		t.Fatalf("asked for %v after %v, want [a.txt] after RetryMin", p, waited)
	}
	// It fails again: the wait doubles, and a change meanwhile does not
	// cut it short.
	w.BeginSync(src.ID)
	w.EndSync(src.ID, SyncFailed, nil)
	write("b.txt")
	p, waited = next("after a second failure")
	if !slices.Equal(p, []string{"a.txt", "b.txt"}) || waited < 390*time.Millisecond {
		t.Fatalf("asked for %v after %v, want [a.txt b.txt] after twice RetryMin", p, waited)
	}
	// Cancelled: nothing is asked for until the next change, which is
	// asked for at once (no backoff), with the cancelled one.
	w.BeginSync(src.ID)
	w.EndSync(src.ID, SyncCancelled, nil)
	none("after a cancel", 500*time.Millisecond)
	write("c.txt")
	if p, _ = next("a change after a cancel"); !slices.Equal(p, []string{"a.txt", "b.txt", "c.txt"}) {
		t.Fatalf("asked for %v, want all three", p)
	}
	// A success ends the backoff: a failure after it waits RetryMin
	// again, not four times as long.
	w.BeginSync(src.ID)
	w.EndSync(src.ID, SyncDone, []string{dir})
	none("after a success", 100*time.Millisecond)
	write("d.txt")
	if p, _ = next("a change after a success"); !slices.Equal(p, []string{"d.txt"}) {
		t.Fatalf("asked for %v, want [d.txt]", p)
	}
	w.BeginSync(src.ID)
	w.EndSync(src.ID, SyncFailed, nil)
	if p, waited = next("a failure after a success"); !slices.Equal(p, []string{"d.txt"}) || waited < 190*time.Millisecond || waited > 600*time.Millisecond {
		t.Fatalf("asked for %v after %v, want [d.txt] after RetryMin (800ms had the failures not been reset)", p, waited)
	}
	if st, _ := w.State(src.ID); st.Mode != WatchWatching {
		t.Fatalf("mode %q", st.Mode)
	}
}

// TestWatchRetriesAFailedRequest: when no job could be queued for a
// change (Changed fails), the change stays pending and is asked for
// again after RetryMin, without another change.
func TestWatchRetriesAFailedRequest(t *testing.T) {
	dir := t.TempDir()
	type ask struct {
		paths []string
		at    time.Time
	}
	asked := make(chan ask, 16)
	fails := 1
	w := NewWatcher(WatchOptions{
		Debounce: 10 * time.Millisecond,
		RetryMin: 200 * time.Millisecond,
		Changed: func(_ string, paths []string) (bool, error) {
			asked <- ask{paths, time.Now()}
			if fails > 0 {
				fails--
				return false, errors.New("database or disk is full")
			}
			return false, nil
		},
	})
	defer w.Close()
	src := Source{ID: "src_request", Kind: KindFolder, Path: dir, CollectionID: "default", Watch: true}
	w.Watch(src, []string{dir})
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("words"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []ask
	for len(got) < 2 {
		select {
		case a := <-asked:
			got = append(got, a)
		case <-time.After(10 * time.Second):
			t.Fatalf("asked %d times, want a retry after the failed request", len(got))
		}
	}
	for _, a := range got {
		if !slices.Equal(a.paths, []string{"a.txt"}) {
			t.Fatalf("asked for %v, want [a.txt]", a.paths)
		}
	}
	if d := got[1].at.Sub(got[0].at); d < 190*time.Millisecond {
		t.Fatalf("asked again after %v, want RetryMin", d)
	}
	if st, _ := w.State(src.ID); st.PendingChanges != 1 {
		t.Fatalf("%d changes pending, want 1 (no sync ran)", st.PendingChanges)
	}
}
