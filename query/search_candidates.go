package query

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Candidate generation (stage A).
//
// FTS5 finds the evidence that matches; stage B (rank.go) scores a bounded
// pool of it in Go. What costs time in FTS5 is what it walks: bm25() reads
// every posting of every phrase in the expression once per statement (for
// its idf; about 60 ns a posting here), then costs about a microsecond for
// each matching row. An OR of common words over a large index is slow
// (about 1 s for a 200-word ArguAna question with every word, tens of
// milliseconds for three common words over Go's source tree). Stage A
// therefore plans a short list of probes from the clauses' document
// frequencies (rank_stats.go) and runs them in order until the pool is
// full. A probe first runs unranked, which stops after as many rows as the
// pool has room for (cheap: FTS5 drives a conjunction by its rarest word);
// only a probe that holds more rows than that is run again, ranked by bm25
// with the profile's column weights, to keep its best rows.
//
//  1. Cheap questions, whose OR would rank at most cheapRows rows
//     (counting each posting bm25 reads for its idf as 1/20 of a row): the
//     OR of every clause. Nothing is pruned.
//  2. Short questions (up to maxAndTerms clauses): identifiers as written
//     (their whole form), then the AND of all clauses, then relaxed one
//     clause at a time, the most common first, down to the two rarest; then
//     the OR of the best clauses that fit fillBudget tops the pool up.
//  3. Long questions: the OR of the clauses with the highest weight × idf,
//     at most maxTermsA of them, skipping clauses that would take the cost
//     past rankBudget rows: the idf pruning of long questions. Words left
//     out still count in stage B for every candidate.
//  4. When no clause fits a budget (a lone "error" in a large code base),
//     the clauses restricted to the title, heading_path and path columns
//     are ranked instead, and the rest of the pool is filled in index
//     order.
//
// Inside an identifier's AND of parts, parts found in more than
// 1/commonShare of the index are left out when a rarer part remains: they
// cost the most to walk and say the least.
//
// This is top-k pruning: a unit that matches only words pruned in step 3,
// or only some words of a short question once the pool is full, is not
// ranked, and paging ends with the pool. docs/search.md says so; the
// evaluation measures what it costs.

// maxAndTerms is the most clauses for which the conjunctive probes run.
const maxAndTerms = 8

// commonShare: a part in more than 1/commonShare of the rows is common.
const commonShare = 16

// scanPerRow is how many postings bm25 reads for its idf in the time it
// scores one row.
const scanPerRow = 20

// probe is one FTS5 query of stage A. It runs unranked first, and ranked
// if it matches more rows than the pool has room for; fill probes never
// rank. minRows and maxRows bound the rows it matches (without filters):
// a probe sure to overflow runs ranked at once, one sure not to runs
// unranked only.
type probe struct {
	match   string
	fill    bool
	minRows int64
	maxRows int64
	// exhaust, when set, receives the number of rows of a probe that ran
	// unranked to its end (it held no more than the pool's room).
	exhaust *int
	// topUp marks a fill probe that runs only when the probes before it
	// left the pool short of a page (fewer than poolSize/topUpShare).
	topUp bool
	// share, when set, caps the rows the probe adds to 1/share of the
	// pool (at least minShareRows): a probe for definitions must not fill
	// the pool with every title that holds a common name.
	share int
}

// maxExhaustivePool bounds an exhaustive search's pool (Engine.Exhaustive).
const maxExhaustivePool = 1 << 22

// exhaustiveProbes is the one probe of an exhaustive search: every clause
// and every name's title, OR-ed, run unranked to its end.
func exhaustiveProbes(q *preparedQuery) []probe {
	return []probe{{match: matchAll(q, nil), fill: true, maxRows: -1}}
}

// matchAll is the MATCH of every unit that matches a clause of the
// question, but the single words holds reports a file does not hold (nil:
// every clause).
func matchAll(q *preparedQuery, holds func(term int) bool) string {
	var parts []string
	for _, c := range q.clauses {
		if c.word > 0 && holds != nil && !holds(c.word-1) {
			continue
		}
		parts = append(parts, c.match)
		if c.def != "" {
			parts = append(parts, "("+c.def+")")
		}
	}
	for _, p := range nameProbes(q.pq.names) {
		parts = append(parts, "("+p.match+")")
	}
	return strings.Join(parts, " OR ")
}

