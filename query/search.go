package query

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tychora/tychora/workspace"
)

// Engine answers lexical searches over the workspace index. Its zero value
// is not usable: set DB and Cursors. An Engine is safe for concurrent use
// and must not be copied after its first search.
type Engine struct {
	DB      *workspace.DB
	Cursors *workspace.Cursors
	// Collections are the workspace's configured collections: a filter
	// naming another is NOT_FOUND. Nil skips the check.
	Collections []string
	// CollectionsNow, when set, gives them instead of Collections (an
	// owner reloads its settings).
	CollectionsNow func() []string
	// Exhaustive, for evaluation only, makes stage A return every unit
	// that matches any clause of the question, so that stage B ranks them
	// all: the ranking the pool is measured against (bench/eval -agree).
	// Far too slow for serving.
	Exhaustive bool
	// Foreground, when set, is what the file index's build before a
	// commit gives way to (workspace.Foreground): it yields to it every
	// few files and units.
	Foreground *workspace.Foreground
	// SavedIndex, when set, is the file the base of a large workspace's
	// file index is saved to once built whole, and read from by the
	// engine's first build (rank_file_index_saved.go).
	SavedIndex string
	// noUnits, for comparison in tests and benchmarks, ranks without the
	// unit index (stage A's FTS5 probes).
	noUnits bool

	stats statsCache
	stmts stmtCache
	names nameCache
	// codeSrc: the sources that hold code (rank_docs.go).
	codeSrc codeSourceCache
	// fileIdx is the file index (rank_file_index.go).
	fileIdx fileIndexCache
	warming sync.WaitGroup
	// helpers bounds the searches' helper connections (rank_file_best_fetch.go).
	helperOnce sync.Once
	helpers    chan struct{}
	helped     atomic.Int64 // searches whose helper read their best files
	unitServed atomic.Int64 // searches whose stage A the unit index served
	unitsRead  atomic.Int64 // the units stage B read for those
	// unprepared, when set (tests), is called with the text of each
	// statement a search prepares where it runs (search_stmt.go).
	unprepared func(q string)
	// writer is the writer's transaction PrepareCommit reads in, which
	// runs the fixed statements unprepared (they are the readers').
	writer atomic.Pointer[sql.Tx]
}

// Ranked is the ranked answer to a search, before run recording and budget
// fitting: full hits (Text set), the normalized request and its echo, the
// number of matches and the cursor of the next page.
type Ranked struct {
	// Request is the normalized request (Normalize); Echo its compact
	// echo.
	Request QueryRequest
	Echo    RequestEcho
	// Hits is the page, best first, each with its full text.
	Hits []Hit
	// TotalMatches counts the evidence in the caller's scope (and
	// filters) matching the query, up to 1,000 (the deepest a search
	// pages): 1,000 means at least that many.
	TotalMatches int
	// Offset is the rank of Hits[0] (0 on the first page).
	Offset int
	// NextCursor continues after the last hit; nil on the last page.
	NextCursor *string
}

// candidate is one evidence unit of the pool.
type candidate struct {
	seq          int64
	evidenceID   string
	sourceID     string
	revisionID   string
	collectionID string
	kind         string
	language     string
	role         string // the file's role (sources.Role)
	path         string
	title        string
	headingJSON  string
	headings     []string // heading_path decoded
	context      string   // the headings above the unit's own (see decodeHeadings)
	startLine    int
	endLine      int
	hash         string
	text         string
	codeTerms    string
	fileBytes    int64 // the size of its file, read (fileSizes) only when it has no kept counts
	score        float64
	// fileTF is the unit's weighted term frequency of each query term in
	// the columns that whole-file evidence sums (rank_file.go); pathTF
	// that of its path, counted once per file.
	fileTF, pathTF []float64
	// titleParts is extraParts(title), once titlePartsSet.
	titleParts    int
	titlePartsSet bool
}

