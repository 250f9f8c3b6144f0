package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tychora/tychora/sources"
)

// Building the file index: reading each file's kept counts (file_terms)
// and its units into a part (rank_file_index.go holds the index and its
// cache; rank_unit_index.go the units).

// sqlFilePrints lists the indexed files with kept counts: what the index
// holds of each, and its fingerprint.
// The range of its units' rows is part of the fingerprint: units
// written again move it.
const sqlFilePrints = `SELECT fi.source_id, s.collection_id, fi.path, fi.size, coalesce(fi.role, ''), coalesce(fi.kind, ''),
	coalesce(fi.language, ''), coalesce(fi.extraction_id, '') || '/' || coalesce(fi.sha256, '') || '/' || length(t.terms) ||
	'/' || coalesce(fi.role, '') || '/' || fi.size || '/' || coalesce(r.lo, 0) || '/' || coalesce(r.hi, 0), length(t.terms),
	coalesce(r.lo, 0), coalesce(r.hi, 0)
	FROM files fi JOIN sources s ON s.id = fi.source_id
	JOIN file_terms t ON t.source_id = fi.source_id AND t.path = fi.path
	LEFT JOIN (SELECT source_id, path, min(seq) AS lo, max(seq) AS hi FROM evidence GROUP BY source_id, path) r
		ON r.source_id = fi.source_id AND r.path = fi.path
	WHERE fi.status = 'indexed'`

// sqlFileBlobs reads the kept counts of the given files (JSON pairs
// [source_id, path]).
const sqlFileBlobs = `SELECT t.source_id, t.path, t.terms FROM json_each(?) j
	JOIN file_terms t ON t.source_id = j.value ->> 0 AND t.path = j.value ->> 1`

// refreshFileIndex returns the index of the files tx sees: old with the
// changed files in a new delta, or built whole; nil when too large. A
// build before a commit (bg), while the searches have the index of the
// generation before, gives way to them (Engine.Foreground) as it goes.
func refreshFileIndex(ctx context.Context, e *Engine, tx *sql.Tx, old *fileIndex, bg bool) (*fileIndex, error) {
	ix, _, err := refreshFrom(ctx, e, tx, old, bg, false)
	return ix, err
}

// refreshFromSaved returns the index of the files tx sees refreshed from
// the saved base when that takes no whole build; else nil, with the saved
// base it read (nil: none usable) for the build to start from.
func refreshFromSaved(ctx context.Context, e *Engine, tx *sql.Tx) (*fileIndex, *fileIndex, error) {
	return refreshFrom(ctx, e, tx, nil, false, true)
}

// refreshFrom is refreshFileIndex; savedOnly stops it before a whole
// build and returns the saved base it read instead, if any.
func refreshFrom(ctx context.Context, e *Engine, tx *sql.Tx, old *fileIndex, bg, savedOnly bool) (*fileIndex, *fileIndex, error) {
	now, total, err := readFilePrints(ctx, e, tx)
	if err != nil {
		return nil, nil, err
	}
	if total > maxFileIndexBytes {
		return nil, nil, nil
	}
	// A large index the engine saves: its first build starts from the
	// saved base, and a base built whole is saved.
	saved := e.SavedIndex != "" && len(now) >= e.fileIdx.inlineLimit()
	if old == nil && saved {
		if base := e.loadSaved(); base != nil {
			old = &fileIndex{base: base, delta: newFilePart(), dead: make([]bool, len(base.files))}
			e.fileIdx.loaded.Add(1)
		}
	}
	// The files the old base holds as they are now stay; the others go to
	// the delta.
	var keep map[int32]bool
	var changed []fileEntry
	if old != nil {
		keep = make(map[int32]bool, len(now))
		for _, f := range now {
			if id, ok := old.base.byKey[fileKeyOf(f.sourceID, f.path)]; ok && old.base.files[id].print == f.print {
				keep[id] = true
				continue
			}
			changed = append(changed, f)
		}
	}
	if old == nil || wholeBuild(len(old.base.files), len(now), len(keep)) {
		if savedOnly {
			return nil, old, nil
		}
		base, err := readFilePart(ctx, e, tx, now, bg, saved)
		if err != nil {
			return nil, nil, err
		}
		if saved {
			e.fileIdx.save(e, base)
		}
		return &fileIndex{base: base, delta: newFilePart(), dead: make([]bool, len(base.files))}, nil, nil
	}
	delta, err := readFilePart(ctx, e, tx, changed, bg, false)
	if err != nil {
		return nil, nil, err
	}
	ix := &fileIndex{base: old.base, delta: delta, dead: make([]bool, len(old.base.files))}
	for id := range ix.dead {
		ix.dead[id] = !keep[int32(id)]
	}
	return ix, nil, nil
}

// wholeBuild reports whether an index whose base holds base files, kept
// of which are as the snapshot's now files are, is built whole rather
// than refreshed with a delta: when more than 1/fileDeltaShare of the
// base's files changed, or went, or were added (the delta).
func wholeBuild(base, now, kept int) bool {
	changed := now - kept // the delta: changed and added
	gone := base - kept   // changed and removed
	return max(changed, gone) > base/fileDeltaShare
}

