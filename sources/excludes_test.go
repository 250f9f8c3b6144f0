package sources

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// excludesTree writes a project without any ignore file that holds
// dependency, virtual-environment, cache and VCS directories, at the top
// and deeper down, each with a file that would be indexed (and one that
// would be skipped for its content) if the walk entered it.
func excludesTree(e *env) {
	for rel, content := range map[string]string{
		"p/main.py":                         "import lib\nprint('mainword')\n",
		"p/README.md":                       "# Project\n\nreadmeword\n",
		"p/node_modules/lodash/index.js":    "module.exports = 'lodashword'\n",
		"p/node_modules/lodash/blob.bin":    "a\x00b",
		"p/.venv/pyvenv.cfg":                "home = /usr/bin\n",
		"p/.venv/lib/site.py":               "venvword = 1\n",
		"p/__pycache__/main.cpython-312.py": "pycacheword\n",
		"p/.git/config":                     "[core]\n\tgitword = true\n",
		"p/.git/HEAD":                       "ref: refs/heads/main\n",
		"p/web/node_modules/react/index.js": "reactword\n",
		"p/libs/other/.git/HEAD":            "ref: refs/heads/main\n",
		"p/libs/other/other.py":             "otherword = 2\n",
		// Exact names only: these are indexed.
		"p/env/settings.py":       "envword = 3\n",
		"p/my_node_modules/a.txt": "mynodeword\n",
		"p/docs/node_modules":     "a file named like the directory: fileword\n",
	} {
		e.write(rel, content)
	}
}

// TestDefaultExcludes: without any ignore file, the directories of the
// default list are left out at every depth, each named once in coverage
// with the reason default_exclude and nothing below it (it is never
// entered); other names, and files so named, are indexed.
func TestDefaultExcludes(t *testing.T) {
	e := newEnv(t)
	excludesTree(e)
	e.symlink("../libs/other", "p/web/.venv") // a symlinked directory is judged by its own name
	src := e.add(SourceInput{Path: "p", Kind: KindFolder})
	st := e.sync(src.ID)
	want := []string{"README.md", "docs/node_modules", "env/settings.py", "libs/other/other.py", "main.py", "my_node_modules/a.txt"}
	if p := e.paths(src.ID); !slices.Equal(p, want) {
		t.Fatalf("indexed\n %v\nwant\n %v", p, want)
	}
	skips := e.skips(src.ID)
	wantSkips := map[string]string{
		".git/": SkipDefault, ".venv/": SkipDefault, "__pycache__/": SkipDefault, "node_modules/": SkipDefault,
		"libs/other/.git/": SkipDefault, "web/node_modules/": SkipDefault, "web/.venv/": SkipDefault,
	}
	if !mapsEqual(skips, wantSkips) {
		t.Fatalf("coverage %v\nwant %v", skips, wantSkips)
	}
	if st.SkippedByReason[SkipDefault] != 7 || st.Skipped != 7 || st.FilesSeen != int64(len(want))+7 {
		t.Fatalf("stats %+v: want 7 directories skipped once each", st)
	}
	for _, w := range []string{"lodashword", "venvword", "pycacheword", "gitword", "reactword"} {
		if e.match(w) != 0 {
			t.Errorf("%s is indexed", w)
		}
	}
	ss, err := listSkips(t.Context(), e.db, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.Detail != defaultDetail {
			t.Errorf("%s: detail %q", s.Path, s.Detail)
		}
	}
}

// TestDefaultExcludesOverride: a list of names replaces the built-in one,
// so a directory it leaves out is indexed (node_modules with the role
// vendored) while .git stays out; files indexed from a directory that the
// list then names leave the index on the next sync, and nothing else
// changes.
func TestDefaultExcludesOverride(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.DefaultExcludes = []string{"__pycache__"} })
	excludesTree(e)
	src := e.add(SourceInput{Path: "p", Kind: KindFolder})
	e.sync(src.ID)
	paths := e.paths(src.ID)
	for _, p := range []string{"node_modules/lodash/index.js", ".venv/lib/site.py", ".venv/pyvenv.cfg", "web/node_modules/react/index.js"} {
		if !slices.Contains(paths, p) {
			t.Errorf("%s is not indexed: %v", p, paths)
		}
	}
	if n := e.count(`SELECT count(*) FROM files WHERE source_id = ? AND path = 'node_modules/lodash/index.js' AND role = 'vendored'`, src.ID); n != 1 {
		t.Errorf("node_modules/lodash/index.js is not vendored")
	}
	skips := e.skips(src.ID)
	want := map[string]string{".git/": SkipDefault, "libs/other/.git/": SkipDefault, "__pycache__/": SkipDefault, "node_modules/lodash/blob.bin": SkipBinary}
	if !mapsEqual(skips, want) {
		t.Fatalf("coverage %v\nwant %v", skips, want)
	}

	// [] leaves out only .git.
	none := NewIndexer(e.db, e.policy, e.assets, Options{Workers: 2, TempDir: t.TempDir(), DefaultExcludes: []string{}})
	if _, err := none.Sync(t.Context(), src.ID, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(e.paths(src.ID), "__pycache__/main.cpython-312.py") || e.skips(src.ID)["__pycache__/"] != "" {
		t.Fatalf("with [] __pycache__ is still left out: %v", e.skips(src.ID))
	}
	if e.match("gitword") != 0 || e.skips(src.ID)[".git/"] != SkipDefault {
		t.Fatal(".git is walked")
	}

	// Back to the built-in list: what it names leaves the index, the rest
	// stays as it was.
	before := e.evidenceIDs(src.ID, func(p string) bool { return !excludedByDefault(p) })
	calls := e.ix.ExtractCalls()
	builtin := NewIndexer(e.db, e.policy, e.assets, Options{Workers: 2, TempDir: t.TempDir()})
	st, err := builtin.Sync(t.Context(), src.ID, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.checkFTS()
	// index.js, blob.bin, pyvenv.cfg, site.py, main.cpython-312.py, react/index.js
	if st.Deleted != 6 || st.Indexed != 0 || builtin.ExtractCalls() != 0 || e.ix.ExtractCalls() != calls {
		t.Fatalf("stats %+v", st)
	}
	after := e.evidenceIDs(src.ID, func(string) bool { return true })
	if !slices.Equal(before, after) {
		t.Fatalf("evidence changed:\n %v\n %v", before, after)
	}
	for _, w := range []string{"lodashword", "venvword", "pycacheword", "reactword"} {
		if e.match(w) != 0 {
			t.Errorf("%s is still indexed", w)
		}
	}
	if n := e.count(`SELECT count(*) FROM files WHERE source_id = ? AND (path LIKE 'node_modules/%' OR path LIKE '.venv/%' OR path LIKE '__pycache__/%' OR path LIKE 'web/node_modules/%')`, src.ID); n != 0 {
		t.Fatalf("%d files rows remain below excluded directories", n)
	}
}

// excludedByDefault reports whether a source-relative path lies below a
// directory of the built-in list.
func excludedByDefault(rel string) bool {
	elems := strings.Split(rel, "/")
	for _, el := range elems[:len(elems)-1] {
		if slices.Contains(workspace.DefaultExcludes(), el) {
			return true
		}
	}
	return false
}

// evidenceIDs lists the evidence ids of a source whose path keep accepts,
// sorted.
func (e *env) evidenceIDs(sourceID string, keep func(string) bool) []string {
	e.t.Helper()
	rows, err := e.db.R.Query(`SELECT evidence_id, path FROM evidence WHERE source_id = ? ORDER BY evidence_id`, sourceID)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, p string
		if err := rows.Scan(&id, &p); err != nil {
			e.t.Fatal(err)
		}
		if keep(p) {
			out = append(out, id)
		}
	}
	return out
}

