package workspace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// WorkspaceID returns the workspace's stable UUID, creating it on first use.
func WorkspaceID(ctx context.Context, db *DB) (string, error) {
	var id string
	err := db.W.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'workspace_id'`).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("workspace id: %w", err)
	}
	id = uuid.NewString()
	if _, err := db.W.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('workspace_id', ?)`, id); err != nil {
		return "", fmt.Errorf("workspace id: %w", err)
	}
	return id, nil
}
