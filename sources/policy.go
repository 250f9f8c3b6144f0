package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tychora/tychora/workspace"
)

// Policy decides which paths may be ingested: only paths whose real
// location (every symlink resolved) lies inside an ingest root, and never
// the workspace directory or anything inside it. It is safe for concurrent
// use.
type Policy struct {
	roots     []policyRoot
	workspace []string // the workspace directory, cleaned and real
}

type policyRoot struct {
	clean string // as configured, cleaned
	real  string // symlinks resolved (== clean when the root is missing)
}

// NewPolicy returns the policy of the given ingest roots (absolute paths,
// the first one is where relative inputs are resolved) and workspace
// directory. Roots are resolved through symlinks now (of a root that does
// not exist yet, the deepest ancestor that does); a root that resolves to
// the file system root is refused with INVALID_ARGUMENT.
func NewPolicy(roots []string, workspaceDir string) (*Policy, error) {
	if len(roots) == 0 {
		return nil, errors.New("path policy: no ingest roots")
	}
	if !filepath.IsAbs(workspaceDir) {
		return nil, fmt.Errorf("path policy: workspace %q is not absolute", workspaceDir)
	}
	p := &Policy{}
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("path policy: ingest root %q is not absolute", r)
		}
		c := filepath.Clean(r)
		real := workspace.ResolveSymlinks(c)
		if real == string(filepath.Separator) {
			return nil, workspace.Errorf(workspace.CodeInvalidArgument, "ingest root %q is the file system root, which is never an ingest root", r)
		}
		p.roots = append(p.roots, policyRoot{clean: c, real: real})
	}
	ws := filepath.Clean(workspaceDir)
	p.workspace = []string{ws}
	if real := workspace.ResolveSymlinks(ws); real != ws {
		p.workspace = append(p.workspace, real)
	}
	return p, nil
}

// Roots returns the ingest roots as configured (cleaned).
func (p *Policy) Roots() []string {
	out := make([]string, len(p.roots))
	for i, r := range p.roots {
		out[i] = r.clean
	}
	return out
}

// within reports whether path is dir or lies inside it. Both are clean and
// absolute.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(path, dir)
	}
	return strings.HasPrefix(path, dir) && path[len(dir)] == filepath.Separator
}

// rootOf returns the real ingest root that holds the real path, or "".
func (p *Policy) rootOf(real string) string {
	for _, r := range p.roots {
		if within(real, r.real) {
			return r.real
		}
	}
	return ""
}

// Contains reports whether the real (symlink-free, clean, absolute) path
// lies inside an ingest root.
func (p *Policy) Contains(real string) bool { return p.rootOf(real) != "" }

// InWorkspace reports whether the path is the workspace directory or lies
// inside it.
func (p *Policy) InWorkspace(path string) bool {
	for _, w := range p.workspace {
		if within(path, w) {
			return true
		}
	}
	return false
}

// lexicallyInside reports whether the clean absolute path, before any
// symlink is resolved, lies inside a root as configured or as resolved.
func (p *Policy) lexicallyInside(abs string) bool {
	for _, r := range p.roots {
		if within(abs, r.clean) || within(abs, r.real) {
			return true
		}
	}
	return false
}

func outOfRoots(input string) error {
	return workspace.Errorf(workspace.CodeOutOfRoots, "path %q is outside the ingest roots", input)
}

// Abs makes path absolute against the first ingest root and cleans it. It
// resolves no symlink.
func (p *Policy) Abs(path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.roots[0].clean, path)
	}
	return filepath.Clean(path)
}

// RealPath resolves path (absolute, or relative to the first ingest root)
// through every symlink and checks it against the policy. The errors are
// *workspace.Error: OUT_OF_ROOTS when the path or what it resolves to lies
// outside the roots, whether or not it exists there (the message never
// names the resolved location), NOT_FOUND when it does not exist inside
// them, INVALID_ARGUMENT when it is the workspace or cannot be resolved.
// The input is quoted as given.
func (p *Policy) RealPath(path string) (string, error) {
	abs := p.Abs(path)
	if !p.lexicallyInside(abs) {
		return "", outOfRoots(path)
	}
	real, err := p.resolve(abs)
	if err != nil {
		switch {
		case errors.Is(err, errLeavesRoots):
			return "", outOfRoots(path)
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return "", workspace.Wrap(workspace.CodeNotFound, err, fmt.Sprintf("path %q does not exist", path))
		case errors.Is(err, fs.ErrPermission):
			return "", workspace.Wrap(workspace.CodeInvalidArgument, err, fmt.Sprintf("path %q is not readable", path))
		default:
			return "", workspace.Wrap(workspace.CodeInvalidArgument, err, fmt.Sprintf("path %q cannot be resolved", path))
		}
	}
	if !p.Contains(real) {
		return "", outOfRoots(path)
	}
	if p.InWorkspace(real) || p.InWorkspace(abs) {
		return "", workspace.Errorf(workspace.CodeInvalidArgument, "path %q is the tychora workspace, which is never ingested", path)
	}
	return real, nil
}

// errLeavesRoots is resolve's answer when the resolution steps outside the
// ingest roots.
var errLeavesRoots = errors.New("the path leads outside the ingest roots")

// errTooManyLinks is resolve's answer after maxLinks symlinks.
var errTooManyLinks = errors.New("too many levels of symbolic links")

