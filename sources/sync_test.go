package sources

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tychora/tychora/workspace"
)

func (e *env) add(in SourceInput) Source {
	e.t.Helper()
	src, _, err := e.ix.Add(context.Background(), in)
	if err != nil {
		e.t.Fatalf("Add(%+v): %v", in, err)
	}
	return src
}

func (e *env) sync(id string) Stats {
	e.t.Helper()
	st, err := e.ix.Sync(context.Background(), id, SyncOptions{})
	if err != nil {
		e.t.Fatalf("Sync(%s): %v", id, err)
	}
	e.checkFTS()
	return st
}

// checkFTS runs the FTS5 integrity check (the index is consistent in
// itself) and checks that it holds exactly the leaves of evidence: one
// row of column sizes per leaf, none for anything else, and every leaf
// found by its own path.
func (e *env) checkFTS() {
	e.t.Helper()
	if _, err := e.db.W.Exec(`INSERT INTO evidence_fts(evidence_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		e.t.Fatalf("FTS integrity check: %v", err)
	}
	leaves := e.count(`SELECT count(*) FROM evidence WHERE leaf = 1`)
	if n := e.count(`SELECT count(*) FROM evidence_fts_docsize`); n != leaves {
		e.t.Fatalf("the index holds %d rows, evidence %d leaves", n, leaves)
	}
	if n := e.count(`SELECT count(*) FROM evidence_fts_docsize d LEFT JOIN evidence e ON e.seq = d.id AND e.leaf = 1 WHERE e.seq IS NULL`); n != 0 {
		e.t.Fatalf("the index holds %d rows that are no leaf", n)
	}
	if n := e.count(`SELECT count(*) FROM evidence WHERE leaf = 1 AND seq NOT IN (SELECT rowid FROM evidence_fts WHERE evidence_fts MATCH '{path} : ' || '"' || replace(evidence.path, '"', '""') || '"')`); n != 0 {
		e.t.Fatalf("%d leaves are not found by their path", n)
	}
}

// paths returns the distinct file paths that have evidence.
func (e *env) paths(sourceID string) []string {
	e.t.Helper()
	rows, err := e.db.R.Query(`SELECT DISTINCT path FROM evidence WHERE source_id = ? ORDER BY path`, sourceID)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// undoFileTerms undoes 0016: the kept counts back in files.terms.
var undoFileTerms = []string{
	`ALTER TABLE files ADD COLUMN terms BLOB`,
	`UPDATE files SET terms = (SELECT t.terms FROM file_terms t WHERE t.source_id = files.source_id AND t.path = files.path)`,
	`DROP TABLE file_terms`,
}

// undoLater undoes the migrations newer than any that a test rewinds
// (0015 and on), newest first.
var undoLater = append(slices.Clone(undoFileTerms),
	`ALTER TABLE jobs DROP COLUMN paths`, `DELETE FROM schema_migrations WHERE version >= 15`,
)

// rewind runs stmts (which undo migrations) on the index, then opens it
// again, so that the migrations they undid apply once more, and makes a
// new Indexer over it.
func (e *env) rewind(t *testing.T, stmts ...string) {
	t.Helper()
	// The migrations after those a test undoes are undone first, newest
	// first, so that the test's own undoing meets the schema it expects.
	for _, q := range append(slices.Clone(undoLater), stmts...) {
		if _, err := e.db.W.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := workspace.OpenDB(context.Background(), filepath.Join(e.ws, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	t.Cleanup(func() { db.Close() })
	e.ix = NewIndexer(db, e.policy, e.assets, Options{Workers: 2, TempDir: t.TempDir()})
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.R.QueryRow(query, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (e *env) match(q string) int {
	return e.count(`SELECT count(*) FROM evidence_fts WHERE evidence_fts MATCH ?`, q)
}

func (e *env) skips(sourceID string) map[string]string {
	e.t.Helper()
	ss, err := listSkips(context.Background(), e.db, sourceID)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range ss {
		out[s.Path] = s.Reason
	}
	return out
}

func TestSyncSkipReasons(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxFileBytes = 1024 })
	e.write("tree/keep.md", "# Keep\n\nkeepword here\n")
	e.write("tree/.gitignore", "*.log\n")
	e.write("tree/debug.log", "ignored text\n")
	e.write("tree/drafts/x.md", "# Draft\n")
	e.write("tree/bin.dat", "abc\x00def")
	e.write("tree/big.txt", strings.Repeat("x", 2000))
	e.write("tree/latin1.txt", "caf\xe9 cr\xe8me\n")
	e.write("tree/bom.txt", "\ufeffbomword first line\r\nsecond line\r\n")
	e.write("tree/pixel.png", string(tinyPNG))
	// Symlinks: escaping (file and directory), broken, cycle, and one that
	// stays inside the roots and is followed.
	if err := os.WriteFile(filepath.Join(e.outside, "secret.txt"), []byte("secretword\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.symlink(filepath.Join(e.outside, "secret.txt"), "tree/esc-file")
	e.symlink(e.outside, "tree/esc-dir")
	// Dangling links outside are escapes too: whether their target exists
	// outside the roots must not show in coverage.
	e.symlink(filepath.Join(e.outside, "missing.txt"), "tree/esc-dangling")
	e.symlink("../../outside/nodir/missing.txt", "tree/esc-dangling-rel")
	e.symlink(filepath.Join(e.root, "nowhere"), "tree/broken")
	e.symlink(filepath.Join(e.root, "tree"), "tree/sub/cycle")
	e.write("elsewhere/shared.md", "# Shared\n\nsharedword\n")
	e.symlink(filepath.Join(e.root, "elsewhere"), "tree/shared")
	e.symlink(e.ws, "tree/ws")
	if err := syscall.Mkfifo(filepath.Join(e.root, "tree", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write("tree/locked.txt", "lockedword\n")
	e.write("tree/bad\xffname.txt", "badname\n")
	restore := failOpen(t, "locked.txt", fs.ErrPermission)
	defer restore()

	src := e.add(SourceInput{Path: "tree", Exclude: []string{"drafts/**"}})
	st := e.sync(src.ID)

	wantSkips := map[string]string{
		"debug.log":         SkipIgnored,
		"drafts/":           SkipExcluded,
		"bin.dat":           SkipBinary,
		"big.txt":           SkipTooLarge,
		"latin1.txt":        SkipUndecodable,
		"esc-file":          SkipSymlinkEscape,
		"esc-dir":           SkipSymlinkEscape,
		"esc-dangling":      SkipSymlinkEscape,
		"esc-dangling-rel":  SkipSymlinkEscape,
		"broken":            SkipSymlinkBroken,
		"sub/cycle/":        SkipSymlinkCycle,
		"ws":                SkipWorkspace,
		"fifo":              SkipSpecial,
		"locked.txt":        SkipUnreadable,
		"bad\ufffdname.txt": SkipUndecodable,
	}
	got := e.skips(src.ID)
	for p, r := range wantSkips {
		if got[p] != r {
			t.Errorf("skip %q: %q, want %q", p, got[p], r)
		}
	}
	if len(got) != len(wantSkips) {
		t.Errorf("skips = %v", got)
	}
	for r, n := range map[string]int64{SkipIgnored: 1, SkipBinary: 1, SkipSymlinkEscape: 4, SkipSymlinkBroken: 1} {
		if st.SkippedByReason[r] != n {
			t.Errorf("SkippedByReason[%s] = %d, want %d", r, st.SkippedByReason[r], n)
		}
	}
	wantPaths := []string{".gitignore", "bom.txt", "keep.md", "pixel.png", "shared/shared.md"}
	if p := e.paths(src.ID); !slices.Equal(p, wantPaths) {
		t.Errorf("indexed %v, want %v", p, wantPaths)
	}
	// An image records the facets the kind registry declares for it.
	var facets string
	if err := e.db.R.QueryRow(`SELECT facets FROM files WHERE source_id = ? AND path = 'pixel.png'`, src.ID).Scan(&facets); err != nil {
		t.Fatal(err)
	}
	img, _ := KindByID(KindImage)
	for _, f := range img.Facets {
		if !strings.Contains(facets, `"`+f.Name+`":`) {
			t.Errorf("pixel.png facets %s lack %q", facets, f.Name)
		}
	}
	if !strings.Contains(facets, `"format":"png"`) {
		t.Errorf("pixel.png facets %s", facets)
	}
	// Its one unit has no text; its hash is the image's own.
	var unitSHA, fileSHA string
	if err := e.db.R.QueryRow(`SELECT e.sha256, f.sha256 FROM evidence e JOIN files f ON f.source_id = e.source_id AND f.path = e.path
		WHERE e.source_id = ? AND e.path = 'pixel.png'`, src.ID).Scan(&unitSHA, &fileSHA); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(tinyPNG); unitSHA != hex.EncodeToString(sum[:]) || unitSHA != fileSHA {
		t.Errorf("pixel.png unit hash %s, file hash %s", unitSHA, fileSHA)
	}
	// The counts add up, the first time and when nothing changed (an
	// unchanged skipped file is skipped, not unchanged).
	if st.FilesSeen != st.Indexed+st.Unchanged+st.Skipped || st.Skipped != int64(len(wantSkips)) || st.Indexed != int64(len(wantPaths)) {
		t.Errorf("first sync: %+v, want %d seen = indexed + unchanged + skipped", st.Progress, len(wantSkips)+len(wantPaths))
	}
	if again := e.sync(src.ID); again.FilesSeen != st.FilesSeen || again.Unchanged+again.Skipped+again.Indexed != again.FilesSeen || again.Skipped != st.Skipped {
		t.Errorf("second sync: %+v after %+v", again.Progress, st.Progress)
	}
	for _, w := range []string{"secretword", "lockedword", "ignored"} {
		if n := e.match(w); n != 0 {
			t.Errorf("MATCH %s: %d hits, want 0", w, n)
		}
	}
	for _, w := range []string{"keepword", "sharedword", "bomword"} {
		if n := e.match(w); n != 1 {
			t.Errorf("MATCH %s: %d hits, want 1", w, n)
		}
	}
	// The BOM is gone and CRLF became LF; the lines keep their numbers.
	var text string
	var start, end int
	if err := e.db.R.QueryRow(`SELECT text, start_line, end_line FROM evidence WHERE source_id = ? AND path = 'bom.txt' AND leaf = 1`, src.ID).
		Scan(&text, &start, &end); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(text, "\r\ufeff") || !strings.HasPrefix(text, "bomword") || start != 1 || end != 2 {
		t.Errorf("bom.txt leaf = %q lines %d-%d", text, start, end)
	}
	// Coverage of skip details never names the outside directory.
	ss, _ := listSkips(context.Background(), e.db, src.ID)
	for _, s := range ss {
		if strings.Contains(s.Detail, e.outside) {
			t.Errorf("skip %+v names the outside directory", s)
		}
	}
}

// failOpen makes openFile fail with err for files named base (root can
// read anything, so permissions cannot be tested for real).
func failOpen(t *testing.T, base string, err error) (restore func()) {
	t.Helper()
	orig := openFile
	openFile = func(name string) (*os.File, error) {
		if filepath.Base(name) == base {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return orig(name)
	}
	return func() { openFile = orig }
}

func TestSyncUnreadableForReal(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	e := newEnv(t)
	p := e.write("d/secret.txt", "x\n")
	e.write("d/ok.txt", "ok\n")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(e.root, "d", "closed"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(e.root, "d", "closed"), 0o755)
	src := e.add(SourceInput{Path: "d"})
	e.sync(src.ID)
	got := e.skips(src.ID)
	if got["secret.txt"] != SkipUnreadable || got["closed/"] != SkipUnreadable {
		t.Fatalf("skips = %v", got)
	}
}

func TestSyncNotIncluded(t *testing.T) {
	e := newEnv(t)
	e.write("d/a.md", "# A\n")
	e.write("d/b.txt", "b\n")
	e.write("d/sub/c.md", "# C\n")
	src := e.add(SourceInput{Path: "d", Include: []string{"**/*.md"}})
	e.sync(src.ID)
	if p := e.paths(src.ID); !slices.Equal(p, []string{"a.md", "sub/c.md"}) {
		t.Fatalf("indexed %v", p)
	}
	if got := e.skips(src.ID); got["b.txt"] != SkipNotIncluded {
		t.Fatalf("skips = %v", got)
	}
}

func TestSyncGitignore(t *testing.T) {
	e := newEnv(t)
	files := map[string]string{
		".gitignore":          "# comment\n*.log\n!keep.log\nbuild/\n/top-only.txt\n\\#hash.txt\n",
		"a.txt":               "a\n",
		"x.log":               "x\n",
		"keep.log":            "keep\n",
		"build/out.txt":       "out\n",
		"top-only.txt":        "t\n",
		"#hash.txt":           "h\n",
		"sub/top-only.txt":    "not anchored here\n",
		"sub/.gitignore":      "*.tmp\n!important.tmp\n",
		"sub/a.tmp":           "tmp\n",
		"sub/important.tmp":   "imp\n",
		"sub/deep/b.tmp":      "tmp\n",
		"sub/deep/.gitignore": "!b.tmp\n",
		"sub/deep/c.log":      "log\n",
		"other/a.tmp":         "tmp rules of sub do not apply here\n",
		"secret.txt":          "excluded by info/exclude\n",
		"crlf/.gitignore":     "*.bak\r\n",
		"crlf/x.bak":          "bak\n",
	}
	for p, c := range files {
		e.write("repo/"+p, c)
	}
	e.write("repo/.git/info/exclude", "secret.txt\n")
	e.write("repo/.git/HEAD", "ref: refs/heads/main\n")
	src := e.add(SourceInput{Path: "repo"})
	if src.Kind != KindRepository {
		t.Fatalf("kind %q", src.Kind)
	}
	e.sync(src.ID)
	want := []string{".gitignore", "a.txt", "crlf/.gitignore", "keep.log", "other/a.tmp", "sub/.gitignore",
		"sub/deep/.gitignore", "sub/deep/b.tmp", "sub/important.tmp", "sub/top-only.txt"}
	if p := e.paths(src.ID); !slices.Equal(p, want) {
		t.Fatalf("indexed\n %v\nwant\n %v", p, want)
	}
	got := e.skips(src.ID)
	for _, p := range []string{"x.log", "build/", "top-only.txt", "#hash.txt", "sub/a.tmp", "sub/deep/c.log", "secret.txt", "crlf/x.bak"} {
		if got[p] != SkipIgnored {
			t.Errorf("%s: skip %q, want ignored", p, got[p])
		}
	}

	// A folder inside the repository still honours the ignore files above
	// it, up to the repository root. (In another collection: within one,
	// a source inside another is refused.)
	sub := e.add(SourceInput{Path: "repo/sub", CollectionID: "sub"})
	e.sync(sub.ID)
	if p := e.paths(sub.ID); !slices.Equal(p, []string{".gitignore", "deep/.gitignore", "deep/b.tmp", "important.tmp", "top-only.txt"}) {
		t.Fatalf("repo/sub indexed %v", p)
	}
}

func TestWorkspaceNeverIngested(t *testing.T) {
	e := newEnv(t)
	e.write("notes.md", "# Notes\n\nrootword\n")
	e.write(".tychora/stray.md", "# Stray\n\nstrayword\n")
	src := e.add(SourceInput{Path: e.root})
	e.sync(src.ID)
	if p := e.paths(src.ID); !slices.Equal(p, []string{"notes.md"}) {
		t.Fatalf("indexed %v", p)
	}
	if got := e.skips(src.ID); got[".tychora/"] != SkipWorkspace {
		t.Fatalf("skips = %v", got)
	}
	if e.match("strayword") != 0 {
		t.Fatal("the workspace was indexed")
	}
}

func TestIncrementalSync(t *testing.T) {
	e := newEnv(t)
	for i := range 20 {
		e.write(fmt.Sprintf("d/f%02d.md", i), fmt.Sprintf("# File %d\n\nword%d common\n", i, i))
	}
	src := e.add(SourceInput{Path: "d"})
	st := e.sync(src.ID)
	if st.Indexed != 20 || st.Extracted != 20 || !st.NewRevision || st.RevisionNumber != 1 {
		t.Fatalf("first sync: %+v", st)
	}
	calls := e.ix.ExtractCalls()

	// Unchanged: nothing read, nothing extracted, no new revision.
	st = e.sync(src.ID)
	if e.ix.ExtractCalls() != calls || st.Unchanged != 20 || st.Indexed != 0 || st.Bytes != 0 || st.NewRevision || st.RevisionNumber != 1 {
		t.Fatalf("unchanged sync: %+v (extract calls %d → %d)", st, calls, e.ix.ExtractCalls())
	}

	// One edited file: only it is extracted.
	e.write("d/f03.md", "# File 3\n\nedited3 common\n")
	st = e.sync(src.ID)
	if e.ix.ExtractCalls() != calls+1 || st.Indexed != 1 || st.Unchanged != 19 || st.RevisionNumber != 2 {
		t.Fatalf("edit sync: %+v", st)
	}
	calls = e.ix.ExtractCalls()
	if e.match("word3") != 0 || e.match("edited3") != 1 {
		t.Fatal("the edit did not replace the old text")
	}

	// Touched but identical: hashed, not extracted, no new revision.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(e.root, "d", "f05.md"), future, future); err != nil {
		t.Fatal(err)
	}
	st = e.sync(src.ID)
	if e.ix.ExtractCalls() != calls || st.Touched != 1 || st.Indexed != 0 || st.NewRevision {
		t.Fatalf("touch sync: %+v", st)
	}
	st = e.sync(src.ID) // the new mtime was recorded: not even hashed now
	if st.Touched != 0 || st.Bytes != 0 {
		t.Fatalf("after touch: %+v", st)
	}

	// Deleted: its evidence, FTS rows and file row are gone.
	if err := os.Remove(filepath.Join(e.root, "d", "f07.md")); err != nil {
		t.Fatal(err)
	}
	st = e.sync(src.ID)
	if st.Deleted != 1 || e.ix.ExtractCalls() != calls || st.RevisionNumber != 3 {
		t.Fatalf("delete sync: %+v", st)
	}
	if e.match("word7") != 0 || e.count(`SELECT count(*) FROM evidence WHERE path = 'f07.md'`) != 0 ||
		e.count(`SELECT count(*) FROM files WHERE path = 'f07.md'`) != 0 {
		t.Fatal("the deleted file is still indexed")
	}
	if e.match("common") != 19 {
		t.Fatalf("MATCH common: %d, want 19", e.match("common"))
	}

	// An extractor upgrade (here: the recorded version is an old one)
	// re-extracts unchanged files, once.
	if _, err := e.db.W.Exec(`UPDATE extractions SET version = 'old'`); err != nil {
		t.Fatal(err)
	}
	if st = e.sync(src.ID); st.Extracted != 19 || st.RevisionNumber != 4 {
		t.Fatalf("after an extractor upgrade: %+v", st)
	}
	if st = e.sync(src.ID); st.Extracted != 0 || st.NewRevision {
		t.Fatalf("after the re-extraction: %+v", st)
	}

	revs, err := listRevisions(context.Background(), e.db, src.ID)
	if err != nil || len(revs) != 4 || revs[0].Number != 4 {
		t.Fatalf("revisions: %+v %v", revs, err)
	}
	cur, _ := GetSource(context.Background(), e.db, src.ID)
	if cur.CurrentRevisionID == nil || *cur.CurrentRevisionID != revs[0].ID {
		t.Fatalf("current revision %v, want %s", cur.CurrentRevisionID, revs[0].ID)
	}
}

func TestEvidenceIDsStable(t *testing.T) {
	e := newEnv(t)
	doc := "# One\n\nalpha text\n\n# Two\n\nbeta text\n\n# Three\n\ngamma text\n"
	e.write("d/doc.md", doc)
	e.write("d/other.md", doc)
	src := e.add(SourceInput{Path: "d"})
	e.sync(src.ID)
	ids := func() map[string]string {
		rows, err := e.db.R.Query(`SELECT evidence_id, path || ':' || title FROM evidence WHERE source_id = ?`, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var id, key string
			if err := rows.Scan(&id, &key); err != nil {
				t.Fatal(err)
			}
			out[key] = id
		}
		return out
	}
	first := ids()
	if len(first) < 6 {
		t.Fatalf("ids: %v", first)
	}
	if st, err := e.ix.Sync(context.Background(), src.ID, SyncOptions{Force: true}); err != nil || st.Extracted != 2 {
		t.Fatalf("forced sync: %+v %v", st, err)
	}
	if again := ids(); !mapsEqual(first, again) {
		t.Fatalf("forced re-extraction changed ids:\n%v\n%v", first, again)
	}
	// Editing one section keeps the other sections' ids.
	e.write("d/doc.md", strings.Replace(doc, "beta text", "beta text, edited", 1))
	e.sync(src.ID)
	after := ids()
	if after["doc.md:One"] != first["doc.md:One"] || after["doc.md:Three"] != first["doc.md:Three"] {
		t.Fatalf("untouched sections changed ids:\n%v\n%v", first, after)
	}
	if after["doc.md:Two"] == first["doc.md:Two"] {
		t.Fatal("the edited section kept its id")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestSyncAssets(t *testing.T) {
	e := newEnv(t)
	e.write("img/pixel.png", string(tinyPNG))
	e.write("img/icon.svg", `<svg xmlns="http://www.w3.org/2000/svg"/>`)
	e.write("img/huge.png", string(tinyPNG)+strings.Repeat("\x00", MaxAssetBytes))
	src := e.add(SourceInput{Path: "img"})
	st := e.sync(src.ID)
	if st.Indexed != 2 || st.SkippedByReason[SkipTooLarge] != 1 {
		t.Fatalf("stats %+v", st)
	}
	var assetID, mime string
	if err := e.db.R.QueryRow(`SELECT asset_id, mime FROM source_selections WHERE source_id = ? AND path = 'pixel.png' AND selector = 'asset'`, src.ID).
		Scan(&assetID, &mime); err != nil {
		t.Fatal(err)
	}
	if mime != "image/png" || e.count(`SELECT count(*) FROM assets WHERE id = ? AND size = ?`, assetID, len(tinyPNG)) != 1 {
		t.Fatalf("asset %s %s", assetID, mime)
	}
	b, err := e.assets.Get(assetID)
	if err != nil || string(b) != string(tinyPNG) {
		t.Fatalf("Get: %v", err)
	}
	if _, err := e.assets.Get("../../etc/passwd"); !errors.Is(err, ErrAssetNotFound) {
		t.Fatalf("Get(bad id): %v", err)
	}
	if e.count(`SELECT count(*) FROM evidence WHERE source_id = ? AND kind = 'image' AND channel = 'image'`, src.ID) != 2 {
		t.Fatal("images have no evidence")
	}
	if e.match("pixel") != 1 {
		t.Fatal("an image is not found by its name")
	}
}

func TestSyncVanishedFile(t *testing.T) {
	e := newEnv(t)
	e.write("d/stay.txt", "stay\n")
	e.write("d/gone.txt", "gone\n")
	src := e.add(SourceInput{Path: "d"})
	e.sync(src.ID)
	e.write("d/stay.txt", "stay changed\n")
	e.write("d/gone.txt", "gone changed\n")
	// gone.txt disappears after the walk saw it, just before it is read.
	orig := openFile
	openFile = func(name string) (*os.File, error) {
		if filepath.Base(name) == "gone.txt" {
			os.Remove(name)
		}
		return orig(name)
	}
	defer func() { openFile = orig }()
	st := e.sync(src.ID)
	if st.FilesSeen != 1 || st.Deleted != 1 || st.Indexed != 1 {
		t.Fatalf("stats %+v", st)
	}
	if p := e.paths(src.ID); !slices.Equal(p, []string{"stay.txt"}) {
		t.Fatalf("indexed %v", p)
	}
}

func TestSyncCancelKeepsRevision(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Workers = 1 })
	const n = 60
	for i := range n {
		e.write(fmt.Sprintf("d/f%03d.txt", i), fmt.Sprintf("alpha %d\n", i))
	}
	src := e.add(SourceInput{Path: "d"})
	e.sync(src.ID)
	for i := range n {
		e.write(fmt.Sprintf("d/f%03d.txt", i), fmt.Sprintf("bravo %d\n", i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opened := 0
	orig := openFile
	openFile = func(name string) (*os.File, error) {
		if opened++; opened == 10 {
			cancel()
		}
		return orig(name)
	}
	_, err := e.ix.Sync(ctx, src.ID, SyncOptions{})
	openFile = orig
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Sync: %v, want context.Canceled", err)
	}
	if a, b := e.match("alpha"), e.match("bravo"); a != n || b != 0 {
		t.Fatalf("after cancel: alpha %d bravo %d, want the old revision whole", a, b)
	}
	st := e.sync(src.ID)
	if st.Indexed != n || e.match("bravo") != n || e.match("alpha") != 0 {
		t.Fatalf("after resync: %+v", st)
	}
}

func TestSyncConflict(t *testing.T) {
	e := newEnv(t)
	e.write("d/a.txt", "a\n")
	src := e.add(SourceInput{Path: "d"})
	e.sync(src.ID)
	bogus := "rev_other"
	plan := &applyPlan{src: src, base: &bogus, extractions: map[string]*extractionRow{}}
	err := e.ix.apply(context.Background(), plan, &Stats{})
	if codeOf(err) != workspace.CodeConflict || !errors.Is(err, ErrConcurrentSync) {
		t.Fatalf("apply with a stale base: %v", err)
	}
}

func TestSyncSpoolFile(t *testing.T) {
	// A one-byte memory budget sends every record through the file.
	e := newEnv(t, func(o *Options) { o.SpoolMemory = 1 })
	for i := range 50 {
		e.write(fmt.Sprintf("d/f%02d.md", i), fmt.Sprintf("# Title %d\n\nspoolword%d ünïcode parseHTTPRequest\n", i, i))
	}
	src := e.add(SourceInput{Path: "d"})
	st := e.sync(src.ID)
	if st.Indexed != 50 || e.match("spoolword7") != 1 || e.match("ünïcode") != 50 {
		t.Fatalf("stats %+v", st)
	}
	// The code-terms column finds an identifier by its words.
	if n := e.match(`code_terms : "parse http request"`); n != 50 {
		t.Fatalf("code terms: %d", n)
	}
}

func TestRemoveSource(t *testing.T) {
	e := newEnv(t)
	e.write("d/a.md", "# A\n\nremoveword\n")
	src := e.add(SourceInput{Path: "d"})
	e.sync(src.ID)
	if err := RemoveSource(context.Background(), e.db, src.ID); err != nil {
		t.Fatal(err)
	}
	e.checkFTS()
	if e.match("removeword") != 0 || e.count(`SELECT count(*) FROM evidence`) != 0 || e.count(`SELECT count(*) FROM files`) != 0 {
		t.Fatal("the source's index survived its removal")
	}
	if err := RemoveSource(context.Background(), e.db, src.ID); codeOf(err) != workspace.CodeNotFound {
		t.Fatalf("second remove: %v", err)
	}
}

func TestSyncFileSource(t *testing.T) {
	e := newEnv(t)
	e.write("one.md", "# One\n\nsolo\n")
	src := e.add(SourceInput{Path: "one.md"})
	if src.Kind != KindFile {
		t.Fatalf("kind %s", src.Kind)
	}
	st := e.sync(src.ID)
	if st.Indexed != 1 || e.match("solo") != 1 {
		t.Fatalf("stats %+v", st)
	}
	if err := os.Remove(filepath.Join(e.root, "one.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ix.Sync(context.Background(), src.ID, SyncOptions{}); codeOf(err) != workspace.CodeNotFound {
		t.Fatalf("sync of a removed file: %v", err)
	}
	if e.match("solo") != 1 {
		t.Fatal("a failed sync changed the index")
	}
}

// tinyPNG is a valid 1×1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func TestSyncProgress(t *testing.T) {
	e := newEnv(t)
	for i := range 30 {
		e.write(fmt.Sprintf("d/f%02d.txt", i), fmt.Sprintf("line %d\n", i))
	}
	e.write("d/bin.dat", "\x00\x01")
	src := e.add(SourceInput{Path: "d"})
	var calls []Progress
	st, err := e.ix.Sync(context.Background(), src.ID, SyncOptions{Progress: func(p Progress) { calls = append(calls, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || calls[len(calls)-1] != st.Progress {
		t.Fatalf("progress calls %v, stats %+v", calls, st.Progress)
	}
	if want := (Progress{FilesSeen: 31, Indexed: 30, Skipped: 1, Bytes: st.Bytes}); st.Progress != want || st.Bytes == 0 {
		t.Fatalf("progress %+v, want %+v", st.Progress, want)
	}
}

// TestSyncVerdictChanges: an unchanged file whose verdict would now be
// another is read again: a file skipped as too large once max_file_bytes
// lets it in (and the reverse), and an indexed file that can no longer be
// read.
func TestSyncVerdictChanges(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxFileBytes = 100 })
	e.write("docs/small.md", "# Small\n\nsmallword\n")
	e.write("docs/big.md", "# Big\n\nbigword "+strings.Repeat("x", 150)+"\n")
	e.write("docs/locked.md", "# Locked\n\nlockedword\n")
	src := e.add(SourceInput{Path: "docs"})
	e.sync(src.ID)
	if got := e.skips(src.ID); got["big.md"] != SkipTooLarge || e.match("bigword") != 0 {
		t.Fatalf("first sync: skips %v", got)
	}
	// A larger max_file_bytes: big.md comes in, unchanged on disk.
	e.ix = NewIndexer(e.db, e.policy, e.assets, Options{MaxFileBytes: 1000})
	e.sync(src.ID)
	if got := e.skips(src.ID); got["big.md"] != "" || e.match("bigword") != 1 {
		t.Fatalf("after raising the limit: skips %v, bigword %d", got, e.match("bigword"))
	}
	// A smaller one: it leaves again.
	e.ix = NewIndexer(e.db, e.policy, e.assets, Options{MaxFileBytes: 100})
	e.sync(src.ID)
	if got := e.skips(src.ID); got["big.md"] != SkipTooLarge || e.match("bigword") != 0 {
		t.Fatalf("after lowering the limit: skips %v", got)
	}
	// An indexed file made unreadable (same size and modified time) leaves
	// the index with the reason.
	restore := failOpen(t, "locked.md", fs.ErrPermission)
	defer restore()
	origCanRead := canRead
	canRead = func(path string) bool { return !strings.HasSuffix(path, "locked.md") }
	defer func() { canRead = origCanRead }()
	e.sync(src.ID)
	if got := e.skips(src.ID); got["locked.md"] != SkipUnreadable || e.match("lockedword") != 0 || e.match("smallword") != 1 {
		t.Fatalf("after the chmod: skips %v, lockedword %d", got, e.match("lockedword"))
	}
}

// TestSyncFolderGlobs: a glob ending in "/" names a folder and everything in
// it, as in a .gitignore, for exclude and include alike.
func TestSyncFolderGlobs(t *testing.T) {
	e := newEnv(t)
	e.write("tree/keep.md", "# Keep\n\nkeepword\n")
	e.write("tree/docs/a.md", "# A\n\ndocsword\n")
	e.write("tree/docs/deep/b.md", "# B\n\ndeepword\n")
	src := e.add(SourceInput{Path: "tree", Exclude: []string{"docs/"}})
	e.sync(src.ID)
	if p := e.paths(src.ID); !slices.Equal(p, []string{"keep.md"}) {
		t.Errorf("exclude docs/: indexed %v", p)
	}
	inc := e.add(SourceInput{Path: "tree", Include: []string{"docs/"}, CollectionID: "other"})
	e.sync(inc.ID)
	if p := e.paths(inc.ID); !slices.Equal(p, []string{"docs/a.md", "docs/deep/b.md"}) {
		t.Errorf("include docs/: indexed %v", p)
	}
}
