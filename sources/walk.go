package sources

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/tychora/tychora/workspace"
)

// Skip reasons recorded in coverage (docs/ingest.md explains each).
const (
	SkipIgnored       = "ignored"         // matched .gitignore or .git/info/exclude (directories are pruned)
	SkipExcluded      = "excluded"        // matched an exclude glob (directories are pruned)
	SkipNotIncluded   = "not_included"    // a file matching none of the include globs
	SkipDefault       = "default_exclude" // a directory named in default_excludes (pruned), or .git
	SkipWorkspace     = "workspace"       // the tychora workspace directory, never ingested
	SkipSymlinkEscape = "symlink_escape"  // a symlink whose target lies outside the ingest roots
	SkipSymlinkCycle  = "symlink_cycle"   // a symlinked directory already walked, or inside the source itself
	SkipSymlinkBroken = "symlink_broken"  // a symlink whose target does not exist
	SkipSpecial       = "special"         // not a regular file or directory (socket, fifo, device)
	SkipUnreadable    = "unreadable"      // permission or I/O error
	SkipBinary        = "binary"          // binary content that is not a supported image
	SkipTooLarge      = "too_large"       // over max_file_bytes (images: over 16 MiB)
	SkipUndecodable   = "undecodable"     // not valid UTF-8 text
	SkipUnsupported   = "unsupported"     // no extractor for the file
	SkipExtractError  = "extract_error"   // the extractor failed on the file
)

// Skip is one path left out of a revision and why. Path is relative to the
// source root, slash-separated, with a trailing '/' for a directory. Detail
// never names a location outside the ingest roots.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// walkFile is a regular file found by the walk.
type walkFile struct {
	rel     string // slash-separated, relative to the source root
	abs     string // where to open it
	size    int64
	mtimeNs int64
}

// walkResult is what a walk found: files in path order, and skips.
type walkResult struct {
	files []walkFile
	skips []Skip
	dirs  []string // every directory entered, as reached (absolute), the root first
}

type walker struct {
	ctx      context.Context
	policy   *Policy
	root     string // real path of the source root
	include  globSet
	exclude  globSet
	defaults map[string]bool // directory names left out (Options.DefaultExcludes)
	visited  map[string]bool
	res      walkResult
	progress func(seen int)
}

// walkSource lists the files of a source. A file source is its one file.
// For folders and repositories the walk honours .gitignore at every level
// (and ignore files above the root up to the repository that holds it, see
// ignoreBase), .git/info/exclude, the include and exclude globs, never
// enters .git, a directory named in defaults (a set of names) or the
// workspace, and follows a symlink only to a target inside the ingest
// roots, once. An unreadable root is an error; anything below it is a skip.
func walkSource(ctx context.Context, p *Policy, src Source, defaults map[string]bool, progress func(int)) (walkResult, error) {
	root := src.Path
	if src.Kind == KindFile {
		fi, err := os.Stat(root)
		if err != nil {
			return walkResult{}, fmt.Errorf("stat source: %w", err)
		}
		return walkResult{files: []walkFile{{
			rel: filepath.Base(root), abs: root, size: fi.Size(), mtimeNs: fi.ModTime().UnixNano(),
		}}}, nil
	}
	_, prefix, ps, err := ignoreBase(root, p.rootOf(root))
	if err != nil {
		return walkResult{}, fmt.Errorf("read ignore files: %w", err)
	}
	w := &walker{
		ctx:      ctx,
		policy:   p,
		root:     root,
		include:  newGlobSet(src.Include),
		exclude:  newGlobSet(src.Exclude),
		defaults: defaults,
		visited:  map[string]bool{},
		progress: progress,
	}
	if err := w.dir(root, root, "", prefix, ps); err != nil {
		return walkResult{}, err
	}
	return w.res, nil
}

// defaultDetail is the coverage detail of a default exclude: where the
// list is set.
const defaultDetail = "named in default_excludes (tychora.json)"

// dirSuffix is the '/' that coverage puts after a directory's path.
func dirSuffix(isDir bool) string {
	if isDir {
		return "/"
	}
	return ""
}

func (w *walker) skip(rel, reason, detail string) {
	w.res.skips = append(w.res.skips, Skip{Path: rel, Reason: reason, Detail: detail})
}

