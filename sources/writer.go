package sources

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tychora/tychora/workspace"
)

// applyCacheKiB is the page cache of the writer connection during an
// apply transaction.
const applyCacheKiB = 32 << 10

// applyPlan is everything a sync will write, gathered before the write
// transaction begins.
type applyPlan struct {
	src         Source
	base        *string // current revision when the sync started
	newRevision bool
	revisionID  string
	commit, ref string
	changed     int        // files whose evidence or skip verdict changed
	deleted     []string   // paths leaving the index
	replaced    []string   // changed paths that were indexed before, replaced whole
	keeps       []keptFile // changed files that keep their first units (keep.go)
	touched     []touch
	assets      []assetRow
	extractions map[string]*extractionRow // by extractor name + "@" + version
	skips       []Skip
	spool       *spool
	// roleRules: every indexed file's role was found again by RoleRules
	// (the source's were older, and the sync looked at every file): the
	// apply records that version for the source.
	roleRules bool
}

type touch struct {
	rel     string
	size    int64
	mtimeNs int64
}

type assetRow struct {
	id   string
	mime string
	size int64
}

type extractionRow struct {
	id        string
	extractor string
	version   string
	channels  []string
	files     int
	units     int
}

// noteExtraction counts a file's result into its extraction and gives the
// result that extraction's id.
func (p *applyPlan) noteExtraction(r *fileResult) {
	key := r.extractor + "@" + r.version
	e := p.extractions[key]
	if e == nil {
		e = &extractionRow{id: newID("ext_"), extractor: r.extractor, version: r.version}
		p.extractions[key] = e
	}
	e.files++
	e.units += len(r.units)
	for _, c := range r.channels {
		if !slices.Contains(e.channels, c) {
			e.channels = append(e.channels, c)
		}
	}
}

func (p *applyPlan) extractionID(r *fileResult) string {
	if e := p.extractions[r.extractor+"@"+r.version]; e != nil {
		return e.id
	}
	return ""
}

