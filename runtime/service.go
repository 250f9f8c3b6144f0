package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// Local is the in-process Service of a running owner. The caller's
// principal travels in ctx.
type Local struct {
	owner *Owner
}

var _ interfaces.Service = (*Local)(nil)

// Health answers with the owner's identity; it needs only a valid caller.
func (s *Local) Health(ctx context.Context) (interfaces.HealthResult, error) {
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		return interfaces.HealthResult{}, err
	}
	started := s.owner.startedAt
	h := interfaces.HealthResult{
		Status:      "ok",
		WorkspaceID: s.owner.id,
		PID:         os.Getpid(),
		Version:     Version,
		StartedAt:   &started,
	}
	// The workspace directory is for siblings, which hold the owner token
	// (ConnectLocal): a manager of every collection.
	if p.Can(workspace.GrantManage) && p.AllCollections() {
		h.Workspace = realDir(s.owner.layout.Dir)
	}
	return h, nil
}

// realDir is dir with its symlinks resolved, or dir when it cannot be.
func realDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// Status describes the owner; it needs the read grant.
func (s *Local) Status(ctx context.Context) (interfaces.StatusResult, error) {
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		return interfaces.StatusResult{}, err
	}
	if err := p.Require(workspace.GrantRead); err != nil {
		return interfaces.StatusResult{}, err
	}
	queued, running, err := s.owner.queue.Counts(ctx, p)
	if err != nil {
		return interfaces.StatusResult{}, err
	}
	watch, err := s.owner.watchStatus(ctx, p)
	if err != nil {
		return interfaces.StatusResult{}, err
	}
	// The cache counters count every caller's searches: only a manager of
	// every collection sees them.
	var cache *interfaces.CacheCounts
	var settings *interfaces.SettingsStatus
	if p.Can(workspace.GrantManage) && p.AllCollections() {
		hits, misses := s.owner.cache.stats()
		cache = &interfaces.CacheCounts{Hits: hits, Misses: misses}
		settings = s.owner.settingsStatus()
	}
	return interfaces.StatusResult{
		WorkspaceID: s.owner.id,
		PID:         os.Getpid(),
		URL:         s.owner.url,
		StartedAt:   s.owner.startedAt,
		UptimeS:     int64(time.Since(s.owner.startedAt) / time.Second),
		Version:     Version,
		Jobs:        interfaces.JobCounts{Queued: queued, Running: running},
		SearchCache: cache,
		Watch:       watch,
		Settings:    settings,
	}, nil
}

// manager returns the caller when it holds the manage grant.
func manager(ctx context.Context) (workspace.Principal, error) {
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		return p, err
	}
	return p, p.Require(workspace.GrantManage)
}

// within reports whether a token limited to cs lies inside what p may see.
func within(p workspace.Principal, cs []string) bool {
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

// ListTokens lists the stored tokens the caller manages: all of them for a
// manager of every collection, those limited to its collections otherwise.
func (s *Local) ListTokens(ctx context.Context) (interfaces.TokenList, error) {
	p, err := manager(ctx)
	if err != nil {
		return interfaces.TokenList{}, err
	}
	all, err := s.owner.tokens.ListTokens(ctx)
	if err != nil {
		return interfaces.TokenList{}, err
	}
	out := interfaces.TokenList{Tokens: []workspace.TokenRecord{}}
	for _, t := range all {
		if within(p, t.Collections) {
			out.Tokens = append(out.Tokens, t)
		}
	}
	return out, nil
}

const maxTokenName = 64

func validTokenName(n string) bool {
	if len(n) > maxTokenName {
		return false
	}
	for _, r := range n {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// CreateToken stores a new token (or rotates the named one). A token never
// holds more than its creator: a grant above the caller's or a collection
// outside its set is PERMISSION_DENIED; an unknown collection NOT_FOUND.
func (s *Local) CreateToken(ctx context.Context, req interfaces.CreateTokenRequest) (interfaces.CreatedToken, error) {
	p, err := manager(ctx)
	if err != nil {
		return interfaces.CreatedToken{}, err
	}
	ctx = carryOut(ctx)
	g, err := workspace.ParseGrant(string(req.Grant))
	if err != nil {
		return interfaces.CreatedToken{}, err
	}
	if !validTokenName(req.Name) {
		return interfaces.CreatedToken{}, workspace.Errorf(workspace.CodeInvalidArgument, "token name: use at most %d letters, digits, '-', '_' or '.'", maxTokenName)
	}
	cs := slices.Clone(req.Collections)
	slices.Sort(cs)
	cs = slices.Compact(cs)
	for _, c := range cs {
		if !workspace.ValidCollectionName(c) {
			return interfaces.CreatedToken{}, workspace.Errorf(workspace.CodeInvalidArgument, "collection name %q is not valid", c)
		}
		if !p.CanSee(c) {
			return interfaces.CreatedToken{}, workspace.Errorf(workspace.CodePermissionDenied, "collection %q is outside the caller's grant", c)
		}
		if !s.owner.hasCollection(c) {
			return interfaces.CreatedToken{}, workspace.Errorf(workspace.CodeNotFound, "no collection %q", c)
		}
	}
	if len(cs) == 0 {
		cs = nil // none named: all the caller's
		if !p.AllCollections() {
			cs = slices.Clone(p.Collections)
		}
	}
	// A name rotates the token of that name the caller can manage. Tokens
	// outside its reach are invisible to it, as in ListTokens: a name one
	// of them holds gives the caller a new token of its own, never an
	// error that would tell it the other exists.
	// One creation at a time, so that two creations of one name at once
	// rotate one token rather than making two.
	s.owner.tokenMu.Lock()
	defer s.owner.tokenMu.Unlock()
	rotate := ""
	if req.Name != "" {
		existing, err := s.owner.tokens.ListTokens(ctx)
		if err != nil {
			return interfaces.CreatedToken{}, err
		}
		var named []workspace.TokenRecord
		for _, t := range existing {
			if t.Name != nil && *t.Name == req.Name && within(p, t.Collections) {
				named = append(named, t)
			}
		}
		switch {
		case len(named) == 1:
			rotate = named[0].ID
		case len(named) > 1:
			// Only a caller who sees several (a manager of their
			// collections) gets here: the one with the same collections.
			for _, t := range named {
				if slices.Equal(t.Collections, cs) {
					rotate = t.ID
				}
			}
			if rotate == "" {
				return interfaces.CreatedToken{}, workspace.Errorf(workspace.CodeConflict,
					"%d tokens are named %q, none on these collections: revoke the one to replace by id, or name its collections", len(named), req.Name)
			}
		}
	}
	rec, secret, err := s.owner.tokens.CreateToken(ctx, req.Name, g, cs, rotate)
	if err != nil {
		return interfaces.CreatedToken{}, err
	}
	return interfaces.CreatedToken{TokenRecord: rec, Token: secret}, nil
}

// RevokeToken deletes a stored token; one outside the caller's reach is
// NOT_FOUND, like one that does not exist.
func (s *Local) RevokeToken(ctx context.Context, id string) error {
	p, err := manager(ctx)
	if err != nil {
		return err
	}
	ctx = carryOut(ctx)
	all, err := s.owner.tokens.ListTokens(ctx)
	if err != nil {
		return err
	}
	for _, t := range all {
		if t.ID == id && within(p, t.Collections) {
			return s.owner.tokens.RevokeToken(ctx, id)
		}
	}
	return workspace.Errorf(workspace.CodeNotFound, "no token with that id")
}
