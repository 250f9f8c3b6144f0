package sources

import (
	"context"
	"fmt"

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
