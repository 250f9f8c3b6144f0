package query

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"slices"

	"github.com/tychora/tychora/sources"
)

// The unit index: every leaf unit's counts of every stem, in each column
// the scorer weighs (title with its identifiers' parts, heading context,
// text, code terms), with the columns' lengths, held in memory beside the
// file index and in the same parts (a base and a delta of the files
// changed since), so that it follows the lexical index's generations as
// the file index does.
//
// With it a search scores every unit that matches its words in one pass
// over their postings, without reading any unit: the exact BM25F term
// score of each unit (termScore), and bounds of what phrases and
// proximity can add. Together with the file index's exact whole-file
// scores and the priors, that gives each unit a lower and an upper bound
// of its final score; stage B then reads every unit whose upper bound
// reaches what the first page's lowest unit certainly scores
// (unitCandidates). That is what makes the pooled ranking the ranking of
// every matching unit (docs/search.md, "Rank safety"), and it replaces
// stage A's FTS5 probes, whose bm25() order is not stage B's.
//
// The counts are those the scorer makes (rank.go, countFields): the
// tests compare the two unit by unit (TestUnitIndexMatchesScorer).

// unitPosting is one unit's counts of one stem.
type unitPosting struct {
	unit int32 // index in its part's units
	body uint16
	code uint8
	// th holds the title's count in its high four bits and the heading
	// context's in the low four.
	th uint8
}

// Unit count limits: a unit with a count at a limit is inexact (its
// counts may be larger than kept) and is always read.
const (
	unitBodyMax  = 1<<16 - 1
	unitCodeMax  = 1<<8 - 1
	unitTitleMax = 15
)

// unitEntry is one leaf unit of the index.
type unitEntry struct {
	seq  int64
	file int32 // index in its part's files
	// lens are the lengths in tokens of the title (with its identifiers'
	// extra parts), the heading context, the text and the code terms.
	lens  [4]uint32
	flags uint8
}

const (
	unitCode    = 1 << iota // a code unit
	unitImports             // a code unit of imports (conventions' importsPrior applies)
	unitInexact             // a count reached its limit
	unitTest                // a test inside a source file (candidate.unitRole)
)

// Unit columns, in unitEntry.lens.
const (
	ucTitle = iota
	ucHeading
	ucBody
	ucCode
)

// maxUnitPostings bounds the (unit, stem) pairs an index part holds:
// Go's source tree with its tests and testdata has about 9 million. A
// larger workspace is searched without the unit index (stage A's probes).
// A variable for the tests.
var maxUnitPostings = 24 << 20

// unitFields maps unit columns to the scorer's fields.
var unitFields = [4]int{ucTitle: fieldTitle, ucHeading: fieldHeading, ucBody: fieldBody, ucCode: fieldCode}

// sqlUnitRows reads the leaf units of files given as JSON
// [first, last, source_id, path].
const sqlUnitRows = `SELECT j.key, e.seq, e.kind, e.title, e.heading_path, e.text, e.code_terms FROM json_each(?) j
	JOIN evidence e ON e.seq BETWEEN j.value ->> 0 AND j.value ->> 1
	WHERE e.leaf = 1 AND e.source_id = j.value ->> 2 AND e.path = j.value ->> 3`

// unitFileBatch is how many files one read of units asks for.
const unitFileBatch = 256