// coverageDigest identifies a sorted skip list, so that a sync can tell
// whether coverage changed.
func coverageDigest(skips []Skip) string {
	h := sha256.New()
	for _, s := range skips {
		io.WriteString(h, s.Path)
		h.Write([]byte{0})
		io.WriteString(h, s.Reason)
		h.Write([]byte{0})
		io.WriteString(h, s.Detail)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The statements of the apply transaction. Evidence is inserted OR FAIL:
// any error rolls the whole transaction back anyway, and without the
// default ABORT a multi-row INSERT needs no statement journal.
const (
	sqlInsertEvidence = `INSERT OR FAIL INTO evidence(evidence_id, source_id, revision_id, extraction_id, collection_id, path,
		ordinal, level, parent_id, leaf, kind, language, role, title, heading_path, start_line, end_line, channel,
		sha256, text, code_terms, tokens) VALUES `
	evidenceValues = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// The apply gives every row its seq: the next above the highest
	// before the apply, or, in a file that keeps units (keep.go), the
	// seq of the unit it replaces.
	sqlInsertEvidenceSeq = `INSERT OR FAIL INTO evidence(seq, evidence_id, source_id, revision_id, extraction_id, collection_id, path,
		ordinal, level, parent_id, leaf, kind, language, role, title, heading_path, start_line, end_line, channel,
		sha256, text, code_terms, tokens) VALUES `
	evidenceSeqValues = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	evidenceColumns   = 23
	sqlUpsertFile     = `INSERT INTO files(source_id, path, size, mtime_ns, sha256, revision_id, status, skip_reason,
		skip_detail, kind, language, role, title, facets, extraction_id, asset_id, units)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(source_id, path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
		sha256 = excluded.sha256, revision_id = excluded.revision_id, status = excluded.status,
		skip_reason = excluded.skip_reason, skip_detail = excluded.skip_detail, kind = excluded.kind,
		language = excluded.language, role = excluded.role, title = excluded.title, facets = excluded.facets,
		extraction_id = excluded.extraction_id, asset_id = excluded.asset_id, units = excluded.units`
	// A file's kept term counts (file_terms, migration 0016): set with
	// its row, or gone when it has none (a skipped file, an asset).
	sqlUpsertTerms = `INSERT INTO file_terms(source_id, path, terms) VALUES (?, ?, ?)
		ON CONFLICT(source_id, path) DO UPDATE SET terms = excluded.terms`
	sqlDropTerms       = `DELETE FROM file_terms WHERE source_id = ? AND path = ?`
	sqlTouchFile       = `UPDATE files SET size = ?, mtime_ns = ? WHERE source_id = ? AND path = ?`
	sqlInsertSelection = `INSERT INTO source_selections(id, source_id, revision_id, path, selector, asset_id,
		evidence_id, start_line, end_line, mime, sha256, created_at) VALUES (?, ?, ?, ?, 'asset', ?, ?, NULL, NULL, ?, ?, ?)`
	sqlInsertSkip = `INSERT OR REPLACE INTO skips(source_id, path, reason, detail, revision_id) VALUES (?, ?, ?, ?, ?)`

	// The paths whose index entries go, staged in a temporary table so
	// that each table is cleared by one statement.
	sqlStageCreate  = `CREATE TEMP TABLE IF NOT EXISTS apply_paths (path TEXT PRIMARY KEY, gone INTEGER NOT NULL) WITHOUT ROWID`
	sqlStageClear   = `DELETE FROM temp.apply_paths`
	sqlStageInsert  = `INSERT OR REPLACE INTO temp.apply_paths(path, gone) VALUES (?, ?)`
	sqlDropEvidence = `DELETE FROM evidence WHERE source_id = ?1 AND path IN (SELECT path FROM temp.apply_paths)`
	sqlDropSel      = `DELETE FROM source_selections WHERE source_id = ?1 AND path IN (SELECT path FROM temp.apply_paths)`
	sqlDropRel      = `DELETE FROM relations WHERE source_id = ?1 AND path IN (SELECT path FROM temp.apply_paths)`
	sqlDropFiles    = `DELETE FROM files WHERE source_id = ?1 AND path IN (SELECT path FROM temp.apply_paths WHERE gone = 1)`

	// IndexLeavesSQL indexes every leaf whose seq is above ?1: the rows a
	// writer inserted after reading MAX(seq). Whoever inserts evidence
	// must run it (see the migration). It ends with its WHERE clause:
	// indexNew adds a condition (tychora_yield).
	IndexLeavesSQL = `INSERT INTO evidence_fts(rowid, title, heading_path, path, text, code_terms)
		SELECT seq, title, heading_path, path, text, code_terms FROM evidence_leaves WHERE seq > ?1`
)

// evidenceBatch is how many evidence rows one INSERT statement carries:
// fewer, larger statements cost less per row.
const evidenceBatch = 32

// txStmts are the prepared statements of one apply, and the evidence rows
// waiting for a full batch.
type txStmts struct {
	insEvidence, insEvidenceBatch, upsertFile, insSelection *sql.Stmt
	upsertTerms, dropTerms, keepRange, keepRow              *sql.Stmt

	pending []any // evidenceColumns values per row
	nextSeq int64 // the seq of the next row not in a kept file's range
}

func prepare(ctx context.Context, tx *sql.Tx) (*txStmts, error) {
	s := &txStmts{pending: make([]any, 0, evidenceBatch*evidenceColumns)}
	batch := sqlInsertEvidenceSeq + strings.TrimSuffix(strings.Repeat(evidenceSeqValues+", ", evidenceBatch), ", ")
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.insEvidence, sqlInsertEvidenceSeq + evidenceSeqValues}, {&s.insEvidenceBatch, batch},
		{&s.upsertFile, sqlUpsertFile}, {&s.insSelection, sqlInsertSelection},
		{&s.upsertTerms, sqlUpsertTerms}, {&s.dropTerms, sqlDropTerms},
		{&s.keepRange, sqlKeepRange}, {&s.keepRow, sqlKeepRow},
	} {
		st, err := tx.PrepareContext(ctx, p.sql)
		if err != nil {
			return nil, err
		}
		*p.dst = st
	}
	return s, nil
}

// addEvidence queues one row, writing a batch when it is full.
func (s *txStmts) addEvidence(ctx context.Context, row ...any) error {
	s.pending = append(s.pending, row...)
	if len(s.pending) < evidenceBatch*evidenceColumns {
		return nil
	}
	_, err := s.insEvidenceBatch.ExecContext(ctx, s.pending...)
	s.pending = s.pending[:0]
	return err
}

// flushEvidence writes the rows of an incomplete batch.
func (s *txStmts) flushEvidence(ctx context.Context) error {
	for i := 0; i < len(s.pending); i += evidenceColumns {
		if _, err := s.insEvidence.ExecContext(ctx, s.pending[i:i+evidenceColumns]...); err != nil {
			return err
		}
	}
	s.pending = s.pending[:0]
	return nil
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// execAll runs statements that take no argument but the source id.
func execAll(ctx context.Context, tx *sql.Tx, sourceID string, stmts ...string) error {
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q, sourceID); err != nil {
			return err
		}
	}
	return nil
}