// readFilePrints lists the files tx sees with kept counts and the total
// size of those counts.
func readFilePrints(ctx context.Context, e *Engine, tx *sql.Tx) ([]fileEntry, int64, error) {
	rows, err := e.query(ctx, tx, sqlFilePrints)
	if err != nil {
		return nil, 0, fmt.Errorf("search: file index: %w", err)
	}
	defer rows.Close()
	var now []fileEntry
	var total int64
	for rows.Next() {
		var f fileEntry
		var n int64
		if err := rows.Scan(&f.sourceID, &f.collectionID, &f.path, &f.bytes, &f.role, &f.kind, &f.language, &f.print, &n, &f.first, &f.last); err != nil {
			return nil, 0, fmt.Errorf("search: file index: %w", err)
		}
		f.prior = rolePrior(f.role)
		now = append(now, f)
		total += n
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("search: file index: %w", err)
	}
	return now, total, nil
}

// fileBlobBatch is how many files one read of kept counts asks for.
const fileBlobBatch = 512

// A build in the background yields to the searches after every
// yieldFiles files' counts and every yieldUnits units (each about a
// millisecond of work over Go's tree).
const (
	yieldFiles = 8
	yieldUnits = 48
)

// readFilePart reads the kept counts of files into a new part; in the
// background (bg) it yields to the searches every yieldFiles files. With
// names, the part keeps its stems' names, to be saved.
func readFilePart(ctx context.Context, e *Engine, tx *sql.Tx, files []fileEntry, bg, names bool) (*filePart, error) {
	p := newFilePart()
	if names {
		p.names = map[uint64]string{}
	}
	byKey := make(map[string]int, len(files))
	for i, f := range files {
		byKey[fileKeyOf(f.sourceID, f.path)] = i
	}
	var stemBuf []byte
	n := 0
	for lo := 0; lo < len(files); lo += fileBlobBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+fileBlobBatch, len(files))
		pairs := make([][2]string, 0, hi-lo)
		for _, f := range files[lo:hi] {
			pairs = append(pairs, [2]string{f.sourceID, f.path})
		}
		list, err := json.Marshal(pairs)
		if err != nil {
			return nil, fmt.Errorf("search: file index: %w", err)
		}
		rows, err := e.query(ctx, tx, sqlFileBlobs, string(list))
		if err != nil {
			return nil, fmt.Errorf("search: file index: %w", err)
		}
		for rows.Next() {
			var src, path string
			var blob []byte
			if err := rows.Scan(&src, &path, &blob); err != nil {
				rows.Close()
				return nil, fmt.Errorf("search: file index: %w", err)
			}
			if i, ok := byKey[fileKeyOf(src, path)]; ok {
				stemBuf = p.add(files[i], blob, stemBuf)
			}
			if n++; bg && n%yieldFiles == 0 {
				if err := e.Foreground.Yield(ctx); err != nil {
					rows.Close()
					return nil, err
				}
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("search: file index: %w", err)
		}
	}
	p.pack()
	if err := readUnits(ctx, e, tx, p, bg); err != nil {
		return nil, err
	}
	return p, nil
}

// add adds one file and its encoded counts to the part. A list this
// version cannot read adds the file without counts.
func (p *filePart) add(f fileEntry, blob []byte, buf []byte) []byte {
	id := int32(len(p.files))
	f.pathLen, f.facts = pathTokens(f.path), newPathFacts(f.path)
	p.files = append(p.files, f)
	p.byKey[fileKeyOf(f.sourceID, f.path)] = id
	p.bytes += int64(len(blob))
	// The path's stems, counted as the scorer counts the path column.
	pathCounts := map[uint64]uint16{}
	buf = sources.ForEachToken(f.path, buf, func(tok []byte, _, _ int) bool {
		stem := sources.PorterStem(tok)
		h := stemHash(stem)
		pathCounts[h] = sat16(uint32(pathCounts[h]) + 1)
		p.name(h, stem)
		return true
	})
	var added []uint64
	ok := sources.EachTerm(blob, func(stem []byte, c sources.TermCounts) bool {
		h := stemHash(stem)
		fp := filePosting{file: id, title: sat16(c.Title), text: sat16(c.Text), code: sat16(c.Code)}
		if n, ok := pathCounts[h]; ok {
			fp.path = n
			delete(pathCounts, h)
		}
		ps := p.stems[h]
		if len(ps) == 0 {
			p.name(h, stem)
		}
		p.stems[h] = append(ps, fp)
		added = append(added, h)
		return true
	})
	if !ok {
		// Take back what a list cut short added: the file keeps its path.
		for _, h := range added {
			ps := p.stems[h]
			p.stems[h] = ps[:len(ps)-1]
		}
	}
	for h, n := range pathCounts {
		p.stems[h] = append(p.stems[h], filePosting{file: id, path: n})
	}
	return buf
}

// name keeps the stem of hash h when the part keeps its stems' names.
func (p *filePart) name(h uint64, stem []byte) {
	if p.names != nil {
		if _, ok := p.names[h]; !ok {
			p.names[h] = string(stem)
		}
	}
}

// pack moves every stem's postings into one array of their exact size.
func (p *filePart) pack() {
	n := 0
	for _, ps := range p.stems {
		n += len(ps)
	}
	all := make([]filePosting, 0, n)
	for h, ps := range p.stems {
		if len(ps) == 0 {
			delete(p.stems, h)
			continue
		}
		start := len(all)
		all = append(all, ps...)
		p.stems[h] = all[start:len(all):len(all)]
	}
}

func sat16(n uint32) uint16 { return uint16(min(n, 1<<16-1)) }