// readUnits counts the leaf units of the part's files into it. A part
// whose units are more than maxUnitPostings pairs, or that are not in one
// range of rows per file, keeps none (unitsOK false). In the background
// (bg) it yields to the searches every yieldUnits units; a large part
// built in the foreground is counted by workers beside the reading
// (unitCounting).
func readUnits(ctx context.Context, e *Engine, tx *sql.Tx, p *filePart, bg bool) error {
	p.fileUnits = make([][2]int32, len(p.files))
	uc := newUnitCounting(ctx, e, p, bg)
	defer uc.stop()
	last := int32(-1)
	for lo := 0; lo < len(p.files); lo += unitFileBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+unitFileBatch, len(p.files))
		list := make([][4]any, 0, hi-lo)
		for _, f := range p.files[lo:hi] {
			list = append(list, [4]any{f.first, f.last, f.sourceID, f.path})
		}
		arg, err := json.Marshal(list)
		if err != nil {
			return fmt.Errorf("search: unit index: %w", err)
		}
		rows, err := e.query(ctx, tx, sqlUnitRows, string(arg))
		if err != nil {
			return fmt.Errorf("search: unit index: %w", err)
		}
		for rows.Next() {
			var key int32
			c := candidate{}
			if err := rows.Scan(&key, &c.seq, &c.kind, &c.title, &c.headingJSON, &c.text, &c.codeTerms); err != nil {
				rows.Close()
				return fmt.Errorf("search: unit index: %w", err)
			}
			file := int32(lo) + key
			if file != last {
				if p.fileUnits[file] != ([2]int32{}) || file < last {
					// Units of a file out of its one range: keep none.
					rows.Close()
					p.dropUnits()
					return nil
				}
				if last >= 0 {
					p.fileUnits[last][1] = uc.n
				}
				p.fileUnits[file][0] = uc.n
				last = file
			}
			c.decodeHeadings()
			if err := uc.add(c, file); err != nil {
				rows.Close()
				return err
			}
			if uc.over() {
				rows.Close()
				p.dropUnits()
				return nil
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("search: unit index: %w", err)
		}
	}
	if last >= 0 {
		p.fileUnits[last][1] = uc.n
	}
	if err := uc.finish(); err != nil {
		return err
	}
	if uc.over() {
		p.dropUnits()
		return nil
	}
	p.packUnits(uc.counters)
	p.unitsOK = true
	return nil
}

// dropUnits leaves the part without its unit index (unitsOK false).
func (p *filePart) dropUnits() {
	p.unitsOK = false
	p.units, p.unitFiles, p.ustems, p.fileUnits = nil, nil, nil, nil
	p.titles, p.titleEnds = nil, nil
}

// addTitle adds the title of the next unit, folded (appendFoldedTitle).
// One longer than maxKeptTitle bytes is kept cut to that length, and one
// of that length may hold any name (unitWalk.titleNames): the titles of a
// part weigh at most maxKeptTitle bytes a unit (a code title is at most
// 80 runes; a heading of prose may be a paragraph).
func (p *filePart) addTitle(title string) {
	start := len(p.titles)
	p.titles = appendFoldedTitle(p.titles, title)
	if len(p.titles)-start > maxKeptTitle {
		p.titles = p.titles[:start+maxKeptTitle]
	}
	p.titleEnds = append(p.titleEnds, uint32(len(p.titles)))
}

// maxKeptTitle bounds a unit's title as the unit index keeps it.
const maxKeptTitle = 256

// countUnit counts unit id, c of file, into uc and returns its entry and
// its postings.
func countUnit(uc *unitCounter, files []fileEntry, c *candidate, file, id int32) (unitEntry, int) {
	u := unitEntry{seq: c.seq, file: file, lens: uc.count(c)}
	if c.kind == sources.KindCode {
		u.flags |= unitCode
		if f := &files[file]; (f.role == "" || f.role == string(sources.RoleSource)) && sources.InlineTest(f.language, c.headings, c.text) {
			u.flags |= unitTest
		}
		if c.title == "imports" && importsShare(c.text) >= importsFull {
			u.flags |= unitImports
		}
	}
	for i, st := range uc.order {
		n := &uc.cnt[i]
		if n[ucTitle] >= unitTitleMax || n[ucHeading] >= unitTitleMax || n[ucBody] >= unitBodyMax || n[ucCode] >= unitCodeMax {
			u.flags |= unitInexact
		}
		uc.lists[st] = append(uc.lists[st], unitPosting{unit: id,
			body: uint16(min(n[ucBody], unitBodyMax)), code: uint8(min(n[ucCode], unitCodeMax)),
			th: uint8(min(n[ucTitle], unitTitleMax)<<4 | min(n[ucHeading], unitTitleMax))})
	}
	return u, len(uc.order)
}