// maxLinks bounds the symlinks one resolution follows, as
// filepath.EvalSymlinks does.
const maxLinks = 255

// mayVisit reports whether the resolution may look at the clean absolute
// path: it lies inside a root's real path, or it is a root or an ancestor
// of one (as configured or resolved), which the way into a root passes.
func (p *Policy) mayVisit(path string) bool {
	for _, r := range p.roots {
		if within(path, r.real) || within(r.real, path) || within(r.clean, path) {
			return true
		}
	}
	return false
}

// resolve is filepath.EvalSymlinks for the clean absolute path abs that
// never looks outside the ingest roots: it walks abs one element at a time,
// following each symlink (os.Readlink; a relative target is taken from the
// link's directory, which is already resolved), and answers errLeavesRoots
// as soon as the next location to look at lies neither inside a root nor on
// the way to one, before looking. When an element does not exist, the rest
// (a dangling link's target included) is checked lexically: a would-be
// location outside the roots is errLeavesRoots too. So the answer never
// depends on what exists outside the roots. Other errors are the file
// system's (fs.ErrNotExist, syscall.ENOTDIR, fs.ErrPermission) or
// errTooManyLinks.
func (p *Policy) resolve(abs string) (string, error) {
	sep := string(filepath.Separator)
	dest := sep
	rest := strings.Split(abs, sep)
	links := 0
	for len(rest) > 0 {
		elem := rest[0]
		rest = rest[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest) // dest is real: ".." is its parent
			continue
		}
		next := filepath.Join(dest, elem)
		if !p.mayVisit(next) {
			return "", errLeavesRoots
		}
		fi, err := os.Lstat(next)
		if err == nil && !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 && len(rest) > 0 {
			err = &fs.PathError{Op: "lstat", Path: next, Err: syscall.ENOTDIR}
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				if p.rootOf(filepath.Join(append([]string{next}, rest...)...)) == "" {
					return "", errLeavesRoots
				}
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dest = next
			continue
		}
		if links++; links > maxLinks {
			return "", errTooManyLinks
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			dest = sep
		}
		rest = append(strings.Split(target, sep), rest...)
	}
	return dest, nil
}

// Resolve checks a SourceInput against the policy and the file system:
// it validates the fields, resolves the path (see RealPath), detects the
// kind when absent (a directory holding .git is a repository) and checks a
// given kind against what is on disk. An empty collection becomes
// "default"; whether the caller may use it is the caller's check.
func (p *Policy) Resolve(in SourceInput) (ResolvedSource, error) {
	if err := validateInput(in); err != nil {
		return ResolvedSource{}, err
	}
	real, err := p.RealPath(in.Path)
	if err != nil {
		return ResolvedSource{}, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ResolvedSource{}, workspace.Wrap(workspace.CodeNotFound, err, fmt.Sprintf("path %q does not exist", in.Path))
		}
		return ResolvedSource{}, workspace.Wrap(workspace.CodeInvalidArgument, err, fmt.Sprintf("path %q is not readable", in.Path))
	}
	var found Kind
	switch {
	case fi.Mode().IsRegular():
		found = KindFile
	case fi.IsDir():
		found = KindFolder
		if hasGitEntry(real) {
			found = KindRepository
		} else if isBareRepository(real) {
			return ResolvedSource{}, workspace.Errorf(workspace.CodeInvalidArgument,
				"path %q is a bare git repository: it has no working tree to index (clone it, and add the clone)", in.Path)
		}
	default:
		return ResolvedSource{}, workspace.Errorf(workspace.CodeInvalidArgument, "path %q is neither a regular file nor a directory", in.Path)
	}
	kind := in.Kind
	switch {
	case kind == "":
		kind = found
	case kind == KindFile && found != KindFile:
		return ResolvedSource{}, workspace.Errorf(workspace.CodeInvalidArgument, "path %q is a directory, not a file", in.Path)
	case kind != KindFile && found == KindFile:
		return ResolvedSource{}, workspace.Errorf(workspace.CodeInvalidArgument, "path %q is a file, not a %s", in.Path, kind)
	case kind == KindRepository && found != KindRepository:
		return ResolvedSource{}, workspace.Errorf(workspace.CodeInvalidArgument, "path %q is not a git repository (no .git)", in.Path)
	}
	if kind == KindFile && (len(in.Include) > 0 || len(in.Exclude) > 0) {
		return ResolvedSource{}, workspace.Errorf(workspace.CodeInvalidArgument, "include and exclude apply to folders and repositories, not to a file")
	}
	rs := ResolvedSource{
		Kind:         kind,
		Path:         real,
		Root:         p.rootOf(real),
		CollectionID: in.CollectionID,
		Name:         in.Name,
		Include:      append([]string(nil), in.Include...),
		Exclude:      append([]string(nil), in.Exclude...),
		Watch:        in.Watch,
	}
	if rs.CollectionID == "" {
		rs.CollectionID = workspace.DefaultCollection
	}
	if rs.Name == "" {
		rs.Name = filepath.Base(real)
	}
	return rs, nil
}

// isBareRepository reports whether dir is a bare git repository: a HEAD
// file beside objects/ and refs/ directories (git's own test, less the
// config check).
func isBareRepository(dir string) bool {
	head, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil || !head.Mode().IsRegular() {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// hasGitEntry reports whether dir holds a .git directory or a .git file (a
// worktree or submodule pointing elsewhere).
func hasGitEntry(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}
