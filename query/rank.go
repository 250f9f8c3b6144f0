package query

import (
	"math"
	"unicode/utf8"

	"github.com/tychora/tychora/sources"
)

// Ranking (stage B): every candidate of the pool is scored in Go with
// BM25F over its five columns, a term-proximity feature and phrase matches,
// from term frequencies counted by re-tokenizing the candidate's text with
// the index's own tokenizer (sources/token.go). docs/search.md has the
// formulas and the reasons for each parameter.

// maxScanBytes bounds how much of one column is tokenized for ranking and
// snippets: terms past it still match (FTS5 found the candidate) but do
// not add to its score. It keeps a pathological unit (one 8 MiB line)
// from costing more than any ordinary candidate. The file terms of ingest
// are counted to the same bound.
const maxScanBytes = sources.MaxScanBytes

// matcher maps the tokens of a text to query terms. It memoizes the
// folded-token → term decision, so each distinct token is stemmed once per
// query. Not safe for concurrent use.
type matcher struct {
	stems map[string]int32 // stem → term index
	memo  map[string]int32 // folded token → term index, or -1
	first [256]bool        // first bytes of the stems: other tokens cannot match
	// pairs holds, for each first byte of a stem, the second bytes a
	// token that matches a stem can have (pairOK): a token keeps its first
	// two bytes in every stem of three bytes or more (stemming changes
	// endings, and leaves at least two bytes before the ending it
	// changes), so the shorter stems allow any second byte. pairRow maps a
	// first byte to its row of pairs (1 + the index), so that a matcher
	// allocates a row for each first byte its stems have, not 256.
	pairRow [256]uint16
	pairs   [][4]uint64
	fbuf    []byte
	sbuf    []byte
}

func newMatcher(stems []string) *matcher {
	m := &matcher{stems: make(map[string]int32, len(stems)), memo: make(map[string]int32, 256)}
	for i, s := range stems {
		if s == "" {
			continue
		}
		if _, dup := m.stems[s]; !dup {
			m.stems[s] = int32(i)
		}
		m.first[s[0]] = true
		if m.pairRow[s[0]] == 0 {
			m.pairs = append(m.pairs, [4]uint64{})
			m.pairRow[s[0]] = uint16(len(m.pairs))
		}
		row := &m.pairs[m.pairRow[s[0]]-1]
		if len(s) >= 3 {
			row[s[1]>>6] |= 1 << (s[1] & 63)
		} else {
			*row = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		}
	}
	return m
}

// pairOK reports whether a folded token that starts with bytes a, b can
// match a stem; a is the first byte of some stem (m.first).
func (m *matcher) pairOK(a, b byte) bool {
	r := m.pairRow[a]
	return r > 0 && m.pairs[r-1][b>>6]&(1<<(b&63)) != 0
}

// lookup returns the term index of a folded token, or -1.
func (m *matcher) lookup(tok []byte) int32 {
	if t, ok := m.memo[string(tok)]; ok {
		return t
	}
	m.sbuf = append(m.sbuf[:0], tok...)
	t, ok := m.stems[string(sources.PorterStem(m.sbuf))]
	if !ok {
		t = -1
	}
	m.memo[string(tok)] = t
	return t
}

// hit is one token of a text that matches a query term.
type hit struct {
	term       int32
	pos        int32 // token position in the column (as FTS5 counts)
	start, end int32 // byte range in the column's text
}

