package sources

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tychora/tychora/workspace"
)

// Source is a registered file, folder or repository.
type Source struct {
	ID                string    `json:"id"`
	Kind              Kind      `json:"kind"`
	Path              string    `json:"path"`
	CollectionID      string    `json:"collection_id"`
	Name              string    `json:"name"`
	Include           []string  `json:"include"`
	Exclude           []string  `json:"exclude"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
	CurrentRevisionID *string   `json:"current_revision_id"`
	LastSyncedAt      *string   `json:"last_synced_at"`
}

// Revision is one applied sync of a source.
type Revision struct {
	ID        string          `json:"id"`
	SourceID  string          `json:"source_id"`
	Number    int             `json:"number"`
	Commit    *string         `json:"commit"`
	Ref       *string         `json:"ref"`
	CreatedAt time.Time       `json:"created_at"`
	Stats     json.RawMessage `json:"stats"`
}

// timeFormat is how times are stored: RFC 3339 in UTC with nanoseconds.
const timeFormat = time.RFC3339Nano

func now() string { return time.Now().UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}

// newID returns prefix followed by 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func jsonStrings(ss []string) string {
	if ss == nil {
		ss = []string{}
	}
	b, _ := json.Marshal(ss)
	return string(b)
}

// CreateSource registers a resolved source. Adding a path that is already
// a source of the same collection returns that source, updated with the
// new name, kind and globs, and created == false: the caller syncs it.
func CreateSource(ctx context.Context, db *workspace.DB, rs ResolvedSource) (src Source, created bool, err error) {
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		return Source{}, false, fmt.Errorf("create source: %w", err)
	}
	defer tx.Rollback()
	ts := now()
	var id string
	err = tx.QueryRowContext(ctx, `SELECT id FROM sources WHERE collection_id = ? AND path = ?`, rs.CollectionID, rs.Path).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		id = newID("src_")
		created = true
		_, err = tx.ExecContext(ctx, `INSERT INTO sources(id, kind, path, collection_id, name, include_globs, exclude_globs, created_at, updated_at)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, string(rs.Kind), rs.Path, rs.CollectionID, rs.Name, jsonStrings(rs.Include), jsonStrings(rs.Exclude), ts, ts)
	case err == nil:
		_, err = tx.ExecContext(ctx, `UPDATE sources SET kind = ?, name = ?, include_globs = ?, exclude_globs = ?, updated_at = ? WHERE id = ?`,
			string(rs.Kind), rs.Name, jsonStrings(rs.Include), jsonStrings(rs.Exclude), ts, id)
	}
	if err != nil {
		return Source{}, false, fmt.Errorf("create source: %w", err)
	}
	src, err = getSource(ctx, tx, id)
	if err != nil {
		return Source{}, false, err
	}
	if err := tx.Commit(); err != nil {
		return Source{}, false, fmt.Errorf("create source: %w", err)
	}
	return src, created, nil
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

const sourceColumns = `id, kind, path, collection_id, name, include_globs, exclude_globs, created_at, updated_at, current_revision_id, last_synced_at`

type scanner interface{ Scan(dest ...any) error }

func scanSource(s scanner) (Source, error) {
	var src Source
	var kind, inc, exc, created, updated string
	if err := s.Scan(&src.ID, &kind, &src.Path, &src.CollectionID, &src.Name, &inc, &exc, &created, &updated,
		&src.CurrentRevisionID, &src.LastSyncedAt); err != nil {
		return Source{}, err
	}
	src.Kind = Kind(kind)
	_ = json.Unmarshal([]byte(inc), &src.Include)
	_ = json.Unmarshal([]byte(exc), &src.Exclude)
	src.CreatedAt = parseTime(created)
	src.UpdatedAt = parseTime(updated)
	return src, nil
}

func getSource(ctx context.Context, q queryer, id string) (Source, error) {
	src, err := scanSource(q.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM sources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Source{}, workspace.Wrap(workspace.CodeNotFound, err, fmt.Sprintf("source %q not found", id))
	}
	if err != nil {
		return Source{}, fmt.Errorf("get source: %w", err)
	}
	return src, nil
}

// GetSource returns the source with id, or NOT_FOUND. The caller checks the
// source's collection against the caller's scope.
func GetSource(ctx context.Context, db *workspace.DB, id string) (Source, error) {
	return getSource(ctx, db.R, id)
}

// ListSources returns the sources of the given collections (nil: all),
// ordered by creation.
func ListSources(ctx context.Context, db *workspace.DB, collections []string) ([]Source, error) {
	rows, err := db.R.QueryContext(ctx, `SELECT `+sourceColumns+` FROM sources ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	defer rows.Close()
	var out []Source
	for rows.Next() {
		src, err := scanSource(rows)
		if err != nil {
			return nil, fmt.Errorf("list sources: %w", err)
		}
		if collections != nil && !slices.Contains(collections, src.CollectionID) {
			continue
		}
		out = append(out, src)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	return out, nil
}

// RemoveSource deletes a source and everything indexed from it (its
// evidence leaves the FTS index through the triggers). Assets stay: they
// are content-addressed and may be shared.
func RemoveSource(ctx context.Context, db *workspace.DB, id string) error {
	res, err := db.W.ExecContext(ctx, `DELETE FROM sources WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("remove source: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return workspace.Errorf(workspace.CodeNotFound, "source %q not found", id)
	}
	return nil
}

// ListRevisions returns a source's revisions, newest first.
func ListRevisions(ctx context.Context, db *workspace.DB, sourceID string) ([]Revision, error) {
	rows, err := db.R.QueryContext(ctx, `SELECT id, source_id, number, git_commit, git_ref, created_at, stats
		FROM revisions WHERE source_id = ? ORDER BY number DESC`, sourceID)
	if err != nil {
		return nil, fmt.Errorf("list revisions: %w", err)
	}
	defer rows.Close()
	var out []Revision
	for rows.Next() {
		var r Revision
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

// ListSkips returns the coverage of a source's current revision: the paths
// left out and why, ordered by path.
func ListSkips(ctx context.Context, db *workspace.DB, sourceID string) ([]Skip, error) {
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