// apply writes the plan in one IMMEDIATE transaction: readers on other
// connections see the previous revision until it commits, and all of the
// new one after. If the source's current revision moved since the sync
// read it, nothing is written (CONFLICT).
func (ix *Indexer) apply(ctx context.Context, plan *applyPlan, stats *Stats) (err error) {
	begin := time.Now()
	tx, err := ix.db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	a := &applyTx{ix: ix, tx: tx, plan: plan, stats: stats, begin: begin, ts: now()}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
		if a.restoreCache != 0 {
			_, _ = ix.db.W.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA cache_size = %d`, a.restoreCache))
		}
	}()
	if err := a.checkBase(ctx); err != nil {
		return err
	}
	if !plan.newRevision {
		err = a.touchOnly(ctx)
	} else {
		err = a.revision(ctx)
	}
	if err != nil {
		return err
	}
	if plan.roleRules {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
			roleRulesKey(plan.src.ID), strconv.Itoa(RoleRules)); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	}
	var done func(bool)
	if plan.newRevision {
		if err := flushFTS(ctx, tx); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
		done = ix.publish(ctx, tx)
	}
	err = tx.Commit()
	if done != nil {
		done(err == nil)
	}
	if err != nil {
		return fmt.Errorf("apply revision: commit: %w", err)
	}
	return nil
}

// yield gives way to the searches (Options.Yield) and returns ctx's
// error.
func (ix *Indexer) yield(ctx context.Context) error {
	if ix.opts.Yield == nil {
		return ctx.Err()
	}
	return ix.opts.Yield(ctx)
}

// How often indexNew gives way when the sync yields: every yieldLeaves
// leaves indexed, about 3–5 ms of FTS5 work over Go's tree.
const yieldLeaves = 96

// flushFTS writes what FTS5 holds in memory of the transaction's writes
// to the index's tables, as it does at a commit: a savepoint makes it
// flush (its xSavepoint). The statement that indexes new rows leaves its
// terms pending; publish then reads the index's generation (its
// structure record) as the commit will leave it.
func flushFTS(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT tychora_flush`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `RELEASE tychora_flush`)
	return err
}

// publish calls the Publish option, if any, in tx before it commits.
func (ix *Indexer) publish(ctx context.Context, tx *sql.Tx) func(bool) {
	if ix.opts.Publish == nil {
		return nil
	}
	return ix.opts.Publish(ctx, tx)
}

// applyTx is one apply transaction: the plan it writes and what the steps
// pass on to each other.
type applyTx struct {
	ix    *Indexer
	tx    *sql.Tx
	plan  *applyPlan
	stats *Stats
	begin time.Time
	ts    string // the revision's time

	restoreCache int   // the page cache to restore after the transaction; 0: unchanged
	maxSeq       int64 // the highest evidence seq before the new rows
	removed      int64 // leaves and documents removed
}

// checkBase refuses the apply when another sync moved the source's
// current revision since this one read it.
func (a *applyTx) checkBase(ctx context.Context) error {
	src := a.plan.src
	var current *string
	if err := a.tx.QueryRowContext(ctx, `SELECT current_revision_id FROM sources WHERE id = ?`, src.ID).Scan(&current); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return workspace.Wrap(workspace.CodeNotFound, err, fmt.Sprintf("source %q was removed during the sync", src.ID))
		}
		return fmt.Errorf("apply revision: %w", err)
	}
	if base := a.plan.base; (current == nil) != (base == nil) || (current != nil && *current != *base) {
		return workspace.Wrap(workspace.CodeConflict, ErrConcurrentSync, "another sync of this source finished first; sync again")
	}
	return nil
}

// touchOnly records the new stat of files whose content did not change:
// no revision is made.
func (a *applyTx) touchOnly(ctx context.Context) error {
	if err := applyTouched(ctx, a.tx, a.plan.src.ID, a.plan.touched); err != nil {
		return err
	}
	if _, err := a.tx.ExecContext(ctx, `UPDATE sources SET last_synced_at = ? WHERE id = ?`, a.ts, a.plan.src.ID); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	return nil
}