// scan tokenizes s as the index does and appends a hit for every token
// that matches a term. It returns the hits and the number of tokens.
// Tokens whose first byte cannot start any term are skipped without
// folding or a map lookup, which keeps scanning near memory speed.
func (m *matcher) scan(s string, hits []hit) ([]hit, int) {
	if len(s) > maxScanBytes {
		s = s[:maxScanBytes]
	}
	pos := 0
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !sources.ASCIITokenChar[c] {
				i++
				continue
			}
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !sources.IsTokenRune(r) {
				i += size
				continue
			}
		}
		// A token starts at i.
		start := i
		lead := c
		if lead >= 'A' && lead <= 'Z' {
			lead += 'a' - 'A'
		}
		ascii, upper := true, false
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if !sources.ASCIITokenChar[c] {
					break
				}
				if c >= 'A' && c <= 'Z' {
					upper = true
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if !sources.IsTokenRune(r) && !sources.IsDiacritic(r) {
				break
			}
			ascii = false
			i += size
		}
		p := pos
		pos++
		if lead < utf8.RuneSelf && !m.first[lead] {
			continue
		}
		if ascii && i-start >= 2 && !m.pairOK(lead, asciiLower(s[start+1])) {
			continue
		}
		var t int32
		switch {
		case ascii && !upper:
			t = m.lookupString(s[start:i])
		case ascii:
			m.fbuf = m.fbuf[:0]
			for j := start; j < i; j++ {
				c := s[j]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				m.fbuf = append(m.fbuf, c)
			}
			t = m.lookup(m.fbuf)
		default:
			m.fbuf = foldToken(m.fbuf[:0], s[start:i])
			if len(m.fbuf) == 0 || !m.first[m.fbuf[0]] || len(m.fbuf) >= 2 && !m.pairOK(m.fbuf[0], m.fbuf[1]) {
				continue
			}
			t = m.lookup(m.fbuf)
		}
		if t >= 0 {
			hits = append(hits, hit{term: t, pos: int32(p), start: int32(start), end: int32(i)})
		}
	}
	return hits, pos
}

// lookupString is lookup for a token that needs no folding.
func (m *matcher) lookupString(tok string) int32 {
	if t, ok := m.memo[tok]; ok {
		return t
	}
	m.sbuf = append(m.sbuf[:0], tok...)
	t, ok := m.stems[string(sources.PorterStem(m.sbuf))]
	if !ok {
		t = -1
	}
	m.memo[tok] = t
	return t
}

// foldToken appends the folded form of one token (lower case, diacritics
// removed) to dst.
func foldToken(dst []byte, tok string) []byte {
	for _, r := range tok {
		if r < utf8.RuneSelf {
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			dst = append(dst, byte(r))
			continue
		}
		if f := sources.FoldRune(r); f != 0 {
			dst = utf8.AppendRune(dst, f)
		}
	}
	return dst
}

// sterm is a scoring term: a query term with its statistics.
type sterm struct {
	stem   string
	weight float64 // query weight (0: matched only for phrases)
	idf    float64
	df     int64
	phrase bool // a word of a quoted phrase
}

// bm25IDF is the BM25 inverse document frequency, kept positive
// (Lucene's form): ln(1 + (N - df + 0.5) / (df + 0.5)).
func bm25IDF(n, df int64) float64 {
	if df > n {
		df = n
	}
	return math.Log(1 + (float64(n-df)+0.5)/(float64(df)+0.5))
}

// scorer ranks candidates for one query. Not safe for concurrent use.
type scorer struct {
	prof  *profile
	stats corpusStats
	terms []sterm
	// phrases: term indices that must follow each other.
	phrases [][]int32
	// qualified marks the phrases that are qualified names: they also
	// count once where the name is defined (qualifier words in the path,
	// the name in the title).
	qualified []bool
	// pairs maps an unordered pair of term indices (lo<<32 | hi) to its
	// proximity weight (min idf of the two).
	pairs map[uint64]float64
	m     *matcher

	// scratch
	tf   []float64 // [term*numFields + field]
	hits [numFields][]hit
	lens [numFields]int
	prox map[uint64]float64
}

func newScorer(prof *profile, stats corpusStats, terms []sterm, phrases [][]int32, qualified []bool, seq []int32) *scorer {
	s := &scorer{prof: prof, stats: stats, terms: terms, phrases: phrases, qualified: qualified,
		tf: make([]float64, len(terms)*numFields), pairs: map[uint64]float64{}, prox: map[uint64]float64{}}
	stems := make([]string, len(terms))
	for i, t := range terms {
		if t.weight > 0 || t.phrase {
			stems[i] = t.stem
		}
	}
	s.m = newMatcher(stems)
	for i := 1; i < len(seq); i++ {
		a, b := seq[i-1], seq[i]
		if a == b {
			continue
		}
		s.pairs[pairKey(a, b)] = math.Min(terms[a].idf, terms[b].idf)
	}
	return s
}

