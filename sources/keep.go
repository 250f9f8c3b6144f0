package sources

import (
	"context"
	"database/sql"
	"fmt"
)

// Keeping the units that did not change. A changed file is mostly what it
// was: a line appended, or a function edited, leaves the units before it
// as they were, and unit ids are made from their content (store.go,
// idMaker). Such a file keeps the rows and index entries of its first
// units, the longest run from its document on whose ids and leaf flags
// are the same in the old and the new extraction (their indexed columns
// are then the same too: title, heading path, text and code terms are in
// the id, the path is the file's). Only the rest goes and comes back,
// into the seqs the old rows held: a file's units stay in a range of seqs
// that holds no other file's, in ordinal order (docs/architecture.md, "The
// index between sources and query"). The kept rows get the new revision,
// extraction, file columns and, where they moved, lines and parent.
//
// A file keeps nothing, and is replaced whole as before, when its old
// rows are not the seqs doc..doc+n-1 in ordinal order, when it has more
// units than before (the seqs after its range may be another file's),
// when its document changed, in a forced sync, and when it is or was
// anything but an indexed text file (an image's units are not all made
// by its extraction: vision.go).

// keepPlan is what a changed file keeps of its current rows.
type keepPlan struct {
	doc  int64 // seq of its document unit (ordinal 0); 0: nothing kept
	kept int   // the first kept units, by ordinal
	old  int   // the units it had: seqs doc..doc+old-1
}

// keptFile is one file of a plan that keeps units: its seqs, the units it
// keeps and had, and how many it has now.
type keptFile struct {
	keepPlan
	units int
}

// sqlOldUnits reads what a changed file's current units are, to compare
// them with its new ones.
const sqlOldUnits = `SELECT seq, ordinal, evidence_id, leaf, coalesce(parent_id, ''), start_line, end_line, channel, kind
	FROM evidence WHERE source_id = ? AND path = ? ORDER BY ordinal`

// The kept rows take the new revision's columns: one statement for the
// file's kept range, one for each kept row whose own columns moved.
const (
	sqlKeepRange = `UPDATE evidence SET revision_id = ?, extraction_id = ?, collection_id = ?, kind = ?, language = ?, role = ?
		WHERE seq BETWEEN ? AND ? AND +source_id = ? AND +path = ?`
	sqlKeepRow = `UPDATE evidence SET parent_id = ?, start_line = ?, end_line = ?, channel = ? WHERE seq = ?`
)

// The files that keep units, staged for the statements that remove their
// changed units and index the new ones: doc is the document's seq; the
// changed units were doc+kept..doc+old-1 and are doc+kept..doc+units-1.
const (
	sqlKeepCreate = `CREATE TEMP TABLE IF NOT EXISTS apply_keep (doc INTEGER PRIMARY KEY, lo INTEGER NOT NULL,
		old_hi INTEGER NOT NULL, new_hi INTEGER NOT NULL)`
	sqlKeepClear  = `DELETE FROM temp.apply_keep`
	sqlKeepInsert = `INSERT INTO temp.apply_keep(doc, lo, old_hi, new_hi) VALUES (?, ?, ?, ?)`
	// The changed units go (the delete trigger takes them out of
	// evidence_fts). The unary + keep the planner on the ranges of seqs:
	// an index on source_id or leaf would read every unit of the source.
	sqlKeepDrop = `DELETE FROM evidence WHERE seq IN (SELECT e.seq FROM temp.apply_keep k
		CROSS JOIN evidence e ON e.seq BETWEEN k.lo AND k.old_hi WHERE +e.source_id = ?1)`
	// The new units of those files, in seq order (FTS5 starts a segment
	// whenever a rowid is lower than the one before).
	sqlKeepIndexLeaves = `INSERT INTO evidence_fts(rowid, title, heading_path, path, text, code_terms)
		SELECT l.seq, l.title, l.heading_path, l.path, l.text, l.code_terms FROM temp.apply_keep k
		CROSS JOIN evidence l ON l.seq BETWEEN k.lo AND k.new_hi WHERE +l.leaf = 1 ORDER BY l.seq`
)

