package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDefaultExcludesSetting: absent is the built-in list, a list replaces
// it, [] leaves out only .git, which every list holds; names that are not
// one literal path element are refused; tychora.json keeps the key only
// when it is not the built-in list.
func TestDefaultExcludesSetting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".tychora")
	l := NewLayout(dir)
	if err := l.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	load := func(body string) (Settings, error) {
		t.Helper()
		if err := os.WriteFile(l.Settings, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return LoadSettings(l)
	}
	builtin := DefaultExcludes()
	for _, n := range []string{".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".gradle", ".hg", ".svn"} {
		if !slices.Contains(builtin, n) {
			t.Errorf("the built-in list lacks %q", n)
		}
	}
	// Real source folders too often to be left out by name.
	for _, n := range []string{"env", "target", "build", "dist", "vendor", "coverage", ".idea", ".vscode", "lib", "out"} {
		if slices.Contains(builtin, n) {
			t.Errorf("the built-in list holds %q", n)
		}
	}
	if !slices.IsSorted(builtin) {
		t.Error("the built-in list is not sorted")
	}
	good := []struct {
		body string
		want []string
	}{
		{`{}`, builtin},
		{`{"default_excludes":[]}`, []string{".git"}},
		{`{"default_excludes":["target","node_modules"]}`, []string{".git", "node_modules", "target"}},
		{`{"default_excludes":[".git","build"]}`, []string{".git", "build"}},
		{`{"default_excludes":["dir with space","ünï"]}`, []string{".git", "dir with space", "ünï"}},
	}
	for _, c := range good {
		s, err := load(c.body)
		if err != nil || !slices.Equal(s.DefaultExcludes, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.body, s.DefaultExcludes, err, c.want)
		}
	}
	bad := []string{
		`{"default_excludes":[""]}`, `{"default_excludes":["."]}`, `{"default_excludes":[".."]}`,
		`{"default_excludes":["a/b"]}`, `{"default_excludes":["a\\b"]}`, `{"default_excludes":["a\u0000"]}`,
		`{"default_excludes":["*.egg-info"]}`, `{"default_excludes":["build?"]}`, `{"default_excludes":["[ab]"]}`,
		`{"default_excludes":["{a,b}"]}`, `{"default_excludes":["x","x"]}`, `{"default_excludes":["` + strings.Repeat("a", 256) + `"]}`,
		`{"default_excludes":"node_modules"}`, `{"default_excludes":[1]}`, `{"default_excludes":null}`,
	}
	for _, body := range bad {
		if _, err := load(body); ErrorCode(err) != CodeInvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", body, err)
		}
	}
	many := make([]string, 257)
	for i := range many {
		many[i] = fmt.Sprintf("d%d", i)
	}
	b, _ := json.Marshal(map[string]any{"default_excludes": many})
	if _, err := load(string(b)); ErrorCode(err) != CodeInvalidArgument {
		t.Errorf("257 names: %v, want INVALID_ARGUMENT", err)
	}
	// JSON decoding replaces invalid UTF-8; settings built in code are
	// checked too.
	s := DefaultSettings(dir)
	if err := s.Validate(dir); err != nil {
		t.Fatal(err)
	}
	s.DefaultExcludes = []string{".git", "caf\xe9"}
	if err := s.Validate(dir); ErrorCode(err) != CodeInvalidArgument {
		t.Errorf("a name that is not UTF-8: %v, want INVALID_ARGUMENT", err)
	}

	// Saved: the built-in list is left out (a later version's list applies),
	// any other list is kept and loads again.
	for _, c := range []struct {
		list  []string
		saved bool
	}{{DefaultExcludes(), false}, {[]string{".git"}, true}, {[]string{".git", "node_modules"}, true}} {
		s := DefaultSettings(dir)
		s.DefaultExcludes = c.list
		if err := SaveSettings(l, s); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		b, _ := os.ReadFile(l.Settings)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["default_excludes"]; ok != c.saved {
			t.Errorf("saved %v: default_excludes written %v, want %v", c.list, ok, c.saved)
		}
		got, err := LoadSettings(l)
		if err != nil || !slices.Equal(got.DefaultExcludes, c.list) {
			t.Errorf("saved %v, loaded %v, %v", c.list, got.DefaultExcludes, err)
		}
	}
}