func pairKey(a, b int32) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(a)<<32 | uint64(uint32(b))
}

// fieldText returns the candidate's text of column f.
func (c *candidate) fieldText(f int) string {
	switch f {
	case fieldTitle:
		return c.title
	case fieldHeading:
		return c.context
	case fieldPath:
		return c.path
	case fieldBody:
		return c.text
	}
	return c.codeTerms
}

// norm is BM25's length normalization of column f for a length of n
// tokens.
func (s *scorer) norm(f, n int) float64 {
	fp := s.prof.fields[f]
	avg := s.stats.avgLen[f]
	if avg <= 0 {
		return 1
	}
	return (1 - fp.b) + fp.b*float64(n)/avg
}

// score computes the candidate's score and keeps its body hits for the
// snippet: BM25F over the fields, the phrases, and the proximity of the
// question's words in the body.
func (s *scorer) score(c *candidate) float64 {
	s.countFields(c)
	s.keepFileTF(c)
	var norms [numFields]float64
	for f := 0; f < numFields; f++ {
		norms[f] = s.norm(f, s.lens[f])
	}
	total := s.termScore(&norms)
	total = s.addPhrases(&norms, total)
	return s.addProximity(norms[fieldBody], total)
}

// countFields scans each weighed field of c for the question's terms:
// their hits (positions), term frequencies and the fields' lengths.
func (s *scorer) countFields(c *candidate) {
	clear(s.tf)
	for f := 0; f < numFields; f++ {
		s.hits[f] = s.hits[f][:0]
		if s.prof.fields[f].weight == 0 && f != fieldBody {
			s.lens[f] = 0
			continue
		}
		s.hits[f], s.lens[f] = s.m.scan(c.fieldText(f), s.hits[f])
		for _, h := range s.hits[f] {
			s.tf[int(h.term)*numFields+f]++
		}
		if f == fieldTitle {
			// A title that is an identifier (HTTPServerConfig, parse_url)
			// is one token to the index: its parts count as title words
			// too, so that "http server config" finds the definition first.
			// They add to the term frequencies only, not to the hits that
			// phrases and proximity read positions from.
			n := len(s.hits[f])
			for _, h := range s.m.appendParts(c.title, s.hits[f])[n:] {
				s.tf[int(h.term)*numFields+f]++
			}
			s.hits[f] = s.hits[f][:n]
			// The title's length counts the parts of its identifiers
			// instead of the tokens they span: a long identifier is a long
			// title, and os.ReadFile is three words, not four.
			if !c.titlePartsSet {
				// The same for every query: counted once per candidate
				// (feedback scores the pool again).
				c.titleParts, c.titlePartsSet = s.m.extraParts(c.title), true
			}
			s.lens[f] += c.titleParts
		}
	}
}

// termScore is BM25F: each term's weighted, length-normalized frequency
// over the fields, saturated once.
func (s *scorer) termScore(norms *[numFields]float64) float64 {
	k1 := s.prof.k1
	total := 0.0
	for t := range s.terms {
		st := &s.terms[t]
		if st.weight == 0 {
			continue
		}
		x := 0.0
		for f := 0; f < numFields; f++ {
			if n := s.tf[t*numFields+f]; n > 0 {
				x += s.prof.fields[f].weight * n / norms[f]
			}
		}
		if x > 0 {
			total += st.weight * st.idf * x * (k1 + 1) / (k1 + x)
		}
	}
	return total
}