// minShareRows is the least a share-capped probe may add.
const minShareRows = 10

// nameProbes finds the definitions of the names a question holds: units
// whose title holds the name (rank_file.go ranks those that declare it
// first). They run before every other probe, each capped to a share of
// the pool.
func nameProbes(names []qname) []probe {
	var out []probe
	for _, n := range names {
		out = append(out, probe{match: "{title} : " + ftsString(n.name), maxRows: -1, share: 5})
	}
	return out
}

// topUpShare: a topUp probe runs when the pool holds fewer than
// 1/topUpShare of its size — less than a page at the default limit.
const topUpShare = 5

// clause is one alternative of a query as an FTS5 expression: a free
// word, an identifier (its whole form or all its parts) or a quoted
// phrase.
type clause struct {
	match string
	// strict is the clause's most precise form (an identifier's whole
	// form alone), "" when it has no other.
	strict string
	// def finds the definition of a qualified name: the qualifier in the
	// path column, the name in the title column; "" for other clauses.
	def   string
	df    int64   // rows it may match (an estimate for phrases and identifiers)
	exact bool    // df is exact (a single word)
	scan  int64   // postings bm25 reads for its idf
	prio  float64 // weight × idf: which clauses a pruned OR keeps first
	// word is 1 + the index in q.terms of the single word the clause
	// matches, 0 for other clauses.
	word int
}

// queryClauses lists the clauses of a parsed query; n is the number of
// rows in the index.
func queryClauses(prof *profile, pq *parsedQuery, terms []sterm, n int64) []clause {
	var out []clause
	seen := map[string]bool{}
	push := func(c clause) {
		if !seen[c.match] {
			seen[c.match] = true
			out = append(out, c)
		}
	}
	for i, t := range pq.terms {
		if pq.clause(i) || (prof.looseParts && t.name && !t.stop && !isStopword(t.token)) {
			push(clause{match: ftsString(t.token), df: terms[i].df, exact: true, word: i + 1, scan: terms[i].df, prio: terms[i].weight * terms[i].idf})
		}
	}
	common := n / commonShare
	// and joins the terms ids with AND, leaving out common ones while a
	// rarer one remains.
	and := func(ids []int, prune bool) (expr string, df, scan int64) {
		ids = slices.Clone(ids)
		slices.SortStableFunc(ids, func(a, b int) int { return cmp.Compare(terms[a].df, terms[b].df) })
		var parts []string
		for k, id := range ids {
			if prune && k > 0 && terms[id].df > common {
				break
			}
			parts = append(parts, ftsString(pq.terms[id].token))
			scan += terms[id].df
		}
		if len(ids) > 0 {
			df = terms[ids[0]].df
		}
		return "(" + strings.Join(parts, " AND ") + ")", df, scan
	}
	for _, g := range pq.groups {
		var c clause
		w, dfw, sw := and(g.whole, false)
		if g.phrase >= 0 {
			ph := pq.phrases[g.phrase]
			w, dfw, sw = ftsString(ph.tokens...), -1, 0
			for _, t := range ph.terms {
				if dfw < 0 || terms[t].df < dfw {
					dfw = terms[t].df
				}
				sw += terms[t].df
			}
		}
		if g.phrase >= 0 && pq.phrases[g.phrase].qualified {
			ph := pq.phrases[g.phrase]
			n := len(ph.tokens) - 1
			c.def = "{path} : (" + andStrings(ph.tokens[:n]) + ") AND {title} : " + ftsString(ph.tokens[n])
		}
		if len(g.parts) == 0 {
			c.match, c.df, c.scan = w, dfw, sw
		} else {
			p, dfp, sp := and(g.parts, true)
			c.match, c.df, c.scan = "("+w+" OR "+p+")", dfw+dfp, sw+sp
			c.strict = w
		}
		for _, id := range append(slices.Clone(g.whole), g.parts...) {
			c.prio = max(c.prio, terms[id].weight*terms[id].idf)
		}
		push(c)
	}
	for _, ph := range pq.phrases {
		if !ph.quoted {
			continue
		}
		c := clause{match: ftsString(ph.tokens...), df: -1}
		for _, t := range ph.terms {
			if c.df < 0 || terms[t].df < c.df {
				c.df = terms[t].df
			}
			c.scan += terms[t].df
			if !pq.terms[t].stop {
				c.prio += terms[t].idf
			}
		}
		c.prio = max(c.prio, 1)
		push(c)
	}
	return out
}

