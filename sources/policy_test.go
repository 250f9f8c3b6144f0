package sources

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tychora/tychora/workspace"
)

// env is a workspace for tests: an ingest root holding the workspace
// directory (as the default settings put it), a directory outside the
// roots, a real SQLite database and an Indexer.
type env struct {
	t       *testing.T
	base    string // parent of root and outside
	root    string // the ingest root (real path)
	outside string // outside every root
	ws      string // the workspace, inside root
	db      *workspace.DB
	policy  *Policy
	assets  *Assets
	ix      *Indexer
}

func newEnv(t *testing.T, opts ...func(*Options)) *env {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	e.ws = filepath.Join(e.root, ".tychora")
	for _, d := range []string{e.root, e.outside, e.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.db, err = workspace.OpenDB(context.Background(), filepath.Join(e.ws, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	e.policy, err = NewPolicy([]string{e.root}, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	e.assets = NewAssets(filepath.Join(e.ws, "assets"))
	o := Options{Workers: 2, TempDir: t.TempDir()}
	for _, f := range opts {
		f(&o)
	}
	e.ix = NewIndexer(e.db, e.policy, e.assets, o)
	return e
}

// write creates a file under root (rel is slash-separated), with parents.
func (e *env) write(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) symlink(target, rel string) {
	e.t.Helper()
	p := filepath.Join(e.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		e.t.Fatal(err)
	}
}

func codeOf(err error) workspace.Code { return workspace.ErrorCode(err) }

func TestResolveKinds(t *testing.T) {
	e := newEnv(t)
	e.write("notes/a.md", "# A\n")
	e.write("repo/main.go", "package main\n")
	if err := os.MkdirAll(filepath.Join(e.root, "repo", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write("wt/.git", "gitdir: ../repo/.git/worktrees/wt\n")
	e.write("bare.git/HEAD", "ref: refs/heads/main\n")
	for _, d := range []string{"bare.git/objects", "bare.git/refs/heads", "headonly/objects"} {
		if err := os.MkdirAll(filepath.Join(e.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.write("headonly/HEAD", "not a repository\n")
	cases := []struct {
		in       SourceInput
		wantKind Kind
		wantCode workspace.Code
	}{
		{SourceInput{Path: "notes/a.md"}, KindFile, ""},
		{SourceInput{Path: "notes"}, KindFolder, ""},
		{SourceInput{Path: "repo"}, KindRepository, ""},
		{SourceInput{Path: "wt"}, KindRepository, ""},
		{SourceInput{Path: "bare.git"}, "", workspace.CodeInvalidArgument}, // no working tree
		{SourceInput{Path: "headonly"}, KindFolder, ""},                    // HEAD and objects/ but no refs/
		{SourceInput{Path: "repo", Kind: KindFolder}, KindFolder, ""},
		{SourceInput{Path: "notes", Kind: KindFile}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "notes/a.md", Kind: KindFolder}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "notes", Kind: KindRepository}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "notes", Kind: "zip"}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: ""}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "no/such/thing"}, "", workspace.CodeNotFound},
		{SourceInput{Path: "notes\x00x"}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "notes", Include: []string{"**/*.md"}, Exclude: []string{"drafts/**"}}, KindFolder, ""},
		{SourceInput{Path: "notes", Include: []string{"[a-"}}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "notes", Exclude: []string{"/abs/**"}}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "notes", Exclude: []string{"../x"}}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "notes/a.md", Include: []string{"*.md"}}, "", workspace.CodeInvalidArgument},
		{SourceInput{Path: "notes", CollectionID: "Bad Name"}, "", workspace.CodeInvalidArgument},
	}
	for _, c := range cases {
		rs, err := e.policy.Resolve(c.in)
		if got := codeOf(err); got != c.wantCode {
			t.Errorf("Resolve(%+v): code %q (%v), want %q", c.in, got, err, c.wantCode)
			continue
		}
		if err == nil {
			if rs.Kind != c.wantKind {
				t.Errorf("Resolve(%+v): kind %q, want %q", c.in, rs.Kind, c.wantKind)
			}
			if !filepath.IsAbs(rs.Path) || rs.Root != e.root || rs.CollectionID != "default" || rs.Name == "" {
				t.Errorf("Resolve(%+v) = %+v", c.in, rs)
			}
		}
	}
}