// revision writes a new revision. The order of its steps binds, for
// FTS5's sake, not only for correctness:
//
//  1. every removal first, one statement per table (the delete triggers
//     take the rows out of the lexical index);
//  2. then the new rows, with no FTS5 write among them;
//  3. then one statement that indexes all the new rows
//     (IndexLeavesSQL).
//
// FTS5 flushes its pending terms to a new segment at every statement's
// savepoint: indexing row by row, or interleaving index writes with other
// statements, would leave thousands of tiny segments to merge. And the
// removals go by path, so they must come before the new rows of the same
// paths.
func (a *applyTx) revision(ctx context.Context) error {
	if err := a.growCache(ctx); err != nil {
		return err
	}
	if err := a.insertRevision(ctx); err != nil {
		return err
	}
	// A large revision is merged into the index by Optimize once it has
	// committed; FTS5's automerge, which merges segments as the removals
	// and the new leaves are flushed, would do much of that work twice,
	// inside this transaction.
	bulk := a.stats.Units >= bulkUnits
	if bulk {
		if err := setAutomerge(ctx, a.tx, 0); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	}
	// The new rows' seqs count on from the highest before any removal,
	// so that a removal at the top never hands its seqs on to a file
	// that did not own them.
	if err := a.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM evidence`).Scan(&a.maxSeq); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	if err := a.removeOld(ctx); err != nil { // 1
		return err
	}
	if err := a.insertNew(ctx); err != nil { // 2
		return err
	}
	if err := a.indexNew(ctx); err != nil { // 3
		return err
	}
	if bulk {
		if err := setAutomerge(ctx, a.tx, defaultAutomerge); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	} else if len(a.plan.keeps) > 0 {
		if err := mergeSome(ctx, a.tx); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	}
	if err := a.writeCoverage(ctx); err != nil {
		return err
	}
	return a.switchRevision(ctx)
}

// growCache gives the transaction a larger page cache, which keeps a big
// revision's pages in memory instead of spilling them to the WAL and
// reading them back; apply restores it afterwards.
func (a *applyTx) growCache(ctx context.Context) error {
	var prev int
	if err := a.tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&prev); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	if a.plan.spool == nil || a.plan.spool.records == 0 || prev <= -applyCacheKiB {
		return nil
	}
	if _, err := a.tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, -applyCacheKiB)); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	a.restoreCache = prev
	return nil
}

// insertRevision writes the revision's row, its extractions and its
// assets.
func (a *applyTx) insertRevision(ctx context.Context) error {
	plan, src := a.plan, a.plan.src
	var number int
	if err := a.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(number), 0) + 1 FROM revisions WHERE source_id = ?`, src.ID).Scan(&number); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	a.stats.RevisionID, a.stats.RevisionNumber = plan.revisionID, number
	statsJSON, _ := json.Marshal(a.stats)
	if _, err := a.tx.ExecContext(ctx, `INSERT INTO revisions(id, source_id, number, git_commit, git_ref, created_at, stats)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, plan.revisionID, src.ID, number, nullStr(plan.commit), nullStr(plan.ref), a.ts, string(statsJSON)); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	if err := writeExtractions(ctx, a.tx, plan, a.ts); err != nil {
		return err
	}
	for _, as := range plan.assets {
		if _, err := a.tx.ExecContext(ctx, `INSERT OR IGNORE INTO assets(id, mime, size, created_at) VALUES (?, ?, ?, ?)`,
			as.id, as.mime, as.size, a.ts); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	}
	return nil
}

// removeOld removes the deleted files and the old entries of changed
// files: one statement per table.
func (a *applyTx) removeOld(ctx context.Context) error {
	if err := stagePaths(ctx, a.tx, a.plan); err != nil {
		return fmt.Errorf("apply revision: stage removals: %w", err)
	}
	res, err := a.tx.ExecContext(ctx, sqlDropEvidence, a.plan.src.ID)
	if err != nil {
		return fmt.Errorf("apply revision: remove files: %w", err)
	}
	a.removed, _ = res.RowsAffected()
	if err := execAll(ctx, a.tx, a.plan.src.ID, sqlDropSel, sqlDropRel, sqlDropFiles); err != nil {
		return fmt.Errorf("apply revision: remove files: %w", err)
	}
	if len(a.plan.keeps) > 0 {
		n, err := dropKeptTails(ctx, a.tx, a.plan)
		if err != nil {
			return fmt.Errorf("apply revision: remove changed units: %w", err)
		}
		a.removed += n
	}
	return nil
}

// insertNew writes the rows of the changed files from the spool, and the
// new stat of the touched ones. No lexical index is written here.
func (a *applyTx) insertNew(ctx context.Context) error {
	st, err := prepare(ctx, a.tx)
	if err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	st.nextSeq = a.maxSeq + 1
	if a.plan.spool != nil {
		err := a.plan.spool.each(func(r *fileResult) error {
			if err := a.ix.yield(ctx); err != nil {
				return err
			}
			return applyFile(ctx, st, a.plan, r, a.ts)
		})
		if err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	}
	if err := st.flushEvidence(ctx); err != nil {
		return fmt.Errorf("apply revision: insert evidence: %w", err)
	}
	return applyTouched(ctx, a.tx, a.plan.src.ID, a.plan.touched)
}

// indexNew indexes every row above maxSeq: the new leaves, in one
// statement, and the kept files' new units; and counts the churn Optimize
// reads. With Options.Yield, the statement gives way every few rows
// (workspace.SQLYield).
func (a *applyTx) indexNew(ctx context.Context) error {
	leaves, doneLeaves := workspace.SQLYield(ctx, yieldLeaves, a.ix.opts.Yield)
	defer doneLeaves()
	res, err := a.tx.ExecContext(ctx, IndexLeavesSQL+` AND tychora_yield(?2)`, a.maxSeq, leaves)
	if err != nil {
		if yerr := doneLeaves(); yerr != nil {
			return yerr
		}
		return fmt.Errorf("apply revision: index: %w", err)
	}
	added, _ := res.RowsAffected()
	if len(a.plan.keeps) > 0 {
		n, err := indexKeptFiles(ctx, a.tx)
		if err != nil {
			return fmt.Errorf("apply revision: index changed units: %w", err)
		}
		added += n
	}
	if err := addChurn(ctx, a.tx, added+a.removed); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	return nil
}

// writeCoverage replaces the source's skip list.
func (a *applyTx) writeCoverage(ctx context.Context) error {
	src := a.plan.src
	if _, err := a.tx.ExecContext(ctx, `DELETE FROM skips WHERE source_id = ?`, src.ID); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	ins, err := a.tx.PrepareContext(ctx, sqlInsertSkip)
	if err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	for _, s := range a.plan.skips {
		if _, err := ins.ExecContext(ctx, src.ID, s.Path, s.Reason, s.Detail, a.plan.revisionID); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	}
	return nil
}

// switchRevision makes the new revision current, and rewrites its stats:
// they were written before the apply's own time was known, and now say
// how long the apply and the whole sync took.
func (a *applyTx) switchRevision(ctx context.Context) error {
	src, revID := a.plan.src, a.plan.revisionID
	if _, err := a.tx.ExecContext(ctx, `UPDATE sources SET current_revision_id = ?, last_synced_at = ? WHERE id = ?`,
		revID, a.ts, src.ID); err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	final := *a.stats
	final.ApplyMS = time.Since(a.begin).Milliseconds()
	final.DurationMS += final.ApplyMS
	if b, err := json.Marshal(final); err == nil {
		if _, err := a.tx.ExecContext(ctx, `UPDATE revisions SET stats = ? WHERE id = ?`, string(b), revID); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	}
	return nil
}

// bulkUnits is the fewest evidence units that make a revision large: it
// is indexed without FTS5's automerge.
const bulkUnits = OptimizeMinChurn / 2

// defaultAutomerge is FTS5's own automerge setting, which the lexical
// indexes keep outside a large revision's apply.
const defaultAutomerge = 4

// setAutomerge sets FTS5's automerge of the lexical index in tx.
func setAutomerge(ctx context.Context, tx *sql.Tx, n int) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO evidence_fts(evidence_fts, rank) VALUES ('automerge', ?)`, n); err != nil {
		return fmt.Errorf("automerge: %w", err)
	}
	return nil
}

