package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

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

	stats statsCache
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
	// TotalMatches counts the evidence in the caller's scope matching the
	// query, up to 10,000.
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
	path         string
	title        string
	headingJSON  string
	startLine    int
	endLine      int
	hash         string
	text         string
	codeTerms    string
	score        float64
}

// Search runs req for p: it normalizes and validates the request, checks
// the grant (read) and the filters against p's collections, finds and
// ranks the matching evidence, and returns one page of full hits.
// Errors are *workspace.Error: INVALID_ARGUMENT for a bad request or
// cursor, PERMISSION_DENIED, NOT_FOUND for unknown filter values, INTERNAL
// (wrapped) for storage failures.
func (e *Engine) Search(ctx context.Context, p workspace.Principal, req QueryRequest) (Ranked, error) {
	if err := p.Require(workspace.GrantRead); err != nil {
		return Ranked{}, err
	}
	norm, err := Normalize(req)
	if err != nil {
		return Ranked{}, err
	}
	prof, _ := profileByName(norm.Profile)
	out := Ranked{Request: norm, Echo: Echo(norm), Hits: []Hit{}}
	offset, err := e.openCursor(p, norm)
	if err != nil {
		return Ranked{}, err
	}
	out.Offset = offset
	pool := poolSize(prof, norm.Limit)
	if offset >= pool {
		return out, nil
	}

	tx, err := e.DB.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Ranked{}, fmt.Errorf("search: %w", err)
	}
	defer tx.Rollback()

	sf, err := e.resolveScope(ctx, tx, p, norm.Filters)
	if err != nil {
		return Ranked{}, err
	}
	pq := parseQuestion(norm.Question)
	if sf.none || pq.empty() {
		return out, nil
	}
	stems := make([]string, 0, len(pq.terms))
	for _, t := range pq.terms {
		stems = append(stems, t.stem)
	}
	stats, df, err := e.stats.load(ctx, tx, stems)
	if err != nil {
		return Ranked{}, err
	}
	terms, tokens := scoringTerms(&pq, stats, df)
	var phraseTokens [][]string
	var phraseTerms [][]int32
	for _, ph := range pq.phrases {
		phraseTokens = append(phraseTokens, ph.tokens)
		ids := make([]int32, len(ph.terms))
		for i, t := range ph.terms {
			ids[i] = int32(t)
		}
		phraseTerms = append(phraseTerms, ids)
	}
	probes := planProbes(prof, terms, tokens, phraseTokens)
	if len(probes) == 0 {
		return out, nil
	}
	seqs, err := e.runProbes(ctx, tx, prof, probes, &sf, pool)
	if err != nil {
		return Ranked{}, err
	}
	total, err := countMatches(ctx, tx, countExpr(prof, terms, tokens, phraseTokens), &sf)
	if err != nil {
		return Ranked{}, err
	}
	out.TotalMatches = max(total, len(seqs))
	cands, err := fetchCandidates(ctx, tx, seqs)
	if err != nil {
		return Ranked{}, err
	}

	seq32 := make([]int32, len(pq.seq))
	for i, t := range pq.seq {
		seq32[i] = int32(t)
	}
	sc := newScorer(prof, stats, terms, phraseTerms, seq32)
	for _, c := range cands {
		c.score = sc.score(c)
	}
	if prof.prfDocs > 0 {
		if err := e.feedback(ctx, tx, prof, stats, &pq, terms, phraseTerms, seq32, cands); err != nil {
			return Ranked{}, err
		}
	}
	slices.SortFunc(cands, func(a, b *candidate) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return strings.Compare(a.evidenceID, b.evidenceID)
	})

	end := min(len(cands), offset+norm.Limit)
	if offset >= end {
		return out, nil
	}
	page := cands[offset:end]
	stale, err := staleFiles(ctx, tx, page)
	if err != nil {
		return Ranked{}, err
	}
	snip := newMatcher(stemsOf(terms))
	for _, c := range page {
		out.Hits = append(out.Hits, c.toHit(snip, terms, stale[fileKey{c.sourceID, c.path}]))
	}
	if end < len(cands) {
		cur, err := e.sealCursor(p, norm, end)
		if err != nil {
			return Ranked{}, err
		}
		out.NextCursor = &cur
	}
	return out, nil
}