func TestResolveRelativeAndSymlinkedRoot(t *testing.T) {
	e := newEnv(t)
	e.write("docs/guide.md", "# Guide\n")
	rs, err := e.policy.Resolve(SourceInput{Path: "docs/../docs/guide.md"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(e.root, "docs", "guide.md"); rs.Path != want {
		t.Fatalf("path %q, want %q", rs.Path, want)
	}
	// A root configured through a symlink: both spellings work and the
	// stored path is the real one.
	link := filepath.Join(e.base, "rootlink")
	if err := os.Symlink(e.root, link); err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy([]string{link}, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{filepath.Join(link, "docs"), filepath.Join(e.root, "docs"), "docs"} {
		rs, err := p.Resolve(SourceInput{Path: in})
		if err != nil {
			t.Fatalf("Resolve(%q): %v", in, err)
		}
		if rs.Path != filepath.Join(e.root, "docs") {
			t.Fatalf("Resolve(%q) = %q", in, rs.Path)
		}
	}
}

func TestResolveOutOfRoots(t *testing.T) {
	e := newEnv(t)
	secret := filepath.Join(e.outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.symlink(secret, "link-file")
	e.symlink(e.outside, "link-dir")
	e.symlink("../outside", "rel-link-dir")
	cases := []string{
		"../outside/secret.txt",
		"../outside",
		"..",
		"../../../../etc/passwd",
		secret,
		e.outside,
		"/etc/passwd",
		"/",
		"link-file",
		"link-dir",
		"link-dir/secret.txt",
		"link-dir/does-not-exist", // existence outside must not show
		"rel-link-dir/secret.txt",
		filepath.Join(e.root, "..", "outside"),
		e.base,
	}
	for _, in := range cases {
		_, err := e.policy.Resolve(SourceInput{Path: in})
		if codeOf(err) != workspace.CodeOutOfRoots {
			t.Errorf("Resolve(%q): %v, want OUT_OF_ROOTS", in, err)
			continue
		}
		msg := workspace.ErrorMessage(err)
		if strings.Contains(msg, e.outside) && !strings.Contains(in, e.outside) {
			t.Errorf("Resolve(%q): message %q names the resolved location", in, msg)
		}
	}
}

// TestResolveDanglingSymlinks: a symlink that leads outside the roots is
// OUT_OF_ROOTS whether or not its target exists (docs/ingest.md rule 5), for
// absolute and relative targets, chains of links, and paths through a link;
// only what is missing inside the roots is NOT_FOUND.
func TestResolveDanglingSymlinks(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.outside, "exists"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(e.outside, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write("notes/a.md", "# A\n")
	// Each pair differs only in whether the target outside exists.
	for _, name := range []string{"exists", "missing"} {
		e.symlink(filepath.Join(e.outside, name), "abs-"+name)
		e.symlink(filepath.Join("..", "outside", name), "rel-"+name)
		e.symlink(filepath.Join("..", "..", "outside", name), "sub/rel-"+name)
		e.symlink("chain2-"+name, "chain1-"+name)
		e.symlink(filepath.Join("sub", "chain3-"+name), "chain2-"+name)
		e.symlink(filepath.Join("..", "abs-"+name), "sub/chain3-"+name)
		e.symlink("nothing/../../outside/"+name, "through-missing-"+name)
	}
	e.symlink(filepath.Join(e.outside, "dir"), "dir-exists")
	e.symlink(filepath.Join(e.outside, "nodir"), "dir-missing")
	e.symlink("/etc/no_such_file_zz", "etc-missing")
	e.symlink("/etc/passwd", "etc-exists")
	// Out through an existing directory and back in: the walk looked
	// outside, so this is OUT_OF_ROOTS too, even though it would resolve.
	e.symlink("../outside/dir/../../root/notes/a.md", "out-and-back")
	// A loop that runs through a location outside.
	e.symlink(filepath.Join(e.outside, "loop"), "loop-out")
	if err := os.Symlink(filepath.Join(e.root, "loop-out"), filepath.Join(e.outside, "loop")); err != nil {
		t.Fatal(err)
	}
	// Symlinks that stay inside.
	e.symlink(filepath.Join(e.root, "nowhere"), "in-missing")
	e.symlink("in-missing", "in-chain")
	e.symlink("notes/../notes/./a.md", "in-file")
	e.symlink("self", "self")

	cases := []struct {
		in   string
		want workspace.Code
	}{
		{"abs-exists", workspace.CodeOutOfRoots},
		{"abs-missing", workspace.CodeOutOfRoots},
		{"rel-exists", workspace.CodeOutOfRoots},
		{"rel-missing", workspace.CodeOutOfRoots},
		{"sub/rel-exists", workspace.CodeOutOfRoots},
		{"sub/rel-missing", workspace.CodeOutOfRoots},
		{"chain1-exists", workspace.CodeOutOfRoots},
		{"chain1-missing", workspace.CodeOutOfRoots},
		{"through-missing-exists", workspace.CodeOutOfRoots},
		{"through-missing-missing", workspace.CodeOutOfRoots},
		{"dir-exists", workspace.CodeOutOfRoots},
		{"dir-missing", workspace.CodeOutOfRoots},
		{"dir-exists/x", workspace.CodeOutOfRoots},
		{"dir-missing/x", workspace.CodeOutOfRoots},
		{"abs-exists/x", workspace.CodeOutOfRoots},
		{"abs-missing/x", workspace.CodeOutOfRoots},
		{"etc-exists", workspace.CodeOutOfRoots},
		{"etc-missing", workspace.CodeOutOfRoots},
		{"out-and-back", workspace.CodeOutOfRoots},
		{"loop-out", workspace.CodeOutOfRoots},
		{"in-missing", workspace.CodeNotFound},
		{"in-chain", workspace.CodeNotFound},
		{"in-chain/x", workspace.CodeNotFound},
		{"notes/a.md/x", workspace.CodeNotFound},
		{"nothing/at/all", workspace.CodeNotFound},
		{"self", workspace.CodeInvalidArgument},
		{"in-file", ""},
	}
	for _, c := range cases {
		rs, err := e.policy.Resolve(SourceInput{Path: c.in})
		if got := codeOf(err); got != c.want {
			t.Errorf("Resolve(%q): %v, want code %q", c.in, err, c.want)
			continue
		}
		if err != nil {
			if msg := workspace.ErrorMessage(err); strings.Contains(msg, e.outside) || strings.Contains(msg, "/etc") {
				t.Errorf("Resolve(%q): message %q names the resolved location", c.in, msg)
			}
		} else if want := filepath.Join(e.root, "notes", "a.md"); rs.Path != want {
			t.Errorf("Resolve(%q) = %q, want %q", c.in, rs.Path, want)
		}
	}
}

// TestResolveMissingRootBehindSymlink: a root that does not exist yet, under
// a symlinked directory, answers NOT_FOUND (not OUT_OF_ROOTS) for a path in
// it, and accepts it once it exists.
func TestResolveMissingRootBehindSymlink(t *testing.T) {
	e := newEnv(t)
	link := filepath.Join(e.base, "baselink")
	if err := os.Symlink(e.outside, link); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(link, "later")
	p, err := NewPolicy([]string{root}, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Resolve(SourceInput{Path: "a.txt"}); codeOf(err) != workspace.CodeNotFound {
		t.Fatalf("Resolve in a missing root: %v, want NOT_FOUND", err)
	}
	if err := os.MkdirAll(filepath.Join(e.outside, "later"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.outside, "later", "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rs, err := p.Resolve(SourceInput{Path: "a.txt"}); err != nil || rs.Path != filepath.Join(e.outside, "later", "a.txt") {
		t.Fatalf("Resolve once the root exists = %+v, %v", rs, err)
	}
}

// TestNewPolicyRefusesFileSystemRoot: "/" is never an ingest root, also
// when it is named through a symlink.
func TestNewPolicyRefusesFileSystemRoot(t *testing.T) {
	e := newEnv(t)
	link := filepath.Join(e.base, "rootlink")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"/", link, filepath.Join(link, "."), filepath.Join(e.base, "..", "..", "..", "..", "..", "..", "..", "..")} {
		if _, err := NewPolicy([]string{e.root, r}, e.ws); codeOf(err) != workspace.CodeInvalidArgument {
			t.Errorf("NewPolicy(%q): %v, want INVALID_ARGUMENT", r, err)
		}
	}
}

func TestResolveWorkspaceRefused(t *testing.T) {
	e := newEnv(t)
	e.write(".tychora/notes.txt", "x")
	for _, in := range []string{e.ws, ".tychora", ".tychora/notes.txt", ".tychora/index.db"} {
		_, err := e.policy.Resolve(SourceInput{Path: in})
		if codeOf(err) != workspace.CodeInvalidArgument {
			t.Errorf("Resolve(%q): %v, want INVALID_ARGUMENT", in, err)
		}
	}
	// A symlink to the workspace is refused too.
	e.symlink(e.ws, "wslink")
	if _, err := e.policy.Resolve(SourceInput{Path: "wslink"}); codeOf(err) != workspace.CodeInvalidArgument {
		t.Errorf("Resolve(wslink): %v, want INVALID_ARGUMENT", err)
	}
	// The root that holds the workspace is fine: the walk skips it.
	if _, err := e.policy.Resolve(SourceInput{Path: e.root}); err != nil {
		t.Errorf("Resolve(root): %v", err)
	}
}

func TestCreateSourceIdempotent(t *testing.T) {
	e := newEnv(t)
	e.write("d/a.txt", "a")
	ctx := context.Background()
	s1, created, err := e.ix.Add(ctx, SourceInput{Path: "d"})
	if err != nil || !created {
		t.Fatalf("Add: %v created=%v", err, created)
	}
	s2, created, err := e.ix.Add(ctx, SourceInput{Path: filepath.Join(e.root, "d"), Exclude: []string{"*.log"}, Name: "D"})
	if err != nil || created {
		t.Fatalf("second Add: %v created=%v", err, created)
	}
	if s1.ID != s2.ID || s2.Name != "D" || len(s2.Exclude) != 1 {
		t.Fatalf("second Add = %+v, want the same source updated", s2)
	}
	s3, created, err := e.ix.Add(ctx, SourceInput{Path: "d", CollectionID: "other"})
	if err != nil || !created || s3.ID == s1.ID {
		t.Fatalf("Add in another collection: %+v %v %v", s3, created, err)
	}
	got, err := GetSource(ctx, e.db, s1.ID)
	if err != nil || got.Path != filepath.Join(e.root, "d") || got.Kind != KindFolder {
		t.Fatalf("GetSource = %+v, %v", got, err)
	}
	if _, err := GetSource(ctx, e.db, "src_nope"); codeOf(err) != workspace.CodeNotFound {
		t.Fatalf("GetSource(unknown): %v", err)
	}
	list, err := ListSources(ctx, e.db, []string{"other"})
	if err != nil || len(list) != 1 || list[0].ID != s3.ID {
		t.Fatalf("ListSources(other) = %+v, %v", list, err)
	}
}

// fuzzTree is one of FuzzResolvePath's two trees: the same root, links and
// workspace; outside the roots, one tree holds files the other lacks.
type fuzzTree struct {
	root, outside, ws string
	policy            *Policy
}

func newFuzzTree(f *testing.F, populated bool) fuzzTree {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	ft := fuzzTree{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	ft.ws = filepath.Join(ft.root, ".tychora")
	dirs := []string{filepath.Join(ft.root, "a", "b"), ft.outside, ft.ws}
	files := []string{filepath.Join(ft.root, "a", "b.txt"), filepath.Join(ft.ws, "index.db")}
	if populated {
		dirs = append(dirs, filepath.Join(ft.outside, "dir"))
		files = append(files, filepath.Join(ft.outside, "secret"), filepath.Join(ft.outside, "dir", "x"))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, fl := range files {
		if err := os.WriteFile(fl, []byte("x"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"link-dir":      ft.outside,
		"link-file":     filepath.Join(ft.outside, "secret"),
		"link-sub":      filepath.Join(ft.outside, "dir"),
		"rel-link":      "../outside",
		"rel-secret":    "../outside/secret",
		"rel-sub":       "../outside/dir",
		"rel-back":      "../outside/dir/../../root/a",
		"chain":         "a/chain2",
		"a/chain2":      "../rel-secret",
		"through":       "nothing/../../outside/secret",
		"etc":           "/etc/passwd",
		"loop":          filepath.Join(ft.root, "loop"),
		"in-missing":    "a/nowhere",
		"a/ws":          ft.ws,
		"a/up":          ft.root,
		"a/dotdot":      "..",
		"a/file-parent": "b.txt/..",
	} {
		if err := os.Symlink(target, filepath.Join(ft.root, link)); err != nil {
			f.Fatal(err)
		}
	}
	if ft.policy, err = NewPolicy([]string{ft.root}, ft.ws); err != nil {
		f.Fatal(err)
	}
	return ft
}

// FuzzResolvePath feeds arbitrary paths to the policy: it must never panic,
// whatever it accepts must lie inside the root and outside the workspace,
// its real location included, and the answer must be the same in two trees
// that differ only outside the roots: existence there is never observable.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"a", "a/b.txt", "../outside", "/etc/passwd", "link-dir/x", "link-file",
		".tychora", "./.tychora/../a", "a/../../outside/secret", "//a", "a/./b/../..", "loop", "\x00", "é/ü",
		strings.Repeat("../", 40) + "etc", "rel-link/a", "rel-secret", "rel-sub/x", "rel-sub/y", "link-sub/x",
		"link-dir/secret", "link-dir/dir/x", "rel-back", "rel-back/b.txt", "chain", "through", "etc",
		"in-missing", "in-missing/x", "a/dotdot/a/b.txt", "a/file-parent", "a/up/a/ws", "a/b.txt/x"} {
		f.Add(s)
	}
	trees := []fuzzTree{newFuzzTree(f, true), newFuzzTree(f, false)}
	f.Fuzz(func(t *testing.T, in string) {
		var codes [2]workspace.Code
		var rels [2]string
		for i, ft := range trees {
			rs, err := ft.policy.Resolve(SourceInput{Path: in})
			if err != nil {
				var we *workspace.Error
				if !errors.As(err, &we) {
					t.Fatalf("Resolve(%q): untyped error %v", in, err)
				}
				for _, tr := range trees {
					if strings.Contains(we.Message, tr.outside) && !strings.Contains(in, tr.outside) {
						t.Fatalf("Resolve(%q): message %q names a location outside the roots", in, we.Message)
					}
				}
				codes[i] = we.Code
				continue
			}
			if !within(rs.Path, ft.root) {
				t.Fatalf("Resolve(%q) = %q, outside the root", in, rs.Path)
			}
			if within(rs.Path, ft.ws) {
				t.Fatalf("Resolve(%q) = %q, inside the workspace", in, rs.Path)
			}
			if real, err := filepath.EvalSymlinks(rs.Path); err != nil || real != rs.Path {
				t.Fatalf("Resolve(%q) = %q, not a real path (%q, %v)", in, rs.Path, real, err)
			}
			if !utf8.ValidString(rs.Path) {
				t.Fatalf("Resolve(%q) = %q, not UTF-8", in, rs.Path)
			}
			rels[i], _ = filepath.Rel(ft.root, rs.Path)
		}
		// An input naming one tree's directory is not asked of the other.
		names := strings.Contains(in, filepath.Dir(trees[0].root)) || strings.Contains(in, filepath.Dir(trees[1].root))
		if !names && (codes[0] != codes[1] || rels[0] != rels[1]) {
			t.Fatalf("Resolve(%q) differs with what exists outside the roots: %q %q / %q %q", in, codes[0], rels[0], codes[1], rels[1])
		}
	})
}
