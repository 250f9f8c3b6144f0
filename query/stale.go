package query

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tychora/tychora/workspace"
)

// FileState is what the index recorded about a file.
type FileState struct {
	SourcePath string // the source's real absolute path
	SourceKind string // file, folder or repository
	Path       string // relative to the source root, '/'-separated
	Size       int64
	MtimeNs    int64
	SHA256     string // hex of the raw bytes
}

// abs returns the file's absolute path on disk.
func (f FileState) abs() string {
	if f.SourceKind == "file" {
		return f.SourcePath
	}
	return filepath.Join(f.SourcePath, filepath.FromSlash(f.Path))
}

// IsStale reports whether the file on disk no longer has the indexed
// content: gone, unreadable, or with other bytes. Size and modification
// time that match the index are taken as unchanged (the same test a sync
// makes); otherwise the file is hashed.
func IsStale(f FileState) bool {
	p := f.abs()
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return true
	}
	if fi.Size() == f.Size && fi.ModTime().UnixNano() == f.MtimeNs {
		return false
	}
	if fi.Size() != f.Size {
		return true
	}
	fh, err := os.Open(p)
	if err != nil {
		return true
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return true
	}
	return hex.EncodeToString(h.Sum(nil)) != f.SHA256
}

// RefreshStale sets each hit's Stale flag from the files on disk now, so
// that a cached ranking never serves changed or deleted content as
// current.
func RefreshStale(ctx context.Context, db *workspace.DB, hits []Hit) error {
	type key struct{ source, path string }
	states := map[key]*FileState{}
	for _, h := range hits {
		states[key{h.SourceID, h.Path}] = nil
	}
	for k := range states {
		var (
			f        FileState
			size, mt sql.NullInt64
			sha      sql.NullString
		)
		err := db.R.QueryRowContext(ctx, `SELECT s.path, s.kind, f.size, f.mtime_ns, f.sha256 FROM sources s
			LEFT JOIN files f ON f.source_id = s.id AND f.path = ? WHERE s.id = ?`, k.path, k.source).
			Scan(&f.SourcePath, &f.SourceKind, &size, &mt, &sha)
		if errors.Is(err, sql.ErrNoRows) {
			continue // the source is gone: stale
		}
		if err != nil {
			return fmt.Errorf("stale check: %w", err)
		}
		if !sha.Valid {
			continue
		}
		f.Path, f.Size, f.MtimeNs, f.SHA256 = k.path, size.Int64, mt.Int64, sha.String
		states[k] = &f
	}
	for i := range hits {
		f := states[key{hits[i].SourceID, hits[i].Path}]
		hits[i].Stale = f == nil || IsStale(*f)
	}
	return nil
}
