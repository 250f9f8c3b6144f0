package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
// directory. Roots are resolved through symlinks now; a root that does not
// exist yet is kept as written.
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
		p.roots = append(p.roots, policyRoot{clean: c, real: realOr(c)})
	}
	ws := filepath.Clean(workspaceDir)
	p.workspace = []string{ws}
	if real := realOr(ws); real != ws {
		p.workspace = append(p.workspace, real)
	}
	return p, nil
}

func realOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
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
// outside the roots (the message never names the resolved location),
// NOT_FOUND when it does not exist, INVALID_ARGUMENT when it is the
// workspace or cannot be resolved. The input is quoted as given.
func (p *Policy) RealPath(path string) (string, error) {
	abs := p.Abs(path)
	if !p.lexicallyInside(abs) {
		return "", outOfRoots(path)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		// Answer OUT_OF_ROOTS rather than NOT_FOUND when the part that
		// exists already leads outside: existence outside the roots must
		// not be observable.
		if prefix, ok := existingPrefix(abs); ok && !p.Contains(prefix) {
			return "", outOfRoots(path)
		}
		switch {
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

// existingPrefix resolves the deepest ancestor of abs that resolves. An
// ancestor of a resolvable path resolves too, so a binary search over the
// ancestors finds it in O(log depth) resolutions: a long chain of
// looping symlinks costs little.
func existingPrefix(abs string) (string, bool) {
	var ancestors []string // shallowest first, "/" included
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		ancestors = append(ancestors, dir)
		if dir == filepath.Dir(dir) {
			break
		}
	}
	slices.Reverse(ancestors)
	best := ""
	lo, hi := 0, len(ancestors)-1
	for lo <= hi {
		mid := (lo + hi) / 2
		if r, err := filepath.EvalSymlinks(ancestors[mid]); err == nil {
			best, lo = r, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best, best != ""
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
	}
	if rs.CollectionID == "" {
		rs.CollectionID = workspace.DefaultCollection
	}
	if rs.Name == "" {
		rs.Name = filepath.Base(real)
	}
	return rs, nil
}

// hasGitEntry reports whether dir holds a .git directory or a .git file (a
// worktree or submodule pointing elsewhere).
func hasGitEntry(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}
