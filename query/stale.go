package query

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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

// Why a hit is stale: its file has other bytes (or cannot be read) now,
// or is gone (or is no longer a regular file).
const (
	StaleChanged = "changed"
	StaleDeleted = "deleted"
)

// IsStale reports whether the file on disk no longer has the indexed
// content: gone, unreadable, or with other bytes.
func IsStale(f FileState) bool { return StaleReason(f) != "" }

// StaleReason is "" when the file on disk has the indexed content,
// StaleDeleted when it is gone or no longer a regular file, and
// StaleChanged otherwise (other bytes, or unreadable). Size and
// modification time that match the index are taken as unchanged (the same
// test a sync makes); otherwise the file is hashed.
func StaleReason(f FileState) string {
	p := f.abs()
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return StaleDeleted
		}
		return StaleChanged
	}
	if !fi.Mode().IsRegular() {
		return StaleDeleted
	}
	if fi.Size() == f.Size && fi.ModTime().UnixNano() == f.MtimeNs {
		return ""
	}
	if fi.Size() != f.Size {
		return StaleChanged
	}
	fh, err := os.Open(p)
	if err != nil {
		return StaleChanged
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return StaleChanged
	}
	if hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return StaleChanged
	}
	return ""
}

// staleReason is the wire form of a reason: null when the hit is current.
func staleReason(reason string) *string {
	switch reason {
	case StaleChanged:
		r := StaleChanged
		return &r
	case StaleDeleted:
		r := StaleDeleted
		return &r
	}
	return nil
}

// SetStale sets a hit's Stale flag and StaleReason from a reason.
func (h *Hit) SetStale(reason string) {
	h.Stale = reason != ""
	h.StaleReason = staleReason(reason)
}

// FileStates returns, for each hit, what the index records about its file
// now; nil when the file or its source is no longer indexed. The records
// change only when a revision is applied, so a caller may keep them as
// long as the ranking the hits came from. One query reads them all.
func FileStates(ctx context.Context, db *workspace.DB, hits []Hit) ([]*FileState, error) {
	type key struct{ source, path string }
	byFile := map[key]*FileState{}
	var (
		args []any
		vals []string
	)
	for _, h := range hits {
		k := key{h.SourceID, h.Path}
		if _, ok := byFile[k]; ok {
			continue
		}
		byFile[k] = nil // gone until the index says otherwise
		args = append(args, h.SourceID, h.Path)
		vals = append(vals, "(?, ?)")
	}
	if len(vals) > 0 {
		// The wanted keys join the files by primary key; a row-value
		// "(source_id, path) IN (VALUES …)" would scan every file instead.
		rows, err := db.R.QueryContext(ctx, `WITH want(source_id, path) AS (VALUES `+strings.Join(vals, ", ")+`)
			SELECT s.id, f.path, s.path, s.kind, f.size, f.mtime_ns, f.sha256
			FROM want w JOIN files f ON f.source_id = w.source_id AND f.path = w.path
			JOIN sources s ON s.id = f.source_id
			WHERE f.sha256 IS NOT NULL`, args...)
		if err != nil {
			return nil, fmt.Errorf("stale check: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				k key
				f FileState
			)
			if err := rows.Scan(&k.source, &k.path, &f.SourcePath, &f.SourceKind, &f.Size, &f.MtimeNs, &f.SHA256); err != nil {
				return nil, fmt.Errorf("stale check: %w", err)
			}
			f.Path = k.path
			byFile[k] = &f
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("stale check: %w", err)
		}
	}
	out := make([]*FileState, len(hits))
	for i, h := range hits {
		out[i] = byFile[key{h.SourceID, h.Path}]
	}
	return out, nil
}

// MarkStale sets each hit's Stale flag: states[i] (from FileStates) is
// hit i's indexed file, checked against the disk now, once per file.
func MarkStale(hits []Hit, states []*FileState) {
	checked := map[*FileState]string{}
	for i := range hits {
		if i >= len(states) || states[i] == nil {
			// The file left the index since the ranking: a sync found it
			// gone (or newly ignored).
			hits[i].SetStale(StaleDeleted)
			continue
		}
		f := states[i]
		reason, ok := checked[f]
		if !ok {
			reason = StaleReason(*f)
			checked[f] = reason
		}
		hits[i].SetStale(reason)
	}
}
