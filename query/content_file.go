package query

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tychora/tychora/workspace"
)

// fileOf names an absolute path on disk as a file of one of p's sources,
// as a hit's file names it: the folder or repository source whose root
// holds it (the deepest, when roots nest), or the file source that is it.
// It never reads the path: the content served is what the index holds of
// that source and path, and a path no source of p's holds is NOT_FOUND.
func (in *Inspector) fileOf(ctx context.Context, p workspace.Principal, file string) (sourceID, rel string, err error) {
	if !filepath.IsAbs(file) || strings.ContainsRune(file, 0) {
		return "", "", workspace.Errorf(workspace.CodeInvalidArgument, "file must be an absolute path, as a hit's file names it")
	}
	clean := filepath.Clean(file)
	rows, err := in.DB.R.QueryContext(ctx, `SELECT id, kind, path, collection_id FROM sources`)
	if err != nil {
		return "", "", fmt.Errorf("inspect: %w", err)
	}
	defer rows.Close()
	best, fileSource := -1, false
	for rows.Next() {
		var id, kind, root, collection string
		if err := rows.Scan(&id, &kind, &root, &collection); err != nil {
			return "", "", fmt.Errorf("inspect: %w", err)
		}
		root = filepath.Clean(root)
		if !p.CanSee(collection) || len(root) <= best {
			continue
		}
		if r, ok := fileInRoot(kind == "file", root, clean); ok {
			sourceID, rel, best, fileSource = id, r, len(root), kind == "file"
		}
	}
	if err := rows.Err(); err != nil {
		return "", "", fmt.Errorf("inspect: %w", err)
	}
	if best < 0 {
		return "", "", workspace.Errorf(workspace.CodeNotFound, "no source of yours holds that file")
	}
	if fileSource {
		// A file source indexes its one file under its own path.
		err := in.DB.R.QueryRowContext(ctx, `SELECT path FROM files WHERE source_id = ? ORDER BY path LIMIT 1`, sourceID).Scan(&rel)
		if err != nil {
			return "", "", workspace.Errorf(workspace.CodeNotFound, "that file is not indexed")
		}
	}
	return sourceID, rel, nil
}

// fileInRoot reports whether the clean absolute path file is the file a
// source of root names, and its path in the source ('/'-separated; "" for
// a file source, whose root is the file itself).
func fileInRoot(fileSource bool, root, file string) (string, bool) {
	if fileSource {
		return "", file == root
	}
	r, err := filepath.Rel(root, file)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", false
	}
	return filepath.ToSlash(r), true
}
