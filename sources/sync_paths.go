package sources

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Path-limited syncs (docs/ingest.md, "Path-limited syncs").
//
// A watcher knows which paths changed. A sync limited to them stats each
// path (with what the walk would decide about it: ignore files, globs,
// default excludes) instead of walking the whole tree, reads the current
// revision's records of those paths only, and carries every other file
// and skip over as the current revision has it. The result is the
// revision a full walk would make, as long as nothing but those paths
// changed; whatever could break that sends the sync to a full walk.

// scanPathsLimit bounds the paths one limited sync looks at; more are
// walked (a walk is cheaper than that many single looks).
const scanPathsLimit = 4096

// scanPaths is the scan of a sync limited to rels, or nil (and no error)
// when the whole source must be walked instead.
func (ix *Indexer) scanPaths(ctx context.Context, src Source, rels []string, stats *Stats) (*scan, error) {
	rels = slices.Clone(rels)
	slices.Sort(rels)
	rels = slices.Compact(rels)
	if len(rels) > scanPathsLimit {
		return nil, nil
	}
	walked, ok, err := walkPaths(ix.policy, src, ix.defaults, rels)
	if err != nil || !ok {
		return nil, err
	}
	ps, ok, err := ix.loadPathState(ctx, src.ID, rels)
	if err != nil || !ok {
		return nil, err
	}
	// A moved HEAD changes files no event named (a checkout does name
	// them, but the watcher asks for a walk then anyway).
	if ps.state.commit != stats.Commit || ps.state.ref != stats.Ref {
		return nil, nil
	}
	onDisk := make(map[string]bool, len(walked.files))
	for _, f := range walked.files {
		onDisk[f.rel] = true
	}
	limited := make(map[string]bool, len(rels))
	for _, rel := range rels {
		limited[rel] = true
		// Was it a directory (files below it, or a skip of it or under
		// it)? Then only a walk knows what left.
		if ps.state.files[rel] == nil {
			under, err := ix.anyFileUnder(ctx, src.ID, rel)
			if err != nil {
				return nil, err
			}
			if under {
				return nil, nil
			}
		}
		dir := rel + "/"
		if i, _ := slices.BinarySearchFunc(ps.skips, dir, func(s Skip, t string) int { return strings.Compare(s.Path, t) }); i < len(ps.skips) && strings.HasPrefix(ps.skips[i].Path, dir) {
			return nil, nil
		}
	}

	sc := &scan{state: ps.state}
	// What is carried over: the skips of other paths, and the indexed
	// files of other paths, counted as unchanged.
	for _, s := range ps.skips {
		if !limited[s.Path] {
			sc.skips = append(sc.skips, s)
		}
	}
	stats.Unchanged = ps.indexed
	for _, f := range ps.state.files {
		if f.status != statusSkipped {
			stats.Unchanged--
		}
	}
	sc.skips = append(sc.skips, walked.skips...)
	for _, f := range walked.files {
		sc.sortFile(ix, f, false, stats)
	}
	for _, rel := range rels {
		if ps.state.files[rel] != nil && !onDisk[rel] {
			sc.deleted = append(sc.deleted, rel)
		}
	}
	stats.FilesSeen = stats.Unchanged + int64(len(sc.skips)) + int64(len(sc.tasks))
	stats.Paths = int64(len(rels))
	return sc, nil
}

// pathState is the current revision as a limited sync needs it: the
// records of its paths, how many files are indexed in all, and the whole
// coverage.
type pathState struct {
	state   baseState // files: only the paths asked for
	indexed int64     // files indexed (or stored as assets), every path
	skips   []Skip    // the coverage of the revision, every path
}

