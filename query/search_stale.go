package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Stale evidence.
//
// A hit is stale when the file on disk no longer has the content that was
// indexed (IsStale, stale.go). The check is cheap: the file's size and
// modification time are compared with what the last sync recorded
// (files.size, files.mtime_ns); only when the size is the same but the time
// differs is the file read and hashed against files.sha256. A different
// size is a different content, no read needed. A file that is gone (or unreadable, or no longer a regular
// file) is stale: the hit is still returned, flagged, so that a client
// never takes it for the current content and still sees what matched.

type fileKey struct {
	source string
	path   string
}

// fileInfo is what a hit says of its file: why it is stale ("" when it
// is not), and its absolute path on disk ("" when the index has no record
// of it).
type fileInfo struct {
	stale string
	abs   string
}

// staleFiles reports, for each file of the page, whether and why it is
// stale, and where it is on disk.
func (e *Engine) staleFiles(ctx context.Context, tx *sql.Tx, page []*candidate) (map[fileKey]fileInfo, error) {
	keys := map[fileKey]fileInfo{}
	var pairs [][2]string
	for _, c := range page {
		k := fileKey{c.sourceID, c.path}
		if _, ok := keys[k]; ok {
			continue
		}
		keys[k] = fileInfo{stale: StaleDeleted} // gone until the files table says otherwise
		pairs = append(pairs, [2]string{c.sourceID, c.path})
	}
	if len(pairs) == 0 {
		return keys, nil
	}
	arg, err := json.Marshal(pairs)
	if err != nil {
		return nil, fmt.Errorf("search: stale check: %w", err)
	}
	rows, err := e.query(ctx, tx, sqlStale, string(arg))
	if err != nil {
		return nil, fmt.Errorf("search: stale check: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k fileKey
		var size, mtime int64
		var sha sql.NullString
		var kind, root string
		if err := rows.Scan(&k.source, &k.path, &size, &mtime, &sha, &kind, &root); err != nil {
			return nil, fmt.Errorf("search: stale check: %w", err)
		}
		st := FileState{SourcePath: root, SourceKind: kind, Path: k.path, Size: size, MtimeNs: mtime, SHA256: sha.String}
		keys[k] = fileInfo{stale: StaleReason(st), abs: st.abs()}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: stale check: %w", err)
	}
	return keys, nil
}
