package query

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/tychora/tychora/sources"
)

// savedEnv is a tree large enough for deltas and an engine that saves
// the base of its file index to the returned path.
func savedEnv(t *testing.T) (*searchEnv, string, string) {
	env := newSearchEnv(t)
	tree := fileIndexTree()
	for i := range 3 * fileDeltaShare {
		tree[fmt.Sprintf("filler/f%02d.go", i)] = fmt.Sprintf("package filler\n\n// F%d fills a mutex.\nvar F%d = %d\n", i, i, i)
	}
	src := env.folder("go", "default", tree)
	path := filepath.Join(t.TempDir(), "file-index")
	env.engine.SavedIndex = path
	env.engine.fileIdx.inlineFiles = 2
	return env, src, path
}

// nextEngine is an engine over env's index that saves to path, as the
// next process to open the workspace has.
func (env *searchEnv) nextEngine(t *testing.T, path string) *Engine {
	e := &Engine{DB: env.db, Cursors: env.engine.Cursors, Collections: env.engine.Collections, SavedIndex: path}
	e.fileIdx.inlineFiles = 2
	t.Cleanup(func() { e.Close() })
	return e
}

// savedQuestions are asked of every engine the tests compare.
var savedQuestions = []string{"mutex quokka", "ParseIP", "parsing addresses", "zone of an address", "tests for parse"}

// rankingsOf lists each question's hits (path, unit, score) by e.
func rankingsOf(t *testing.T, env *searchEnv, e *Engine) []string {
	t.Helper()
	var out []string
	for _, q := range savedQuestions {
		res, err := e.Search(context.Background(), env.all, QueryRequest{Question: q, Limit: 20})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		for _, h := range res.Hits {
			out = append(out, fmt.Sprintf("%s\t%s\t%s\t%v", q, h.Path, h.EvidenceID, h.Score))
		}
	}
	return out
}

// samePart reports how a decoded part differs from the part it was
// saved from: "" when it holds the same.
func samePart(got, want *filePart) string {
	w := *want
	w.names = nil
	g := *got
	switch {
	case !reflect.DeepEqual(g.files, w.files):
		return "files"
	case !reflect.DeepEqual(g.byKey, w.byKey):
		return "byKey"
	case !reflect.DeepEqual(g.stems, w.stems):
		return "stems"
	case g.bytes != w.bytes || g.unitsOK != w.unitsOK:
		return "bytes or unitsOK"
	case !reflect.DeepEqual(g.units, w.units) || !reflect.DeepEqual(g.unitFiles, w.unitFiles):
		return "units"
	case !reflect.DeepEqual(g.ustems, w.ustems):
		return "unit postings"
	case !reflect.DeepEqual(g.fileUnits, w.fileUnits):
		return "fileUnits"
	case !bytes.Equal(g.titles, w.titles) || !slices.Equal(g.titleEnds, w.titleEnds):
		return "titles"
	}
	return ""
}

