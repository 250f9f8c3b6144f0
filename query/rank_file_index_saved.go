package query

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// A saved file index.
//
// Building a large workspace's file index tokenizes every unit again
// (3.6 s over Go's tree, BenchmarkFileIndexBuild): a serving owner pays it
// once, but every command that opens the workspace for its own run (a
// search without an owner) paid it again, and so did every owner at its
// start. So the base of an index built whole is saved beside the index
// (Engine.SavedIndex: .runtime/file-index, 0600), and the first build of
// a process reads it instead: the saved base is taken as the index to
// refresh, so that the files whose fingerprint (fileEntry.print: content,
// extraction, role, units' rows) is what the snapshot holds are kept and
// the others read into the delta, as in any refresh; with more than
// 1/fileDeltaShare of them changed it is built whole (and saved) again.
// The saved index only saves time: any fault in it (another binary made
// it, a wrong checksum, a value out of range) and it is built as before.
//
// The stems' hashes are this process's (stemSeed), so the file holds the
// stems; their counts are the tokenizer's and the scorer's of the binary
// that made them, so it names that binary (the executable's SHA-256) and
// another one builds again.

// savedMagic and savedVersion open a saved index.
const (
	savedMagic   = "tychora file index\n"
	savedVersion = 2
)

// maxSavedBytes bounds the saved index read: more than any index the
// bounds of its build allow (maxFileIndexBytes, maxUnitPostings).
const maxSavedBytes = 1 << 30

// Bounds of what a saved index may hold, checked before anything is made
// for it, so that a crafted file cannot make the decoding allocate more
// than a build of the largest index would: files, units, stems, file
// postings (unit postings: maxUnitPostings), a string's bytes.
const (
	maxSavedFiles    = 1 << 21
	maxSavedUnits    = 1 << 23
	maxSavedStems    = 1 << 22
	maxSavedPostings = 1 << 24
	maxSavedString   = 1 << 16
)

// savedTemp names the temporary file a saved index is written to.
const savedTemp = ".file-index-*"

// savedFreeMin is the free space a saved index must leave on its disk, at
// least (and twice its size). A variable for the tests.
var savedFreeMin int64 = 64 << 20

// errSaved is the fault of a saved index that cannot be used.
var errSaved = errors.New("search: saved file index: unusable")

// savedIdentity is the identity of this binary a saved index must carry:
// the SHA-256 of the executable; nil when it cannot be read (nothing is
// saved or read then).
var savedIdentity = sync.OnceValue(func() []byte {
	// The running file: where /proc has it, even when the binary on disk
	// was replaced since the process started (an upgrade under a running
	// server), which the path os.Executable names would hash instead.
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		exe, xerr := os.Executable()
		if xerr != nil {
			return nil
		}
		if f, err = os.Open(exe); err != nil {
			return nil
		}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil
	}
	return h.Sum(nil)
})

