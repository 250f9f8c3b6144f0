package query

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzFileInRoot: a file named under a root is inside it (the root joined
// with the path is the file, and the path never climbs out), and a file
// source names only its own file.
func FuzzFileInRoot(f *testing.F) {
	for _, s := range [][2]string{{"/w/src", "/w/src/a/b.go"}, {"/w/src", "/w/srcx/a.go"}, {"/w/src", "/w/src"},
		{"/w/src", "/w/a.go"}, {"/", "/etc/passwd"}, {"/w/src", "/w/src/../src/a.go"}, {"/w/s rc", "/w/s rc/ä/..b"}} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, root, file string, fileSource bool) {
		if !filepath.IsAbs(root) || !filepath.IsAbs(file) {
			return
		}
		root, file = filepath.Clean(root), filepath.Clean(file)
		rel, ok := fileInRoot(fileSource, root, file)
		if !ok {
			if fileSource && file == root {
				t.Fatalf("the file source %q does not name its own file", root)
			}
			return
		}
		if fileSource {
			if file != root || rel != "" {
				t.Fatalf("file source %q names %q as %q", root, file, rel)
			}
			return
		}
		if rel == "" || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
			t.Fatalf("%q under %q is %q", file, root, rel)
		}
		if got := filepath.Join(root, filepath.FromSlash(rel)); got != file {
			t.Fatalf("%q under %q is %q, which joins to %q", file, root, rel, got)
		}
	})
}
