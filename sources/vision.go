package sources

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/tychora/tychora/workspace"
)

// Text seen in images (docs/ingest.md, "Text seen in images"). No model
// for vision runs here: a caller that can see an image (it reads
// tychora://assets/{id}) submits what it saw through add_sources, naming
// the image's selection as inspect source_selections listed it and the
// hash it saw. A job checks the selection against that hash and records
// the text as one evidence unit of kind vision beside the image's own,
// related to it by a "describes" relation.

// KindVision is the kind of the evidence recorded from a selection's text.
const KindVision = "vision"

// RelationDescribes relates vision evidence to the image evidence it
// describes; its target is the selection id.
const RelationDescribes = "describes"

// Limits of the selection form (the upload policy of a submission).
const (
	// MaxSelectionTextBytes bounds the text of one submission: a dense
	// page of transcription is a few kilobytes.
	MaxSelectionTextBytes = 64 << 10
	// MaxModelBytes bounds the model label.
	MaxModelBytes = 128
)

// SelectorAsset is the selector of an image selection.
const SelectorAsset = "asset"

const (
	visionExtractorName    = "vision"
	visionExtractorVersion = "1"
	// visionHeading is the heading path's first element on vision
	// evidence: renders show it as the context of the text.
	visionHeading = "Text seen in image"
)

// IsSelection reports whether in is the selection form: any of its fields
// is set.
func (in SourceInput) IsSelection() bool {
	return in.SelectionID != "" || in.SourceID != "" || in.RevisionID != "" || in.SHA256 != "" ||
		in.Text != "" || in.Model != ""
}

// ValidateSelection checks everything in a selection form that does not
// need the index: the fields of the path form are absent, the selection
// and its hash are named, and the text passes the upload policy (at most
// MaxSelectionTextBytes of valid UTF-8 without NUL, not blank). Ids that
// cannot exist are left to the lookup, which answers NOT_FOUND for them as
// for unknown ones.
func ValidateSelection(in SourceInput) error {
	invalid := func(format string, args ...any) error {
		return workspace.Errorf(workspace.CodeInvalidArgument, format, args...)
	}
	if in.Kind != "" || in.Path != "" || len(in.Include) > 0 || len(in.Exclude) > 0 || in.Name != "" || in.Watch != nil {
		return invalid("a selection takes no kind, path, include, exclude, name or watch")
	}
	if in.SelectionID == "" {
		return invalid("selection_id is required: the id inspect source_selections listed")
	}
	if !validSHA256(in.SHA256) {
		return invalid("sha256 must be the selection's hash as inspect source_selections listed it: 64 lowercase hex digits")
	}
	if in.CollectionID != "" && !workspace.ValidCollectionName(in.CollectionID) {
		return invalid("collection_id %q is not a valid collection name", workspace.Clip(in.CollectionID, 64))
	}
	if len(in.Text) > MaxSelectionTextBytes {
		return invalid("text is %d bytes, over the %d-byte limit of a selection's text", len(in.Text), MaxSelectionTextBytes)
	}
	if !utf8.ValidString(in.Text) || strings.IndexByte(in.Text, 0) >= 0 {
		return invalid("text must be valid UTF-8 without NUL bytes")
	}
	if strings.TrimSpace(in.Text) == "" {
		return invalid("text is required: what was seen in the image (a transcription, a description, or both)")
	}
	if len(in.Model) > MaxModelBytes || !utf8.ValidString(in.Model) || strings.ContainsAny(in.Model, "\x00\n\r") {
		return invalid("model must be one line of valid UTF-8, at most %d bytes", MaxModelBytes)
	}
	return nil
}

func validSHA256(s string) bool {
	return len(s) == 64 && ValidAssetID(s)
}

