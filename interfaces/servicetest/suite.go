// Package servicetest is the behaviour suite that every implementation of
// interfaces.Service must pass: the in-process one and the HTTP client run
// the same cases, so the two can never drift apart.
package servicetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Harness adapts one implementation to the suite. The workspace it serves
// must have the collections "default", "a" and "b".
type Harness struct {
	// As returns the Service acting as a caller with grant g on
	// collections cs (nil: all), and the context to call it with.
	As func(t *testing.T, g workspace.Grant, cs []string) (interfaces.Service, context.Context)
	// WithSecret returns the Service acting with a bearer secret, when the
	// implementation authenticates secrets (nil otherwise).
	WithSecret func(t *testing.T, secret string) (interfaces.Service, context.Context)
	// Root is the workspace's first ingest root, where the suite may
	// create files ("" skips the cases that ingest).
	Root string
}

// Run runs every case of the suite.
func Run(t *testing.T, h Harness) {
	t.Run("Health", func(t *testing.T) { testHealth(t, h) })
	t.Run("Status", func(t *testing.T) { testStatus(t, h) })
	t.Run("TokenLifecycle", func(t *testing.T) { testTokenLifecycle(t, h) })
	t.Run("TokenGrants", func(t *testing.T) { testTokenGrants(t, h) })
	t.Run("AddSources", func(t *testing.T) { testAddSources(t, h) })
	t.Run("JobIsolation", func(t *testing.T) { testJobIsolation(t, h) })
	t.Run("Inspect", func(t *testing.T) { testInspect(t, h) })
	t.Run("Content", func(t *testing.T) { testContent(t, h) })
	t.Run("Discover", func(t *testing.T) { testDiscover(t, h) })
	t.Run("Search", func(t *testing.T) { testSearch(t, h) })
	t.Run("BudgetPaging", func(t *testing.T) { testBudgetPaging(t, h) })
	t.Run("RemoveSource", func(t *testing.T) { testRemoveSource(t, h) })
	t.Run("SelectionText", func(t *testing.T) { testSelectionText(t, h) })
}

func wantCode(t *testing.T, what string, err error, code workspace.Code) {
	t.Helper()
	if got := workspace.ErrorCode(err); got != code {
		t.Fatalf("%s: code %q (%v), want %s", what, got, err, code)
	}
	var e *workspace.Error
	if err != nil && !asError(err, &e) {
		t.Fatalf("%s: %T is not a *workspace.Error", what, err)
	}
}

func testHealth(t *testing.T, h Harness) {
	svc, ctx := h.As(t, workspace.GrantRead, []string{"a"})
	res, err := svc.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "ok" || res.WorkspaceID == "" || res.PID == 0 || res.Version == "" || res.StartedAt == nil {
		t.Fatalf("health = %+v", res)
	}
	// The workspace directory is for the owner token's holders only.
	if res.Workspace != "" {
		t.Fatalf("a reader of a learns the workspace directory %q", res.Workspace)
	}
	m, mctx := h.As(t, workspace.GrantManage, nil)
	if res, err := m.Health(mctx); err != nil || !filepath.IsAbs(res.Workspace) {
		t.Fatalf("a manager of every collection: %+v %v", res, err)
	}
}