// castagnoli checksums a saved index's body.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeFilePart encodes p (built with its stems' names) for identity id:
// the header (magic, version, id, the body's length and checksum), then
// the body, in pieces to write one after the other. It fails when a
// stem's name is missing.
func encodeFilePart(p *filePart, id []byte) ([][]byte, error) {
	var w savedWriter
	w.b = make([]byte, 0, 64+len(p.files)*128+len(p.units)*29+len(p.fileUnits)*8+(len(p.stems)+len(p.ustems))*16)
	w.uvarint(uint64(len(p.files)))
	for i := range p.files {
		f := &p.files[i]
		for _, s := range [...]string{f.sourceID, f.collectionID, f.path, f.role, f.kind, f.language, f.print} {
			w.str(s)
		}
		w.varint(f.bytes)
		w.varint(f.first)
		w.varint(f.last)
	}
	w.varint(p.bytes)
	units := p.unitsOK && p.fileUnits != nil
	if units {
		w.b = append(w.b, 1)
		w.uvarint(uint64(len(p.units)))
		for _, u := range p.units {
			w.b = binary.LittleEndian.AppendUint64(w.b, uint64(u.seq))
			w.b = binary.LittleEndian.AppendUint32(w.b, uint32(u.file))
			for _, n := range u.lens {
				w.b = binary.LittleEndian.AppendUint32(w.b, n)
			}
			w.b = append(w.b, u.flags)
		}
		for _, r := range p.fileUnits {
			w.b = binary.LittleEndian.AppendUint32(w.b, uint32(r[0]))
			w.b = binary.LittleEndian.AppendUint32(w.b, uint32(r[1]))
		}
		// The units' folded titles: their bytes, then each one's length.
		w.uvarint(uint64(len(p.titles)))
		w.b = append(w.b, p.titles...)
		lo := uint32(0)
		for _, end := range p.titleEnds {
			w.uvarint(uint64(end - lo))
			lo = end
		}
	} else {
		w.b = append(w.b, 0)
	}
	// Every stem with postings of either kind, once, with its name.
	type stem struct {
		name string
		fps  []filePosting
		ups  []unitPosting
	}
	stems := make([]stem, 0, len(p.stems)+len(p.ustems)/8)
	nf, nu := 0, 0
	for h, fps := range p.stems {
		st := stem{name: p.names[h], fps: fps}
		if units {
			st.ups = p.ustems[h]
		}
		stems = append(stems, st)
		nf, nu = nf+len(st.fps), nu+len(st.ups)
	}
	if units {
		for h, ups := range p.ustems {
			if _, ok := p.stems[h]; !ok {
				stems = append(stems, stem{name: p.names[h], ups: ups})
				nu += len(ups)
			}
		}
	}
	w.uvarint(uint64(len(stems)))
	w.uvarint(uint64(nf))
	w.uvarint(uint64(nu))
	// The stems with their postings' counts, then every file posting and
	// every unit posting, each kind in the stems' order, in sections of
	// their own (decoded side by side).
	for _, st := range stems {
		if st.name == "" {
			return nil, errSaved // not kept while it was built
		}
		w.str(st.name)
		w.uvarint(uint64(len(st.fps)))
		w.uvarint(uint64(len(st.ups)))
	}
	// Postings as varints: the gap to the stem's last file (unit) less
	// one, then the counts.
	var fw, uw savedWriter
	fw.b, uw.b = make([]byte, 0, nf*8+16), make([]byte, 0, nu*7+16)
	for _, st := range stems {
		prev := int32(-1)
		for _, fp := range st.fps {
			fw.uvarint(uint64(fp.file - prev - 1))
			for _, n := range [...]uint16{fp.title, fp.text, fp.code, fp.path} {
				fw.uvarint(uint64(n))
			}
			prev = fp.file
		}
		prev = -1
		for _, up := range st.ups {
			uw.uvarint(uint64(up.unit - prev - 1))
			uw.uvarint(uint64(up.body))
			uw.b = append(uw.b, up.code, up.th)
			prev = up.unit
		}
	}
	w.uvarint(uint64(len(fw.b)))
	var mid savedWriter
	mid.uvarint(uint64(len(uw.b)))
	return frameSaved(id, w.b, fw.b, mid.b, uw.b), nil
}

// frameSaved puts the header before the pieces of a body.
func frameSaved(id []byte, body ...[]byte) [][]byte {
	size, sum := 0, uint32(0)
	for _, b := range body {
		size += len(b)
		sum = crc32.Update(sum, castagnoli, b)
	}
	head := make([]byte, 0, len(savedMagic)+17+len(id))
	head = append(head, savedMagic...)
	head = binary.LittleEndian.AppendUint32(head, savedVersion)
	head = append(head, byte(len(id)))
	head = append(head, id...)
	head = binary.LittleEndian.AppendUint64(head, uint64(size))
	head = binary.LittleEndian.AppendUint32(head, sum)
	return append([][]byte{head}, body...)
}

// savedWriter appends a saved index's values.
type savedWriter struct{ b []byte }

func (w *savedWriter) uvarint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }
func (w *savedWriter) varint(n int64)   { w.b = binary.AppendVarint(w.b, n) }
func (w *savedWriter) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }

// savedReader reads a saved index's values; the first fault sticks, and
// every read after it returns zero.
type savedReader struct {
	b   []byte
	err error
}

func (r *savedReader) fail() { r.err, r.b = errSaved, nil }

func (r *savedReader) uvarint() uint64 {
	n, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return n
}

// varint reads a signed varint (zig-zag, as binary.AppendVarint writes).
func (r *savedReader) varint() int64 {
	u := r.uvarint()
	if u&1 != 0 {
		return ^int64(u >> 1)
	}
	return int64(u >> 1)
}

// decodeFilePostings decodes the file postings of a saved index's
// section b into all, each stem's (counts[i][0]) as its own run; every
// file is below nfiles and b is read to its end. False on a fault.
func decodeFilePostings(b []byte, all []filePosting, counts [][2]int32, nfiles int) bool {
	var v [5]uint32
	at := 0
	for _, c := range counts {
		file := int64(-1)
		for j := at; j < at+int(c[0]); j++ {
			for k := range v {
				n, ok := 0, false
				if v[k], n, ok = uvarint32(b); !ok {
					return false
				}
				b = b[n:]
			}
			if v[1]|v[2]|v[3]|v[4] > math.MaxUint16 {
				return false
			}
			file += int64(v[0]) + 1
			if file >= int64(nfiles) {
				return false
			}
			all[j] = filePosting{file: int32(file), title: uint16(v[1]), text: uint16(v[2]), code: uint16(v[3]), path: uint16(v[4])}
		}
		at += int(c[0])
	}
	return len(b) == 0
}

