package sources

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWatchRetriesFailedSyncs: the changes a failed sync took are asked
// for again, later after each failure in a row; a cancelled sync's
// changes wait for the next change; a success ends the backoff.
func TestWatchRetriesFailedSyncs(t *testing.T) {
	env := newRetryEnv(t, "src_retry", 200*time.Millisecond, 2*time.Second)
	w, src, dir, next, none, write := env.w, env.src, env.dir, env.next, env.none, env.write

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

// TestWatchWaitsForGit: while git holds a repository's index lock (a
// checkout writing the work tree) its changes are not asked for; when
// it lets the lock go they are, at once and together; a lock left
// behind holds them back no longer than GitWait. A real checkout of
// another branch is then one request.
func TestWatchWaitsForGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%02d.txt", i)), []byte("one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "one")
	git(t, repo, "checkout", "-q", "-b", "other")
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%02d.txt", i)), []byte("two\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "commit", "-q", "-am", "two")
	git(t, repo, "checkout", "-q", "main")

	asked := make(chan []string, 64)
	w := NewWatcher(WatchOptions{
		// The default debounce: git moves HEAD only after it lets the
		// index lock go, and on a loaded machine (the race tests of
		// every package at once) that took more than 10 ms, so a
		// checkout's files were asked for before its HEAD move.
		Debounce: 100 * time.Millisecond,
		MaxDelay: 20 * time.Millisecond,
		GitWait:  time.Second,
		Changed: func(_ string, paths []string) (bool, error) {
			asked <- paths
			return false, nil
		},
	})
	defer w.Close()
	src := Source{ID: "src_git", Kind: KindRepository, Path: repo, CollectionID: "default", Watch: true}
	w.Watch(src, []string{repo})
	next := func(what string) ([]string, time.Time) {
		t.Helper()
		select {
		case p := <-asked:
			return p, time.Now()
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no sync asked for", what)
		}
		return nil, time.Time{}
	}
	lock := filepath.Join(repo, ".git", "index.lock")

	// The lock held, files written: nothing is asked for while it is
	// held (well past MaxDelay), then both files at once.
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(repo, n), []byte("new\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case p := <-asked:
		t.Fatalf("a sync of %v was asked for while git held the index lock", p)
	case <-time.After(300 * time.Millisecond):
	}
	released := time.Now()
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	p, at := next("the lock let go")
	if !slices.Equal(p, []string{"a.txt", "b.txt"}) {
		t.Fatalf("asked for %v, want [a.txt b.txt]", p)
	}
	if d := at.Sub(released); d > 500*time.Millisecond {
		t.Fatalf("asked %v after the lock went, want about the debounce", d)
	}
	synced := func() {
		w.BeginSync(src.ID)
		w.EndSync(src.ID, SyncDone, nil)
	}
	synced()

	// A lock left behind: the change is asked for after GitWait.
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	if err := os.WriteFile(filepath.Join(repo, "c.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, at = next("a lock left behind")
	if !slices.Equal(p, []string{"c.txt"}) || at.Sub(written) < 900*time.Millisecond {
		t.Fatalf("asked for %v after %v, want [c.txt] after GitWait", p, at.Sub(written))
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	synced()
	// Git's own checkout of the other branch: the 20 files and the HEAD
	// move are one request (a whole sync: HEAD moved).
	for len(asked) > 0 {
		<-asked
	}
	git(t, repo, "checkout", "-q", "other")
	if p, _ = next("a checkout"); p != nil {
		t.Fatalf("a checkout asked for %v, want a sync of the whole source", p)
	}
	select {
	case p := <-asked:
		t.Fatalf("a second sync of %v was asked for after the checkout", p)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestWatchRefusedSyncWaitsForAChange: a sync refused for good (its
// source outside the ingest roots) is not asked for again on a timer, as
// a failed one is: its changes wait for the next change, which is asked
// for at once with them.
func TestWatchRefusedSyncWaitsForAChange(t *testing.T) {
	env := newRetryEnv(t, "src_refused", 50*time.Millisecond, 100*time.Millisecond)
	w, src := env.w, env.src
	env.write("a.txt")
	env.next("a write")
	w.BeginSync(src.ID)
	w.EndSync(src.ID, SyncRefused, nil)
	// A failed sync would be asked for again within RetryMin (50 ms) and
	// then every RetryMax (100 ms).
	env.none("after a refusal", 500*time.Millisecond)
	if st, _ := w.State(src.ID); st.PendingChanges != 1 {
		t.Fatalf("after a refusal %d changes pending, want 1", st.PendingChanges)
	}
	env.write("b.txt")
	if p, _ := env.next("a change after a refusal"); !slices.Equal(p, []string{"a.txt", "b.txt"}) {
		t.Fatalf("asked for %v, want [a.txt b.txt]", p)
	}
}

// retryEnv is a watched folder whose syncs are only asked for (the test
// begins and ends them), with the retry bounds a test gives.
type retryEnv struct {
	t     *testing.T
	dir   string
	w     *Watcher
	src   Source
	asked chan []string
}

func newRetryEnv(t *testing.T, id string, retryMin, retryMax time.Duration) *retryEnv {
	env := &retryEnv{t: t, dir: t.TempDir(), asked: make(chan []string, 16)}
	env.w = NewWatcher(WatchOptions{
		Debounce: 10 * time.Millisecond,
		RetryMin: retryMin,
		RetryMax: retryMax,
		Changed: func(_ string, paths []string) (bool, error) {
			env.asked <- paths
			return false, nil
		},
	})
	t.Cleanup(env.w.Close)
	env.src = Source{ID: id, Kind: KindFolder, Path: env.dir, CollectionID: "default", Watch: true}
	env.w.Watch(env.src, []string{env.dir})
	return env
}

// next waits for the next sync asked for: its paths, and how long it took.
func (env *retryEnv) next(what string) ([]string, time.Duration) {
	env.t.Helper()
	start := time.Now()
	select {
	case p := <-env.asked:
		return p, time.Since(start)
	case <-time.After(10 * time.Second):
		env.t.Fatalf("%s: no sync asked for", what)
	}
	return nil, 0
}

// none fails if a sync is asked for within d.
func (env *retryEnv) none(what string, d time.Duration) {
	env.t.Helper()
	select {
	case p := <-env.asked:
		env.t.Fatalf("%s: a sync of %v was asked for", what, p)
	case <-time.After(d):
	}
}

// write writes a file into the folder.
func (env *retryEnv) write(name string) {
	env.t.Helper()
	if err := os.WriteFile(filepath.Join(env.dir, name), []byte("words "+name), 0o644); err != nil {
		env.t.Fatal(err)
	}
}