// Search runs req for p: it normalizes and validates the request, checks
// the filters against p's collections (p's grant is the caller's to
// check), finds and ranks the matching evidence, and returns one page of
// full hits. Errors are *workspace.Error: INVALID_ARGUMENT for a bad
// request or cursor, PERMISSION_DENIED for a collection outside p's,
// NOT_FOUND for unknown filter values; storage
// failures are wrapped errors (INTERNAL at the edge).
func (e *Engine) Search(ctx context.Context, p workspace.Principal, req QueryRequest) (Ranked, error) {
	norm, err := Normalize(req)
	if err != nil {
		return Ranked{}, err
	}
	return e.SearchNormalized(ctx, p, norm)
}

// SearchNormalized is Search of a request that Normalize returned.
func (e *Engine) SearchNormalized(ctx context.Context, p workspace.Principal, norm QueryRequest) (Ranked, error) {
	var err error
	prof, _ := profileByName(norm.Profile)
	out := Ranked{Request: norm, Echo: Echo(norm), Hits: []Hit{}}
	if out.Offset, err = e.openCursor(p, norm); err != nil {
		return Ranked{}, err
	}
	pool := poolSize(prof, norm.Limit)
	if out.Offset >= pool {
		return out, nil
	}
	if err := e.stmts.prepare(ctx, e.DB.R); err != nil {
		return Ranked{}, err
	}
	tx, release, err := e.begin(ctx)
	if err != nil {
		return Ranked{}, err
	}
	defer release()

	sf, err := e.resolveScope(ctx, tx, p, norm.Filters)
	if err != nil {
		return Ranked{}, err
	}
	pq := parseQuestion(norm.Question)
	if sf.none || pq.empty() {
		return out, nil
	}
	q, err := e.prepareQuery(ctx, tx, prof, &pq, &sf)
	if err != nil {
		return Ranked{}, err
	}
	q.asked = rolesAsked(&pq, norm.Filters)
	q.askedMask = askedMask(q.asked)
	if len(q.asked) == 0 {
		if q.codeSources, err = e.codeSrc.get(ctx, tx, q.stats.generation); err != nil {
			return Ranked{}, err
		}
	}
	fe, err := e.fileEvidence(ctx, tx, q, &sf)
	if err != nil {
		return Ranked{}, err
	}
	defer fe.best.stop()
	cands, total, err := e.candidates(ctx, tx, q, &sf, fe, out.Offset+norm.Limit, pool)
	if err != nil {
		return Ranked{}, err
	}
	out.TotalMatches = total
	if cands, err = e.rank(ctx, tx, q, &sf, fe, cands); err != nil {
		return Ranked{}, err
	}
	// Completion (rank_file.go) may add matches the count did not reach.
	out.TotalMatches = min(max(out.TotalMatches, len(cands)), maxCountedMatches)
	end := min(len(cands), out.Offset+norm.Limit)
	if out.Offset >= end {
		return out, nil
	}
	page := cands[out.Offset:end]
	if out.Hits, err = e.pageHits(ctx, tx, q, page); err != nil {
		return Ranked{}, err
	}
	// From the unit index stage B read what the pages up to this one
	// need: more match while the count says so, up to the pool's depth.
	if end < len(cands) || fe.units && end < min(out.TotalMatches, pool) {
		cur, err := e.sealCursor(p, norm, end)
		if err != nil {
			return Ranked{}, err
		}
		out.NextCursor = &cur
	}
	return out, nil
}

