package workspace

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestTokenRules: a manager limited to some collections issues, sees,
// rotates and revokes only tokens within them, and never learns of the
// others, not even by their names.
func TestTokenRules(t *testing.T) {
	ctx := context.Background()
	db, err := OpenDB(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	toks, _, err := NewTokens(db)
	if err != nil {
		t.Fatal(err)
	}
	configured := []string{"default", "a", "b"}
	admin := Principal{ID: "owner", Grant: GrantManage}
	limited := Principal{ID: "token:m", Grant: GrantManage, Collections: []string{"a"}}
	issue := func(p Principal, name string, cs ...string) (TokenRecord, error) {
		rec, _, err := toks.Issue(ctx, p, TokenRequest{Grant: GrantRead, Collections: cs, Name: name}, configured)
		return rec, err
	}

	for _, c := range []struct {
		name string
		p    Principal
		req  TokenRequest
		code Code
	}{
		{"a collection outside the caller's", limited, TokenRequest{Grant: GrantRead, Collections: []string{"b"}}, CodePermissionDenied},
		{"an unknown collection", admin, TokenRequest{Grant: GrantRead, Collections: []string{"nope"}}, CodeNotFound},
		{"an invalid collection name", admin, TokenRequest{Grant: GrantRead, Collections: []string{"Bad Name"}}, CodeInvalidArgument},
		{"an invalid token name", admin, TokenRequest{Grant: GrantRead, Name: "has space"}, CodeInvalidArgument},
		{"an unknown grant", admin, TokenRequest{Grant: "root"}, CodeInvalidArgument},
	} {
		if _, _, err := toks.Issue(ctx, c.p, c.req, configured); ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}

	// None named: all the caller's.
	mine, err := issue(limited, "")
	if err != nil || !slices.Equal(mine.Collections, []string{"a"}) {
		t.Fatalf("limited manager's token: %+v, %v", mine, err)
	}
	// A name only a token out of reach holds gives a new token, and the
	// same name again rotates the caller's own.
	theirs, err := issue(admin, "shared", "b")
	if err != nil {
		t.Fatal(err)
	}
	own, err := issue(limited, "shared")
	if err != nil || own.ID == theirs.ID {
		t.Fatalf("name held out of reach: %+v, %v", own, err)
	}
	again, err := issue(limited, "shared")
	if err != nil || again.ID != own.ID {
		t.Fatalf("rotation: %+v, %v, want id %s", again, err, own.ID)
	}
	// The admin sees both of that name: it rotates the one on the
	// collections it names, and none is a conflict.
	if rot, err := issue(admin, "shared", "b"); err != nil || rot.ID != theirs.ID {
		t.Fatalf("admin rotation: %+v, %v, want id %s", rot, err, theirs.ID)
	}
	if _, err := issue(admin, "shared"); ErrorCode(err) != CodeConflict {
		t.Fatalf("two of one name, none on these collections: %v, want CONFLICT", err)
	}

	seen, err := toks.Visible(ctx, limited)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range seen {
		if !slices.Equal(r.Collections, []string{"a"}) {
			t.Errorf("the limited manager sees %+v", r)
		}
	}
	if len(seen) != 2 {
		t.Errorf("the limited manager sees %d tokens, want 2", len(seen))
	}
	if all, err := toks.Visible(ctx, admin); err != nil || len(all) != 3 {
		t.Errorf("the admin sees %d tokens (%v), want 3", len(all), err)
	}
	if err := toks.Revoke(ctx, limited, theirs.ID); ErrorCode(err) != CodeNotFound {
		t.Errorf("revoking a token out of reach: %v, want NOT_FOUND", err)
	}
	if err := toks.Revoke(ctx, limited, own.ID); err != nil {
		t.Errorf("revoking its own: %v", err)
	}
}
