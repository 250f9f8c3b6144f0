package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/tychora/tychora/workspace"
)

// plainFTS5 is the point of comparison the eval README measures: the
// question split into words at every character that is not a letter or a
// digit, each word quoted, all of them OR-ed (repeats kept, so a repeated
// word weighs more, as in bm25() over the literal OR), ranked by FTS5's
// bm25() over the text column alone, on the same index. It bypasses the
// Engine entirely.
func plainFTS5(ctx context.Context, db *workspace.DB, question string, limit int) ([]scoredDoc, error) {
	words := strings.FieldsFunc(question, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) == 0 {
		return nil, nil
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	rows, err := db.R.QueryContext(ctx, `SELECT e.path, -bm25(evidence_fts, 0, 0, 0, 1, 0) AS s
		FROM evidence_fts f JOIN evidence e ON e.seq = f.rowid
		WHERE evidence_fts MATCH ? ORDER BY s DESC LIMIT ?`, strings.Join(quoted, " OR "), limit)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer rows.Close()
	var out []scoredDoc
	for rows.Next() {
		var p string
		var s float64
		if err := rows.Scan(&p, &s); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		out = append(out, scoredDoc{doc: strings.TrimSuffix(filepath.Base(p), ".md"), score: s})
	}
	return out, rows.Err()
}