// packUnits moves every stem's unit postings, as the counters gathered
// them, into one array, and maps each stem's hash to its own. Each
// counter holds its stems' postings in unit order; a stem several
// counters hold gets theirs merged in that order.
func (p *filePart) packUnits(ucs []*unitCounter) {
	n := 0
	for _, uc := range ucs {
		for _, ps := range uc.lists {
			n += len(ps)
		}
	}
	all := make([]unitPosting, 0, n)
	type stemRange struct {
		h          uint64
		start, end int
	}
	var ranges []stemRange
	var lists [][]unitPosting
	for k, uc := range ucs {
		for st, ps := range uc.lists {
			if len(ps) == 0 {
				continue
			}
			h := uc.hashes[st]
			start := len(all)
			lists = append(lists[:0], ps)
			for _, o := range ucs[k+1:] {
				if ost, ok := o.ids[h]; ok && len(o.lists[ost]) > 0 {
					lists = append(lists, o.lists[ost])
					o.lists[ost] = nil
				}
			}
			all = mergeUnitPostings(all, lists)
			ranges = append(ranges, stemRange{h, start, len(all)})
			uc.lists[st] = nil
			if p.names != nil && uc.names != nil {
				if _, ok := p.names[h]; !ok {
					p.names[h] = uc.names[st]
				}
			}
		}
	}
	p.ustems = make(map[uint64][]unitPosting, len(ranges))
	for _, r := range ranges {
		p.ustems[r.h] = all[r.start:r.end:r.end]
	}
	p.units, p.unitFiles = slices.Clip(p.units), slices.Clip(p.unitFiles)
	p.titles, p.titleEnds = slices.Clip(p.titles), slices.Clip(p.titleEnds)
}

// mergeUnitPostings appends the postings of lists, each in unit order
// and no unit in two, to dst in unit order.
func mergeUnitPostings(dst []unitPosting, lists [][]unitPosting) []unitPosting {
	if len(lists) == 1 {
		return append(dst, lists[0]...)
	}
	for {
		best := -1
		for i, l := range lists {
			if len(l) > 0 && (best < 0 || l[0].unit < lists[best][0].unit) {
				best = i
			}
		}
		if best < 0 {
			return dst
		}
		// best's run up to the next head of another list.
		next := int32(math.MaxInt32)
		for i, l := range lists {
			if i != best && len(l) > 0 {
				next = min(next, l[0].unit)
			}
		}
		l := lists[best]
		j, _ := slices.BinarySearchFunc(l, next, func(p unitPosting, u int32) int { return cmp.Compare(p.unit, u) })
		dst = append(dst, l[:j]...)
		lists[best] = l[j:]
	}
}

// unitCounter counts one unit's stems as the scorer counts them. It
// memoizes each folded token's stem.
//
// Each stem has a number, dense from 0, the index of the slices below:
// counting a token is one lookup in the memo, and the rest are slice
// reads, where a map of the unit's stems and one of every stem's
// postings cost the build twice as much (BenchmarkFileIndexBuild).
type unitCounter struct {
	memo   map[uint64]int32 // folded token's hash → its stem's number
	ids    map[uint64]int32 // stem's hash → its number
	hashes []uint64         // each number's stem hash
	// names, when not nil, are each number's stem (a base to be saved).
	names []string
	// lists are each stem's postings (countUnit).
	lists [][]unitPosting
	// seen is, for each stem, the unit that last counted it (unit); slot
	// its place in order for that unit.
	seen []int32
	slot []int32
	unit int32
	// order are the unit's stems, in the order first counted; cnt their
	// counts by unit column, as order.
	order []int32
	cnt   [][4]uint32
	buf   []byte
	// hot caches the memo, direct-mapped by the token's hash: the common
	// tokens, most of a text's, are found there rather than in a map too
	// large for the processor's caches.
	hot [unitHotSlots]hotToken
}

// unitHotSlots is the size of unitCounter.hot (a power of two).
const unitHotSlots = 1 << 13

// hotToken is a token's hash and its stem's number; hash 0 is empty.
type hotToken struct {
	hash uint64
	st   int32
}

// unitMemoMax bounds the memo of folded tokens; past it it starts over.
const unitMemoMax = 1 << 18

func newUnitCounter() *unitCounter {
	return &unitCounter{memo: make(map[uint64]int32, 1<<14), ids: make(map[uint64]int32, 1<<14)}
}