// Selection is one source selection as the index holds it.
type Selection struct {
	ID           string
	SourceID     string
	CollectionID string
	RevisionID   string
	Path         string
	Selector     string
	AssetID      string
	EvidenceID   string
	SHA256       string
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// selectionNotFound is the one answer for a selection the caller may not
// use, whatever the reason: unknown, another source's, or out of scope.
func selectionNotFound() error {
	return workspace.Errorf(workspace.CodeNotFound, "no selection with that id (inspect source_selections lists a source's selections)")
}

// GetSelection returns the selection with id, NOT_FOUND when there is none.
func GetSelection(ctx context.Context, q rowQuerier, id string) (Selection, error) {
	if id == "" || len(id) > 256 {
		return Selection{}, selectionNotFound()
	}
	var (
		s               Selection
		asset, evidence sql.NullString
	)
	err := q.QueryRowContext(ctx, `SELECT x.id, x.source_id, s.collection_id, x.revision_id, x.path, x.selector,
			x.asset_id, x.evidence_id, x.sha256
		FROM source_selections x JOIN sources s ON s.id = x.source_id WHERE x.id = ?`, id).Scan(
		&s.ID, &s.SourceID, &s.CollectionID, &s.RevisionID, &s.Path, &s.Selector, &asset, &evidence, &s.SHA256)
	if errors.Is(err, sql.ErrNoRows) {
		return Selection{}, selectionNotFound()
	}
	if err != nil {
		return Selection{}, fmt.Errorf("get selection: %w", err)
	}
	s.AssetID, s.EvidenceID = asset.String, evidence.String
	return s, nil
}

// CheckSelection checks a submission against the selection it names as
// the index holds it now: the source and collection it names (when it
// names them) are the selection's (NOT_FOUND otherwise), the revision it
// names is one of the source's (NOT_FOUND otherwise), the selection is an
// image's, and its hash is the one the caller saw (CONFLICT otherwise:
// the image changed since it was listed).
func CheckSelection(ctx context.Context, q rowQuerier, sel Selection, in SourceInput) error {
	if (in.SourceID != "" && in.SourceID != sel.SourceID) || (in.CollectionID != "" && in.CollectionID != sel.CollectionID) {
		return selectionNotFound()
	}
	if in.RevisionID != "" {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM revisions WHERE id = ? AND source_id = ?`,
			in.RevisionID, sel.SourceID).Scan(&n); err != nil {
			return fmt.Errorf("check selection: %w", err)
		}
		if n == 0 {
			return workspace.Errorf(workspace.CodeNotFound, "no revision with that id in the selection's source")
		}
	}
	if sel.Selector != SelectorAsset || sel.AssetID == "" || sel.EvidenceID == "" {
		return workspace.Errorf(workspace.CodeInvalidArgument, "only an image selection (selector asset) takes the text seen in it")
	}
	if sel.SHA256 != in.SHA256 {
		return workspace.Errorf(workspace.CodeConflict,
			"the image at %s changed since it was listed (its sha256 is no longer the one given): list source_selections again and look at the new image", sel.Path)
	}
	return nil
}

// RecordSelectionRequest writes the request of a submission for the job
// jobID in tx (the transaction that creates the job), after CheckSelection
// passed for sel.
func RecordSelectionRequest(ctx context.Context, tx *sql.Tx, jobID, principal string, sel Selection, in SourceInput) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO vision_requests(job_id, source_id, selection_id, revision_id, sha256, text,
			model, principal, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		jobID, sel.SourceID, sel.ID, in.RevisionID, in.SHA256, normalizeText(in.Text), in.Model, principal, now()); err != nil {
		return fmt.Errorf("record selection text: %w", err)
	}
	return nil
}

// normalizeText turns CRLF line ends into LF, as text files are read.
func normalizeText(s string) string {
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// SelectionText is what applying a submission recorded.
type SelectionText struct {
	EvidenceID string
	Bytes      int64
}

type visionRequest struct {
	sourceID, selectionID, revisionID, sha, text, model, principal string
}

// ApplySelectionText applies the submission that job jobID carries, in one
// transaction: it checks the selection again (NOT_FOUND when it is gone,
// CONFLICT when the image changed), replaces the text recorded for the
// selection before (if any) with this one, indexes it (the unit, and the
// image's file's term counts) and relates it to the image's
// evidence. ok is false when the job carries no submission (an add or a
// sync).
func (ix *Indexer) ApplySelectionText(ctx context.Context, jobID string) (out SelectionText, ok bool, err error) {
	var n int
	if err := ix.db.R.QueryRowContext(ctx, `SELECT count(*) FROM vision_requests WHERE job_id = ?`, jobID).Scan(&n); err != nil {
		return out, false, fmt.Errorf("apply selection text: %w", err)
	}
	if n == 0 {
		return out, false, nil
	}
	tx, err := ix.db.W.BeginTx(ctx, nil)
	if err != nil {
		return out, true, fmt.Errorf("apply selection text: %w", err)
	}
	defer tx.Rollback()
	var req visionRequest
	err = tx.QueryRowContext(ctx, `SELECT source_id, selection_id, revision_id, sha256, text, model, principal
		FROM vision_requests WHERE job_id = ?`, jobID).Scan(&req.sourceID, &req.selectionID, &req.revisionID, &req.sha,
		&req.text, &req.model, &req.principal)
	if errors.Is(err, sql.ErrNoRows) {
		// The source was removed since (the request left with it).
		return out, true, workspace.Errorf(workspace.CodeNotFound, "the selection's source was removed")
	}
	if err != nil {
		return out, true, fmt.Errorf("apply selection text: %w", err)
	}
	sel, err := GetSelection(ctx, tx, req.selectionID)
	if workspace.ErrorCode(err) == workspace.CodeNotFound {
		return out, true, workspace.Errorf(workspace.CodeNotFound, "the selection is gone: its image was removed or is no longer an image")
	}
	if err != nil {
		return out, true, err
	}
	if err := CheckSelection(ctx, tx, sel, SourceInput{SourceID: req.sourceID, RevisionID: req.revisionID, SHA256: req.sha}); err != nil {
		return out, true, err
	}
	evID, err := writeSelectionText(ctx, tx, sel, req, jobID)
	if err != nil {
		return out, true, fmt.Errorf("apply selection text: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return out, true, fmt.Errorf("apply selection text: commit: %w", err)
	}
	return SelectionText{EvidenceID: evID, Bytes: int64(len(req.text))}, true, nil
}

// writeSelectionText writes the vision evidence of sel in tx and returns
// its id.
func writeSelectionText(ctx context.Context, tx *sql.Tx, sel Selection, req visionRequest, jobID string) (string, error) {
	var current sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT current_revision_id FROM sources WHERE id = ?`, sel.SourceID).Scan(&current); err != nil {
		return "", err
	}
	var role string
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(f.role, 'source') FROM files f
		JOIN evidence e ON e.source_id = f.source_id AND e.path = f.path AND e.evidence_id = ?
		WHERE f.source_id = ? AND f.path = ?`, sel.EvidenceID, sel.SourceID, sel.Path).Scan(&role); err != nil {
		return "", fmt.Errorf("the image's evidence: %w", err)
	}

	// The text recorded before leaves (the trigger takes its
	// vision_texts row), with its relation.
	res, err := tx.ExecContext(ctx, `DELETE FROM evidence WHERE evidence_id IN
		(SELECT evidence_id FROM vision_texts WHERE selection_id = ?)`, sel.ID)
	if err != nil {
		return "", err
	}
	removed, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `DELETE FROM relations WHERE source_id = ? AND path = ? AND type = ? AND target = ?`,
		sel.SourceID, sel.Path, RelationDescribes, sel.ID); err != nil {
		return "", err
	}

	extID, err := visionExtraction(ctx, tx, sel.SourceID, current.String)
	if err != nil {
		return "", err
	}
	var maxSeq int64
	var ordinal int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM evidence`).Scan(&maxSeq); err != nil {
		return "", err
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(ordinal), 0) + 1 FROM evidence WHERE source_id = ? AND path = ?`,
		sel.SourceID, sel.Path).Scan(&ordinal); err != nil {
		return "", err
	}
	row := visionRow(sel, req.text, ordinal)
	if _, err := tx.ExecContext(ctx, sqlInsertEvidence+evidenceValues, row.id, sel.SourceID, current.String, extID,
		sel.CollectionID, sel.Path, row.ordinal, row.level, nil, 1, KindVision, "", role, row.title, row.heading,
		row.startLine, row.endLine, row.channel, row.sha, row.text, row.codeTerms, row.tokens); err != nil {
		return "", fmt.Errorf("insert evidence: %w", err)
	}
	if _, err := tx.ExecContext(ctx, IndexLeavesSQL, maxSeq); err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	if err := reindexFile(ctx, tx, sel.SourceID, sel.Path); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE extractions SET files = 1,
		units = (SELECT count(*) FROM evidence WHERE extraction_id = ?1) WHERE id = ?1`, extID); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO relations(source_id, path, from_id, type, target, to_id, to_source_id)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, sel.SourceID, sel.Path, row.id, RelationDescribes, sel.ID, sel.EvidenceID, sel.SourceID); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO vision_texts(selection_id, source_id, path, evidence_id,
			image_evidence_id, asset_id, image_sha256, model, principal, job_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sel.ID, sel.SourceID, sel.Path, row.id, sel.EvidenceID, sel.AssetID,
		sel.SHA256, req.model, req.principal, jobID, now()); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM vision_requests WHERE job_id = ?`, jobID); err != nil {
		return "", err
	}
	return row.id, addChurn(ctx, tx, removed+1)
}

// visionRow is the evidence unit of a selection's text: a leaf of the
// image's file, titled with the image's name, whose heading path says
// that it is text seen in the image and names the asset.
func visionRow(sel Selection, text string, ordinal int) evRow {
	name := path.Base(sel.Path)
	sum := sha256.Sum256([]byte(text))
	textSHA := hex.EncodeToString(sum[:])
	id := sha256.Sum256([]byte(sel.SourceID + "\x00" + sel.Path + "\x00" + KindVision + "\x00" + sel.ID + "\x00" + textSHA))
	lines := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	return evRow{
		id:        "ev_" + hex.EncodeToString(id[:12]),
		ordinal:   ordinal,
		level:     LevelChunk,
		leaf:      true,
		title:     name,
		heading:   encodeHeading([]string{visionHeading, "tychora://assets/" + sel.AssetID}),
		startLine: 1,
		endLine:   lines,
		channel:   ChannelText,
		sha:       textSHA,
		text:      text,
		codeTerms: CodeTerms(name + "\n" + text + "\n" + sel.Path),
		tokens:    (len(text) + 3) / 4,
	}
}

// visionExtraction returns the id of the vision extraction of revision
// rev, creating it.
func visionExtraction(ctx context.Context, tx *sql.Tx, sourceID, rev string) (string, error) {
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM extractions WHERE revision_id = ? AND extractor = ? AND version = ?`,
		rev, visionExtractorName, visionExtractorVersion).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	id = newID("ext_")
	_, err = tx.ExecContext(ctx, `INSERT INTO extractions(id, source_id, revision_id, extractor, version, channels, files, units, created_at)
		VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?)`, id, sourceID, rev, visionExtractorName, visionExtractorVersion,
		jsonStrings([]string{ChannelText}), now())
	return id, err
}

