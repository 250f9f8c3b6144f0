package query

import (
	"maps"
	"math/bits"
	"slices"
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
	// words are the name words of abbrevMin bytes or more: what a
	// question's word may begin or end ("mbarrier", "reverseproxy") or,
	// one that begins with a letter, be cut to ("chan" of channel).
	words []string
	// ends are the first and last four bytes of each of words
	// (affixKey), nEnds of them, -1 when words have more than fit: a
	// question's word that is part of a name word shares one of them,
	// so most paths are ruled out by these alone. They are held here,
	// not in a slice of their own, as a search reads them for every file
	// its words are in.
	ends  [8]uint32
	nEnds int8
	// platform, manifest, build and hidden are platformOf, manifestOf,
	// buildOf and hiddenOf; changelog is changelogOf for a file that is
	// not code.
	platform, manifest, build, hidden, changelog bool
	// roles has the bit (roleBit) of each role the path's name words
	// name (namedRoles).
	roles uint8
	// named are the words of the file's own name, lower-cased (the
	// folder's for a name that says nothing, genericNames), and
	// namedHashes their stems' stemHash: the words a question must hold
	// all of to name the file (nameShareOf).
	named       []string
	namedHashes []uint64
	// testNamed: the file's own name holds a test word beside others
	// (server_test.go, test_client.py, FooTest.java, app.spec.ts): a
	// test, named for what it tests.
	testNamed bool
}

// genericNames are file names that say nothing of what a file does, but
// that its folder names: Rust's mod.rs and lib.rs, JavaScript's index,
// Python's __init__.
var genericNames = []string{"index", "mod", "lib", "init"}

