package sources

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tychora/tychora/workspace"
)

// listSkips returns the coverage of a source's current revision: the paths
// left out and why, ordered by path, as inspect coverage reads them.
func listSkips(ctx context.Context, db *workspace.DB, sourceID string) ([]Skip, error) {
	rows, err := db.R.QueryContext(ctx, `SELECT path, reason, detail FROM skips WHERE source_id = ? ORDER BY path`, sourceID)
	if err != nil {
		return nil, fmt.Errorf("list skips: %w", err)
	}
	defer rows.Close()
	var out []Skip
	for rows.Next() {
		var s Skip
		if err := rows.Scan(&s.Path, &s.Reason, &s.Detail); err != nil {
			return nil, fmt.Errorf("list skips: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list skips: %w", err)
	}
	return out, nil
}

// revision is one applied sync of a source.
type revision struct {
	ID        string          `json:"id"`
	SourceID  string          `json:"source_id"`
	Number    int             `json:"number"`
	Commit    *string         `json:"commit"`
	Ref       *string         `json:"ref"`
	CreatedAt time.Time       `json:"created_at"`
	Stats     json.RawMessage `json:"stats"`
}

// listRevisions returns a source's revisions, newest first.
func listRevisions(ctx context.Context, db *workspace.DB, sourceID string) ([]revision, error) {
	rows, err := db.R.QueryContext(ctx, `SELECT id, source_id, number, git_commit, git_ref, created_at, stats
		FROM revisions WHERE source_id = ? ORDER BY number DESC`, sourceID)
	if err != nil {
		return nil, fmt.Errorf("list revisions: %w", err)
	}
	defer rows.Close()
	var out []revision
	for rows.Next() {
		var r revision
		var created, stats string
		if err := rows.Scan(&r.ID, &r.SourceID, &r.Number, &r.Commit, &r.Ref, &created, &stats); err != nil {
			return nil, fmt.Errorf("list revisions: %w", err)
		}
		r.CreatedAt = parseTime(created)
		r.Stats = json.RawMessage(stats)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list revisions: %w", err)
	}
	return out, nil
}
