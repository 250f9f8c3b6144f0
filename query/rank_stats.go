package query

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Corpus statistics for ranking.
//
// N and the average length of each column come from FTS5's own "averages"
// record (evidence_fts_data, id 1: varint row count, then a varint token
// total per column). Document frequencies come from the fts5vocab table
// evidence_vocab (migration 0004). Both describe the whole index, not one
// caller's collections: statistics never reveal which evidence another
// collection holds, only how common a word is overall, as in any shared
// search index.
//
// A vocabulary lookup costs time in proportion to the term's document
// frequency, so document frequencies are cached per index generation: the
// FTS5 structure record (id 10) changes with every write, and a different
// record empties the cache.

// Field (column) order of evidence_fts.
const (
	fieldTitle = iota
	fieldHeading
	fieldPath
	fieldBody
	fieldCode
	numFields
)

// corpusStats is a snapshot of the index statistics.
type corpusStats struct {
	n      int64              // leaf evidence units in the index
	avgLen [numFields]float64 // average tokens per column
	// avgFileBytes is the average size of an indexed file: the length
	// that whole-file evidence is normalized by (rank_file.go).
	avgFileBytes float64
	// generation identifies the index the statistics describe; read is
	// when the search read it, after its snapshot began.
	generation []byte
	read       time.Time
}

// statsCache holds the statistics of one index generation.
type statsCache struct {
	mu         sync.Mutex
	generation []byte
	stats      corpusStats
	df         map[string]int64
}

// maxCachedTerms bounds the document-frequency cache; past it the cache
// starts over (a cheap, bounded policy: lookups are only a cost, never a
// correctness matter).
const maxCachedTerms = 200_000

// load returns the statistics and the document frequency of each stem, read
// within tx (the search's snapshot).
func (c *statsCache) load(ctx context.Context, e *Engine, tx *sql.Tx, stems []string) (corpusStats, map[string]int64, error) {
	gen, avg, err := readGeneration(ctx, e, tx)
	if err != nil {
		return corpusStats{}, nil, err
	}
	read := time.Now()
	out := make(map[string]int64, len(stems))
	var missing []string
	c.mu.Lock()
	if !bytes.Equal(gen, c.generation) || len(c.df) > maxCachedTerms {
		c.generation = gen
		c.df = map[string]int64{}
		c.stats = decodeAverages(avg)
		if c.stats.avgFileBytes, err = averageFileBytes(ctx, e, tx); err != nil {
			c.generation = nil
			c.mu.Unlock()
			return corpusStats{}, nil, err
		}
	}
	stats := c.stats
	stats.generation, stats.read = gen, read
	for _, s := range stems {
		if df, ok := c.df[s]; ok {
			out[s] = df
		} else if !containsString(missing, s) {
			missing = append(missing, s)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return stats, out, nil
	}
	found, err := lookupDF(ctx, e, tx, missing)
	if err != nil {
		return corpusStats{}, nil, err
	}
	c.mu.Lock()
	same := bytes.Equal(gen, c.generation)
	for _, s := range missing {
		out[s] = found[s]
		if same {
			c.df[s] = found[s]
		}
	}
	c.mu.Unlock()
	return stats, out, nil
}

// averageFileBytes is the average size of the indexed files, once per
// generation.
func averageFileBytes(ctx context.Context, e *Engine, tx *sql.Tx) (float64, error) {
	var avg sql.NullFloat64
	if err := tx.QueryRowContext(ctx, `SELECT avg(size) FROM files WHERE status = 'indexed'`).Scan(&avg); err != nil {
		return 0, fmt.Errorf("index statistics: %w", err)
	}
	return avg.Float64, nil
}

// readGeneration reads the FTS5 structure record (the generation) and the
// averages record.
func readGeneration(ctx context.Context, e *Engine, tx *sql.Tx) (gen, avg []byte, err error) {
	rows, err := e.query(ctx, tx, sqlGeneration)
	if err != nil {
		return nil, nil, fmt.Errorf("index statistics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var block []byte
		if err := rows.Scan(&id, &block); err != nil {
			return nil, nil, fmt.Errorf("index statistics: %w", err)
		}
		if id == 10 {
			gen = block
		} else {
			avg = block
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("index statistics: %w", err)
	}
	// The averages belong to the generation too.
	return append(append([]byte{}, gen...), avg...), avg, nil
}

// decodeAverages decodes FTS5's averages record.
func decodeAverages(b []byte) corpusStats {
	var st corpusStats
	n, k := readVarint(b)
	if k == 0 {
		return st
	}
	st.n = int64(n)
	b = b[k:]
	for f := 0; f < numFields; f++ {
		total, k := readVarint(b)
		if k == 0 {
			break
		}
		b = b[k:]
		if st.n > 0 {
			st.avgLen[f] = float64(total) / float64(st.n)
		}
	}
	return st
}

// readVarint decodes an SQLite varint (big-endian, 7 bits a byte, the
// ninth byte whole); k is its length, 0 when b is too short.
func readVarint(b []byte) (v uint64, k int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, 9
}

// lookupDF reads document frequencies from the vocabulary table; a stem
// the index does not hold has df 0.
func lookupDF(ctx context.Context, e *Engine, tx *sql.Tx, stems []string) (map[string]int64, error) {
	arg, err := json.Marshal(stems)
	if err != nil {
		return nil, fmt.Errorf("term statistics: %w", err)
	}
	rows, err := e.query(ctx, tx, sqlVocab, string(arg))
	if err != nil {
		return nil, fmt.Errorf("term statistics: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int64, len(stems))
	for rows.Next() {
		var term string
		var df int64
		if err := rows.Scan(&term, &df); err != nil {
			return nil, fmt.Errorf("term statistics: %w", err)
		}
		out[term] = df
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("term statistics: %w", err)
	}
	return out, nil
}
