package query

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/tychora/tychora/sources"
)

// File names as candidates (stage A). A file whose name says what the
// question asks (bytes/buffer.go for "growable byte buffer", strings/
// replace.go for "replace many substrings") is often the answer, yet none
// of its units need hold the question's rarest words, which the
// conjunctive probes are driven by. The name index maps the stems of every
// indexed file's name and folder (as fileNameShare splits them) to the
// files; the files whose names hold the largest share of the question's
// weight have their units read and scored (completeFiles).
// It is built once per index generation from the files table, in memory:
// a few stems a file.

// namedFiles is how many files the name index adds to a search: on the
// development questions 3 did as well as 10 at half the cost
// (docs/search.md, "Files, roles and definitions").
const namedFiles = 3

// minNameShare is the least share of the question's weight a file's name
// must hold to be added.
const minNameShare = 0.2

// nameRef is one indexed file in the name index.
type nameRef struct {
	sourceID, collectionID, path string
}

// nameIndex maps a stem to the files whose name or folder holds it.
type nameIndex struct {
	files []nameRef
	stems map[string][]int32
	// bases maps a stop word that is some file's whole name without its
	// extension, folded ("once" of sync/once.go), to those files.
	bases map[string][]int32
}

// nameCache holds the name index of one index generation.
type nameCache struct {
	mu         sync.Mutex
	generation []byte
	index      *nameIndex
}

// get returns the name index of generation gen, building it within tx
// when the generation changed.
func (c *nameCache) get(ctx context.Context, e *Engine, tx *sql.Tx, gen []byte) (*nameIndex, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index != nil && bytes.Equal(c.generation, gen) {
		return c.index, nil
	}
	ix, err := buildNameIndex(ctx, tx)
	if err != nil {
		return nil, err
	}
	c.generation, c.index = slices.Clone(gen), ix
	return ix, nil
}

func buildNameIndex(ctx context.Context, tx *sql.Tx) (*nameIndex, error) {
	rows, err := tx.QueryContext(ctx, `SELECT fi.source_id, s.collection_id, fi.path FROM files fi
		JOIN sources s ON s.id = fi.source_id WHERE fi.status = 'indexed'`)
	if err != nil {
		return nil, fmt.Errorf("search: name index: %w", err)
	}
	defer rows.Close()
	ix := &nameIndex{stems: map[string][]int32{}, bases: map[string][]int32{}}
	var buf []byte
	for rows.Next() {
		var r nameRef
		if err := rows.Scan(&r.sourceID, &r.collectionID, &r.path); err != nil {
			return nil, fmt.Errorf("search: name index: %w", err)
		}
		id := int32(len(ix.files))
		ix.files = append(ix.files, r)
		base := path.Base(r.path)
		if i := strings.LastIndexByte(base, '.'); i > 0 {
			base = base[:i]
		}
		if b := strings.ToLower(base); len(b) >= 3 && isStopword(b) {
			ix.bases[b] = append(ix.bases[b], id)
		}
		var seen []string
		for _, w := range nameWords(r.path) {
			buf = append(buf[:0], w...)
			st := string(sources.PorterStem(buf))
			if !slices.Contains(seen, st) {
				seen = append(seen, st)
				ix.stems[st] = append(ix.stems[st], id)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: name index: %w", err)
	}
	return ix, nil
}

// nameWords are the words of a file's name (without its extension) and
// of the folder that holds it, lower-cased and split as identifiers.
func nameWords(p string) []string {
	words, _ := nameParts(p)
	return words
}

// nameParts are nameWords and how many of them, first, are the file
// name's.
func nameParts(p string) (words []string, base int) {
	dir, name := path.Split(p)
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	words = sources.SplitIdentifier(name)
	base = len(words)
	if dir = strings.TrimSuffix(dir, "/"); dir != "" {
		words = append(words, sources.SplitIdentifier(path.Base(dir))...)
	}
	return words, base
}

// lookup lists the files in scope whose names hold the largest share of
// the question's weight (stems, from nameStems), at most namedFiles, each
// with at least minNameShare.
func (ix *nameIndex) lookup(stems map[string]float64, sf *scopeFilter) [][2]string {
	share := map[int32]float64{}
	for st, w := range stems {
		for _, id := range ix.stems[st] {
			share[id] += w
		}
	}
	type scored struct {
		id    int32
		share float64
	}
	var best []scored
	for id, s := range share {
		if s < minNameShare {
			continue
		}
		if !ix.inScope(id, sf) {
			continue
		}
		best = append(best, scored{id, s})
	}
	slices.SortFunc(best, func(a, b scored) int {
		if c := cmp.Compare(b.share, a.share); c != 0 {
			return c
		}
		// Shorter paths first: the package's own file before a deeper
		// one of the same name.
		pa, pb := ix.files[a.id].path, ix.files[b.id].path
		if c := cmp.Compare(len(pa), len(pb)); c != 0 {
			return c
		}
		return strings.Compare(pa, pb)
	})
	out := make([][2]string, 0, min(len(best), namedFiles))
	for _, b := range best[:min(len(best), namedFiles)] {
		r := &ix.files[b.id]
		out = append(out, [2]string{r.sourceID, r.path})
	}
	return out
}

// keepNamedStopwords counts the stop words of the question that are the
// whole name of a file in the caller's scope ("once" of sync/once.go,
// "all", "before"): in code such a word is a name (sync.Once), and
// dropping it loses the file the question names. Those words are scored
// and probed as any other; the rest stay stop words. Files outside the
// scope count for nothing, so a search ranks alike whatever other
// collections hold.
func (e *Engine) keepNamedStopwords(ctx context.Context, tx *sql.Tx, gen []byte, pq *parsedQuery, sf *scopeFilter) error {
	has := false
	for _, t := range pq.terms {
		if t.stop && t.free {
			has = true
			break
		}
	}
	if !has {
		return nil
	}
	ix, err := e.names.get(ctx, e, tx, gen)
	if err != nil {
		return err
	}
	for i := range pq.terms {
		if t := &pq.terms[i]; t.stop && t.free && slices.ContainsFunc(ix.bases[t.token], func(id int32) bool { return ix.inScope(id, sf) }) {
			t.stop = false
		}
	}
	return nil
}

// inScope reports whether file id lies in the scope sf.
func (ix *nameIndex) inScope(id int32, sf *scopeFilter) bool {
	r := &ix.files[id]
	return (sf.collections == nil || slices.Contains(sf.collections, r.collectionID)) &&
		(len(sf.sources) == 0 || slices.Contains(sf.sources, r.sourceID))
}