// pageHits makes the hits of the page. The stale check of their files
// (a statement and a stat of each file) runs beside the snippets, which
// need nothing of it: a search's last step waits for the longer of the
// two, not for their sum. It always waits for the check, which reads in
// tx, before it returns.
func (e *Engine) pageHits(ctx context.Context, tx *sql.Tx, q *preparedQuery, page []*candidate) ([]Hit, error) {
	type staleResult struct {
		files map[fileKey]fileInfo
		err   error
	}
	checked := make(chan staleResult, 1)
	go func() {
		files, err := e.staleFiles(ctx, tx, page)
		checked <- staleResult{files, err}
	}()
	hits := make([]Hit, 0, len(page))
	snip := newMatcher(stemsOf(q.terms))
	var err error
	for i, c := range page {
		if i%snippetCheckEvery == 0 {
			if err = ctx.Err(); err != nil {
				break
			}
		}
		h := c.toHit(snip, q.terms, fileInfo{})
		if h.Focus != nil && (definesName(q.pq.names, c) > 0 || definesName(q.pq.spelled, c) > 0) {
			h.Focus = declarationLine(c, h.Focus)
		}
		hits = append(hits, h)
	}
	st := <-checked
	if err != nil {
		return nil, err
	}
	if st.err != nil {
		return nil, st.err
	}
	for i := range hits {
		f := st.files[fileKey{page[i].sourceID, page[i].path}]
		hits[i].File, hits[i].Stale, hits[i].StaleReason = f.abs, f.stale != "", staleReason(f.stale)
	}
	return hits, nil
}

// preparedQuery is a parsed question with the statistics of its terms.
type preparedQuery struct {
	prof      *profile
	pq        *parsedQuery
	stats     corpusStats
	terms     []sterm   // indexed like pq.terms
	phrases   [][]int32 // term indices of each phrase
	qualified []bool    // which phrases are qualified names
	seq       []int32   // pq.seq
	clauses   []clause
	asked     map[string]bool // the roles the question asks for (rolesAsked)
	// askedMask has their bits (roleBit): a file whose name names one
	// is asked for too (namedRoles).
	askedMask uint8
	// codeSources are the sources that hold code, when the question
	// asks for no role (docsPrior).
	codeSources map[string]bool
}

// prepareQuery looks up the statistics of the question's terms.
func (e *Engine) prepareQuery(ctx context.Context, tx *sql.Tx, prof *profile, pq *parsedQuery, sf *scopeFilter) (*preparedQuery, error) {
	stems := make([]string, len(pq.terms))
	for i, t := range pq.terms {
		stems[i] = t.stem
	}
	stats, df, err := e.stats.load(ctx, e, tx, stems)
	if err != nil {
		return nil, err
	}
	if err := e.keepNamedStopwords(ctx, tx, stats.generation, pq, sf); err != nil {
		return nil, err
	}
	q := &preparedQuery{prof: prof, pq: pq, stats: stats, terms: scoringTerms(pq, stats, df)}
	for _, ph := range pq.phrases {
		ids := make([]int32, len(ph.terms))
		for i, t := range ph.terms {
			ids[i] = int32(t)
		}
		q.phrases = append(q.phrases, ids)
		q.qualified = append(q.qualified, ph.qualified)
	}
	for _, t := range pq.seq {
		q.seq = append(q.seq, int32(t))
	}
	q.clauses = queryClauses(prof, pq, q.terms, stats.n)
	return q, nil
}

// candidates runs stage A and reads the pool; total is total_matches.
func (e *Engine) candidates(ctx context.Context, tx *sql.Tx, q *preparedQuery, sf *scopeFilter, fe *fileEvidence, end, pool int) ([]*candidate, int, error) {
	if fe.fs != nil {
		if uc, ok := fe.fs.ix.unitCandidates(q, sf, fe.fs, end); ok {
			e.unitServed.Add(1)
			e.unitsRead.Add(int64(len(uc.seqs)))
			fe.units = true
			cands, err := e.fetchCandidates(ctx, tx, uc.seqs)
			if err != nil {
				return nil, 0, err
			}
			if uc.total < 0 {
				countOf, _ := countExpr(q.prof, q.clauses)
				if uc.total, err = e.countMatches(ctx, tx, countOf, sf); err != nil {
					return nil, 0, err
				}
			}
			return cands, min(uc.total, maxCountedMatches), nil
		}
	}
	probes := planProbes(q.prof, q.stats.n, q.clauses)
	if len(probes) == 0 {
		return nil, 0, nil
	}
	countOf, floor := countExpr(q.prof, q.clauses)
	exhausted := -1
	if len(probes) == 1 && probes[0].match == countOf {
		probes[0].exhaust = &exhausted
	}
	probes = append(nameProbes(q.pq.names), probes...)
	if e.Exhaustive {
		probes, pool = exhaustiveProbes(q), maxExhaustivePool
	}
	seqs, err := e.runProbes(ctx, tx, q.prof, probes, sf, pool)
	if err != nil {
		return nil, 0, err
	}
	// total_matches: known already when the one probe ran to its end;
	// when nothing narrows the search, when the query is one word (its
	// df) or holds a word found in more rows than the cap; counted
	// otherwise.
	var total int
	switch {
	case exhausted >= 0:
		total = exhausted
	case !sf.narrows() && floor >= maxCountedMatches:
		total = maxCountedMatches
	case !sf.narrows() && len(q.clauses) == 1 && q.clauses[0].exact:
		total = int(q.clauses[0].df)
	default:
		if total, err = e.countMatches(ctx, tx, countOf, sf); err != nil {
			return nil, 0, err
		}
	}
	cands, err := e.fetchCandidates(ctx, tx, seqs)
	if err != nil {
		return nil, 0, err
	}
	return cands, max(total, len(cands)), nil
}