func testStatus(t *testing.T, h Harness) {
	reader, rctx := h.As(t, workspace.GrantRead, nil)
	st, err := reader.Status(rctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.WorkspaceID == "" || st.PID == 0 || st.URL == "" || st.StartedAt.IsZero() || st.Version == "" || st.UptimeS < 0 {
		t.Fatalf("status = %+v", st)
	}
	// Every caller's searches show in the cache counters: a reader does not
	// get them, nor a manager of some collections only.
	if st.SearchCache != nil {
		t.Fatalf("a reader sees search_cache %+v", *st.SearchCache)
	}
	m, mctx := h.As(t, workspace.GrantManage, []string{"default"})
	if st, err := m.Status(mctx); err != nil || st.SearchCache != nil {
		t.Fatalf("a manager of default: %v, search_cache %v", err, st.SearchCache)
	}
	svc, ctx := h.As(t, workspace.GrantManage, nil)
	if st, err = svc.Status(ctx); err != nil || st.SearchCache == nil {
		t.Fatalf("a manager of every collection: %v, search_cache %v", err, st.SearchCache)
	}
	// The search cache counters: a new request is a miss, the same one
	// again a hit.
	req := &query.QueryRequest{Question: "status cache counter probe"}
	for i, want := range []func(before, after interfaces.CacheCounts) bool{
		func(b, a interfaces.CacheCounts) bool { return a.Misses > b.Misses },
		func(b, a interfaces.CacheCounts) bool { return a.Hits > b.Hits },
	} {
		before := st.SearchCache
		if _, err := svc.Search(ctx, interfaces.SearchArgs{Request: req}); err != nil {
			t.Fatal(err)
		}
		if st, err = svc.Status(ctx); err != nil {
			t.Fatal(err)
		}
		if st.SearchCache == nil || !want(*before, *st.SearchCache) {
			t.Fatalf("search %d: search_cache %+v → %+v", i+1, before, st.SearchCache)
		}
	}
}

func testTokenLifecycle(t *testing.T, h Harness) {
	svc, ctx := h.As(t, workspace.GrantManage, nil)
	created, err := svc.CreateToken(ctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Collections: []string{"b", "a", "a"}, Name: "suite-reader"})
	if err != nil {
		t.Fatal(err)
	}
	if !workspace.WellFormedSecret(created.Token) || created.ID == "" || created.Grant != workspace.GrantRead ||
		len(created.Collections) != 2 || created.Collections[0] != "a" || created.Collections[1] != "b" {
		t.Fatalf("created = %+v", created)
	}
	list, err := svc.ListTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tok := range list.Tokens {
		if tok.ID == created.ID {
			found = true
			if tok.Name == nil || *tok.Name != "suite-reader" {
				t.Errorf("listed name %v", tok.Name)
			}
		}
	}
	if !found {
		t.Fatalf("created token not listed: %+v", list)
	}
	if h.WithSecret != nil {
		rs, rctx := h.WithSecret(t, created.Token)
		if _, err := rs.Status(rctx); err != nil {
			t.Fatalf("new secret refused: %v", err)
		}
		_, err := rs.ListTokens(rctx)
		wantCode(t, "reader lists tokens", err, workspace.CodePermissionDenied)
	}
	// Re-creating a named token rotates its secret and keeps its id.
	rotated, err := svc.CreateToken(ctx, interfaces.CreateTokenRequest{Grant: workspace.GrantWrite, Name: "suite-reader"})
	if err != nil {
		t.Fatal(err)
	}
	if rotated.ID != created.ID || rotated.Token == created.Token || rotated.Grant != workspace.GrantWrite {
		t.Fatalf("rotation: %+v after %+v", rotated, created)
	}
	if h.WithSecret != nil {
		old, octx := h.WithSecret(t, created.Token)
		_, err := old.Status(octx)
		wantCode(t, "old secret after rotation", err, workspace.CodeUnauthenticated)
	}
	if err := svc.RevokeToken(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "second revoke", svc.RevokeToken(ctx, created.ID), workspace.CodeNotFound)
	if h.WithSecret != nil {
		gone, gctx := h.WithSecret(t, rotated.Token)
		_, err := gone.Status(gctx)
		wantCode(t, "revoked secret", err, workspace.CodeUnauthenticated)
	}
}