// poolSize is how many candidates stage B ranks for a request: the depth
// a client can page to.
func poolSize(prof *profile, limit int) int {
	return min(prof.poolMax, max(prof.poolMin, 4*limit))
}

// scoringTerms gives every parsed term its statistics. Stop words get
// weight 0 (they only take part in phrases); terms the index lacks keep
// df 0 and never reach a MATCH.
func scoringTerms(pq *parsedQuery, stats corpusStats, df map[string]int64) ([]sterm, []string) {
	terms := make([]sterm, len(pq.terms))
	tokens := make([]string, len(pq.terms))
	for i, t := range pq.terms {
		d := df[t.stem]
		w := t.weight
		if t.stop {
			w = 0
		}
		terms[i] = sterm{stem: t.stem, weight: w, df: d, idf: bm25IDF(stats.n, d)}
		tokens[i] = t.token
	}
	return terms, tokens
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

// countExpr is the expression total_matches counts: any scoring term (the
// best maxTermsA by weight × idf for a long question), and every phrase.
func countExpr(prof *profile, terms []sterm, tokens []string, phrases [][]string) string {
	idx := make([]int, 0, len(terms))
	for i, t := range terms {
		if t.weight > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		wa, wb := terms[a].weight*terms[a].idf, terms[b].weight*terms[b].idf
		switch {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return 0
	})
	if len(idx) > prof.maxTermsA {
		idx = idx[:prof.maxTermsA]
	}
	var parts []string
	for _, i := range idx {
		parts = append(parts, ftsString(tokens[i]))
	}
	expr := strings.Join(parts, " OR ")
	var ph []string
	for _, p := range phrases {
		ph = append(ph, ftsString(p...))
	}
	switch {
	case len(ph) == 0:
		return expr
	case expr == "":
		return strings.Join(ph, " AND ")
	}
	return "(" + expr + ") AND " + strings.Join(ph, " AND ")
}

// fetchCandidates reads the pool's evidence rows.
func fetchCandidates(ctx context.Context, tx *sql.Tx, seqs []int64) ([]*candidate, error) {
	out := make([]*candidate, 0, len(seqs))
	const batch = 500
	for len(seqs) > 0 {
		n := min(batch, len(seqs))
		part := seqs[:n]
		seqs = seqs[n:]
		args := make([]any, len(part))
		for i, s := range part {
			args[i] = s
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, evidence_id, source_id, revision_id, collection_id, kind,
			path, title, heading_path, start_line, end_line, sha256, text, code_terms
			FROM evidence WHERE seq IN `+placeholders(len(part)), args...)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		for rows.Next() {
			c := &candidate{}
			if err := rows.Scan(&c.seq, &c.evidenceID, &c.sourceID, &c.revisionID, &c.collectionID, &c.kind,
				&c.path, &c.title, &c.headingJSON, &c.startLine, &c.endLine, &c.hash, &c.text, &c.codeTerms); err != nil {
				rows.Close()
				return nil, fmt.Errorf("search: %w", err)
			}
			out = append(out, c)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	return out, nil
}

// toHit turns a ranked candidate into a Hit with its snippet.
func (c *candidate) toHit(m *matcher, terms []sterm, stale bool) Hit {
	var hp []string
	if err := json.Unmarshal([]byte(c.headingJSON), &hp); err != nil || hp == nil {
		hp = []string{}
	}
	text := c.text
	return Hit{
		EvidenceID:  c.evidenceID,
		SourceID:    c.sourceID,
		RevisionID:  c.revisionID,
		Kind:        c.kind,
		Path:        c.path,
		Title:       c.title,
		HeadingPath: hp,
		Span:        Span{StartLine: c.startLine, EndLine: c.endLine},
		Score:       roundScore(c.score),
		Snippet:     makeSnippet(m, terms, c.text),
		Text:        &text,
		Hash:        c.hash,
		Stale:       stale,
	}
}

// roundScore keeps six significant decimals: scores are for ordering, and
// short numbers cost fewer tokens.
func roundScore(s float64) float64 {
	return math.Round(s*1e6) / 1e6
}
