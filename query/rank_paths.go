package query

import (
	"strings"
	"sync"

	"github.com/tychora/tychora/sources"
)

// pathFacts is what the ranking reads from a path alone: the stems of its
// name's words (fileNameShare) and the conventions it falls under. They are
// a function of the path, and the searches of a workspace rank the units
// of the same files again and again, so they are worked out once per path
// and kept (factsOf), not once per unit and search: splitting, stemming
// and matching a path's parts were a fifth of reranking a pool.
type pathFacts struct {
	// stems are the distinct stems of the path's name words (nameWords),
	// in the order they first occur.
	stems []string
	// hashes are the stems' stemHash, in the same order; bloom has bit
	// h&63 of each.
	hashes []uint64
	bloom  uint64
	// platform, manifest and hidden are platformOf, manifestOf and
	// hiddenOf; changelog is changelogOf for a file that is not code.
	platform, manifest, hidden, changelog bool
}

// pathFactsCache keeps the facts of up to pathFactsEntries paths and
// about pathFactsBytes of their strings; when it is full it starts over
// (every entry can be worked out again).
var pathFactsCache struct {
	mu    sync.Mutex
	m     map[string]*pathFacts
	bytes int
}

const (
	pathFactsEntries = 1 << 16
	pathFactsBytes   = 8 << 20
)

// factsOf returns the facts of path p. The result is shared: do not
// change it.
func factsOf(p string) *pathFacts {
	pathFactsCache.mu.Lock()
	f, ok := pathFactsCache.m[p]
	pathFactsCache.mu.Unlock()
	if ok {
		return f
	}
	f = newPathFacts(p)
	size := len(p) + 64
	for _, st := range f.stems {
		size += len(st) + 16
	}
	pathFactsCache.mu.Lock()
	if pathFactsCache.m == nil || len(pathFactsCache.m) >= pathFactsEntries || pathFactsCache.bytes+size > pathFactsBytes {
		pathFactsCache.m, pathFactsCache.bytes = make(map[string]*pathFacts, 1024), 0
	}
	pathFactsCache.m[strings.Clone(p)] = f
	pathFactsCache.bytes += size
	pathFactsCache.mu.Unlock()
	return f
}

// newPathFacts works out the facts of path p.
func newPathFacts(p string) *pathFacts {
	f := &pathFacts{platform: platformOf(p), manifest: manifestOf(p), hidden: hiddenOf(p), changelog: changelogOf(p, "")}
	var buf []byte
	for _, w := range nameWords(p) {
		buf = append(buf[:0], w...)
		if st := string(sources.PorterStem(buf)); !containsString(f.stems, st) {
			f.stems = append(f.stems, st)
			h := stemHash([]byte(st))
			f.hashes = append(f.hashes, h)
			f.bloom |= 1 << (h & 63)
		}
	}
	return f
}

// nameShareOf is nameShare with the question's stems as hashes (few:
// a list, not a map).
func (f *pathFacts) nameShareOf(stems []stemShare) float64 {
	share := 0.0
	for _, h := range f.hashes {
		for _, s := range stems {
			if s.hash == h {
				share += s.share
			}
		}
	}
	return min(share, 1)
}

// stemShare is a stem of the question, hashed, with its share.
type stemShare struct {
	hash  uint64
	share float64
}

// nameShare is fileNameShare over the facts of the file's path.
func (f *pathFacts) nameShare(stems map[string]float64) float64 {
	share := 0.0
	for _, st := range f.stems {
		share += stems[st]
	}
	return min(share, 1)
}
