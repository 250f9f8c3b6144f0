package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// TestSettingsReload: a change to tychora.json reaches the running owner:
// collections, ingest roots, default excludes and watch at once; listen
// is named as waiting for a restart; a file that does not load changes
// nothing and says why.
func TestSettingsReload(t *testing.T) {
	e := newWatchEnv(t, Options{}, map[string]string{"a.md": "# A\n", "node_modules/dep/x.md": "# Dependency\n"})
	ctx := OwnerContext(context.Background())
	l := e.own.Layout()
	edit := func(change func(*workspace.Settings)) {
		t.Helper()
		s, err := workspace.LoadSettings(l)
		if err != nil {
			t.Fatal(err)
		}
		change(&s)
		if err := workspace.SaveSettings(l, s); err != nil {
			t.Fatal(err)
		}
	}
	e.settles("the first sync", "node_modules")

	// A new collection and a new ingest root.
	extraRoot := filepath.Join(t.TempDir(), "elsewhere")
	writeFile(t, filepath.Join(extraRoot, "far.md"), "# Far\n")
	add := func() error {
		_, err := e.own.Service().AddSources(ctx, interfaces.AddSourcesRequest{Action: "add",
			Source: &interfaces.SourceInput{Path: extraRoot, CollectionID: "extra"}})
		return err
	}
	if err := add(); workspace.ErrorCode(err) != workspace.CodeNotFound && workspace.ErrorCode(err) != workspace.CodeOutOfRoots {
		t.Fatalf("add before the reload: %v", err)
	}
	edit(func(s *workspace.Settings) {
		s.Collections = append(s.Collections, "extra")
		s.IngestRoots = append(s.IngestRoots, filepath.Dir(extraRoot))
	})
	e.eventually("the new collection and root", func() string {
		if err := add(); err != nil {
			return err.Error()
		}
		return ""
	})

	// Default excludes: the list emptied, node_modules is indexed now.
	edit(func(s *workspace.Settings) { s.DefaultExcludes = []string{".git"} })
	e.settles("node_modules indexed after the excludes changed")

	// Watch off: nothing is watched; on again: watched.
	edit(func(s *workspace.Settings) { off := false; s.Watch = &off })
	e.eventually("watching off", func() string {
		st, err := e.own.Service().Status(ctx)
		if err != nil || st.Watch == nil || st.Watch.Enabled {
			return fmt.Sprintf("%v %+v", err, st.Watch)
		}
		return ""
	})
	edit(func(s *workspace.Settings) { on := true; s.Watch = &on })
	e.eventually("watching on", func() string {
		if w := e.own.watch(); w == nil {
			return "no watcher"
		} else if st, ok := w.State(e.src); !ok || st.Mode != sources.WatchWatching {
			return fmt.Sprintf("%+v", st)
		}
		return ""
	})
	writeFile(t, filepath.Join(e.root, "after.md"), "# After\n")
	e.settles("a change after watching came back")

	// listen only applies at a restart: status names it.
	edit(func(s *workspace.Settings) { s.Listen = "127.0.0.1:1" })
	e.eventually("restart needed", func() string {
		st, err := e.own.Service().Status(ctx)
		if err != nil || st.Settings == nil || !slices.Contains(st.Settings.RestartNeeded, "listen") || st.Settings.ReloadedAt == nil {
			return fmt.Sprintf("%v %+v", err, st.Settings)
		}
		return ""
	})
	if got := e.own.Settings().Listen; got == "127.0.0.1:1" {
		t.Fatal("listen changed in force without a restart")
	}

	// A file that does not load: the settings in force stay, status says why.
	if err := os.WriteFile(l.Settings, []byte(`{"colour":"blue"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.eventually("the refusal", func() string {
		st, err := e.own.Service().Status(ctx)
		if err != nil || st.Settings == nil || !strings.Contains(st.Settings.Error, "colour") {
			return fmt.Sprintf("%v %+v", err, st.Settings)
		}
		return ""
	})
	if !e.own.hasCollection("extra") {
		t.Fatal("a refused file changed the settings in force")
	}
}
