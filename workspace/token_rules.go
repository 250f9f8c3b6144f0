package workspace

import (
	"context"
	"slices"
	"unicode"
)

// The rules of token administration: a token never holds more than its
// creator, and a manager limited to some collections sees, rotates and
// revokes only the tokens within them (docs/security.md, "Grants"). The
// caller's grant (manage) is checked by the Service before these run.

// MaxTokenName bounds a token's name.
const MaxTokenName = 64

// ValidTokenName reports whether n is a usable token name: at most
// MaxTokenName letters, digits, '-', '_' or '.' ("" is no name).
func ValidTokenName(n string) bool {
	if len(n) > MaxTokenName {
		return false
	}
	for _, r := range n {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Manages reports whether a token limited to cs (nil: every collection)
// lies inside what p may see.
func (p Principal) Manages(cs []string) bool {
	if p.AllCollections() {
		return true
	}
	if len(cs) == 0 { // the token sees all collections
		return false
	}
	for _, c := range cs {
		if !p.CanSee(c) {
			return false
		}
	}
	return true
}

// TokenRequest asks for a token: its grant, the collections it is limited
// to (none: all the creator's) and an optional name, which rotates the
// token of that name the creator manages.
type TokenRequest struct {
	Grant       Grant
	Collections []string
	Name        string
}

// Visible lists the stored tokens p manages: all of them for a manager of
// every collection, those limited to its collections otherwise.
func (t *Tokens) Visible(ctx context.Context, p Principal) ([]TokenRecord, error) {
	all, err := t.ListTokens(ctx)
	if err != nil {
		return nil, err
	}
	out := []TokenRecord{}
	for _, r := range all {
		if p.Manages(r.Collections) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Issue stores a new token for p (or rotates the named one) and returns
// its record and secret. A grant above p's or a collection outside its
// set is PERMISSION_DENIED; a collection that configured does not name is
// NOT_FOUND.
func (t *Tokens) Issue(ctx context.Context, p Principal, req TokenRequest, configured []string) (TokenRecord, string, error) {
	g, err := ParseGrant(string(req.Grant))
	if err != nil {
		return TokenRecord{}, "", err
	}
	if !ValidTokenName(req.Name) {
		return TokenRecord{}, "", Errorf(CodeInvalidArgument, "token name: use at most %d letters, digits, '-', '_' or '.'", MaxTokenName)
	}
	cs := slices.Clone(req.Collections)
	slices.Sort(cs)
	cs = slices.Compact(cs)
	for _, c := range cs {
		if !ValidCollectionName(c) {
			return TokenRecord{}, "", Errorf(CodeInvalidArgument, "collection name %q is not valid", c)
		}
		if !p.CanSee(c) {
			return TokenRecord{}, "", Errorf(CodePermissionDenied, "collection %q is outside the caller's grant", c)
		}
		if !slices.Contains(configured, c) {
			return TokenRecord{}, "", Errorf(CodeNotFound, "no collection %q", c)
		}
	}
	if len(cs) == 0 {
		cs = nil // none named: all the caller's
		if !p.AllCollections() {
			cs = slices.Clone(p.Collections)
		}
	}
	// One creation at a time, so that two creations of one name at once
	// rotate one token rather than making two.
	t.issueMu.Lock()
	defer t.issueMu.Unlock()
	rotate, err := t.rotated(ctx, p, req.Name, cs)
	if err != nil {
		return TokenRecord{}, "", err
	}
	return t.CreateToken(ctx, req.Name, g, cs, rotate)
}

// rotated names the token a creation of name on cs rotates ("" for a new
// one): the token of that name p manages. Tokens outside its reach are
// invisible to it, as in Visible: a name one of them holds gives p a new
// token of its own, never an error that would tell it the other exists.
func (t *Tokens) rotated(ctx context.Context, p Principal, name string, cs []string) (string, error) {
	if name == "" {
		return "", nil
	}
	existing, err := t.ListTokens(ctx)
	if err != nil {
		return "", err
	}
	var named []TokenRecord
	for _, r := range existing {
		if r.Name != nil && *r.Name == name && p.Manages(r.Collections) {
			named = append(named, r)
		}
	}
	switch {
	case len(named) == 0:
		return "", nil
	case len(named) == 1:
		return named[0].ID, nil
	}
	// Only a caller who sees several (a manager of their collections)
	// gets here: the one with the same collections.
	rotate := ""
	for _, r := range named {
		if slices.Equal(r.Collections, cs) {
			rotate = r.ID
		}
	}
	if rotate == "" {
		return "", Errorf(CodeConflict,
			"%d tokens are named %q, none on these collections: revoke the one to replace by id, or name its collections", len(named), name)
	}
	return rotate, nil
}

// Revoke deletes a stored token p manages; one outside its reach is
// NOT_FOUND, like one that does not exist.
func (t *Tokens) Revoke(ctx context.Context, p Principal, id string) error {
	all, err := t.ListTokens(ctx)
	if err != nil {
		return err
	}
	for _, r := range all {
		if r.ID == id && p.Manages(r.Collections) {
			return t.RevokeToken(ctx, id)
		}
	}
	return Errorf(CodeNotFound, "no token with that id")
}