func testTokenGrants(t *testing.T, h Harness) {
	reader, rctx := h.As(t, workspace.GrantRead, nil)
	_, err := reader.CreateToken(rctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead})
	wantCode(t, "reader creates a token", err, workspace.CodePermissionDenied)
	_, err = reader.ListTokens(rctx)
	wantCode(t, "reader lists tokens", err, workspace.CodePermissionDenied)
	wantCode(t, "reader revokes", reader.RevokeToken(rctx, "x"), workspace.CodePermissionDenied)

	writer, wctx := h.As(t, workspace.GrantWrite, nil)
	_, err = writer.CreateToken(wctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead})
	wantCode(t, "writer creates a token", err, workspace.CodePermissionDenied)

	admin, actx := h.As(t, workspace.GrantManage, nil)
	_, err = admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: "root"})
	wantCode(t, "unknown grant", err, workspace.CodeInvalidArgument)
	_, err = admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Collections: []string{"nope"}})
	wantCode(t, "unknown collection", err, workspace.CodeNotFound)
	_, err = admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Collections: []string{"Bad Name"}})
	wantCode(t, "invalid collection", err, workspace.CodeInvalidArgument)
	_, err = admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Name: "has space"})
	wantCode(t, "invalid name", err, workspace.CodeInvalidArgument)
	bTok, err := admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Collections: []string{"b"}, Name: "suite-b"})
	if err != nil {
		t.Fatal(err)
	}
	// None named is all; an empty list names none.
	allTok, err := admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Collections: []string{}})
	if err != nil || allTok.Collections != nil {
		t.Fatalf("collections [] gives %v (%v), want all (null)", allTok.Collections, err)
	}
	if err := admin.RevokeToken(actx, allTok.ID); err != nil {
		t.Fatal(err)
	}

	// A manager of collection a only.
	limited, lctx := h.As(t, workspace.GrantManage, []string{"a"})
	_, err = limited.CreateToken(lctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Collections: []string{"b"}})
	wantCode(t, "limited manager, other collection", err, workspace.CodePermissionDenied)
	aTok, err := limited.CreateToken(lctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead})
	if err != nil {
		t.Fatal(err)
	}
	if len(aTok.Collections) != 1 || aTok.Collections[0] != "a" {
		t.Fatalf("token of a limited manager covers %v, want [a]", aTok.Collections)
	}
	list, err := limited.ListTokens(lctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range list.Tokens {
		if tok.ID == bTok.ID {
			t.Fatal("limited manager sees a token of collection b")
		}
	}
	wantCode(t, "limited manager revokes b's token", limited.RevokeToken(lctx, bTok.ID), workspace.CodeNotFound)
	// A name held by a token out of reach gives the limited manager a token
	// of its own: no error tells it the other exists, and the other stays.
	same, err := limited.CreateToken(lctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Name: "suite-b"})
	if err != nil || same.ID == bTok.ID || len(same.Collections) != 1 || same.Collections[0] != "a" {
		t.Fatalf("limited manager naming b's token's name: %+v %v", same, err)
	}
	if h.WithSecret != nil {
		bs, bctx := h.WithSecret(t, bTok.Token)
		if _, err := bs.Status(bctx); err != nil {
			t.Fatalf("b's token after a same-named token of a: %v", err)
		}
	}
	// Each rotates its own.
	again, err := limited.CreateToken(lctx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Name: "suite-b"})
	if err != nil || again.ID != same.ID {
		t.Fatalf("rotating a's suite-b: %+v %v (want id %s)", again, err, same.ID)
	}
	rotB, err := admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Name: "suite-b", Collections: []string{"b"}})
	if err != nil || rotB.ID != bTok.ID {
		t.Fatalf("rotating b's suite-b: %+v %v (want id %s)", rotB, err, bTok.ID)
	}
	_, err = admin.CreateToken(actx, interfaces.CreateTokenRequest{Grant: workspace.GrantRead, Name: "suite-b"})
	wantCode(t, "a name two tokens hold, neither on the collections asked", err, workspace.CodeConflict)
	if err := limited.RevokeToken(lctx, same.ID); err != nil {
		t.Fatal(err)
	}
	if err := limited.RevokeToken(lctx, aTok.ID); err != nil {
		t.Fatal(err)
	}
	if err := admin.RevokeToken(actx, bTok.ID); err != nil {
		t.Fatal(err)
	}
}
