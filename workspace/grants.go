package workspace

import (
	"context"
	"slices"
)

// Grant is a rung of the access ladder: read < write < manage.
type Grant string

// The grants.
const (
	GrantRead   Grant = "read"
	GrantWrite  Grant = "write"
	GrantManage Grant = "manage"
)

func (g Grant) rank() int {
	switch g {
	case GrantRead:
		return 1
	case GrantWrite:
		return 2
	case GrantManage:
		return 3
	}
	return 0
}

// Valid reports whether g is one of the three grants.
func (g Grant) Valid() bool { return g.rank() > 0 }

// Includes reports whether g allows everything need allows.
func (g Grant) Includes(need Grant) bool { return g.Valid() && g.rank() >= need.rank() }

// ParseGrant parses "read", "write" or "manage".
func ParseGrant(s string) (Grant, error) {
	g := Grant(s)
	if !g.Valid() {
		return "", Errorf(CodeInvalidArgument, "grant %q: use read, write or manage", s)
	}
	return g, nil
}

// Principal is who is calling and what it may do: a grant limited to a set
// of collections (nil means all collections).
type Principal struct {
	// ID identifies the caller for job ownership and query runs: a token
	// id, "owner" or "stdio".
	ID          string
	Grant       Grant
	Collections []string
}

// AllCollections reports whether the principal is unlimited in collections.
func (p Principal) AllCollections() bool { return p.Collections == nil }

// Can reports whether the principal's grant includes need.
func (p Principal) Can(need Grant) bool { return p.Grant.Includes(need) }

// CanSee reports whether the principal may see collection c.
func (p Principal) CanSee(c string) bool {
	return p.Collections == nil || slices.Contains(p.Collections, c)
}

// Require returns PERMISSION_DENIED unless the principal holds need.
func (p Principal) Require(need Grant) error {
	if !p.Can(need) {
		return Errorf(CodePermissionDenied, "this needs the %s grant; the caller holds %s", need, p.Grant)
	}
	return nil
}

// VisibleCollections narrows configured to what the principal may see.
func (p Principal) VisibleCollections(configured []string) []string {
	out := make([]string, 0, len(configured))
	for _, c := range configured {
		if p.CanSee(c) {
			out = append(out, c)
		}
	}
	return out
}

// ResolveCollection picks the collection a write goes to: the named one,
// which must be in the grant (PERMISSION_DENIED otherwise), or "default"
// when none is named and the grant includes it (INVALID_ARGUMENT otherwise).
// Whether the collection exists is the caller's check.
func (p Principal) ResolveCollection(named string) (string, error) {
	if named != "" {
		if !p.CanSee(named) {
			return "", Errorf(CodePermissionDenied, "collection %q is outside the caller's grant", named)
		}
		return named, nil
	}
	if !p.CanSee(DefaultCollection) {
		return "", Errorf(CodeInvalidArgument, "no collection given and the grant does not include %q: name a collection", DefaultCollection)
	}
	return DefaultCollection, nil
}

// Narrow returns the principal limited to grant g and collections cs (nil:
// keep the current set). Asking for more than the principal holds is
// PERMISSION_DENIED.
func (p Principal) Narrow(g Grant, cs []string) (Principal, error) {
	out := p
	if g != "" {
		if !p.Grant.Includes(g) {
			return Principal{}, Errorf(CodePermissionDenied, "scope asks for %s but the token holds %s", g, p.Grant)
		}
		out.Grant = g
	}
	if cs != nil {
		for _, c := range cs {
			if !p.CanSee(c) {
				return Principal{}, Errorf(CodePermissionDenied, "scope asks for collection %q outside the token's grant", c)
			}
		}
		out.Collections = cs
	}
	return out, nil
}

type principalKey struct{}

// WithPrincipal returns a context that carries p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx; ok is false when there is
// none, and every operation must then refuse with UNAUTHENTICATED.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok && p.Grant.Valid()
}

// CallerFrom is PrincipalFrom as an error: UNAUTHENTICATED when ctx carries
// no valid principal.
func CallerFrom(ctx context.Context) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return Principal{}, Errorf(CodeUnauthenticated, "no caller identity")
	}
	return p, nil
}