// loadPathState reads the current revision's state of rels; ok is false
// when the revision cannot be carried over as it is: there is none yet,
// or its coverage list is not whole (capped at MaxListedSkips a reason,
// or not the list its digest was made of).
func (ix *Indexer) loadPathState(ctx context.Context, sourceID string, rels []string) (ps pathState, ok bool, err error) {
	ps.state.files = make(map[string]*fileState, len(rels))
	tx, err := ix.db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return ps, false, fmt.Errorf("load state: %w", err)
	}
	defer tx.Rollback()
	st := &ps.state
	if err := tx.QueryRowContext(ctx, `SELECT current_revision_id FROM sources WHERE id = ?`, sourceID).Scan(&st.revisionID); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return ps, false, nil // removed: the full path says so
		}
		return ps, false, fmt.Errorf("load state: %w", err)
	}
	if st.revisionID == nil {
		return ps, false, nil
	}
	// Roles found by older rules: every file is read again.
	if outdated, err := roleRulesOutdated(ctx, tx, sourceID); err != nil {
		return ps, false, fmt.Errorf("load state: %w", err)
	} else if outdated {
		return ps, false, nil
	}
	var commit, ref sql.NullString
	var statsJSON string
	if err := tx.QueryRowContext(ctx, `SELECT number, git_commit, git_ref, stats FROM revisions WHERE id = ?`, *st.revisionID).
		Scan(&st.number, &commit, &ref, &statsJSON); err != nil {
		return ps, false, fmt.Errorf("load state: %w", err)
	}
	st.commit, st.ref = commit.String, ref.String
	var rs struct {
		Coverage string `json:"coverage_sha256"`
		Skipped  int64  `json:"skipped"`
	}
	if json.Unmarshal([]byte(statsJSON), &rs) != nil || rs.Coverage == "" {
		return ps, false, nil
	}
	st.coverage = rs.Coverage

	rows, err := tx.QueryContext(ctx, `SELECT path, reason, detail FROM skips WHERE source_id = ? ORDER BY path`, sourceID)
	if err != nil {
		return ps, false, fmt.Errorf("load state: %w", err)
	}
	for rows.Next() {
		var s Skip
		if err := rows.Scan(&s.Path, &s.Reason, &s.Detail); err != nil {
			rows.Close()
			return ps, false, fmt.Errorf("load state: %w", err)
		}
		ps.skips = append(ps.skips, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ps, false, fmt.Errorf("load state: %w", err)
	}
	if int64(len(ps.skips)) != rs.Skipped || coverageDigest(ps.skips) != rs.Coverage {
		return ps, false, nil
	}

	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM files WHERE source_id = ? AND status <> 'skipped'`, sourceID).
		Scan(&ps.indexed); err != nil {
		return ps, false, fmt.Errorf("load state: %w", err)
	}
	const chunk = 500
	for i := 0; i < len(rels); i += chunk {
		part := rels[i:min(i+chunk, len(rels))]
		args := make([]any, 0, len(part)+1)
		args = append(args, sourceID)
		for _, r := range part {
			args = append(args, r)
		}
		rows, err := tx.QueryContext(ctx, `SELECT f.path, `+fileStateColumns+`
			FROM files f LEFT JOIN extractions e ON e.id = f.extraction_id
			WHERE f.source_id = ? AND f.path IN (`+strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")+`)`, args...)
		if err != nil {
			return ps, false, fmt.Errorf("load state: %w", err)
		}
		for rows.Next() {
			var p string
			f, err := scanFileState(rows, &p)
			if err != nil {
				rows.Close()
				return ps, false, fmt.Errorf("load state: %w", err)
			}
			st.files[p] = f
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return ps, false, fmt.Errorf("load state: %w", err)
		}
	}
	return ps, true, nil
}

// anyFileUnder reports whether the index holds a file below the directory
// rel of the source.
func (ix *Indexer) anyFileUnder(ctx context.Context, sourceID, rel string) (bool, error) {
	var n int
	// '0' is the character after '/': the range holds exactly rel/...
	err := ix.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM files WHERE source_id = ? AND path > ? AND path < ? LIMIT 1)`,
		sourceID, rel+"/", rel+"0").Scan(&n)
	if err != nil {
		return false, fmt.Errorf("load state: %w", err)
	}
	return n > 0, nil
}

