package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/tychora/tychora/workspace"
)

// The code set's points of comparison: plain FTS5 over whole files.
//
// A separate SQLite database (files.db in the cached index directory) holds
// one FTS5 row per file the index holds as text (files.status 'indexed':
// the same corpus), its path and its whole text read from disk, with the
// index's own tokenizer (porter unicode61 remove_diacritics 2 tokenchars
// '_'). The path is not indexed: the text alone is ranked.
//
//   - plain: the question split into words at every character that is not
//     a letter, a digit or '_', each word quoted, all OR-ed (none dropped,
//     repeats kept), ranked by bm25() over every matching file (score
//     -bm25, ties by path).
//   - plain + prior: the same scores, every matching file, multiplied by
//     two path priors and sorted again: ×0.5 for a test, example or
//     vendored file (filePrior), and ×1.3 when a question word, lowercased,
//     is a word of the file name (nameWords).

const baselineTokenizer = `porter unicode61 remove_diacritics 2 tokenchars '_'`

// buildBaselineTable writes the whole-file FTS5 table of the files db holds
// as text into a new database at dbPath.
func buildBaselineTable(ctx context.Context, db *workspace.DB, srcRoot, dbPath string) error {
	rows, err := db.R.QueryContext(ctx, `SELECT path FROM files WHERE status = 'indexed' ORDER BY path`)
	if err != nil {
		return err
	}
	var paths []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return err
		}
		paths = append(paths, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	fdb, err := sql.Open("sqlite", dbPath)
	if err != nil {
		return err
	}
	defer fdb.Close()
	fdb.SetMaxOpenConns(1)
	if _, err := fdb.ExecContext(ctx, `CREATE VIRTUAL TABLE files USING fts5(path UNINDEXED, body, tokenize = "`+baselineTokenizer+`")`); err != nil {
		return fmt.Errorf("baseline table: %w", err)
	}
	tx, err := fdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO files(path, body) VALUES(?, ?)`)
	if err != nil {
		return err
	}
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(srcRoot, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("baseline table: %w", err)
		}
		if _, err := ins.ExecContext(ctx, p, string(b)); err != nil {
			return fmt.Errorf("baseline table: %s: %w", p, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = fdb.ExecContext(ctx, `INSERT INTO files(files) VALUES('optimize')`)
	return err
}

// questionWords splits a question as the baselines do.
func questionWords(q string) []string {
	return strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '_' })
}

// scoredFile is one file of a baseline's ranking.
type scoredFile struct {
	path  string
	score float64
}

// plainFiles ranks every file matching the OR of the question's quoted
// words by bm25().
func plainFiles(ctx context.Context, fdb *sql.DB, question string) ([]scoredFile, error) {
	words := questionWords(question)
	if len(words) == 0 {
		return nil, nil
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	rows, err := fdb.QueryContext(ctx, `SELECT path, -bm25(files) AS s FROM files WHERE files MATCH ? ORDER BY s DESC, path`, strings.Join(quoted, " OR "))
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer rows.Close()
	var out []scoredFile
	for rows.Next() {
		var f scoredFile
		if err := rows.Scan(&f.path, &f.score); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// withPrior multiplies each score by the path priors and sorts again.
func withPrior(question string, ranked []scoredFile) []scoredFile {
	qw := map[string]bool{}
	for _, w := range questionWords(question) {
		qw[strings.ToLower(w)] = true
	}
	out := make([]scoredFile, len(ranked))
	for i, f := range ranked {
		s := f.score * filePrior(f.path)
		for _, w := range nameWords(f.path) {
			if qw[w] {
				s *= 1.3
				break
			}
		}
		out[i] = scoredFile{f.path, s}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// filePrior is 0.5 for a test, example or vendored file by its path's
// conventions, else 1.
func filePrior(p string) float64 {
	base := path.Base(p)
	for _, dir := range strings.Split(path.Dir(p), "/") {
		switch dir {
		case "test", "tests", "testdata", "__tests__", "example", "examples", "vendor", "third_party", "node_modules":
			return 0.5
		}
	}
	stem := strings.TrimSuffix(base, path.Ext(base))
	if strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") || strings.HasPrefix(stem, "example") ||
		strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") {
		return 0.5
	}
	return 1
}

// nameWords are the lowercased words of a file's name without its
// extension, split at every character that is not a letter or a digit.
func nameWords(p string) []string {
	base := path.Base(p)
	return strings.FieldsFunc(strings.ToLower(strings.TrimSuffix(base, path.Ext(base))), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}