// decodeUnitPostings is decodeFilePostings for unit postings
// (counts[i][1]), every unit below nunits.
func decodeUnitPostings(b []byte, all []unitPosting, counts [][2]int32, nunits int) bool {
	at := 0
	for _, c := range counts {
		unit := int64(-1)
		for j := at; j < at+int(c[1]); j++ {
			gap, n, ok := uvarint32(b)
			if !ok {
				return false
			}
			b = b[n:]
			body, n, ok := uvarint32(b)
			if !ok || body > math.MaxUint16 || len(b) < n+2 {
				return false
			}
			unit += int64(gap) + 1
			if unit >= int64(nunits) {
				return false
			}
			all[j] = unitPosting{unit: int32(unit), body: uint16(body), code: b[n], th: b[n+1]}
			b = b[n+2:]
		}
		at += int(c[1])
	}
	return len(b) == 0
}

// uvarint32 decodes a varint of at most 32 bits at the start of b: its
// value and length; false on a fault.
func uvarint32(b []byte) (uint32, int, bool) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint32(b[0]), 1, true
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > math.MaxUint32 {
		return 0, 0, false
	}
	return uint32(n), k, true
}

// take returns the next n bytes.
func (r *savedReader) take(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *savedReader) str() string {
	n := r.uvarint()
	if n > maxSavedString {
		r.fail()
		return ""
	}
	return string(r.take(n))
}

// bounded reads a count of items of at least size bytes each, at most
// limit.
func (r *savedReader) bounded(size, limit int) int {
	n := r.count(size)
	if n > limit {
		r.fail()
		return 0
	}
	return n
}

// count reads a count of items of at least size bytes each: one the rest
// of the body cannot hold is a fault (no allocation follows a false one).
func (r *savedReader) count(size int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/size) {
		r.fail()
		return 0
	}
	return int(n)
}

// decodeFilePart decodes a saved index made by identity id into a part as
// readFilePart builds it; any fault is errSaved.
func decodeFilePart(b, id []byte) (*filePart, error) { return decodeSaved(b, id, false) }

