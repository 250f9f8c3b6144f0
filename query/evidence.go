package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// GetEvidence returns one evidence record with its text when its
// collection is visible to p; NOT_FOUND otherwise, exactly as for an id
// that does not exist.
func GetEvidence(ctx context.Context, db *workspace.DB, p workspace.Principal, id string) (Evidence, error) {
	notFound := workspace.Errorf(workspace.CodeNotFound, "no evidence with that id")
	if id == "" || len(id) > 256 {
		return Evidence{}, notFound
	}
	var (
		e        Evidence
		heading  string
		parent   sql.NullString
		f        FileState
		fsha     sql.NullString
		fsize    sql.NullInt64
		fmtimeNs sql.NullInt64
	)
	err := db.R.QueryRowContext(ctx, `SELECT e.evidence_id, e.source_id, e.revision_id, e.collection_id, e.level, e.parent_id,
			e.kind, e.language, e.role, e.path, e.title, e.heading_path, e.start_line, e.end_line, e.channel, e.sha256, e.text,
			s.path, s.kind, f.size, f.mtime_ns, f.sha256
		FROM evidence e JOIN sources s ON s.id = e.source_id
		LEFT JOIN files f ON f.source_id = e.source_id AND f.path = e.path
		WHERE e.evidence_id = ?`, id).Scan(&e.EvidenceID, &e.SourceID, &e.RevisionID, &e.CollectionID, &e.Level, &parent,
		&e.Kind, &e.Language, &e.Role, &e.Path, &e.Title, &heading, &e.Span.StartLine, &e.Span.EndLine, &e.Channel, &e.Hash, &e.Text,
		&f.SourcePath, &f.SourceKind, &fsize, &fmtimeNs, &fsha)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !p.CanSee(e.CollectionID)) {
		return Evidence{}, notFound
	}
	if err != nil {
		return Evidence{}, fmt.Errorf("get evidence: %w", err)
	}
	if parent.Valid {
		e.ParentID = &parent.String
	}
	_ = json.Unmarshal([]byte(heading), &e.HeadingPath)
	if e.HeadingPath == nil {
		e.HeadingPath = []string{}
	}
	if e.Level == "document" && e.Text == "" {
		// A document's text is the file's, as its leaves indexed it.
		if e.Text, err = DocumentText(ctx, db.R, e.SourceID, e.Path); err != nil {
			return Evidence{}, err
		}
	}
	f.Path, f.Size, f.MtimeNs, f.SHA256 = e.Path, fsize.Int64, fmtimeNs.Int64, fsha.String
	reason := StaleDeleted
	if fsha.Valid {
		reason = StaleReason(f)
	}
	e.Stale, e.StaleReason = reason != "", staleReason(reason)
	return e, nil
}

// GetAsset returns a registered asset when a source of a collection
// visible to p refers to it; NOT_FOUND otherwise.
func GetAsset(ctx context.Context, db *workspace.DB, assets *sources.Assets, p workspace.Principal, id string) (mime string, data []byte, err error) {
	notFound := workspace.Errorf(workspace.CodeNotFound, "no asset with that id")
	if !sources.ValidAssetID(id) {
		return "", nil, notFound
	}
	rows, err := db.R.QueryContext(ctx, `SELECT DISTINCT s.collection_id, a.mime FROM source_selections x
		JOIN sources s ON s.id = x.source_id JOIN assets a ON a.id = x.asset_id WHERE x.asset_id = ?`, id)
	if err != nil {
		return "", nil, fmt.Errorf("get asset: %w", err)
	}
	defer rows.Close()
	visible := false
	for rows.Next() {
		var col, m string
		if err := rows.Scan(&col, &m); err != nil {
			return "", nil, fmt.Errorf("get asset: %w", err)
		}
		if p.CanSee(col) {
			visible, mime = true, m
		}
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	if !visible {
		return "", nil, notFound
	}
	data, err = assets.Get(id)
	if err != nil {
		return "", nil, workspace.Wrap(workspace.CodeNotFound, err, "the asset's payload is missing")
	}
	return mime, data, nil
}
