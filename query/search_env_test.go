package query

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// searchEnv is a workspace for search tests: an ingest root, a real
// SQLite index, the real Indexer and an Engine.
type searchEnv struct {
	t      testing.TB
	root   string
	db     *workspace.DB
	ix     *sources.Indexer
	engine *Engine
	all    workspace.Principal
}

func newSearchEnv(t testing.TB) *searchEnv {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := &searchEnv{t: t, root: filepath.Join(base, "root")}
	ws := filepath.Join(base, "ws")
	for _, d := range []string{env.root, ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	env.db, err = workspace.OpenDB(ctx, filepath.Join(ws, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	policy, err := sources.NewPolicy([]string{env.root}, ws)
	if err != nil {
		t.Fatal(err)
	}
	env.ix = sources.NewIndexer(env.db, policy, sources.NewAssets(filepath.Join(ws, "assets")), sources.Options{Workers: 2, TempDir: t.TempDir()})
	env.engine = &Engine{DB: env.db, Cursors: workspace.NewCursorsWithKey(make([]byte, 32)), Collections: []string{"default", "a", "b"}}
	t.Cleanup(func() {
		env.engine.Close()
		env.db.Close()
	})
	env.all = workspace.Principal{ID: "test", Grant: workspace.GrantRead}
	return env
}

// write creates a file under the root (rel is slash-separated).
func (env *searchEnv) write(rel, content string) string {
	env.t.Helper()
	p := filepath.Join(env.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		env.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		env.t.Fatal(err)
	}
	return p
}

// source adds the folder rel (under the root) to collection and syncs it.
func (env *searchEnv) source(rel, collection string) string {
	env.t.Helper()
	ctx := context.Background()
	src, _, err := env.ix.Add(ctx, sources.SourceInput{Path: filepath.Join(env.root, filepath.FromSlash(rel)), CollectionID: collection})
	if err != nil {
		env.t.Fatal(err)
	}
	if _, err := env.ix.Sync(ctx, src.ID, sources.SyncOptions{}); err != nil {
		env.t.Fatal(err)
	}
	return src.ID
}

// folder writes files (path → content, relative to dir) and adds dir as a
// source of collection.
func (env *searchEnv) folder(dir, collection string, files map[string]string) string {
	env.t.Helper()
	for rel, content := range files {
		env.write(dir+"/"+rel, content)
	}
	return env.source(dir, collection)
}

func (env *searchEnv) search(p workspace.Principal, req QueryRequest) Ranked {
	env.t.Helper()
	res, err := env.engine.Search(context.Background(), p, req)
	if err != nil {
		env.t.Fatalf("search %q: %v", req.Question, err)
	}
	return res
}

// paths lists the hits' paths in rank order.
func paths(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Path
	}
	return out
}

func hasPath(hits []Hit, path string) bool {
	for _, h := range hits {
		if h.Path == path {
			return true
		}
	}
	return false
}

// wantCode fails unless err is a *workspace.Error with code.
func wantCode(t *testing.T, err error, code workspace.Code) {
	t.Helper()
	var we *workspace.Error
	if !errors.As(err, &we) || we.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

// touch sets a file's modification time to a new value.
func touch(t *testing.T, path string) {
	t.Helper()
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
}
