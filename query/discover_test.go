package query

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// TestDiscoverSettingsDefaultExcludes: discover settings lists the
// effective default excludes, the built-in list or tychora.json's, and
// inspect coverage names each directory they leave out with its reason.
func TestDiscoverSettingsDefaultExcludes(t *testing.T) {
	ctx := context.Background()
	env := newSearchEnv(t)
	env.write("p/main.js", "mainword\n")
	env.write("p/node_modules/dep/index.js", "depword\n")
	env.write("p/target/release.txt", "targetword\n")
	wsDir := filepath.Join(t.TempDir(), ".tychora")
	l := workspace.NewLayout(wsDir)
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		body    string
		want    []string
		skipped []string // directories coverage names
	}{
		{`{}`, workspace.DefaultExcludes(), []string{"node_modules/"}},
		{`{"default_excludes":["target"]}`, []string{".git", "target"}, []string{"target/"}},
	} {
		if err := os.WriteFile(l.Settings, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := workspace.LoadSettings(l)
		if err != nil {
			t.Fatal(err)
		}
		d := &Discoverer{DB: env.db, Cursors: env.engine.Cursors}
		page, err := d.Discover(ctx, env.all, DiscoverState{Settings: s}, SubjectSettings, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range page.Items {
			if si := it.(SettingItem); si.Key == "default_excludes" {
				got = si.Value.([]string)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: discover settings lists default_excludes %v, want %v", c.body, got, c.want)
		}

		policy, err := sources.NewPolicy([]string{env.root}, filepath.Join(filepath.Dir(env.root), "ws"))
		if err != nil {
			t.Fatal(err)
		}
		ix := sources.NewIndexer(env.db, policy, sources.NewAssets(t.TempDir()), sources.Options{TempDir: t.TempDir(), DefaultExcludes: s.DefaultExcludes})
		src, _, err := ix.Add(ctx, sources.SourceInput{Path: filepath.Join(env.root, "p")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(ctx, src.ID, sources.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		in := &Inspector{DB: env.db, Cursors: env.engine.Cursors}
		res, err := in.Inspect(ctx, env.all, InspectRequest{Subject: InspectCoverage, SourceID: src.ID}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var skipped []string
		for _, it := range res.(Page[CoverageItem]).Items {
			if it.Status == "skipped" {
				if it.Reason == nil || *it.Reason != sources.SkipDefault {
					t.Errorf("%s: %s skipped for %v", c.body, it.Path, it.Reason)
				}
				skipped = append(skipped, it.Path)
			}
		}
		if !slices.Equal(skipped, c.skipped) {
			t.Errorf("%s: coverage skips %v, want %v", c.body, skipped, c.skipped)
		}
	}
}
