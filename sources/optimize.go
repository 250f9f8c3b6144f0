package sources

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// Index maintenance.
//
// FTS5 writes every flush of its pending terms as a new segment and merges
// segments only a few at a time. After a large sync the lexical index is
// a stack of segments, and every search pays for it: each term is looked
// up once per segment and its doclists are merged across them. Merging
// the index into one segment ('optimize') made the searches of
// bench/queries/distinct.txt over Go's source tree about a quarter faster
// (docs/ingest.md); it took about a second on that tree. Most of that
// quarter was FTS5's lookup statement being prepared again at each
// lookup, which the connections' planner setting now prevents
// (workspace/db_qpsg.go).
//
// In an owner, whose syncs give way to its searches (Options.Yield), the
// merge runs in steps with a yield between them (merge).
//
// Optimize runs that merge when enough of the index changed since the last
// one: each applied revision adds the leaves it wrote and the evidence
// rows it removed (leaves, and the documents and sections above them,
// which were a tenth of the units of Go's tree) to a count kept in meta
// (fts_churn), and Optimize merges once that count reaches
// Options.OptimizeMinChurn and a tenth of the index. The merge is
// one write transaction of its own, after the revision committed: searches
// see the new revision at once, and only get faster when the merge commits.

// OptimizeMinChurn is the fewest changed leaves that make Optimize merge
// (Options.OptimizeMinChurn by default).
const OptimizeMinChurn = 5000

// optimizeShare: Optimize merges once the changed leaves reach
// 1/optimizeShare of the index.
const optimizeShare = 10

// sqlAddChurn adds ?1 to the count of leaves changed since the last merge.
const sqlAddChurn = `INSERT INTO meta(key, value) VALUES('fts_churn', CAST(?1 AS TEXT))
	ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + ?1 AS TEXT)`

// addChurn records n changed leaves in tx.
func addChurn(ctx context.Context, tx *sql.Tx, n int64) error {
	if n <= 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, sqlAddChurn, n)
	return err
}

// Optimize merges the lexical index into one segment when enough of it
// changed since the last merge (see above) and reports whether it did.
// A cancelled ctx rolls the merge back; the index is as it was.
func (ix *Indexer) Optimize(ctx context.Context) (bool, error) {
	tx, err := ix.db.W.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("optimize index: %w", err)
	}
	defer tx.Rollback()
	var churnText string
	switch err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'fts_churn'`).Scan(&churnText); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("optimize index: %w", err)
	}
	churn, _ := strconv.ParseInt(churnText, 10, 64)
	if churn < ix.opts.OptimizeMinChurn {
		return false, nil
	}
	var leaves int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM evidence_fts_docsize`).Scan(&leaves); err != nil {
		return false, fmt.Errorf("optimize index: %w", err)
	}
	if churn*optimizeShare < leaves {
		return false, nil
	}
	if err := ix.merge(ctx, tx, "evidence_fts"); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = 'fts_churn'`); err != nil {
		return false, fmt.Errorf("optimize index: %w", err)
	}
	done := ix.publish(ctx, tx)
	err = tx.Commit()
	if done != nil {
		done(err == nil)
	}
	if err != nil {
		return false, fmt.Errorf("optimize index: commit: %w", err)
	}
	return true, nil
}

// mergePages is how many pages of merged data one step of a merge that
// gives way writes (about 3 ms over Go's tree); a variable for the tests.
var mergePages = 48

// merge merges table into one segment: with 'optimize' in one statement,
// or, when the sync yields (Options.Yield), in steps of mergePages pages
// ('merge' with a negative count continues an optimization where the
// last step left it) with a yield between steps. A step that did no work
// changes fewer than two rows (FTS5's documented test).
func (ix *Indexer) merge(ctx context.Context, tx *sql.Tx, table string) error {
	if ix.opts.Yield == nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+`(`+table+`) VALUES('optimize')`); err != nil {
			return fmt.Errorf("optimize index: %w", err)
		}
		return nil
	}
	step := `INSERT INTO ` + table + `(` + table + `, rank) VALUES('merge', ?)`
	for {
		var before, after int64
		if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
			return fmt.Errorf("optimize index: %w", err)
		}
		if _, err := tx.ExecContext(ctx, step, -mergePages); err != nil {
			return fmt.Errorf("optimize index: %w", err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
			return fmt.Errorf("optimize index: %w", err)
		}
		if after-before < 2 {
			return nil
		}
		if err := ix.yield(ctx); err != nil {
			return err
		}
	}
}