// walkPaths decides about each of rels what the walk of the whole source
// would: a file to read, a skip, or nothing (absent). ok is false when a
// path leaves doubt, and the source must be walked: a path that is not a
// plain relative one, a directory, a symlink, a .gitignore or a .git, or
// one below a directory the walk would not enter or that is reached
// through a symlink.
func walkPaths(p *Policy, src Source, defaults map[string]bool, rels []string) (walkResult, bool, error) {
	var res walkResult
	root := src.Path
	_, prefix, basePs, err := ignoreBase(root, p.rootOf(root))
	if err != nil {
		return res, false, nil // the walk reports it
	}
	include, exclude := newGlobSet(src.Include), newGlobSet(src.Exclude)
	// The ignore patterns in force inside each directory met, by its path
	// from the root ("" for the root); nil entries are directories in
	// doubt.
	dirPs := map[string][]gitignore.Pattern{}
	var inDir func(dir string) ([]gitignore.Pattern, bool)
	inDir = func(dir string) ([]gitignore.Pattern, bool) {
		if ps, seen := dirPs[dir]; seen {
			return ps, ps != nil
		}
		dirPs[dir] = nil
		var ps []gitignore.Pattern
		elems := prefix
		if dir == "" {
			ps = basePs
		} else {
			parent, name := path.Dir(dir), path.Base(dir)
			if parent == "." {
				parent = ""
			}
			pps, ok := inDir(parent)
			if !ok {
				return nil, false
			}
			elems = append(slices.Clone(prefix), strings.Split(dir, "/")...)
			abs := filepath.Join(root, filepath.FromSlash(dir))
			fi, err := os.Lstat(abs)
			if err != nil || !fi.IsDir() || name == ".git" || defaults[name] ||
				(len(pps) > 0 && ignored(pps, elems, true)) || exclude.match(dir) || p.InWorkspace(abs) {
				return nil, false
			}
			ps = pps
		}
		own, err := readIgnoreFile(filepath.Join(root, filepath.FromSlash(dir), ".gitignore"), elems)
		if err != nil {
			return nil, false
		}
		if len(own) > 0 {
			ps = append(ps[:len(ps):len(ps)], own...)
		}
		if ps == nil {
			ps = []gitignore.Pattern{} // known, and empty
		}
		dirPs[dir] = ps
		return ps, true
	}
	for _, rel := range rels {
		name := path.Base(rel)
		if rel == "" || !utf8.ValidString(rel) || path.Clean(rel) != rel || path.IsAbs(rel) || rel == "." ||
			rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "\\") ||
			name == ".gitignore" || name == ".git" {
			return res, false, nil
		}
		dir := path.Dir(rel)
		if dir == "." {
			dir = ""
		}
		ps, ok := inDir(dir)
		if !ok {
			return res, false, nil
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			continue // absent: a deletion, or a temporary file that came and went
		}
		if err != nil {
			return res, false, nil
		}
		elems := append(slices.Clone(prefix), strings.Split(rel, "/")...)
		typ := fi.Mode().Type()
		switch {
		case typ.IsDir() || typ&fs.ModeSymlink != 0:
			return res, false, nil
		case len(ps) > 0 && ignored(ps, elems, false):
			res.skips = append(res.skips, Skip{Path: rel, Reason: SkipIgnored})
		case exclude.match(rel):
			res.skips = append(res.skips, Skip{Path: rel, Reason: SkipExcluded})
		case !typ.IsRegular():
			res.skips = append(res.skips, Skip{Path: rel, Reason: SkipSpecial, Detail: specialKind(typ)})
		case !include.empty() && !include.match(rel):
			res.skips = append(res.skips, Skip{Path: rel, Reason: SkipNotIncluded})
		default:
			res.files = append(res.files, walkFile{rel: rel, abs: abs, size: fi.Size(), mtimeNs: fi.ModTime().UnixNano()})
		}
	}
	return res, true, nil
}