// fileEvidence is what the search knows of files before stage A: the
// files the question names, and the scoring of every file in scope by the
// file index with the reading of the best files' units, started beside
// stage A (nil without the index).
type fileEvidence struct {
	named [][2]string
	best  *bestFetch
	// fs, with the unit index, scores every file in scope, and stage A
	// takes its units from the unit index (rank_unit_search.go); units
	// says it did: stage B then drops the units that do not match.
	fs    *fileScores
	units bool
}

// fileEvidence looks up the named files and starts scoring every file in
// scope and reading the best files' units.
func (e *Engine) fileEvidence(ctx context.Context, tx *sql.Tx, q *preparedQuery, sf *scopeFilter) (*fileEvidence, error) {
	fe := &fileEvidence{}
	if e.Exhaustive {
		return fe, nil
	}
	// The file index scores every file in scope; without it (a facet
	// filter, a workspace too large for one) the whole-file FTS5 index
	// proposes the best files after stage A, and the pool's files' counts
	// are read.
	ix, err := e.fileIdx.get(ctx, e, tx, q.stats.generation, q.stats.read)
	if err != nil {
		return nil, err
	}
	// With the unit index, stage A takes every unit that can reach the
	// first page from it (rank_unit_search.go): the named and the best
	// files need no completing.
	if ix != nil && sf.fileIndexable() && q.prof.prfDocs == 0 && len(sf.kinds) == 0 && len(sf.languages) == 0 &&
		!e.noUnits && ix.unitsServe(q) {
		if fe.fs = ix.score(q, sf); fe.fs != nil {
			return fe, nil
		}
	}
	names, err := e.names.get(ctx, e, tx, q.stats.generation)
	if err != nil {
		return nil, err
	}
	fe.named = names.lookup(q.nameStems(), sf)
	if ix != nil && sf.fileIndexable() {
		fe.best = e.startBest(ctx, q, sf, ix, fe.named)
	}
	return fe, nil
}

