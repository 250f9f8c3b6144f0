package query

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// A serving engine whose writer builds the file index before it commits
// (sources.Options.Publish, PrepareCommit): the searches of the new
// generation find its index ready, none runs without it and no refresh
// starts behind them; the first search to see the generation makes the
// prepared index the cache's even before the writer says it committed;
// a merge keeps the base; a rollback leaves the cache as it was.
func TestFileIndexPublishedWithCommit(t *testing.T) {
	env := newSearchEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var early *fileIndex // the index a search found before the writer's done
	policy, err := sources.NewPolicy([]string{env.root}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	publish := func(ctx context.Context, tx *sql.Tx) func(bool) {
		done := env.engine.PrepareCommit(ctx, tx)
		if done == nil {
			t.Error("a serving engine with an index prepared none")
			return nil
		}
		return func(committed bool) {
			if committed {
				early = indexedQueryNow(t, env, "quokka")
			}
			done(committed)
		}
	}
	ix := sources.NewIndexer(env.db, policy, sources.NewAssets(t.TempDir()),
		sources.Options{Workers: 2, TempDir: t.TempDir(), Publish: publish, OptimizeMinChurn: 1})
	src := env.folder("go", "default", fileIndexTree())
	c := &env.engine.fileIdx
	c.inlineFiles = 1 // every index is large: refreshed behind the searches
	env.engine.StartWarm(ctx)
	env.engine.warming.Wait()
	c.done.Wait()
	_, first := c.state()
	if first == nil {
		t.Fatal("the warm-up built no file index")
	}
	// A refresh behind the searches would block here from now on.
	hold := make(chan struct{})
	c.mu.Lock()
	c.hold = hold
	c.mu.Unlock()
	// A failure below may leave a refresh waiting on hold: release it
	// before the engine's Close (an earlier cleanup) waits for it.
	t.Cleanup(func() { close(hold) })

	env.write("go/added/quokka.go", "package added\n\n// Quokka is new.\nvar Quokka = 1\n")
	if _, err := ix.Sync(ctx, src, sources.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	behind, now := c.state()
	if behind || now == first || now == nil {
		t.Fatalf("after the commit: refresh behind %v, index replaced %v: want the prepared index, no refresh", behind, now != first)
	}
	if early != now {
		t.Error("the first search of the new generation did not find the prepared index")
	}
	if _, ok := now.lookup(fileKeyOf(src, "added/quokka.go")); !ok {
		t.Error("the prepared index lacks the added file")
	}
	searchMeanwhile(ctx, t, env, "quokka", "after the commit", func(hs []Hit) bool { return hasPath(hs, "added/quokka.go") })
	if behind, index := c.state(); behind || index != now {
		t.Fatalf("a search started a refresh (%v) or replaced the index (%v)", behind, index != now)
	}

	// A merge changes the generation, not the files: the prepared index
	// shares the base.
	early = nil
	if ran, err := ix.Optimize(ctx); err != nil || !ran {
		t.Fatalf("merge: ran %v, %v", ran, err)
	}
	behind, merged := c.state()
	if behind || merged == now || merged == nil || merged.base != now.base {
		t.Fatalf("after the merge: refresh behind %v, new index %v, base shared %v", behind, merged != now, merged != nil && merged.base == now.base)
	}
	if indexedQueryNow(t, env, "quokka") != merged {
		t.Error("the search after the merge went without its index")
	}

	// A rollback: nothing is installed, nothing is left pending.
	tx, err := env.db.W.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := env.engine.PrepareCommit(ctx, tx)
	if done == nil {
		t.Fatal("nothing prepared")
	}
	done(false)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	next, index := c.next, c.index
	c.mu.Unlock()
	if next != nil || index != merged {
		t.Errorf("after a rollback: pending %v, index replaced %v", next != nil, index != merged)
	}
	env.engine.Close()
}

// TestPrepareCommitGivesWay: while a search runs, the build before a
// commit gives way to it (nothing else in this sync yields) and still
// prepares the whole index.
func TestPrepareCommitGivesWay(t *testing.T) {
	env := newSearchEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fg := &workspace.Foreground{}
	env.engine.Foreground = fg
	policy, err := sources.NewPolicy([]string{env.root}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prepared := false
	publish := func(ctx context.Context, tx *sql.Tx) func(bool) {
		done := env.engine.PrepareCommit(ctx, tx)
		prepared = done != nil
		return done
	}
	ix := sources.NewIndexer(env.db, policy, sources.NewAssets(t.TempDir()),
		sources.Options{Workers: 2, TempDir: t.TempDir(), Publish: publish})
	src := env.folder("go", "default", fileIndexTree())
	c := &env.engine.fileIdx
	c.inlineFiles = 1
	env.engine.StartWarm(ctx)
	env.engine.warming.Wait()
	c.done.Wait()
	// Enough new files and units that the build yields (every yieldFiles
	// files, every yieldUnits units).
	for i := range 3 * yieldFiles {
		var b []byte
		for j := range yieldUnits / yieldFiles {
			b = fmt.Appendf(b, "\n// W%d_%d is a wombat.\nfunc W%d_%d() {}\n", i, j, i, j)
		}
		env.write(fmt.Sprintf("go/wombat/w%d.go", i), "package wombat\n"+string(b))
	}
	leave := fg.Enter() // a search runs all along
	_, err = ix.Sync(ctx, src, sources.SyncOptions{})
	leave()
	if err != nil {
		t.Fatal(err)
	}
	if !prepared {
		t.Fatal("no index prepared while a search ran")
	}
	// The new files' counts (every yieldFiles files) gave way at least.
	if n := fg.Waited(); n < 3 {
		t.Errorf("the build gave way %d times while a search ran, want at least 3", n)
	}
	_, now := c.state()
	if now == nil {
		t.Fatal("no index after the commit")
	}
	if _, ok := now.lookup(fileKeyOf(src, "wombat/w0.go")); !ok {
		t.Error("the prepared index lacks the new files")
	}
	env.engine.Close()
}

// indexedQueryNow returns the file index a search of question would
// rank with now (nil: none), reporting failures with t.Error: it may run
// off the test's goroutine.
func indexedQueryNow(t *testing.T, env *searchEnv, question string) *fileIndex {
	ctx := context.Background()
	tx, release, err := env.engine.begin(ctx)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer release()
	pq := parseQuestion(question)
	prof, _ := profileByName(DefaultProfile)
	q, err := env.engine.prepareQuery(ctx, tx, prof, &pq, &scopeFilter{})
	if err != nil {
		t.Error(err)
		return nil
	}
	ix, err := env.engine.fileIdx.get(ctx, env.engine, tx, q.stats.generation, q.stats.read)
	if err != nil {
		t.Error(err)
	}
	return ix
}