// decodeSaved is decodeFilePart; filesOnly stops after the files, which
// the part then holds alone (savedFresh).
func decodeSaved(b, id []byte, filesOnly bool) (*filePart, error) {
	le := binary.LittleEndian
	if !bytes.HasPrefix(b, []byte(savedMagic)) {
		return nil, errSaved
	}
	b = b[len(savedMagic):]
	if len(b) < 5 || le.Uint32(b) != savedVersion || int(b[4]) != len(id) || len(id) == 0 {
		return nil, errSaved
	}
	b = b[5:]
	if len(b) < len(id)+12 || !bytes.Equal(b[:len(id)], id) {
		return nil, errSaved
	}
	b = b[len(id):]
	size, sum := le.Uint64(b), le.Uint32(b[8:])
	b = b[12:]
	if size != uint64(len(b)) || crc32.Checksum(b, castagnoli) != sum {
		return nil, errSaved
	}
	r := &savedReader{b: b}
	p := newFilePart()
	nfiles := r.bounded(10, maxSavedFiles)
	p.files = make([]fileEntry, 0, nfiles)
	p.byKey = make(map[string]int32, nfiles)
	for i := 0; i < nfiles && r.err == nil; i++ {
		f := fileEntry{sourceID: r.str(), collectionID: r.str(), path: r.str(), role: r.str(), kind: r.str(),
			language: r.str(), print: r.str()}
		f.bytes, f.first, f.last = r.varint(), r.varint(), r.varint()
		key := fileKeyOf(f.sourceID, f.path)
		if _, dup := p.byKey[key]; dup {
			r.fail()
			break
		}
		f.prior, f.pathLen, f.facts = rolePrior(f.role), pathTokens(f.path), newPathFacts(f.path)
		p.byKey[key] = int32(len(p.files))
		p.files = append(p.files, f)
	}
	p.bytes = r.varint()
	if filesOnly {
		if r.err != nil {
			return nil, errSaved
		}
		return p, nil
	}
	units := r.take(1)
	p.unitsOK = len(units) == 1 && units[0] == 1
	if p.unitsOK {
		nunits := r.bounded(29, maxSavedUnits)
		raw := r.take(uint64(nunits) * 29)
		p.units = make([]unitEntry, nunits)
		p.unitFiles = make([]int32, nunits)
		for i := range p.units {
			if r.err != nil {
				break
			}
			u := raw[i*29 : (i+1)*29]
			e := unitEntry{seq: int64(le.Uint64(u)), file: int32(le.Uint32(u[8:])), flags: u[28]}
			for c := range e.lens {
				e.lens[c] = le.Uint32(u[12+4*c:])
			}
			if e.file < 0 || int(e.file) >= nfiles {
				r.fail()
			}
			p.units[i], p.unitFiles[i] = e, e.file
		}
		raw = r.take(uint64(nfiles) * 8)
		p.fileUnits = make([][2]int32, nfiles)
		for i := range p.fileUnits {
			if r.err != nil {
				break
			}
			lo, hi := int32(le.Uint32(raw[8*i:])), int32(le.Uint32(raw[8*i+4:]))
			if lo < 0 || hi < lo || int(hi) > nunits {
				r.fail()
			}
			p.fileUnits[i] = [2]int32{lo, hi}
		}
		// The titles (at most maxSavedBytes, so every end fits 32 bits),
		// then each one's length: the ends only go up, to the last byte.
		titles := r.take(uint64(r.count(1)))
		p.titles = slices.Clone(titles)
		p.titleEnds = make([]uint32, nunits)
		end := uint64(0)
		for i := range p.titleEnds {
			n := r.uvarint()
			if r.err != nil || n > uint64(len(titles))-end {
				r.fail()
				break
			}
			end += n
			p.titleEnds[i] = uint32(end)
		}
		if end != uint64(len(titles)) {
			r.fail()
		}
	}
	nstems := r.bounded(3, maxSavedStems)
	nfp, nup := r.bounded(5, maxSavedPostings), r.bounded(4, maxUnitPostings)
	if r.err != nil || nup > 0 && !p.unitsOK || nstems > nfp+nup {
		return nil, errSaved // every stem has a posting
	}
	p.stems = make(map[uint64][]filePosting, nstems)
	p.ustems = make(map[uint64][]unitPosting, nstems)
	// Each kind's postings in one array, as pack and packUnits leave them.
	fall := make([]filePosting, nfp)
	uall := make([]unitPosting, nup)
	counts := make([][2]int32, 0, nstems)
	nf, nu := 0, 0
	for i := 0; i < nstems && r.err == nil; i++ {
		h := stemHash(r.take(r.uvarint()))
		f, u := r.count(5), r.count(4)
		if f > len(fall)-nf || u > len(uall)-nu || f+u == 0 {
			r.fail()
			break
		}
		if f > 0 {
			p.stems[h] = fall[nf : nf+f : nf+f]
		}
		if u > 0 {
			p.ustems[h] = uall[nu : nu+u : nu+u]
		}
		nf, nu = nf+f, nu+u
		counts = append(counts, [2]int32{int32(f), int32(u)})
	}
	if r.err != nil || nf != len(fall) || nu != len(uall) {
		return nil, errSaved
	}
	// A stem twice (or two whose hashes collide) leaves fewer entries.
	withFiles, withUnits := 0, 0
	for _, c := range counts {
		withFiles += min(1, int(c[0]))
		withUnits += min(1, int(c[1]))
	}
	fsec, usec := r.take(r.uvarint()), r.take(r.uvarint())
	if r.err != nil || len(r.b) != 0 || len(p.stems) != withFiles || len(p.ustems) != withUnits {
		return nil, errSaved
	}
	var uok bool
	var wg sync.WaitGroup
	wg.Go(func() { uok = decodeUnitPostings(usec, uall, counts, len(p.units)) })
	fok := decodeFilePostings(fsec, fall, counts, nfiles)
	wg.Wait()
	if !fok || !uok {
		return nil, errSaved
	}
	if !p.unitsOK {
		p.units, p.unitFiles, p.ustems, p.fileUnits = nil, nil, nil, nil
		p.titles, p.titleEnds = nil, nil
	}
	return p, nil
}

// savable reports whether base may be saved: it holds its units (a base
// without, too large for them, is not, so that a workspace that shrank
// since is not ranked from it without them).
func savable(base *filePart) bool { return base.unitsOK && base.fileUnits != nil }

// loadSaved reads the saved base, or returns nil: none, or unusable.
func (e *Engine) loadSaved() *filePart {
	var p *filePart
	e.readSaved(func(b, id []byte) {
		p, _ = decodeFilePart(b, id)
	})
	if p != nil && !savable(p) {
		return nil
	}
	return p
}

