package runtime

import (
	"context"
	"os"
	"path/filepath"
	"time"

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
	p, err := caller(ctx, workspace.GrantRead)
	if err != nil {
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
		hits, misses := s.owner.searcher.CacheStats()
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

// caller returns the caller when it holds the grant need. The Service is
// the one layer that checks grants (docs/architecture.md, "Grants"):
// every method but Health starts here, with the grant its tool needs
// (interfaces.ToolGrant) or, for manage_job, its action.
func caller(ctx context.Context, need workspace.Grant) (workspace.Principal, error) {
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		return p, err
	}
	return p, p.Require(need)
}

// ListTokens lists the stored tokens the caller manages
// (workspace.Tokens.Visible).
func (s *Local) ListTokens(ctx context.Context) (interfaces.TokenList, error) {
	p, err := caller(ctx, workspace.GrantManage)
	if err != nil {
		return interfaces.TokenList{}, err
	}
	all, err := s.owner.tokens.Visible(ctx, p)
	if err != nil {
		return interfaces.TokenList{}, err
	}
	return interfaces.TokenList{Tokens: all}, nil
}

// CreateToken stores a new token (or rotates the named one) under the
// rules of workspace.Tokens.Issue.
func (s *Local) CreateToken(ctx context.Context, req interfaces.CreateTokenRequest) (interfaces.CreatedToken, error) {
	p, err := caller(ctx, workspace.GrantManage)
	if err != nil {
		return interfaces.CreatedToken{}, err
	}
	rec, secret, err := s.owner.tokens.Issue(carryOut(ctx), p,
		workspace.TokenRequest{Grant: req.Grant, Collections: req.Collections, Name: req.Name}, s.owner.cfg().Collections)
	if err != nil {
		return interfaces.CreatedToken{}, err
	}
	return interfaces.CreatedToken{TokenRecord: rec, Token: secret}, nil
}

// RevokeToken deletes a stored token the caller manages
// (workspace.Tokens.Revoke).
func (s *Local) RevokeToken(ctx context.Context, id string) error {
	p, err := caller(ctx, workspace.GrantManage)
	if err != nil {
		return err
	}
	return s.owner.tokens.Revoke(carryOut(ctx), p, id)
}

// PrepareSearch builds the search's file index of the index as it is now
// and saves it for the next owner (query.Engine.PrepareSaved), when the
// workspace is large enough to keep one: a command that ran a job to its
// end calls it, so that the next command's search reads the index instead
// of building it.
func (s *Local) PrepareSearch(ctx context.Context) error {
	if s.owner.engine == nil {
		return nil
	}
	return s.owner.engine.PrepareSaved(ctx)
}