// A base built whole is saved (0600) and reads back as it was built; the
// next engine starts from it, ranks as the first, and takes a sync's
// changes as a delta over it.
func TestSavedFileIndex(t *testing.T) {
	env, src, path := savedEnv(t)
	first := rankingsOf(t, env, env.engine)
	env.engine.fileIdx.saves.Wait()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the built base was not saved: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("saved with mode %v, want 0600", st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeFilePart(raw, savedIdentity())
	if err != nil {
		t.Fatal(err)
	}
	_, ix, release := indexedQuery(t, env, "mutex")
	release()
	if len(got.units) == 0 || len(got.ustems) == 0 {
		t.Fatalf("the saved base holds no unit index (%d units)", len(got.units))
	}
	if diff := samePart(got, ix.base); diff != "" {
		t.Fatalf("the saved base differs from the built one in its %s", diff)
	}

	next := env.nextEngine(t, path)
	if r := rankingsOf(t, env, next); !slices.Equal(r, first) {
		t.Errorf("from the saved base:\n%v\nbuilt:\n%v", r, first)
	}
	if n := next.fileIdx.loaded.Load(); n != 1 {
		t.Errorf("the next engine read the saved base %d times, want 1", n)
	}
	if st2, err := os.Stat(path); err != nil || !os.SameFile(st2, st) {
		t.Errorf("the next engine wrote the saved base again (%v)", err)
	}

	// Two files changed: a delta over the saved base, ranked as a fresh
	// build ranks.
	env.write("go/zone/zone.go", "package zone\n\n// Zone keeps a quokka behind a mutex.\ntype Zone struct{ mu Mutex }\n")
	env.write("go/added/quokka.go", "package added\n\n// Quokka is new.\nvar Quokka = 1\n")
	if _, err := env.ix.Sync(context.Background(), src, sources.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	third := env.nextEngine(t, path)
	built := env.nextEngine(t, "")
	if r, want := rankingsOf(t, env, third), rankingsOf(t, env, built); !slices.Equal(r, want) {
		t.Errorf("after a sync, from the saved base:\n%v\nbuilt:\n%v", r, want)
	}
	_, ix3, release := indexedQueryWith(t, env, third, "quokka")
	release()
	if third.fileIdx.loaded.Load() != 1 || len(ix3.delta.files) != 2 {
		t.Errorf("after a sync: saved base read %d times, delta of %d files; want 1 and 2",
			third.fileIdx.loaded.Load(), len(ix3.delta.files))
	}
}

// indexedQueryWith is indexedQuery with engine e.
func indexedQueryWith(t *testing.T, env *searchEnv, e *Engine, question string) (*preparedQuery, *fileIndex, func()) {
	t.Helper()
	keep := env.engine
	env.engine = e
	defer func() { env.engine = keep }()
	return indexedQuery(t, env, question)
}

// A saved base that cannot be used — another binary's, damaged, cut
// short, not one at all — is left alone: the index is built, and ranks
// as ever.
func TestSavedFileIndexFaults(t *testing.T) {
	env, _, path := savedEnv(t)
	// A temporary file a killed save left goes with the next save.
	left := filepath.Join(filepath.Dir(path), ".file-index-12345")
	if err := os.WriteFile(left, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := rankingsOf(t, env, env.engine)
	env.engine.fileIdx.saves.Wait()
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("a killed save's temporary file stays (%v)", err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	id := savedIdentity()
	want, err := decodeFilePart(good, id)
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Clone(good)
	at := len(savedMagic) + 5
	other[at] ^= 0xff // the identity's first byte
	flipped := bytes.Clone(good)
	flipped[len(flipped)-7] ^= 0x10
	cases := map[string][]byte{
		"another binary's": other,
		"a flipped bit":    flipped,
		"cut short":        good[:len(good)/2],
		"empty":            {},
		"not an index":     []byte("tychora file index\nnot really"),
	}
	for name, b := range cases {
		if _, err := decodeFilePart(b, id); err == nil {
			t.Errorf("%s: decoded", name)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		e := env.nextEngine(t, path)
		if r := rankingsOf(t, env, e); !slices.Equal(r, first) {
			t.Errorf("%s: the rankings changed", name)
		}
		if n := e.fileIdx.loaded.Load(); n != 0 {
			t.Errorf("%s: read %d times", name, n)
		}
		e.fileIdx.saves.Wait()
		b, _ := os.ReadFile(path)
		if again, err := decodeFilePart(b, id); err != nil || samePart(again, want) != "" {
			t.Errorf("%s: the base built again was not saved over it (%v)", name, err)
		}
	}
}

// A serving engine's warm-up reads a saved base that needs no whole
// build before any search ranks, as it builds a small index; one that
// needs a whole build it leaves to the build behind the searches, which
// starts from it.
func TestSavedFileIndexWarm(t *testing.T) {
	env, src, path := savedEnv(t)
	first := rankingsOf(t, env, env.engine)
	env.engine.fileIdx.saves.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	next := env.nextEngine(t, path)
	next.fileIdx.hold = make(chan struct{}) // a build behind would block
	t.Cleanup(sync.OnceFunc(func() { close(next.fileIdx.hold) }))
	next.StartWarm(ctx)
	next.warming.Wait()
	if behind, index := next.fileIdx.state(); behind || index == nil || next.fileIdx.loaded.Load() != 1 {
		t.Fatalf("warm-up: behind %v, index %v, saved base read %d times; want it read in the warm-up",
			behind, index != nil, next.fileIdx.loaded.Load())
	}
	if r := rankingsOf(t, env, next); !slices.Equal(r, first) {
		t.Errorf("after the warm-up:\n%v\nbuilt:\n%v", r, first)
	}

	// Every file changed: the build behind the searches.
	for _, rel := range []string{"zone/zone.go", "notes/README.md", "notes/plain.txt"} {
		env.write("go/"+rel, "package x\n\n// rewritten\n")
	}
	for i := range 3 * fileDeltaShare {
		env.write(fmt.Sprintf("go/filler/f%02d.go", i), fmt.Sprintf("package filler\n\n// G%d rewritten.\nvar G%d = %d\n", i, i, i))
	}
	if _, err := env.ix.Sync(context.Background(), src, sources.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := env.nextEngine(t, path)
	hold := make(chan struct{})
	stale.fileIdx.hold = hold
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	stale.StartWarm(ctx)
	stale.warming.Wait()
	if behind, index := stale.fileIdx.state(); !behind || index != nil {
		t.Fatalf("a stale saved base: behind %v, index %v; want the build behind", behind, index != nil)
	}
	release()
	stale.fileIdx.done.Wait()
	stale.fileIdx.saves.Wait()
	if r, want := rankingsOf(t, env, stale), rankingsOf(t, env, env.nextEngine(t, "")); !slices.Equal(r, want) {
		t.Errorf("built from a stale saved base:\n%v\nbuilt:\n%v", r, want)
	}
	if n := stale.fileIdx.loaded.Load(); n != 1 {
		t.Errorf("the stale base was read %d times, want once", n)
	}
}

// PrepareSaved saves the index a command's job changed, and leaves a
// saved base that needs no whole build as it is, without reading it
// whole.
func TestPrepareSaved(t *testing.T) {
	env, src, path := savedEnv(t)
	ctx := context.Background()
	if err := env.engine.PrepareSaved(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("nothing saved: %v", err)
	}
	next := env.nextEngine(t, path)
	if err := next.PrepareSaved(ctx); err != nil {
		t.Fatal(err)
	}
	if st2, err := os.Stat(path); err != nil || !os.SameFile(st2, st) || next.fileIdx.loaded.Load() != 0 {
		t.Errorf("a fresh saved base was read (%d) or written again (%v)", next.fileIdx.loaded.Load(), err)
	}
	for i := range 3 * fileDeltaShare {
		env.write(fmt.Sprintf("go/filler/f%02d.go", i), fmt.Sprintf("package filler\n\n// H%d rewritten.\nvar H%d = %d\n", i, i, i))
	}
	if _, err := env.ix.Sync(ctx, src, sources.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := env.nextEngine(t, path)
	if err := stale.PrepareSaved(ctx); err != nil {
		t.Fatal(err)
	}
	if st3, err := os.Stat(path); err != nil || os.SameFile(st3, st) {
		t.Errorf("a stale saved base was not written again (%v)", err)
	}
	if r, want := rankingsOf(t, env, env.nextEngine(t, path)), rankingsOf(t, env, env.nextEngine(t, "")); !slices.Equal(r, want) {
		t.Errorf("from the base saved again:\n%v\nbuilt:\n%v", r, want)
	}
}

// A saved base is not written where it would leave the disk short of
// room for the index's own writes.
func TestSavedFileIndexLeavesRoom(t *testing.T) {
	env, _, path := savedEnv(t)
	keep := savedFreeMin
	savedFreeMin = 1 << 62
	defer func() { savedFreeMin = keep }()
	rankingsOf(t, env, env.engine)
	env.engine.fileIdx.saves.Wait()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("saved on a disk without room (%v)", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".file-index-*")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
	// With room, the next engine's build is saved.
	savedFreeMin = keep
	next := env.nextEngine(t, path)
	rankingsOf(t, env, next)
	next.fileIdx.saves.Wait()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("not saved with room: %v", err)
	}
}

// A base too large for its units is not saved, and one saved so is not
// read: the workspace may have shrunk since, and a fresh build would hold
// them.
func TestSavedFileIndexNeedsUnits(t *testing.T) {
	env, _, path := savedEnv(t)
	rankingsOf(t, env, env.engine)
	env.engine.fileIdx.saves.Wait()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeFilePart(raw, savedIdentity())
	if err != nil {
		t.Fatal(err)
	}
	p.unitsOK, p.units, p.unitFiles, p.ustems, p.fileUnits = false, nil, nil, nil, nil
	if savable(p) {
		t.Error("a base without its units is savable")
	}
	p.names = map[uint64]string{}
	for h := range p.stems {
		p.names[h] = "x" // any name: the part is only encoded
	}
	pieces, err := encodeFilePart(p, savedIdentity())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Join(pieces, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	next := env.nextEngine(t, path)
	if next.loadSaved() != nil {
		t.Error("a saved base without its units was read")
	}
}

// A saved index that counts more files than any build holds is refused
// before anything is made for them, however well it is framed.
func TestSavedFileIndexBounds(t *testing.T) {
	id := []byte("0123456789abcdef0123456789abcdef")
	// Files of ten zero bytes each (seven empty strings, three zeros):
	// one more than the bound.
	var w savedWriter
	w.uvarint(maxSavedFiles + 1)
	w.b = append(w.b, make([]byte, 10*(maxSavedFiles+1))...)
	in := bytes.Join(frameSaved(id, w.b), nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decodeFilePart(in, id)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Error("decoded more files than the bound")
	}
	// Two million files decoded before the refusal would be hundreds of MB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("refusing the file allocated %d MB", got>>20)
	}
}

// An index is built whole, not refreshed, when more than an eighth of
// its base's files changed, were added, or went.
func TestWholeBuild(t *testing.T) {
	for _, c := range []struct {
		base, now, kept int
		whole           bool
	}{
		{80, 80, 80, false},
		{80, 80, 70, false}, // ten changed
		{80, 80, 69, true},  // eleven changed
		{80, 91, 80, true},  // eleven added
		{80, 69, 69, true},  // eleven removed
		{80, 75, 75, false}, // five removed
	} {
		if got := wholeBuild(c.base, c.now, c.kept); got != c.whole {
			t.Errorf("wholeBuild(%d, %d, %d) = %v, want %v", c.base, c.now, c.kept, got, c.whole)
		}
	}
}

// FuzzSavedFileIndex: decoding any bytes returns a part whose every
// reference is in range, or an error; it never panics.
func FuzzSavedFileIndex(f *testing.F) {
	p := newFilePart()
	p.names = map[uint64]string{}
	p.files = []fileEntry{{sourceID: "s", path: "a/b.go", print: "x"}, {sourceID: "s", path: "c.md"}}
	p.byKey = map[string]int32{fileKeyOf("s", "a/b.go"): 0, fileKeyOf("s", "c.md"): 1}
	h := stemHash([]byte("pars"))
	p.names[h] = "pars"
	p.stems[h] = []filePosting{{file: 0, text: 2}, {file: 1, title: 1, path: 3}}
	p.units = []unitEntry{{seq: 5, file: 0, lens: [4]uint32{1, 0, 4, 2}}, {seq: 9, file: 1}}
	p.unitFiles = []int32{0, 1}
	p.fileUnits = [][2]int32{{0, 1}, {1, 2}}
	p.ustems = map[uint64][]unitPosting{h: {{unit: 0, body: 2, th: 0x10}, {unit: 1, code: 1}}}
	p.addTitle("func ParseB")
	p.addTitle("c")
	id := []byte("0123456789abcdef0123456789abcdef")
	pieces, err := encodeFilePart(p, id)
	if err != nil {
		f.Fatal(err)
	}
	good := bytes.Join(pieces, nil)
	if q, err := decodeFilePart(good, id); err != nil {
		f.Fatalf("the seed does not decode: %v", err)
	} else if len(q.units) != 2 || !bytes.Equal(q.titles, p.titles) || !slices.Equal(q.titleEnds, p.titleEnds) {
		f.Fatalf("the seed decodes with %d units, titles %q %v", len(q.units), q.titles, q.titleEnds)
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte(savedMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The checksum keeps random bytes out of the body: fuzz the body
		// too, under a header made for it.
		for _, in := range [][]byte{b, bytes.Join(frameSaved(id, b), nil)} {
			q, err := decodeFilePart(in, id)
			if err != nil {
				continue
			}
			for _, u := range q.units {
				if u.file < 0 || int(u.file) >= len(q.files) {
					t.Fatalf("unit of file %d of %d", u.file, len(q.files))
				}
			}
			for _, ps := range q.stems {
				for _, fp := range ps {
					if fp.file < 0 || int(fp.file) >= len(q.files) {
						t.Fatalf("posting of file %d of %d", fp.file, len(q.files))
					}
				}
			}
			for _, ps := range q.ustems {
				for _, up := range ps {
					if up.unit < 0 || int(up.unit) >= len(q.units) {
						t.Fatalf("posting of unit %d of %d", up.unit, len(q.units))
					}
				}
			}
			for _, r := range q.fileUnits {
				if r[0] < 0 || r[1] < r[0] || int(r[1]) > len(q.units) {
					t.Fatalf("units %v of %d", r, len(q.units))
				}
			}
			checkTitleEnds(t, q)
		}
	})
}

// checkTitleEnds fails t unless p's title ends go up, one a unit, to the
// end of its titles.
func checkTitleEnds(t *testing.T, p *filePart) {
	t.Helper()
	if !p.unitsOK {
		return
	}
	if len(p.titleEnds) != len(p.units) {
		t.Fatalf("%d title ends for %d units", len(p.titleEnds), len(p.units))
	}
	lo := uint32(0)
	for _, end := range p.titleEnds {
		if end < lo || int(end) > len(p.titles) {
			t.Fatalf("title ends %v over %d bytes", p.titleEnds, len(p.titles))
		}
		lo = end
	}
}

// A saved file whose title lengths wrap around (ends that go back, then
// forth to the last byte) is refused, not read into a part whose titles
// a search would slice out of order.
func TestSavedTitlesOutOfOrder(t *testing.T) {
	p := newFilePart()
	p.names = map[uint64]string{}
	p.files = []fileEntry{{sourceID: "s", path: "a.go", print: "x"}}
	p.byKey = map[string]int32{fileKeyOf("s", "a.go"): 0}
	p.units = []unitEntry{{seq: 1}, {seq: 2}, {seq: 3}}
	p.unitFiles = []int32{0, 0, 0}
	p.fileUnits = [][2]int32{{0, 3}}
	for _, title := range []string{"abcde", "", ""} {
		p.addTitle(title)
	}
	id := []byte("0123456789abcdef0123456789abcdef")
	pieces, err := encodeFilePart(p, id)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Join(pieces[1:], nil)
	// The titles, then their lengths 5, 0, 0: made 5, 2⁶⁴−3, 3 (ends 5,
	// 2, 5).
	at := bytes.Index(body, []byte("abcde\x05\x00\x00"))
	if at < 0 {
		t.Fatal("the titles' lengths are not where they are written")
	}
	crafted := slices.Clone(body[:at+5])
	crafted = binary.AppendUvarint(crafted, 5)
	crafted = binary.AppendUvarint(crafted, 1<<64-3)
	crafted = binary.AppendUvarint(crafted, 3)
	crafted = append(crafted, body[at+8:]...)
	if _, err := decodeFilePart(bytes.Join(frameSaved(id, crafted), nil), id); err == nil {
		t.Fatal("title ends that go back were read")
	}
	// The same file as written reads back.
	if q, err := decodeFilePart(bytes.Join(frameSaved(id, body), nil), id); err != nil {
		t.Fatalf("as written: %v", err)
	} else {
		checkTitleEnds(t, q)
	}
}
