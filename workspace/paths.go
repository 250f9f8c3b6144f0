package workspace

import (
	"os"
	"path/filepath"
)

// EnvWorkspace names the environment variable that selects a workspace when
// no --workspace flag is given.
const EnvWorkspace = "TYCHORA_WORKSPACE"

// DefaultDirName is the workspace directory used when neither the flag nor
// the environment names one: ./.tychora, with no upward search.
const DefaultDirName = ".tychora"

// ResolveDir applies the --workspace > $TYCHORA_WORKSPACE > ./.tychora rule
// and returns an absolute, cleaned path. cwd is the directory a relative
// answer is resolved against.
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

// Layout names every file of a workspace (DESIGN §2).
type Layout struct {
	Dir      string // WORKSPACE
	Settings string // tychora.json
	DB       string // index.db
	Assets   string // assets/
	Runtime  string // .runtime/ (0700)
	Lock     string // .runtime/owner.lock
	Endpoint string // .runtime/endpoint.json (0600)
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