// nameCovered is what nameShareOf adds when the question holds every word
// of the file's name ("segment pool" of SegmentPool.kt, "raw value" of
// raw.rs): a file named for what is asked, in units of the question's
// weight.
const nameCovered = 0.5

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
	for _, w := range f.words {
		size += len(w) + 16
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
	f := &pathFacts{platform: platformOf(p), manifest: manifestOf(p), build: buildOf(p), hidden: hiddenOf(p), changelog: changelogOf(p, "")}
	var buf []byte
	words, base := nameParts(p)
	named := words[:base]
	if base == 1 && len(words) > 1 && containsString(genericNames, words[0]) {
		named = words[1:] // the folder's words name the file
	}
	for _, w := range named {
		f.addNamed(w)
		f.testNamed = f.testNamed || len(named) > 1 && roleWords[w] == "test"
	}
	for _, w := range words {
		if len(w) >= abbrevMin && !containsString(f.words, w) {
			f.words = append(f.words, w)
			if int(f.nEnds)+2 > len(f.ends) {
				f.nEnds = -1
			} else if f.nEnds >= 0 {
				f.ends[f.nEnds], f.ends[f.nEnds+1] = affixKey(w, false), affixKey(w, true)
				f.nEnds += 2
			}
		}
		f.roles |= namedRoles(w)
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

// addNamed adds w to the words that name the file, unless it is a
// number or held already.
func (f *pathFacts) addNamed(w string) {
	if w == "" || w[0] >= '0' && w[0] <= '9' || containsString(f.named, w) {
		return
	}
	f.named = append(f.named, w)
	f.namedHashes = append(f.namedHashes, stemHash(sources.PorterStem([]byte(w))))
}

// nameShareOf is the share of the question's weight that the path's
// name words hold (nameQuery): a question's word is one of them (its stem
// is one of theirs), begins or ends one written together from several
// ("barrier" of mbarrier.go, "proxy" of reverseproxy.go, "cookie" of
// net/http/cookiejar), or begins with one that shortens it ("channel"
// of runtime/chan.go, "executable" of os/exec).
func (f *pathFacts) nameShareOf(nq *nameQuery) float64 {
	share, covered := f.nameShareSplit(nq)
	if covered {
		return share + nameCovered
	}
	return share
}

// nameShareSplit is nameShareOf apart: the share alone, and whether the
// question names the file whole (which adds nameCovered to it where the
// file's role counts fully).
func (f *pathFacts) nameShareSplit(nq *nameQuery) (share float64, covered bool) {
	if nq == nil {
		return 0, false
	}
	parts := f.nEnds < 0 || f.nEnds > 0 && nq.sharesEnd(f.ends[:f.nEnds])
	for _, s := range nq.shares {
		if s.purpose && f.testNamed {
			continue
		}
		if f.bloom&(1<<(s.hash&63)) != 0 && slices.Contains(f.hashes, s.hash) ||
			parts && namePart(f.words, s.words) {
			share += s.share
		}
	}
	return min(share, 1), share > 0 && len(f.named) > 0 && nq.names(f)
}

// names reports whether the question holds every word that names the
// file (pathFacts.named), each as a stem of its own or, for a word of
// abbrevMin bytes or more, as namePart matches name words; a stop word
// of the name as one of the question's.
func (nq *nameQuery) names(f *pathFacts) bool {
	for i, w := range f.named {
		if isStopword(w) {
			if !containsString(nq.stops, w) {
				return false
			}
			continue
		}
		found := false
		for _, s := range nq.shares {
			if s.hash == f.namedHashes[i] || len(w) >= abbrevMin && namePart([]string{w}, s.words) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// affixKey is the first (or, with tail, the last) four bytes of w,
// which has four or more, as a number; a tail's is mixed (two keys may be
// equal where the bytes are not: a key rules out, it does not match).
func affixKey(w string, tail bool) uint32 {
	if tail {
		w = w[len(w)-4:]
	}
	k := uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(w[3])<<24
	if tail {
		k = bits.RotateLeft32(k, 13) ^ 0x5bd1e995
	}
	return k
}

// sharesEnd reports whether one of ends (a path's, affixKey) is a first
// or last four bytes of the question's words that namePart could match.
func (nq *nameQuery) sharesEnd(ends []uint32) bool {
	for _, e := range ends {
		h := endBit(e)
		if nq.endBloom[h>>6]&(1<<(h&63)) != 0 && slices.Contains(nq.ends, e) {
			return true
		}
	}
	return false
}

func (nq *nameQuery) addEnd(k uint32) {
	if !slices.Contains(nq.ends, k) {
		nq.ends = append(nq.ends, k)
		h := endBit(k)
		nq.endBloom[h>>6] |= 1 << (h & 63)
	}
}

// endBit is the bit of an affixKey in nameQuery.endBloom.
func endBit(k uint32) uint32 { return (k * 0x9e3779b1) >> 22 }

// namePart reports whether one of words, a question's, is part of one of
// names, a path's name words: it begins or ends the longer name word
// (affixMin bytes or more), or the name word (abbrevMin bytes or more,
// beginning with a letter: "2024" is no word cut short) begins it.
func namePart(names, words []string) bool {
	for _, x := range words {
		for _, w := range names {
			switch {
			case len(w) > len(x):
				if len(x) >= affixMin && (strings.HasPrefix(w, x) || strings.HasSuffix(w, x)) {
					return true
				}
			case len(w) < len(x):
				if w[0] >= 'a' && w[0] <= 'z' && strings.HasPrefix(x, w) {
					return true
				}
			}
		}
	}
	return false
}

const (
	// affixMin is the shortest word of a question that counts where it
	// begins or ends a longer name word: shorter ones begin and end too
	// many ("read" ends thread).
	affixMin = 5
	// abbrevMin is the shortest name word that counts where it begins a
	// longer word of the question ("chan", "exec", "proc").
	abbrevMin = 4
)

// nameQuery is what file names are matched with: the question's scored
// stems, hashed, each with its share of the question's weight × idf and
// its words (the stem and the question's folded words that have it).
type nameQuery struct {
	shares []stemShare
	// ends are the first and last four bytes of the words of affixMin
	// bytes or more (affixKey): no shorter word is part of a name word.
	ends []uint32
	// endBloom has endBit of each of ends: most paths share none, and a
	// bit rules them out sooner than the list.
	endBloom [16]uint64
	// stops are the question's stop words, which count for no share but
	// may be words of a name the question holds whole ("to" of
	// to-json-schema.ts for "convert a schema to JSON Schema").
	stops []string
}

// stemShare is a stem of the question, hashed, with its share and words.
// A purpose share (a test word of a question that names tests as a
// purpose) does not count in the name of a test (pathFacts.testNamed).
type stemShare struct {
	hash    uint64
	share   float64
	words   []string
	purpose bool
}

// newNameQuery makes the nameQuery of stems (each with its share) and
// the question's words of each stem.
func newNameQuery(stems map[string]float64, words map[string][]string) *nameQuery {
	if len(stems) == 0 {
		return nil
	}
	nq := &nameQuery{shares: make([]stemShare, 0, len(stems))}
	// In the stems' order: a share is a sum, the same in every search
	// and in both stages that add it.
	for _, st := range slices.Sorted(maps.Keys(stems)) {
		x := stems[st]
		ws := []string{st}
		for _, w := range words[st] {
			if !containsString(ws, w) {
				ws = append(ws, w)
			}
		}
		nq.shares = append(nq.shares, stemShare{hash: stemHash([]byte(st)), share: x, words: ws})
		// Only a word longer than a name word of abbrevMin bytes, or
		// one of affixMin bytes or more, can be part of one.
		for _, w := range ws {
			if len(w) >= affixMin {
				nq.addEnd(affixKey(w, false))
				nq.addEnd(affixKey(w, true))
			}
		}
	}
	return nq
}