// dir walks one directory: abs is where it is reached, real its resolved
// location, rel its path from the source root ("" for the root), elems its
// path elements from the ignore base, ps the ignore patterns in force.
func (w *walker) dir(abs, real, rel string, elems []string, ps []gitignore.Pattern) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.visited[real] = true
	w.res.dirs = append(w.res.dirs, abs)
	entries, err := os.ReadDir(abs)
	if err != nil {
		if rel == "" {
			return workspace.Wrap(workspace.CodeUnavailable, err, "the source directory cannot be read")
		}
		w.skip(rel+"/", SkipUnreadable, errDetail(err))
		return nil
	}
	own, err := readIgnoreFile(filepath.Join(abs, ".gitignore"), elems)
	if err != nil {
		w.skip(path.Join(rel, ".gitignore"), SkipUnreadable, errDetail(err))
	}
	if len(own) > 0 {
		ps = append(ps[:len(ps):len(ps)], own...)
	}
	for _, e := range entries {
		name := e.Name()
		if name == workspace.GitDir {
			// Whatever its type: a .git file points a worktree or
			// submodule at its git directory.
			w.skip(path.Join(rel, name)+dirSuffix(e.IsDir()), SkipDefault, defaultDetail)
			continue
		}
		if !utf8.ValidString(name) {
			// Paths are text everywhere downstream (JSON, FTS): a name
			// that is not UTF-8 cannot be represented faithfully.
			w.skip(strings.ToValidUTF8(path.Join(rel, name), "\uFFFD"), SkipUndecodable, "the name is not valid UTF-8")
			continue
		}
		childAbs := filepath.Join(abs, name)
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		childElems := append(elems[:len(elems):len(elems)], name)
		typ := e.Type()
		isDir := typ.IsDir()
		shown := childRel
		if isDir {
			shown += "/"
		}
		if len(ps) > 0 && ignored(ps, childElems, isDir) {
			w.skip(shown, SkipIgnored, "")
			continue
		}
		if w.exclude.match(childRel) {
			w.skip(shown, SkipExcluded, "")
			continue
		}
		switch {
		case isDir:
			childReal := filepath.Join(real, name)
			if w.policy.InWorkspace(childReal) {
				w.skip(shown, SkipWorkspace, "")
				continue
			}
			if w.defaults[name] {
				w.skip(shown, SkipDefault, defaultDetail)
				continue
			}
			if err := w.dir(childAbs, childReal, childRel, childElems, ps); err != nil {
				return err
			}
		case typ&fs.ModeSymlink != 0:
			if err := w.symlink(childAbs, childRel, childElems, ps); err != nil {
				return err
			}
		case typ.IsRegular():
			if !w.include.empty() && !w.include.match(childRel) {
				w.skip(childRel, SkipNotIncluded, "")
				continue
			}
			fi, err := e.Info()
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) { // vanished: simply absent
					w.skip(childRel, SkipUnreadable, errDetail(err))
				}
				continue
			}
			w.file(childRel, childAbs, fi)
		default:
			w.skip(childRel, SkipSpecial, specialKind(typ))
		}
	}
	return nil
}

func (w *walker) file(rel, abs string, fi fs.FileInfo) {
	w.res.files = append(w.res.files, walkFile{rel: rel, abs: abs, size: fi.Size(), mtimeNs: fi.ModTime().UnixNano()})
	if w.progress != nil && len(w.res.files)%256 == 0 {
		w.progress(len(w.res.files))
	}
}

// symlink handles a symlink met inside the tree: it is followed only when
// its target lies inside the ingest roots and outside the workspace; a
// directory target is walked once, and never when it lies inside the
// source itself (its files are indexed under their own path).
func (w *walker) symlink(abs, rel string, elems []string, ps []gitignore.Pattern) error {
	// The policy's resolution never looks outside the roots: a link that
	// leads outside is an escape whether or not its target exists there.
	target, err := w.policy.resolve(abs)
	if err != nil {
		switch {
		case errors.Is(err, errLeavesRoots):
			w.skip(rel, SkipSymlinkEscape, "the target lies outside the ingest roots")
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			w.skip(rel, SkipSymlinkBroken, "")
		default:
			w.skip(rel, SkipSymlinkBroken, "the target cannot be resolved")
		}
		return nil
	}
	if !w.policy.Contains(target) {
		w.skip(rel, SkipSymlinkEscape, "the target lies outside the ingest roots")
		return nil
	}
	if w.policy.InWorkspace(target) {
		w.skip(rel, SkipWorkspace, "the target lies in the workspace")
		return nil
	}
	fi, err := os.Stat(target)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.skip(rel, SkipSymlinkBroken, "")
		} else {
			w.skip(rel, SkipUnreadable, errDetail(err))
		}
		return nil
	}
	switch {
	case fi.IsDir():
		if w.defaults[path.Base(rel)] {
			w.skip(rel+"/", SkipDefault, defaultDetail)
			return nil
		}
		if w.visited[target] || within(target, w.root) || within(w.root, target) {
			w.skip(rel+"/", SkipSymlinkCycle, "")
			return nil
		}
		return w.dir(target, target, rel, elems, ps)
	case fi.Mode().IsRegular():
		if !w.include.empty() && !w.include.match(rel) {
			w.skip(rel, SkipNotIncluded, "")
			return nil
		}
		w.file(rel, target, fi)
	default:
		w.skip(rel, SkipSpecial, specialKind(fi.Mode()))
	}
	return nil
}

// specialKind names the type of a file that is neither regular nor a
// directory.
func specialKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "irregular file"
}

// errDetail describes a file-system error without its path.
func errDetail(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	}
	return err.Error()
}
