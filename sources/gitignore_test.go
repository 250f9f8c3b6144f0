package sources

import (
	"strings"
	"testing"
)

func TestParseIgnore(t *testing.T) {
	content := "\ufeff# comment\n\n   \n*.log\r\n!keep.log\nbuild/\n/anchored\ndocs/**/*.tmp\n\\#literal\n\\!bang\ntrailing   \n"
	ps := parseIgnore([]byte(content), nil)
	cases := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"x.log", false, true},
		{"a/b/x.log", false, true},
		{"keep.log", false, false},
		{"build", true, true},
		{"build", false, false}, // a file named build: the pattern is for directories
		{"anchored", false, true},
		{"sub/anchored", false, false},
		{"docs/a/b/c.tmp", false, true},
		{"docs/c.tmp", false, true},
		{"other/c.tmp", false, false},
		{"#literal", false, true},
		{"!bang", false, true},
		{"trailing", false, true},
		{"comment", false, false},
	}
	for _, c := range cases {
		if got := ignored(ps, strings.Split(c.path, "/"), c.isDir); got != c.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", c.path, c.isDir, got, c.want)
		}
	}
	// Patterns of a nested file apply below their directory only.
	nested := parseIgnore([]byte("*.tmp\n"), []string{"sub"})
	if !ignored(nested, []string{"sub", "a.tmp"}, false) || ignored(nested, []string{"a.tmp"}, false) {
		t.Error("nested patterns leak out of their directory")
	}
}

// FuzzIgnore parses arbitrary ignore files and matches arbitrary paths:
// never a panic, and a path matched by no pattern is never ignored.
func FuzzIgnore(f *testing.F) {
	f.Add("*.log\n!keep.log\nbuild/\n", "a/build/x.log")
	f.Add("[a-\n**/\\\n!\n/\n", "x")
	f.Add("a/**/b/**\n", "a/x/b/c/d")
	f.Add("\ufeff#c\r\n\\#x\n", "#x")
	f.Fuzz(func(t *testing.T, content, path string) {
		if len(content) > 4096 || len(path) > 1024 {
			return
		}
		ps := parseIgnore([]byte(content), []string{"d"})
		elems := append([]string{"d"}, strings.Split(path, "/")...)
		_ = ignored(ps, elems, false)
		_ = ignored(ps, elems, true)
		if len(ps) == 0 && ignored(ps, elems, false) {
			t.Fatal("ignored by no pattern")
		}
		for _, g := range strings.Split(content, "\n") {
			if globProblem(g) == "" {
				_ = newGlobSet([]string{g}).match(path)
			}
		}
	})
}