// smallMergePages is the merge work, in pages written, that a small
// revision of kept files asks of the lexical index. FTS5's automerge
// works in proportion to the pages a flush writes: a kept file writes
// one or two leaves where it wrote all of them, every revision still
// adds a segment, and without this the segments piled up until FTS5's
// crisis merge rewrote a whole level inside one edit's transaction (2 to
// 3.5 s on Go's tree, bench/README.md, "Kept units").
const smallMergePages = 64

// mergeSome does up to smallMergePages of merge work on the lexical
// index, on levels that hold as many segments as automerge waits for.
func mergeSome(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO evidence_fts(evidence_fts, rank) VALUES ('merge', ?)`, smallMergePages); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// stagePaths fills temp.apply_paths with the paths whose entries go: the
// deleted files (gone) and the changed files that existed before.
func stagePaths(ctx context.Context, tx *sql.Tx, plan *applyPlan) error {
	if _, err := tx.ExecContext(ctx, sqlStageCreate); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, sqlStageClear); err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, sqlStageInsert)
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, rel := range plan.deleted {
		if _, err := ins.ExecContext(ctx, rel, 1); err != nil {
			return err
		}
	}
	for _, rel := range plan.replaced {
		if _, err := ins.ExecContext(ctx, rel, 0); err != nil {
			return err
		}
	}
	return nil
}

func applyTouched(ctx context.Context, tx *sql.Tx, sourceID string, touched []touch) error {
	if len(touched) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, sqlTouchFile)
	if err != nil {
		return fmt.Errorf("apply revision: %w", err)
	}
	defer st.Close()
	for _, t := range touched {
		if _, err := st.ExecContext(ctx, t.size, t.mtimeNs, sourceID, t.rel); err != nil {
			return fmt.Errorf("apply revision: %w", err)
		}
	}
	return nil
}

func writeExtractions(ctx context.Context, tx *sql.Tx, plan *applyPlan, ts string) error {
	keys := make([]string, 0, len(plan.extractions))
	for k := range plan.extractions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := plan.extractions[k]
		sort.Strings(e.channels)
		if _, err := tx.ExecContext(ctx, `INSERT INTO extractions(id, source_id, revision_id, extractor, version, channels, files, units, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.id, plan.src.ID, plan.revisionID, e.extractor, e.version,
			jsonStrings(e.channels), e.files, e.units, ts); err != nil {
			return fmt.Errorf("apply revision: extractions: %w", err)
		}
	}
	return nil
}