// planProbes lists the probes for a query's clauses in the order they run;
// n is the number of rows in the index.
func planProbes(prof *profile, n int64, clauses []clause) []probe {
	pl := &probePlanner{clauses: clauses, n: n, seen: map[string]bool{}}
	idx, rows, scan, hasStrict := pl.live()
	if len(idx) == 0 {
		return nil
	}
	if !hasStrict && len(idx) <= prof.maxTermsA && pl.cost(rows, scan) <= prof.cheapRows {
		return []probe{pl.orProbe(idx)}
	}
	budget := prof.rankBudget
	if len(idx) <= maxAndTerms {
		budget = prof.fillBudget
		pl.conjunctions(prof, idx, hasStrict)
	}
	pl.disjunctions(prof, idx, budget)
	return pl.out
}

// probePlanner builds one question's probes (planProbes).
type probePlanner struct {
	clauses []clause
	n       int64 // rows in the index
	out     []probe
	seen    map[string]bool
}

// live lists the clauses that can match by df ascending (idf
// descending), ties by text, with their summed rows and scan cost and
// whether any is strict. A clause found nowhere (df 0: an unknown word, a
// misspelling) cannot match: planned with the others it would take the
// place of clauses that do (a short question "parse the request header"
// over an index without "parse" would look for "parse" alone and find
// nothing).
func (pl *probePlanner) live() (idx []int, rows, scan int64, hasStrict bool) {
	for i, c := range pl.clauses {
		if deadClause(c) {
			continue
		}
		idx = append(idx, i)
		rows += c.df
		scan += c.scan
		hasStrict = hasStrict || c.strict != ""
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(pl.clauses[a].df, pl.clauses[b].df); c != 0 {
			return c
		}
		return strings.Compare(pl.clauses[a].match, pl.clauses[b].match)
	})
	return idx, rows, scan, hasStrict
}

func (pl *probePlanner) join(ids []int, op string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = pl.clauses[id].match
	}
	return strings.Join(parts, op)
}

// cost is what ranking rows rows, reading scan bytes of idf, costs.
func (pl *probePlanner) cost(rows, scan int64) int64 { return min(pl.n, rows) + scan/scanPerRow }

// orProbe and andProbe bound their rows: an OR holds at least its largest
// exact clause and at most the sum; an AND at most its rarest clause
// (exactly that when it is one word).
func (pl *probePlanner) orProbe(ids []int) probe {
	p := probe{match: pl.join(ids, " OR ")}
	for _, i := range ids {
		if pl.clauses[i].exact {
			p.minRows = max(p.minRows, pl.clauses[i].df)
		}
		p.maxRows += pl.clauses[i].df
	}
	return p
}

func (pl *probePlanner) andProbe(ids []int) probe {
	p := probe{match: pl.join(ids, " AND "), maxRows: -1}
	for _, i := range ids {
		if p.maxRows < 0 || pl.clauses[i].df < p.maxRows {
			p.maxRows = pl.clauses[i].df
		}
	}
	if len(ids) == 1 && pl.clauses[ids[0]].exact {
		p.minRows = p.maxRows
	}
	return p
}

// add appends p unless a probe with its expression is planned already.
func (pl *probePlanner) add(p probe) {
	if !pl.seen[p.match] {
		pl.seen[p.match] = true
		pl.out = append(pl.out, p)
	}
}

// andCost is what ranking a conjunction costs: at most the rows of its
// rarest clause, plus the idf reads of all.
func (pl *probePlanner) andCost(ids []int) int64 {
	var sc int64
	rows := int64(-1)
	for _, i := range ids {
		sc += pl.clauses[i].scan
		if rows < 0 || pl.clauses[i].df < rows {
			rows = pl.clauses[i].df
		}
	}
	return pl.cost(rows, sc)
}

