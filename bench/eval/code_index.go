package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// The code set's index: Go's source tree, $(go env GOROOT)/src, whole
// (tests, testdata and vendor included), added as one folder source and
// synced by the real Indexer, then merged as a sync job merges after a
// large sync. It takes minutes to build on a small machine, so it is kept
// in a cache directory and reused while its key holds:
//
//   - GOROOT and the Go version (go env GOROOT GOVERSION): the corpus;
//   - a SHA-256 over the code that decides what the index holds: every
//     non-test .go file of sources/ (walk, policy, extractors, chunking,
//     code terms, the writer), workspace/db.go and workspace/migrations/
//     (the schema and the FTS5 options), go.sum (SQLite's version among
//     them), and this file and code_baseline.go (how the cache is built).
//
// Any change to those files builds a new index in a new directory
// <index>/<go version>-<key>; query/ is not part of the key, since ranking
// reads the index and does not shape it. A build goes to a temporary
// directory first and is renamed into place when it is complete, so an
// interrupted build is never reused. The same directory holds the whole-
// file FTS5 table of the baselines (code_baseline.go). Each run stamps the
// directory it uses; after a build, only the codeKeep most recently used
// directories are kept (about 0.5 GB each), so that a series of edits to
// sources/ does not fill the disk.

// codeKeyFiles lists the repository files whose bytes make the index key:
// paths relative to the repository root, "dir/" for every non-test .go
// or .sql file directly in dir.
// codeKeep is how many cached indexes a build leaves under the cache
// directory, the new one included.
const codeKeep = 4

var codeKeyFiles = []string{"sources/", "workspace/migrations/", "workspace/db.go", "go.sum", "bench/eval/code_index.go", "bench/eval/code_baseline.go"}

// goEnv is the toolchain's GOROOT and GOVERSION.
func goEnv() (goroot, version string, err error) {
	out, err := exec.Command("go", "env", "GOROOT", "GOVERSION").Output()
	if err != nil {
		return "", "", fmt.Errorf("go env: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", "", fmt.Errorf("go env GOROOT GOVERSION: unexpected output %q", out)
	}
	return f[0], f[1], nil
}

// codeIndexKey hashes the inputs that decide the index (see above).
func codeIndexKey(repo, goroot, goVersion string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", goroot, goVersion)
	var files []string
	for _, k := range codeKeyFiles {
		if !strings.HasSuffix(k, "/") {
			files = append(files, k)
			continue
		}
		ents, err := os.ReadDir(filepath.Join(repo, k))
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			n := e.Name()
			if e.Type().IsRegular() && (strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") || strings.HasSuffix(n, ".sql")) {
				files = append(files, k+n)
			}
		}
	}
	sort.Strings(files)
	for _, rel := range files {
		f, err := os.Open(filepath.Join(repo, rel))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// defaultCodeIndexDir is where the code index is cached without -index.
func defaultCodeIndexDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "tychora", "eval-code")
	}
	return filepath.Join(os.TempDir(), "tychora-eval-code")
}

// codeIndex is the opened code index and its baseline table.
type codeIndex struct {
	dir     string // the keyed directory
	srcRoot string // GOROOT/src, symlinks resolved
	db      *workspace.DB
	engine  *query.Engine
	files   int
	units   int64
	built   bool          // built by this run (not reused)
	took    time.Duration // the build's sync, when built
}

func (ix *codeIndex) Close() { ix.db.Close() }

// openCodeIndex opens the cached index under base for key, building it
// first when it is missing or reindex is set.
func openCodeIndex(ctx context.Context, base, key, srcRoot string, reindex bool, logf func(string, ...any)) (*codeIndex, error) {
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(base, key)
	ix := &codeIndex{dir: dir, srcRoot: srcRoot}
	if _, err := os.Stat(filepath.Join(dir, "complete")); err != nil || reindex {
		if err := os.MkdirAll(base, 0o755); err != nil {
			return nil, err
		}
		logf("building the index of %s in %s (minutes)", srcRoot, dir)
		if ix.took, err = buildCodeIndex(ctx, base, dir, srcRoot); err != nil {
			return nil, err
		}
		ix.built = true
	}
	if err := os.WriteFile(filepath.Join(dir, "used"), nil, 0o644); err != nil {
		return nil, err
	}
	if ix.built {
		if err := pruneCodeIndexes(base, codeKeep); err != nil {
			logf("pruning %s: %v", base, err)
		}
	}
	db, err := workspace.OpenDB(ctx, filepath.Join(dir, "workspace", "index.db"))
	if err != nil {
		return nil, err
	}
	if err := db.R.QueryRowContext(ctx, `SELECT count(DISTINCT path), count(*) FROM evidence WHERE leaf = 1`).Scan(&ix.files, &ix.units); err != nil {
		db.Close()
		return nil, err
	}
	var k [32]byte
	_, _ = rand.Read(k[:])
	ix.db = db
	ix.engine = &query.Engine{DB: db, Cursors: workspace.NewCursorsWithKey(k[:])}
	return ix, nil
}

// buildCodeIndex builds the index and the baseline table in a temporary
// directory beside dir, then renames it to dir (replacing an old one).
func buildCodeIndex(ctx context.Context, base, dir, srcRoot string) (time.Duration, error) {
	tmp, err := os.MkdirTemp(base, ".build-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	wsDir := filepath.Join(tmp, "workspace")
	if err := os.MkdirAll(wsDir, 0o755); err != nil {
		return 0, err
	}
	db, err := workspace.OpenDB(ctx, filepath.Join(wsDir, "index.db"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	policy, err := sources.NewPolicy([]string{filepath.Dir(srcRoot)}, wsDir)
	if err != nil {
		return 0, err
	}
	indexer := sources.NewIndexer(db, policy, sources.NewAssets(filepath.Join(wsDir, "assets")), sources.Options{TempDir: tmp})
	src, _, err := indexer.Add(ctx, sources.SourceInput{Path: srcRoot, CollectionID: workspace.DefaultCollection})
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if _, err := indexer.Sync(ctx, src.ID, sources.SyncOptions{}); err != nil {
		return 0, err
	}
	took := time.Since(t0)
	// A sync job merges the index after a large sync; an owner serves that.
	if _, err := indexer.Optimize(ctx); err != nil {
		return 0, err
	}
	if err := buildBaselineTable(ctx, db, srcRoot, filepath.Join(tmp, "files.db")); err != nil {
		return 0, err
	}
	if err := db.Close(); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return 0, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return 0, errors.Join(err, os.RemoveAll(tmp))
	}
	return took, nil
}

// pruneCodeIndexes removes all but the keep most recently used complete
// indexes under base, and builds left over from a run that died more than
// a day ago.
func pruneCodeIndexes(base string, keep int) error {
	ents, err := os.ReadDir(base)
	if err != nil {
		return err
	}
	type cached struct {
		dir  string
		used time.Time
	}
	var dirs []cached
	var errs []error
	for _, e := range ents {
		dir := filepath.Join(base, e.Name())
		if !e.IsDir() {
			continue
		}
		if strings.HasPrefix(e.Name(), ".build-") {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
				errs = append(errs, os.RemoveAll(dir))
			}
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "complete")); err != nil {
			continue // not ours
		}
		c := cached{dir: dir}
		if fi, err := os.Stat(filepath.Join(dir, "used")); err == nil {
			c.used = fi.ModTime()
		}
		dirs = append(dirs, c)
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].used.After(dirs[j].used) })
	for i := keep; i < len(dirs); i++ {
		errs = append(errs, os.RemoveAll(dirs[i].dir))
	}
	return errors.Join(errs...)
}