// stem returns the number of the stem of a folded token. The memo is
// keyed by the token's own hash (as stems are held by theirs): no string
// is made for a token seen before.
func (uc *unitCounter) stem(tok []byte) int32 {
	k := maphash.Bytes(tokenSeed, tok)
	hot := &uc.hot[k&(unitHotSlots-1)]
	if hot.hash == k && k != 0 {
		return hot.st
	}
	if st, ok := uc.memo[k]; ok {
		*hot = hotToken{k, st}
		return st
	}
	if len(uc.memo) >= unitMemoMax {
		clear(uc.memo)
	}
	uc.buf = append(uc.buf[:0], tok...)
	stem := sources.PorterStem(uc.buf)
	h := stemHash(stem)
	st, ok := uc.ids[h]
	if !ok {
		st = int32(len(uc.hashes))
		uc.ids[h] = st
		uc.hashes = append(uc.hashes, h)
		if uc.names != nil {
			uc.names = append(uc.names, string(stem))
		}
		uc.lists = append(uc.lists, nil)
		uc.seen = append(uc.seen, 0)
		uc.slot = append(uc.slot, 0)
	}
	uc.memo[k] = st
	*hot = hotToken{k, st}
	return st
}

// tokenSeed hashes folded tokens for the unit counter's memo.
var tokenSeed = maphash.MakeSeed()

func (uc *unitCounter) add(st int32, col int) {
	if uc.seen[st] != uc.unit {
		uc.seen[st] = uc.unit
		uc.slot[st] = int32(len(uc.order))
		uc.order = append(uc.order, st)
		uc.cnt = append(uc.cnt, [4]uint32{})
	}
	uc.cnt[uc.slot[st]][col]++
}

// count counts the unit's columns (as countFields scans them) and
// returns their lengths.
func (uc *unitCounter) count(c *candidate) (lens [4]uint32) {
	uc.unit++ // seen holds 0 for a stem no unit counted yet
	uc.order, uc.cnt = uc.order[:0], uc.cnt[:0]
	var tbuf []byte
	each := func(s string, col int) uint32 {
		if len(s) > maxScanBytes {
			s = s[:maxScanBytes]
		}
		n := uint32(0)
		tbuf = sources.ForEachToken(s, tbuf, func(tok []byte, _, _ int) bool {
			uc.add(uc.stem(tok), col)
			n++
			return true
		})
		return n
	}
	title := c.title
	if len(title) > maxScanBytes {
		title = title[:maxScanBytes]
	}
	type span struct{ a, b int }
	var whole []span
	tbuf = sources.ForEachToken(title, tbuf, func(tok []byte, a, b int) bool {
		uc.add(uc.stem(tok), ucTitle)
		whole = append(whole, span{a, b})
		lens[ucTitle]++
		return true
	})
	// The parts inside the title's identifiers count as title words
	// (appendParts); the title's length counts each identifier's parts
	// instead of the tokens it spans (extraParts).
	var pbuf []byte
	sources.EachPart(title, func(_ bool, a, b int) {
		if slices.Contains(whole, span{a, b}) {
			return
		}
		pbuf = appendLowerPart(pbuf[:0], title[a:b])
		if len(pbuf) > 0 {
			uc.add(uc.stem(pbuf), ucTitle)
		}
	})
	lens[ucTitle] = uint32(max(0, int(lens[ucTitle])+extraPartsOf(c.title)))
	lens[ucHeading] = each(c.context, ucHeading)
	lens[ucBody] = each(c.text, ucBody)
	lens[ucCode] = each(c.codeTerms, ucCode)
	return lens
}

// extraPartsOf is how many more words text has counted in identifier
// parts than in index tokens (matcher.extraParts): for each identifier
// that splits, its parts less the tokens it spans.
func extraPartsOf(text string) int {
	extra, parts, start, end := 0, 0, 0, 0
	flush := func() {
		if parts > 0 {
			tokens := 0
			sources.ForEachToken(text[start:end], nil, func([]byte, int, int) bool {
				tokens++
				return true
			})
			extra += parts - tokens
		}
	}
	sources.EachPart(text, func(first bool, a, b int) {
		if first {
			flush()
			parts, start = 0, a
		}
		parts++
		end = b
	})
	flush()
	return extra
}

// unitsReady reports whether the index holds every unit of its files.
func (ix *fileIndex) unitsReady() bool {
	return ix != nil && ix.base.unitsOK && ix.delta.unitsOK
}

// pathTokens counts the tokens of a path as the scorer counts the path
// column.
func pathTokens(p string) int32 {
	if len(p) > maxScanBytes {
		p = p[:maxScanBytes]
	}
	n := int32(0)
	sources.ForEachToken(p, nil, func([]byte, int, int) bool {
		n++
		return true
	})
	return n
}