// conjunctions plans, for a question of few clauses, each clause's
// definition probe, the identifiers as written (always tried, kept
// unranked when ranking them would cost too much: they are precise), and
// the conjunctions of the rarest k clauses that fit the rank budget.
func (pl *probePlanner) conjunctions(prof *profile, idx []int, hasStrict bool) {
	for _, i := range idx {
		if pl.clauses[i].def != "" {
			pl.add(probe{match: pl.clauses[i].def, maxRows: -1})
		}
	}
	if hasStrict {
		strict := make([]string, len(idx))
		for k, i := range idx {
			strict[k] = pl.clauses[i].strict
			if strict[k] == "" {
				strict[k] = pl.clauses[i].match
			}
		}
		pl.add(probe{match: strings.Join(strict, " AND "), fill: pl.andCost(idx) > prof.rankBudget, maxRows: -1})
	}
	for k := len(idx); k >= 1; k-- {
		if k == 1 && len(idx) > 1 {
			break
		}
		if pl.andCost(idx[:k]) <= prof.rankBudget {
			pl.add(pl.andProbe(idx[:k]))
		}
	}
}

// disjunctions plans the OR of the best clauses by weight × idf that fit
// budget, and what fills the pool when they are not all of them.
func (pl *probePlanner) disjunctions(prof *profile, idx []int, budget int64) {
	best := slices.Clone(idx)
	slices.SortStableFunc(best, func(a, b int) int { return -cmp.Compare(pl.clauses[a].prio, pl.clauses[b].prio) })
	var chosen []int
	var cr, cs int64
	for _, i := range best {
		if len(chosen) >= prof.maxTermsA {
			break
		}
		if pl.cost(cr+pl.clauses[i].df, cs+pl.clauses[i].scan) <= budget {
			chosen = append(chosen, i)
			cr += pl.clauses[i].df
			cs += pl.clauses[i].scan
		}
	}
	few := idx[:min(len(idx), 4)]
	fill := pl.orProbe(few)
	fill.fill = true
	switch {
	case len(chosen) == 0:
		// Too common to rank everywhere: the short columns, then fill.
		pl.add(probe{match: "{title heading_path path} : (" + pl.join(few, " OR ") + ")", maxRows: -1})
		pl.add(fill)
	case len(chosen) < len(idx):
		// When the probes above leave the pool short of a page, rows of
		// the clauses left out (the rarest four of them) top it up in
		// index order (never ranked: that would cost what leaving them
		// out saved). The rows of the chosen ones are in the pool already.
		pl.add(pl.orProbe(chosen))
		var left []int
		for _, i := range idx {
			if !slices.Contains(chosen, i) && len(left) < 4 {
				left = append(left, i)
			}
		}
		top := pl.orProbe(left)
		top.fill, top.topUp = true, true
		pl.add(top)
	default:
		pl.add(pl.orProbe(chosen))
	}
}

// deadClause reports whether c surely matches nothing: its df is 0 and
// that df can be trusted. The df comes from the question's tokens as the
// Go copy of the index tokenizer makes them (sources/token.go), which folds
// the diacritics of Latin-1 and Latin Extended-A only; a token with other
// letters may be spelled otherwise in the index (Vietnamese, say), so its df of 0
// only means the statistics are unknown, and FTS5 still gets to match it.
func deadClause(c clause) bool {
	if c.df != 0 || c.def != "" {
		return false
	}
	for i := 0; i < len(c.match); i++ {
		if c.match[i] >= 0x80 {
			return false
		}
	}
	return true
}

// andStrings joins tokens as quoted FTS5 strings with AND.
func andStrings(tokens []string) string {
	parts := make([]string, len(tokens))
	for i, t := range tokens {
		parts[i] = ftsString(t)
	}
	return strings.Join(parts, " AND ")
}

