package sources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWatchViewOf: how a source is watched follows the setting, the
// process's watcher, the source's own opt-out, the watcher's state and
// whether the first watches are set up, in that order.
func TestWatchViewOf(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.md")
	if err := os.WriteFile(file, []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(WatchOptions{})
	t.Cleanup(w.Close)
	watched := Source{ID: "src_watched", Path: file, Kind: KindFile, Watch: true}
	w.Watch(watched, nil)
	other := Source{ID: "src_other", Path: file, Kind: KindFile, Watch: true}
	optedOut := Source{ID: "src_opted_out", Path: file, Kind: KindFile, Watch: false}

	for _, tc := range []struct {
		name   string
		view   WatchView
		src    Source
		mode   string
		reason string
	}{
		{"the setting off", WatchView{Enabled: false, Watcher: w, Ready: true}, watched, WatchOff, "watch is false"},
		{"no watcher", WatchView{Enabled: true, Ready: true}, watched, WatchOff, "for one command"},
		{"opted out", WatchView{Enabled: true, Watcher: w, Ready: true}, optedOut, WatchOff, "opted out"},
		{"watched", WatchView{Enabled: true, Watcher: w, Ready: true}, watched, WatchWatching, ""},
		{"watched before the set-up ends", WatchView{Enabled: true, Watcher: w}, watched, WatchWatching, ""},
		{"not watched during the set-up", WatchView{Enabled: true, Watcher: w}, other, WatchOff, "setting up its watches"},
		{"not watched after it", WatchView{Enabled: true, Watcher: w, Ready: true}, other, WatchOff, "from its first sync on"},
	} {
		st := tc.view.Of(tc.src)
		if st.Mode != tc.mode || !strings.Contains(st.Reason, tc.reason) || (tc.reason == "" && st.Reason != "") {
			t.Errorf("%s: %+v, want mode %s, reason with %q", tc.name, st, tc.mode, tc.reason)
		}
	}
}