// rank runs stage B: it scores every candidate, completes the named and
// the best files (completeFiles, fileEvidence), applies the profile's
// feedback and the file priors (rerankFiles), and returns the candidates
// best first.
func (e *Engine) rank(ctx context.Context, tx *sql.Tx, q *preparedQuery, sf *scopeFilter, fe *fileEvidence, cands []*candidate) ([]*candidate, error) {
	sc := newScorer(q.prof, q.stats, q.terms, q.phrases, q.qualified, q.seq)
	var mm *matchMasks
	if fe.units {
		mm = newMatchMasks(q)
	}
	matching := cands[:0]
	for i, c := range cands {
		if i%scoreCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		c.score = sc.score(c)
		// The unit index's units may hold a phrase's words apart.
		if mm == nil || sc.matches(mm) {
			matching = append(matching, c)
		}
	}
	cands = matching
	var err error
	if cands, err = e.completeFiles(ctx, tx, sc, q, sf, fe.named, cands); err != nil {
		return nil, err
	}
	fs := fe.fs
	kept := map[string]*keptFile{}
	if fe.best != nil {
		var more []*candidate
		if fs, more, err = fe.best.wait(ctx, tx, cands); err != nil {
			return nil, err
		}
		cands = mergeUnits(cands, more)
	}
	if !e.Exhaustive {
		if fs == nil {
			if err := e.keepFiles(ctx, tx, q, nil, filesOf(cands), kept); err != nil {
				return nil, err
			}
			probed, err := e.probeFiles(ctx, tx, q, sf)
			if err != nil {
				return nil, err
			}
			if cands, err = e.completeBestFiles(ctx, tx, q, sf, kept, probed, fe.named, cands); err != nil {
				return nil, err
			}
		}
	}
	if q.prof.prfDocs > 0 {
		if err := e.feedback(ctx, tx, q, cands); err != nil {
			return nil, err
		}
		// Feedback may add terms: the files' counts of those too.
		if fs != nil {
			fs = fs.ix.score(q, sf)
		}
		kept = map[string]*keptFile{}
	}
	if err := e.keepFiles(ctx, tx, q, fs, filesOf(cands), kept); err != nil {
		return nil, err
	}
	if err := e.fileSizes(ctx, tx, kept, cands); err != nil {
		return nil, err
	}
	rerankFiles(q, q.asked, kept, cands)
	return cands, nil
}

// How many candidates stage B scores, and how many hits get their
// snippet, between two looks at the context: a caller who has gone stops
// the work within about a millisecond.
const (
	scoreCheckEvery   = 32
	snippetCheckEvery = 8
)

// byScore orders candidates best first, ties by evidence id.
func byScore(a, b *candidate) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return strings.Compare(a.evidenceID, b.evidenceID)
}

// begin opens the search's read transaction (one snapshot for every
// statement) on a read connection.
func (e *Engine) begin(ctx context.Context) (*sql.Tx, func(), error) {
	conn, err := e.DB.R.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	return tx, func() { tx.Rollback(); conn.Close() }, nil
}

// poolSize is how many candidates stage B ranks for a request: the depth
// a client can page to.
func poolSize(prof *profile, limit int) int {
	return min(prof.poolMax, max(prof.poolMin, prof.poolFactor*limit))
}

// scoringTerms gives every parsed term its statistics. Stop words get
// weight 0 (they only take part in phrases); terms the index lacks keep
// df 0 and never reach a MATCH.
func scoringTerms(pq *parsedQuery, stats corpusStats, df map[string]int64) []sterm {
	terms := make([]sterm, len(pq.terms))
	for i, t := range pq.terms {
		d := df[t.stem]
		w := t.weight
		if t.stop {
			w = 0
		}
		terms[i] = sterm{stem: t.stem, weight: w, df: d, idf: bm25IDF(stats.n, d), phrase: t.phrase}
	}
	foundParts(pq, df, terms)
	return terms
}

// foundParts weighs the parts of an identifier the index holds as
// written (one token: clpC, ParseIP) by weightFoundPart: its whole form
// finds it, and its parts mostly find other things (Clp in a paper on
// Clp proteins, every parse and ip). The parts of one the index lacks
// (parseHttpRequest where the code says parse_http_request) keep their
// weight: they are what finds it. A word that is also a plain word of
// the question, or a part of a missing identifier, keeps its weight.
func foundParts(pq *parsedQuery, df map[string]int64, terms []sterm) {
	var found, missing []int
	for _, g := range pq.groups {
		if len(g.whole) == 1 && df[pq.terms[g.whole[0]].stem] > 0 {
			found = append(found, g.parts...)
		} else {
			missing = append(missing, g.parts...)
		}
	}
	slices.Sort(found)
	for _, i := range slices.Compact(found) {
		if pq.terms[i].kind == termPart && !slices.Contains(missing, i) {
			terms[i].weight *= weightFoundPart
		}
	}
}

func stemsOf(terms []sterm) []string {
	out := make([]string, len(terms))
	for i, t := range terms {
		if t.weight > 0 {
			out[i] = t.stem
		}
	}
	return out
}

