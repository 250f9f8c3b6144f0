package workspace

import (
	"os"
	"path/filepath"
	"syscall"
)

// EnvWorkspace names the environment variable that selects a workspace when
// no --workspace flag is given.
const EnvWorkspace = "TYCHORA_WORKSPACE"

// DefaultDirName is the name of a workspace directory found by the upward
// search, and the workspace ./.tychora used when none is found.
const DefaultDirName = ".tychora"

// ResolveDir applies the --workspace > $TYCHORA_WORKSPACE > ./.tychora rule
// with no upward search (what tychora init creates) and returns an
// absolute, cleaned path. cwd is the directory a relative answer is
// resolved against.
func ResolveDir(flag, env, cwd string) (string, error) {
	dir := flag
	if dir == "" {
		dir = env
	}
	if dir == "" {
		dir = DefaultDirName
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	return filepath.Clean(dir), nil
}

// Origin says which rule chose a workspace directory.
type Origin int

const (
	FromFlag    Origin = iota // --workspace
	FromEnv                   // $TYCHORA_WORKSPACE
	FromSearch                // the nearest .tychora in cwd or a parent
	FromDefault               // none found: ./.tychora
)

// Found is the workspace directory FindDir chose and how.
type Found struct {
	Dir    string // absolute and clean
	Origin Origin
	// With FromSearch and FromDefault: the directory the search started in
	// and the last one it looked in (the filesystem root, or the last
	// directory before one the user does not own; empty when the user
	// does not own the first).
	SearchFrom, SearchTo string
}

// FindDir finds a workspace the way git finds a repository: --workspace,
// else $TYCHORA_WORKSPACE, else the nearest directory named .tychora that
// holds a workspace in cwd or one of its parents, else ./.tychora. The
// search stops at the filesystem root and never enters a directory the
// current user does not own (another user's home, a shared /tmp).
func FindDir(flag, env, cwd string) Found {
	return findDir(flag, env, cwd, ownedByUser)
}

// findDir is FindDir with the ownership test given (tests fake it).
func findDir(flag, env, cwd string, owned func(os.FileInfo) bool) Found {
	switch {
	case flag != "":
		dir, _ := ResolveDir(flag, "", cwd)
		return Found{Dir: dir, Origin: FromFlag}
	case env != "":
		dir, _ := ResolveDir("", env, cwd)
		return Found{Dir: dir, Origin: FromEnv}
	}
	cwd = filepath.Clean(cwd)
	f := Found{Dir: filepath.Join(cwd, DefaultDirName), Origin: FromDefault, SearchFrom: cwd}
	for dir := cwd; ; {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || !owned(fi) {
			break
		}
		f.SearchTo = dir
		candidate := filepath.Join(dir, DefaultDirName)
		if cfi, err := os.Stat(candidate); err == nil && cfi.IsDir() && owned(cfi) && NewLayout(candidate).Exists() {
			f.Dir, f.Origin = candidate, FromSearch
			return f
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return f
}

// ownedByUser reports whether the current user owns the file fi describes.
func ownedByUser(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Getuid()
}

// Layout names every file of a workspace.
type Layout struct {
	Dir      string // WORKSPACE
	Settings string // tychora.json
	DB       string // index.db
	Assets   string // assets/
	Runtime  string // .runtime/ (0700)
	Lock     string // .runtime/owner.lock
	Endpoint string // .runtime/endpoint.json (0600)
	// LastListen is the address the last owner listened on when the
	// listen setting left the port to the system (.runtime/listen, 0600).
	LastListen string
	// MCPTokens keeps the secrets mcp-config --http printed, so that a
	// second run prints the same (.runtime/mcp-tokens.json, 0600).
	MCPTokens string
	// FileIndex is the saved base of the search's file index, read by an
	// owner's first build of it (its warm-up or its first search) instead
	// of building it again (.runtime/file-index, 0600;
	// query.Engine.SavedIndex).
	FileIndex string
}

// NewLayout returns the layout of the workspace at dir (absolute).
func NewLayout(dir string) Layout {
	rt := filepath.Join(dir, ".runtime")
	return Layout{
		Dir:      dir,
		Settings: filepath.Join(dir, "tychora.json"),
		DB:       filepath.Join(dir, "index.db"),
		Assets:   filepath.Join(dir, "assets"),
		Runtime:  rt,
		Lock:     filepath.Join(rt, "owner.lock"),
		Endpoint: filepath.Join(rt, "endpoint.json"),

		LastListen: filepath.Join(rt, "listen"),
		MCPTokens:  filepath.Join(rt, "mcp-tokens.json"),
		FileIndex:  filepath.Join(rt, "file-index"),
	}
}

// Exists reports whether the workspace has been initialised (its settings
// file exists).
func (l Layout) Exists() bool {
	_, err := os.Stat(l.Settings)
	return err == nil
}

// EnsureDirs creates the workspace directories with their modes: the
// workspace and assets 0755, .runtime 0700 (re-applied when it exists).
func (l Layout) EnsureDirs() error {
	for _, d := range []string{l.Dir, l.Assets} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(l.Runtime, 0o700); err != nil {
		return err
	}
	return os.Chmod(l.Runtime, 0o700)
}

// ResolveSymlinks resolves the clean absolute path p through its symlinks
// (filepath.EvalSymlinks). When p does not exist, its deepest ancestor that
// does is resolved and the rest is kept as written; when nothing resolves,
// p is returned as is.
func ResolveSymlinks(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if dir == filepath.Dir(dir) {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}
