package query

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tychora/tychora/sources"
)

// SelectionVision is the text recorded for an image selection: evidence
// of kind vision, related to the image's evidence (the selection's
// evidence_id) by the relation describes.
type SelectionVision struct {
	EvidenceID string `json:"evidence_id"`
	// Relation is the relation's type, "describes", from EvidenceID to
	// the image's evidence.
	Relation string `json:"relation"`
	// Hash is the sha256 of the text.
	Hash   string `json:"hash"`
	Tokens int    `json:"tokens"`
	// Model is the submission's model label, null when it named none.
	Model *string `json:"model"`
	// SubmittedBy is the principal that submitted it (a token id, or
	// "owner").
	SubmittedBy string `json:"submitted_by"`
	JobID       string `json:"job_id"`
	SubmittedAt string `json:"submitted_at"`
}

func (in *Inspector) selections(ctx context.Context, srcID string, rev *string, off, limit int) ([]SelectionInfo, error) {
	rows, err := in.DB.R.QueryContext(ctx, `SELECT x.id, x.revision_id, x.path, x.selector, x.asset_id, x.evidence_id,
			x.start_line, x.end_line, x.mime, x.sha256,
			v.evidence_id, e.sha256, e.tokens, v.model, v.principal, v.job_id, v.created_at
		FROM source_selections x
		LEFT JOIN vision_texts v ON v.selection_id = x.id
		LEFT JOIN evidence e ON e.evidence_id = v.evidence_id
		WHERE x.source_id = ? ORDER BY x.path, x.id LIMIT ? OFFSET ?`, srcID, limit, off)
	if err != nil {
		return nil, fmt.Errorf("inspect selections: %w", err)
	}
	defer rows.Close()
	var out []SelectionInfo
	for rows.Next() {
		var (
			s                            SelectionInfo
			vEvidence, vHash, vModel     sql.NullString
			vPrincipal, vJob, vSubmitted sql.NullString
			vTokens                      sql.NullInt64
		)
		if err := rows.Scan(&s.ID, &s.RevisionID, &s.Path, &s.Selector, &s.AssetID, &s.EvidenceID, &s.StartLine, &s.EndLine,
			&s.MIME, &s.SHA256, &vEvidence, &vHash, &vTokens, &vModel, &vPrincipal, &vJob, &vSubmitted); err != nil {
			return nil, fmt.Errorf("inspect selections: %w", err)
		}
		if vEvidence.Valid && vHash.Valid {
			v := &SelectionVision{EvidenceID: vEvidence.String, Relation: sources.RelationDescribes, Hash: vHash.String,
				Tokens: int(vTokens.Int64), SubmittedBy: vPrincipal.String, JobID: vJob.String, SubmittedAt: vSubmitted.String}
			if vModel.String != "" {
				v.Model = &vModel.String
			}
			s.Vision = v
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
