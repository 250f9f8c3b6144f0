package query

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
)

// Prepared statements.
//
// The statements of the search path whose text never changes (lists travel
// as one JSON parameter read with json_each) are prepared once per Engine
// on the read pool, before a search takes its connection (preparing while
// holding one could wait forever for another when every connection is
// busy), and reused in every search's read transaction: database/sql
// keeps each prepared on every connection it has used. So are the FTS5
// statements of a search without filters (unscopedSQL): the MATCH
// expression is a parameter, bound anew each time. A filter puts its
// conditions into the text, and such a statement is prepared where it
// runs. Preparing fell from 8.4 % to 2.3 % of a search's CPU over Go's
// tree (bench/README.md, "Prepared MATCH statements"); what is left is
// the driver's BEGIN of each transaction and filtered searches.

const (
	sqlGeneration = `SELECT id, block FROM evidence_fts_data WHERE id IN (1, 10)`
	sqlVocab      = `SELECT term, doc FROM evidence_vocab WHERE term IN (SELECT value FROM json_each(?))`
	sqlFetch      = `SELECT ` + fetchColumns + ` FROM evidence e WHERE e.seq IN (SELECT value FROM json_each(?))`
	// sqlFileUnits reads the leaf units of the given files (JSON pairs
	// [source_id, path]): the rest of the evidence of the files a search
	// completes (rank_file.go). The scope's filter and a LIMIT follow.
	sqlFileUnits = `SELECT ` + fetchColumns + ` FROM json_each(?) j
		JOIN evidence e ON e.source_id = j.value ->> 0 AND e.path = j.value ->> 1
		WHERE e.leaf = 1`
	sqlStale = `SELECT f.source_id, f.path, f.size, f.mtime_ns, f.sha256, s.kind, s.path
		FROM json_each(?) j
		JOIN files f ON f.source_id = j.value ->> 0 AND f.path = j.value ->> 1
		JOIN sources s ON s.id = f.source_id`
)

// fetchColumns are the columns of evidence a candidate is read from
// (candidate.scan).
const fetchColumns = `e.seq, e.evidence_id, e.source_id, e.revision_id, e.collection_id, e.kind,
	e.language, e.role, e.path, e.title, e.heading_path, e.start_line, e.end_line, e.sha256, e.text,
	e.code_terms`

var preparedSQL = append([]string{sqlGeneration, sqlVocab, sqlFetch, sqlStale, sqlFileTerms, sqlFileRanges, sqlLeavesIn}, unscopedSQL()...)

// unscopedSQL is the text of the statements whose text depends on the
// scope's filter, as a search without one runs them: each profile's
// probes, the count of matches, a best file's units and the named files'.
func unscopedSQL() []string {
	var none scopeFilter
	from, where, _ := none.ftsFrom()
	out := []string{countSQL(from, where), rangeSQL(from, where), fileUnitsSQL(where)}
	for i := range profiles {
		unranked, ranked := probeSQL(&profiles[i], from, where)
		out = append(out, unranked, ranked)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fileUnitsSQL is the text that reads the units of named files
// (completeFiles) with the filter where.
func fileUnitsSQL(where string) string { return sqlFileUnits + where + " LIMIT ?" }

type stmtCache struct {
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	closed bool
}

// prepare prepares the fixed statements once; a failure is retried by the
// next search.
func (c *stmtCache) prepare(ctx context.Context, db *sql.DB) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m != nil || c.closed {
		return nil
	}
	m := make(map[string]*sql.Stmt, len(preparedSQL))
	for _, q := range preparedSQL {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			for _, st := range m {
				st.Close()
			}
			return fmt.Errorf("search: prepare: %w", err)
		}
		m[q] = st
	}
	c.m = m
	return nil
}

func (c *stmtCache) get(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[q]
}

// query runs q with args in tx, prepared when it is one of the fixed
// statements.
func (e *Engine) query(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	if st := e.stmts.get(q); st != nil && e.writer.Load() != tx {
		return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	if e.unprepared != nil {
		e.unprepared(q)
	}
	return tx.QueryContext(ctx, q, args...)
}

// prepareIn prepares q for tx: the statement prepared once when q is
// one of the fixed ones, else q prepared on tx's connection. Close the
// result when done (which leaves a fixed statement prepared).
func (e *Engine) prepareIn(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	if st := e.stmts.get(q); st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	if e.unprepared != nil {
		e.unprepared(q)
	}
	return tx.PrepareContext(ctx, q)
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var first error
	for _, st := range c.m {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.m = nil
	return first
}

// Close waits for a warm-up started by StartWarm (cancel its context
// first) and releases the Engine's prepared statements. Call it before
// closing the database; searches after Close still work, unprepared.
func (e *Engine) Close() error {
	e.warming.Wait()
	e.fileIdx.close()
	return e.stmts.close()
}