// savedFresh reports whether the saved base holds the files now lists
// but for a delta (at most 1/fileDeltaShare of them changed): whether
// saving the index again would save anything. It decodes the files
// alone.
func (e *Engine) savedFresh(now []fileEntry) bool {
	var p *filePart
	e.readSaved(func(b, id []byte) {
		p, _ = decodeSaved(b, id, true)
	})
	if p == nil {
		return false
	}
	kept := 0
	for _, f := range now {
		if id, ok := p.byKey[fileKeyOf(f.sourceID, f.path)]; ok && p.files[id].print == f.print {
			kept++
		}
	}
	return !wholeBuild(len(p.files), len(now), kept)
}

// readSaved calls fn with the saved index's bytes, mapped (fn copies
// what it keeps: the file is only ever replaced, by writeSaved, never
// truncated), and this binary's identity; not at all when there is none.
func (e *Engine) readSaved(fn func(b, id []byte)) {
	id := savedIdentity()
	if e.SavedIndex == "" || id == nil {
		return
	}
	f, err := os.Open(e.SavedIndex)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= 0 || st.Size() > maxSavedBytes {
		return
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return
	}
	defer syscall.Munmap(b)
	fn(b, id)
}

// save saves base (built whole, with its stems' names) behind the caller;
// a base given while one is being written is written after it, and only
// the last one given. Close waits for it.
func (c *fileIndexCache) save(e *Engine, base *filePart) {
	c.saveMu.Lock()
	defer c.saveMu.Unlock()
	if c.saveClosed || !savable(base) {
		base.names = nil // not published yet: only its builder holds it
		return
	}
	if c.saveNext != nil || c.saving {
		if c.saveNext != nil {
			c.saveNext.names = nil // never written now
		}
		c.saveNext = base
		return
	}
	c.saving = true
	c.saves.Add(1)
	go func() {
		defer c.saves.Done()
		for p := base; p != nil; {
			_ = writeSaved(e.SavedIndex, p)
			p.names = nil
			c.saveMu.Lock()
			p, c.saveNext = c.saveNext, nil
			if p == nil {
				c.saving = false
			}
			c.saveMu.Unlock()
		}
	}()
}

// writeSaved writes p's encoding to path, atomically (a temporary file
// renamed), mode 0600.
func writeSaved(path string, p *filePart) error {
	id := savedIdentity()
	if id == nil {
		return errSaved
	}
	// One owner at a time, one save at a time: a temporary file already
	// there is a killed process's.
	if old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), savedTemp)); len(old) > 0 {
		for _, o := range old {
			os.Remove(o)
		}
	}
	// The index's own writes (a sync, its WAL, a checkpoint) come first:
	// a cache is not written where it would leave them short of room.
	free := func() int64 {
		var st syscall.Statfs_t
		if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
			return 0
		}
		return int64(st.Bavail) * int64(st.Bsize)
	}
	if free() < savedFreeMin {
		return errSaved
	}
	pieces, err := encodeFilePart(p, id)
	if err != nil {
		return err
	}
	size := int64(0)
	for _, b := range pieces {
		size += int64(len(b))
	}
	// A file the next owner would refuse to read is not written.
	if size > maxSavedBytes {
		return errSaved
	}
	if free()-size < max(savedFreeMin, 2*size) {
		return errSaved
	}
	f, err := os.CreateTemp(filepath.Dir(path), savedTemp)
	if err != nil {
		return err
	}
	for _, b := range pieces {
		if err == nil {
			_, err = f.Write(b)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// PrepareSaved builds the file index of the index's current generation
// and saves its base, when the engine saves one and the workspace is
// large enough to have it (inlineRefreshFiles), starting from the saved
// base as a search would: a command that changed the index (add, sync)
// leaves it ready for the next command's search. It returns once the
// file is written.
func (e *Engine) PrepareSaved(ctx context.Context) error {
	if e.SavedIndex == "" {
		return nil
	}
	tx, release, err := e.begin(ctx)
	if err != nil {
		return err
	}
	defer release()
	var files int
	if err := tx.QueryRowContext(ctx, sqlIndexedFiles).Scan(&files); err != nil {
		return fmt.Errorf("search: file index: %w", err)
	}
	if files < e.fileIdx.inlineLimit() {
		return nil
	}
	now, _, err := readFilePrints(ctx, e, tx)
	if err != nil || e.savedFresh(now) {
		return err
	}
	gen, _, err := readGeneration(ctx, e, tx)
	if err != nil {
		return err
	}
	if _, err := e.fileIdx.get(ctx, e, tx, gen, time.Now()); err != nil {
		return err
	}
	e.fileIdx.saves.Wait()
	return nil
}