// TestDefaultExcludesWithGitignore: a .gitignore still applies beside the
// default list; a directory that both name keeps the reason of the user's own
// rule, and a negation does not bring a default exclude back.
func TestDefaultExcludesWithGitignore(t *testing.T) {
	e := newEnv(t)
	excludesTree(e)
	e.write("p/.gitignore", "*.log\nbuild/\n__pycache__/\n!node_modules/\n")
	e.write("p/debug.log", "logword\n")
	e.write("p/build/out.txt", "buildword\n")
	src := e.add(SourceInput{Path: "p"})
	if src.Kind != KindRepository {
		t.Fatalf("kind %s", src.Kind)
	}
	e.sync(src.ID)
	skips := e.skips(src.ID)
	want := map[string]string{
		".git/": SkipDefault, ".venv/": SkipDefault, "node_modules/": SkipDefault, "libs/other/.git/": SkipDefault,
		"web/node_modules/": SkipDefault, "__pycache__/": SkipIgnored, "build/": SkipIgnored, "debug.log": SkipIgnored,
	}
	if !mapsEqual(skips, want) {
		t.Fatalf("coverage %v\nwant %v", skips, want)
	}
	if e.match("logword") != 0 || e.match("buildword") != 0 || e.match("lodashword") != 0 || e.match("mainword") != 1 {
		t.Fatal("an ignored or excluded file is indexed, or main.py is not")
	}
}

// TestDefaultExcludesNewDirectory: a dependency directory that appears
// between two syncs adds one coverage entry and changes nothing else: no
// file is read, extracted or removed.
func TestDefaultExcludesNewDirectory(t *testing.T) {
	e := newEnv(t)
	e.write("p/main.js", "require('left-pad') // mainword\n")
	e.write("p/lib/util.js", "exports.utilword = 1\n")
	src := e.add(SourceInput{Path: "p"})
	e.sync(src.ID)
	ids := e.evidenceIDs(src.ID, func(string) bool { return true })
	calls := e.ix.ExtractCalls()
	for i := range 50 {
		e.write("p/node_modules/left-pad/f"+string(rune('a'+i%26))+string(rune('a'+i/26))+".js", "padword\n")
	}
	e.write("p/lib/node_modules/x/index.js", "padword\n")
	st := e.sync(src.ID)
	if st.Indexed != 0 || st.Deleted != 0 || st.Unchanged != 2 || st.Bytes != 0 || e.ix.ExtractCalls() != calls {
		t.Fatalf("stats %+v", st)
	}
	if got := e.evidenceIDs(src.ID, func(string) bool { return true }); !slices.Equal(got, ids) {
		t.Fatalf("evidence changed:\n %v\n %v", ids, got)
	}
	want := map[string]string{"node_modules/": SkipDefault, "lib/node_modules/": SkipDefault}
	if got := e.skips(src.ID); !mapsEqual(got, want) {
		t.Fatalf("coverage %v", got)
	}
	if e.match("padword") != 0 {
		t.Fatal("node_modules is indexed")
	}
}

// TestDefaultExcludesMatchDocs keeps the table of docs/ingest.md ("Default
// excludes") and the built-in list equal.
func TestDefaultExcludesMatchDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/ingest.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "### Default excludes\n")
	if !ok {
		t.Fatal("docs/ingest.md has no section Default excludes")
	}
	_, table, _ := strings.Cut(section, "| --- | --- |\n")
	table, _, _ = strings.Cut(table, "\n\n")
	var names []string
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 3 {
			t.Fatalf("row %q", row)
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[2], -1) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	if want := workspace.DefaultExcludes(); !slices.Equal(names, want) {
		t.Fatalf("docs list\n %v\ncode has\n %v", names, want)
	}
}