// runProbes runs the probes until the pool holds poolSize candidates and
// returns their rowids (evidence seq), best first within each probe.
func (e *Engine) runProbes(ctx context.Context, tx *sql.Tx, prof *profile, probes []probe, sf *scopeFilter, poolSize int) ([]int64, error) {
	from, where, fargs := sf.ftsFrom()
	unranked, ranked := probeSQL(prof, from, where)

	narrowed := sf.narrows()
	seen := make(map[int64]bool, poolSize)
	pool := make([]int64, 0, poolSize)
	capLen := poolSize // the pool length the running probe may fill to
	run := func(query, match string, limit int) (int, error) {
		args := make([]any, 0, len(fargs)+2)
		args = append(append(append(args, match), fargs...), limit)
		rows, err := e.query(ctx, tx, query, args...)
		if err != nil {
			return 0, fmt.Errorf("search: %w", err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return 0, fmt.Errorf("search: %w", err)
			}
			n++
			if !seen[id] && len(pool) < capLen {
				seen[id] = true
				pool = append(pool, id)
			}
		}
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("search: %w", err)
		}
		return n, nil
	}
	for _, p := range probes {
		room := poolSize - len(pool)
		if room <= 0 {
			break
		}
		capLen = poolSize
		if p.share > 0 {
			room = min(room, max(minShareRows, poolSize/p.share))
			capLen = len(pool) + room
		}
		if p.topUp && len(pool)*topUpShare >= poolSize {
			continue
		}
		mark := len(pool)
		// Rows already in the pool may come again: ask for enough to fill.
		want := room + mark
		if narrowed {
			p.minRows = 0 // filters leave fewer rows than the index holds
		}
		if p.fill || p.minRows <= int64(want) || (p.maxRows >= 0 && p.maxRows <= int64(want)) {
			n, err := run(unranked, p.match, want+1)
			if err != nil {
				return nil, err
			}
			if p.exhaust != nil && n <= want {
				*p.exhaust = n
			}
			if n <= want || p.fill {
				continue
			}
			// More than there is room for: keep the best instead.
			for _, id := range pool[mark:] {
				delete(seen, id)
			}
			pool = pool[:mark]
		}
		if rankedHook != nil {
			rankedHook(p.match, from, where, fargs)
		}
		if _, err := run(ranked, p.match, capLen); err != nil {
			return nil, err
		}
	}
	return pool, nil
}

// rankedHook, when set (by a benchmark), sees every probe just before it
// runs ranked: its MATCH and the FROM, WHERE and arguments it runs with.
var rankedHook func(match, from, where string, args []any)

// ftsFrom is the FROM clause of a MATCH over the lexical index (f), joined
// to evidence (e) when the scope's filter needs its columns, with that
// filter's WHERE terms and their arguments.
func (sf *scopeFilter) ftsFrom() (from, where string, args []any) {
	where, args = sf.sql()
	from = "evidence_fts f"
	if where != "" {
		from += " JOIN evidence e ON e.seq = f.rowid"
	}
	return from, where, args
}

// probeSQL is the text of a probe over from with the filter where: its
// first rows, and its rows best by bm25() with the profile's weights.
func probeSQL(prof *profile, from, where string) (unranked, ranked string) {
	bm25 := bm25Expr(prof)
	unranked = "SELECT f.rowid FROM " + from + " WHERE evidence_fts MATCH ?" + where + " LIMIT ?"
	ranked = "SELECT f.rowid FROM " + from + " WHERE evidence_fts MATCH ?" + where + " ORDER BY " + bm25 + ", f.rowid LIMIT ?"
	return unranked, ranked
}

// bm25Expr is FTS5's bm25() of evidence_fts with the profile's column
// weights.
func bm25Expr(prof *profile) string {
	w := prof.fields
	return fmt.Sprintf("bm25(evidence_fts, %s, %s, %s, %s, %s)",
		num(w[fieldTitle].weight), num(w[fieldHeading].weight), num(w[fieldPath].weight),
		num(w[fieldBody].weight), num(w[fieldCode].weight))
}

// countSQL is the text of countMatches over from with the filter where.
func countSQL(from, where string) string {
	return "SELECT count(*) FROM (SELECT 1 FROM " + from + " WHERE evidence_fts MATCH ?" + where + " LIMIT ?)"
}

// rangeSQL is the text of the search for a best file's units within its
// range of rows (bestUnits), over from with the filter where.
func rangeSQL(from, where string) string {
	return "SELECT f.rowid FROM " + from + " WHERE evidence_fts MATCH ? AND f.rowid BETWEEN ? AND ?" + where + " LIMIT ?"
}

// num formats a weight for SQL.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// maxCountedMatches caps total_matches: counting stops there, the deepest
// a search pages.
const maxCountedMatches = maxPoolSize

// countMatches counts the evidence in scope that matches expr, up to
// maxCountedMatches.
func (e *Engine) countMatches(ctx context.Context, tx *sql.Tx, expr string, sf *scopeFilter) (int, error) {
	from, where, fargs := sf.ftsFrom()
	q := countSQL(from, where)
	args := append(append([]any{expr}, fargs...), maxCountedMatches)
	rows, err := e.query(ctx, tx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var n int
	if rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, fmt.Errorf("search: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("search: %w", err)
	}
	return n, nil
}