// reindexFile brings the image's file up to date with its units: its term
// counts and its unit count.
func reindexFile(ctx context.Context, tx *sql.Tx, sourceID, rel string) error {
	rows, err := tx.QueryContext(ctx, `SELECT title, text, code_terms FROM evidence
		WHERE source_id = ? AND path = ? AND leaf = 1 ORDER BY ordinal`, sourceID, rel)
	if err != nil {
		return err
	}
	var leaves []LeafText
	for rows.Next() {
		var l LeafText
		if err := rows.Scan(&l.Title, &l.Text, &l.CodeTerms); err != nil {
			rows.Close()
			return err
		}
		leaves = append(leaves, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE files SET units = (SELECT count(*) FROM evidence e
		WHERE e.source_id = files.source_id AND e.path = files.path) WHERE source_id = ? AND path = ?`,
		sourceID, rel); err != nil {
		return err
	}
	if terms := FileTerms(leaves); len(terms) > 0 {
		_, err = tx.ExecContext(ctx, `INSERT INTO file_terms(source_id, path, terms)
			SELECT source_id, path, ? FROM files WHERE source_id = ? AND path = ?
			ON CONFLICT(source_id, path) DO UPDATE SET terms = excluded.terms`, terms, sourceID, rel)
	} else {
		_, err = tx.ExecContext(ctx, sqlDropTerms, sourceID, rel)
	}
	return err
}