// countExpr is the expression total_matches counts: any clause (the best
// maxTermsA by weight × idf for a long question). floor is a lower bound
// of what it matches without filters: the df of its commonest single word.
func countExpr(prof *profile, clauses []clause) (expr string, floor int64) {
	idx := make([]int, 0, len(clauses))
	for i, c := range clauses {
		if !deadClause(c) { // a clause found nowhere adds nothing (planProbes)
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return -cmp.Compare(clauses[a].prio, clauses[b].prio) })
	idx = idx[:min(len(idx), prof.maxTermsA)]
	parts := make([]string, len(idx))
	for i, id := range idx {
		parts[i] = clauses[id].match
		if clauses[id].exact {
			floor = max(floor, clauses[id].df)
		}
	}
	return strings.Join(parts, " OR "), floor
}

// fetchCandidates reads the pool's evidence rows.
func (e *Engine) fetchCandidates(ctx context.Context, tx *sql.Tx, seqs []int64) ([]*candidate, error) {
	ids, err := json.Marshal(seqs)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	rows, err := e.query(ctx, tx, sqlFetch, string(ids))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	out := make([]*candidate, 0, len(seqs))
	for rows.Next() {
		c := &candidate{}
		if err := c.scan(rows); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

// scan reads a candidate from a row of fetchColumns.
func (c *candidate) scan(rows *sql.Rows) error {
	if err := rows.Scan(&c.seq, &c.evidenceID, &c.sourceID, &c.revisionID, &c.collectionID, &c.kind,
		&c.language, &c.role, &c.path, &c.title, &c.headingJSON, &c.startLine, &c.endLine, &c.hash, &c.text, &c.codeTerms); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	c.decodeHeadings()
	return nil
}

// decodeHeadings decodes heading_path and derives the context the ranker
// scores as the heading field: the headings above the unit, without the
// last one when it is the unit's own title (a section titled by its
// heading, a declaration): the title field already counts those words.
func (c *candidate) decodeHeadings() {
	if err := json.Unmarshal([]byte(c.headingJSON), &c.headings); err != nil || c.headings == nil {
		c.headings = []string{}
	}
	hp := c.headings
	if n := len(hp); n > 0 && hp[n-1] == c.title {
		hp = hp[:n-1]
	}
	c.context = strings.Join(hp, "\n")
}

// toHit turns a ranked candidate into a Hit with its snippet.
func (c *candidate) toHit(m *matcher, terms []sterm, file fileInfo) Hit {
	hp := c.headings
	text := c.text
	snippet, from, to := makeSnippet(m, terms, c.text, c.codeTerms)
	return Hit{
		EvidenceID:  c.evidenceID,
		SourceID:    c.sourceID,
		RevisionID:  c.revisionID,
		Kind:        c.kind,
		Language:    c.language,
		Role:        c.role,
		Path:        c.path,
		File:        file.abs,
		Title:       c.title,
		HeadingPath: hp,
		Span:        Span{StartLine: c.startLine, EndLine: c.endLine},
		Score:       roundScore(c.score),
		Snippet:     snippet,
		Focus:       focusOf(c.text, c.startLine, from, to),
		Text:        &text,
		Hash:        c.hash,
		Stale:       file.stale != "",
		StaleReason: staleReason(file.stale),
	}
}

// declarationLine is the focus of a unit that defines a name the question
// asks about: the line that declares it (the first that holds the unit's
// title, "func ParseIP" in "func ParseIP(s string) IP {"), where a reader
// sees what the place is; focus when no line holds the title.
func declarationLine(c *candidate, focus *Span) *Span {
	if c.title == "" {
		return focus
	}
	i := strings.Index(c.text, c.title)
	if i < 0 {
		return focus
	}
	line := c.startLine + strings.Count(c.text[:i], "\n")
	return &Span{StartLine: line, EndLine: line}
}

// roundScore keeps six significant decimals: scores are for ordering, and
// short numbers cost fewer tokens.
func roundScore(s float64) float64 {
	return math.Round(s*1e6) / 1e6
}