// addPhrases adds to total the phrases' scores, each like a term's by its
// rarest word's idf; a qualified name the unit defines counts as a title
// match. (Adding to the running total keeps the sum's rounding.)
func (s *scorer) addPhrases(norms *[numFields]float64, total float64) float64 {
	if s.prof.phraseWeight <= 0 {
		return total
	}
	k1 := s.prof.k1
	for pi, ph := range s.phrases {
		x := 0.0
		for f := 0; f < numFields; f++ {
			if s.prof.fields[f].weight == 0 {
				continue
			}
			if n := countPhrase(s.hits[f], ph); n > 0 {
				x += s.prof.fields[f].weight * float64(n) / norms[f]
			}
		}
		if x == 0 && pi < len(s.qualified) && s.qualified[pi] && s.defines(ph) {
			x = s.prof.fields[fieldTitle].weight / norms[fieldTitle]
		}
		if x > 0 {
			idf := 0.0
			for _, t := range ph {
				idf = math.Max(idf, s.terms[t].idf)
			}
			total += s.prof.phraseWeight * idf * x * (k1 + 1) / (k1 + x)
		}
	}
	return total
}

// addProximity adds to total the reward of pairs of different question
// words close together in the body (1/d² within the window), saturated
// like a term.
func (s *scorer) addProximity(bodyNorm float64, total float64) float64 {
	if s.prof.proximity <= 0 || len(s.pairs) == 0 {
		return total
	}
	clear(s.prox)
	hs := s.hits[fieldBody]
	w := int32(s.prof.proxWindow)
	for i := range hs {
		for j := i + 1; j < len(hs) && hs[j].pos-hs[i].pos <= w; j++ {
			if hs[j].term == hs[i].term {
				continue
			}
			k := pairKey(hs[i].term, hs[j].term)
			if _, ok := s.pairs[k]; ok {
				d := float64(hs[j].pos - hs[i].pos)
				s.prox[k] += 1 / (d * d)
			}
		}
	}
	k1 := s.prof.k1
	kb := k1 * bodyNorm
	for k, acc := range s.prox {
		total += s.prof.proximity * s.pairs[k] * acc * (k1 + 1) / (kb + acc)
	}
	return total
}

// defines reports whether the candidate defines the qualified name ph:
// every qualifier word in its path, the name in its title.
func (s *scorer) defines(ph []int32) bool {
	n := len(ph) - 1
	if n < 1 || !hasTerm(s.hits[fieldTitle], ph[n]) {
		return false
	}
	for _, t := range ph[:n] {
		if !hasTerm(s.hits[fieldPath], t) {
			return false
		}
	}
	return true
}

func hasTerm(hs []hit, t int32) bool {
	for _, h := range hs {
		if h.term == t {
			return true
		}
	}
	return false
}

// countPhrase counts the occurrences of a phrase in one column's hits:
// consecutive positions holding the phrase's terms in order.
func countPhrase(hs []hit, ph []int32) int {
	if len(ph) == 0 {
		return 0
	}
	n := 0
	for i := 0; i+len(ph) <= len(hs); i++ {
		if hs[i].term != ph[0] {
			continue
		}
		ok := true
		for k := 1; k < len(ph); k++ {
			if hs[i+k].term != ph[k] || hs[i+k].pos != hs[i].pos+int32(k) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// keepFileTF keeps the candidate's weighted term frequencies for its
// file's evidence: title, body and identifier parts summed over the
// file's units; the path, the same in every unit, apart.
func (s *scorer) keepFileTF(c *candidate) {
	nt := len(s.terms)
	if cap(c.fileTF) < nt {
		c.fileTF, c.pathTF = make([]float64, nt), make([]float64, nt)
	}
	c.fileTF, c.pathTF = c.fileTF[:nt], c.pathTF[:nt]
	w := &s.prof.fields
	for t := 0; t < nt; t++ {
		tf := s.tf[t*numFields : (t+1)*numFields]
		c.fileTF[t] = w[fieldTitle].weight*tf[fieldTitle] + w[fieldBody].weight*tf[fieldBody] + w[fieldCode].weight*tf[fieldCode]
		c.pathTF[t] = w[fieldPath].weight * tf[fieldPath]
	}
}