// applyFile writes the new rows of one changed file (its old ones are
// gone already).
func applyFile(ctx context.Context, st *txStmts, plan *applyPlan, r *fileResult, ts string) error {
	src := plan.src
	extID := plan.extractionID(r)
	if err := updateKept(ctx, st, plan, r, extID); err != nil {
		return err
	}
	for i := r.keep.kept; i < len(r.units); i++ {
		u := &r.units[i]
		leaf := 0
		if u.leaf {
			leaf = 1
		}
		var seq int64
		if r.keep.doc != 0 {
			seq = r.keep.doc + int64(i)
		} else {
			seq = st.nextSeq
			st.nextSeq++
		}
		if err := st.addEvidence(ctx, seq, u.id, src.ID, plan.revisionID, extID, src.CollectionID, r.rel,
			u.ordinal, u.level, nullStr(u.parentID), leaf, r.kind, r.language, string(r.role), u.title, u.heading,
			u.startLine, u.endLine, u.channel, u.sha, u.text, u.codeTerms, u.tokens); err != nil {
			return fmt.Errorf("insert evidence: %w", err)
		}
	}
	if r.status == statusAsset {
		// The id names the place (the source and the path), the hash the
		// content: a submission for an image that changed since it was
		// listed finds its selection with another hash (CONFLICT).
		selID := SelectionID(src.ID, r.rel)
		evID := ""
		if len(r.units) > 0 {
			evID = r.units[0].id
		}
		if _, err := st.insSelection.ExecContext(ctx, selID, src.ID, plan.revisionID, r.rel, r.assetID,
			nullStr(evID), r.mime, r.sha, ts); err != nil {
			return fmt.Errorf("insert selection: %w", err)
		}
	}
	_, err := st.upsertFile.ExecContext(ctx, src.ID, r.rel, r.size, r.mtimeNs, nullStr(r.sha), plan.revisionID,
		r.status, nullStr(r.reason), nullStr(r.detail), nullStr(r.kind), nullStr(r.language), nullStr(string(r.role)), nullStr(r.title),
		nullStr(r.facets), nullStr(extID), nullStr(r.assetID), len(r.units))
	if err != nil {
		return fmt.Errorf("upsert file: %w", err)
	}
	if len(r.terms) > 0 {
		_, err = st.upsertTerms.ExecContext(ctx, src.ID, r.rel, r.terms)
	} else {
		_, err = st.dropTerms.ExecContext(ctx, src.ID, r.rel)
	}
	if err != nil {
		return fmt.Errorf("file terms: %w", err)
	}
	return nil
}

// SelectionID is the id of the image selection of the file at rel in
// source sourceID.
func SelectionID(sourceID, rel string) string {
	return "sel_" + hex.EncodeToString(sha256Of(sourceID + "\x00" + rel + "\x00" + SelectorAsset)[:12])
}

func sha256Of(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