// planKeep decides what the changed file of res keeps of its current
// units, from the rows the read connection holds: the sync's base
// revision, or a later one, which the apply then refuses (checkBase). Any
// doubt, or an error, keeps nothing.
func (p *processor) planKeep(ctx context.Context, res *fileResult) {
	if p.oldUnits == nil {
		st, err := p.ix.db.R.PrepareContext(ctx, sqlOldUnits)
		if err != nil {
			return
		}
		p.oldUnits = st
	}
	rows, err := p.oldUnits.QueryContext(ctx, p.src.ID, res.rel)
	if err != nil {
		return
	}
	defer rows.Close()
	type oldUnit struct {
		seq                       int64
		ordinal                   int
		id, parent, channel, kind string
		leaf                      bool
		start, end                int
	}
	var old []oldUnit
	for rows.Next() {
		var o oldUnit
		if err := rows.Scan(&o.seq, &o.ordinal, &o.id, &o.leaf, &o.parent, &o.start, &o.end, &o.channel, &o.kind); err != nil {
			return
		}
		if len(old) > 0 && o.seq != old[0].seq+int64(len(old)) || o.ordinal != len(old) || o.kind == "vision" {
			return
		}
		old = append(old, o)
	}
	if rows.Err() != nil || len(old) == 0 || len(res.units) > len(old) {
		return
	}
	k := 0
	for k < len(res.units) && old[k].id == res.units[k].id && old[k].leaf == res.units[k].leaf {
		k++
	}
	if k == 0 {
		return
	}
	res.keep = keepPlan{doc: old[0].seq, kept: k, old: len(old)}
	for i := range k {
		u, o := &res.units[i], &old[i]
		u.fix = u.parentID != o.parent || u.startLine != o.start || u.endLine != o.end || u.channel != o.channel
		// The apply does not write a kept unit's text again.
		u.title, u.heading, u.text, u.codeTerms = "", "", "", ""
	}
}

// updateKept gives the kept rows of r the new revision's columns.
func updateKept(ctx context.Context, st *txStmts, plan *applyPlan, r *fileResult, extID string) error {
	kp := r.keep
	if kp.doc == 0 {
		return nil
	}
	if kp.kept < 1 || kp.kept > len(r.units) || kp.old < kp.kept || kp.old < len(r.units) {
		return fmt.Errorf("kept units of %s: %d of %d, %d before", r.rel, kp.kept, len(r.units), kp.old)
	}
	src := plan.src
	res, err := st.keepRange.ExecContext(ctx, plan.revisionID, extID, src.CollectionID, r.kind, r.language, string(r.role),
		kp.doc, kp.doc+int64(kp.kept)-1, src.ID, r.rel)
	if err != nil {
		return fmt.Errorf("update kept units: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(kp.kept) {
		return fmt.Errorf("update kept units of %s: %d rows, want %d (%v)", r.rel, n, kp.kept, err)
	}
	for i := range kp.kept {
		if u := &r.units[i]; u.fix {
			if _, err := st.keepRow.ExecContext(ctx, nullStr(u.parentID), u.startLine, u.endLine, u.channel, kp.doc+int64(i)); err != nil {
				return fmt.Errorf("update kept unit: %w", err)
			}
		}
	}
	return nil
}

// dropKeptTails stages the files that keep units and removes their
// changed units; it returns the rows removed.
func dropKeptTails(ctx context.Context, tx *sql.Tx, plan *applyPlan) (int64, error) {
	for _, q := range []string{sqlKeepCreate, sqlKeepClear} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return 0, err
		}
	}
	ins, err := tx.PrepareContext(ctx, sqlKeepInsert)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	var want int64
	for _, f := range plan.keeps {
		want += int64(f.old - f.kept)
		lo := f.doc + int64(f.kept)
		if _, err := ins.ExecContext(ctx, f.doc, lo, f.doc+int64(f.old)-1, f.doc+int64(f.units)-1); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, sqlKeepDrop, plan.src.ID)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	if n != want {
		// The rows are not those the workers read: the apply writes
		// nothing rather than a file's units among another's.
		return 0, fmt.Errorf("%d changed units removed, want %d", n, want)
	}
	return n, nil
}

// indexKeptFiles indexes the new units of the files that keep units; it
// returns the leaves indexed.
func indexKeptFiles(ctx context.Context, tx *sql.Tx) (int64, error) {
	res, err := tx.ExecContext(ctx, sqlKeepIndexLeaves)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return n, nil
}
