// Package interfaces is the contract that every edge (HTTP, MCP, the CLI)
// talks to: the Service and the request and result types those edges
// carry, the tools' names, schemas and example calls, the decoding and
// validation of their arguments (with typed errors), the media type
// policy of request bodies, and the limits. Both adapters,
// interfaces/http and interfaces/mcp, import it; nothing hands it to
// them. There are two implementations of the Service: the in-process one
// in package runtime and the HTTP client in package interfaces/http; one
// behaviour suite runs against both.
package interfaces

import (
	"context"
	"time"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// Service is the contract: one method per operation. The caller's identity
// travels in ctx (workspace.WithPrincipal) for the in-process
// implementation, and as the bearer token for the HTTP client. Every error
// is a *workspace.Error with a public code; each method names the codes it
// answers besides UNAVAILABLE (the owner stopping, unreachable, or a full
// disk) and INTERNAL, which any of them may. A caller without a valid
// identity gets UNAUTHENTICATED; one whose grant is too small,
// PERMISSION_DENIED.
type Service interface {
	// Health answers whether the owner is up and who it is.
	Health(ctx context.Context) (HealthResult, error)
	// Status describes the running owner.
	Status(ctx context.Context) (StatusResult, error)

	TokenAdmin

	// Discover lists one subject (read grant). INVALID_ARGUMENT: an
	// unknown subject, a bad cursor or limit.
	Discover(ctx context.Context, args DiscoverArgs) (DiscoverResult, error)
	// Search ranks evidence and fits it to the budget (read grant).
	// INVALID_ARGUMENT: a bad request, cursor, filter or render;
	// PERMISSION_DENIED: a collection outside the grant; NOT_FOUND: a run
	// to replay that is unknown or not the caller's; REPLAY_UNAVAILABLE:
	// a run that kept no request; OUTPUT_BUDGET_EXCEEDED: a budget below
	// the empty answer, or an answer over MaxResultBytes.
	Search(ctx context.Context, args SearchArgs) (SearchOutput, error)
	// Inspect answers about one source (read grant). INVALID_ARGUMENT: an
	// unknown subject, a missing path for content; NOT_FOUND: a source,
	// revision, extraction or file outside the caller's collections;
	// OUTPUT_BUDGET_EXCEEDED: content over its bound.
	Inspect(ctx context.Context, args InspectArgs) (InspectResult, error)
	// AddSources queues an add or a sync as a durable job (write grant).
	// INVALID_ARGUMENT: a bad source; OUT_OF_ROOTS: a path outside every
	// ingest root; NOT_FOUND: an unknown collection or source;
	// PERMISSION_DENIED: a collection outside the grant.
	AddSources(ctx context.Context, req AddSourcesRequest) (JobResult, error)
	// ManageJob lists and gets jobs (read grant), cancels and retries
	// them (write grant). NOT_FOUND: a job outside the caller's
	// collections; CONFLICT: a cancel or retry the job's state does not
	// allow.
	ManageJob(ctx context.Context, req ManageJobRequest) (ManageJobResult, error)

	// RemoveSource is DELETE /v1/sources/{id}: it needs write on the
	// source's collection; the source's evidence, revisions and assets
	// leave the index in one transaction and its active job ends.
	// NOT_FOUND: a source outside the caller's collections.
	RemoveSource(ctx context.Context, id string) (RemovedSource, error)

	// GetJob is GET /v1/jobs/{id}; Evidence and Asset back the
	// tychora://evidence and tychora://assets templates (read grant).
	// NOT_FOUND: an id outside the caller's collections;
	// OUTPUT_BUDGET_EXCEEDED: an asset over MaxAssetBytes.
	GetJob(ctx context.Context, id string) (JobResult, error)
	Evidence(ctx context.Context, id string) (EvidenceResult, error)
	Asset(ctx context.Context, id string) (Asset, error)
}

// TokenAdmin manages stored tokens: GET, POST /v1/tokens and DELETE
// /v1/tokens/{id}. Every method needs the manage grant; a manager limited
// to some collections sees, creates and revokes only tokens within them.
// INVALID_ARGUMENT: a bad grant, name or collection name;
// PERMISSION_DENIED: a token holding more than its creator; NOT_FOUND: an
// unknown collection, or a token the caller cannot see.
type TokenAdmin interface {
	ListTokens(ctx context.Context) (TokenList, error)
	// CreateToken creates a token, or rotates the secret of the token of
	// that name; the secret is in the answer only.
	CreateToken(ctx context.Context, req CreateTokenRequest) (CreatedToken, error)
	RevokeToken(ctx context.Context, id string) error
}

// HealthResult is the body of GET /v1/health. Without a valid token only
// Status is set.
type HealthResult struct {
	Status      string     `json:"status"`
	WorkspaceID string     `json:"workspace_id,omitempty"`
	PID         int        `json:"pid,omitempty"`
	Version     string     `json:"tychora_version,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	// Workspace is the owner's workspace directory, symlinks resolved
	// (for a manager of every collection only, such as the owner token a
	// sibling holds): a sibling checks it is the workspace it opened, so
	// that an endpoint.json copied along with a workspace never sends its
	// commands to the original's owner.
	Workspace string `json:"workspace,omitempty"`
}

// JobCounts counts the jobs waiting and running.
type JobCounts struct {
	Queued  int `json:"queued"`
	Running int `json:"running"`
}

// StatusResult is the body of GET /v1/status.
type StatusResult struct {
	WorkspaceID string    `json:"workspace_id"`
	PID         int       `json:"pid"`
	URL         string    `json:"url"`
	StartedAt   time.Time `json:"started_at"`
	UptimeS     int64     `json:"uptime_s"`
	Version     string    `json:"tychora_version"`
	// Jobs counts the jobs of the caller's collections.
	Jobs JobCounts `json:"jobs"`
	// SearchCache counts the searches answered from the owner's ranking
	// cache (hits) and those ranked afresh (misses) since it started;
	// hits + misses is the number of searches it ranked. They count every
	// caller's searches, so only a caller with the manage grant on every
	// collection gets them; for any other it is absent.
	SearchCache *CacheCounts `json:"search_cache,omitempty"`
	// Watch says how the caller's sources are watched and which have
	// changes waiting for a sync (docs/ingest.md, "Watching").
	Watch *WatchStatus `json:"watch,omitempty"`
	// Settings says when tychora.json was last reloaded and which of its
	// changes wait for a restart (a manager of every collection only).
	Settings *SettingsStatus `json:"settings,omitempty"`
}

// SettingsStatus is the settings part of status.
type SettingsStatus struct {
	// ReloadedAt is when the owner last applied a change of tychora.json
	// (null: never since it started).
	ReloadedAt *time.Time `json:"reloaded_at"`
	// RestartNeeded names the changed keys that apply only after a
	// restart (listen, workers, max_request_bytes, query_history).
	RestartNeeded []string `json:"restart_needed"`
	// Error says why the last change of tychora.json was not applied.
	Error string `json:"error,omitempty"`
}

// WatchStatus is the watch part of status.
type WatchStatus struct {
	// Enabled is false when this owner watches nothing (the watch
	// setting is false, or it holds the workspace for one command).
	Enabled bool `json:"enabled"`
	// PendingChanges sums the sources' pending changes.
	PendingChanges int           `json:"pending_changes"`
	Sources        []SourceWatch `json:"sources"`
}

// SourceWatch is how one source is watched: mode watching, polling (with
// the reason) or off, and its changes waiting for a sync.
type SourceWatch struct {
	SourceID string `json:"source_id"`
	Name     string `json:"name"`
	Path     string `json:"path"`
	sources.WatchState
}

// CacheCounts counts lookups in a cache.
type CacheCounts struct {
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
}

// TokenList is the body of GET /v1/tokens.
type TokenList struct {
	Tokens []workspace.TokenRecord `json:"tokens"`
}

// CreateTokenRequest is the body of POST /v1/tokens. Collections empty or
// absent means every collection the creator may see (all, for the owner).
type CreateTokenRequest struct {
	Grant       workspace.Grant `json:"grant"`
	Collections []string        `json:"collections,omitempty"`
	Name        string          `json:"name,omitempty"`
}

// CreatedToken is the answer to POST /v1/tokens: the stored record and the
// secret, shown this once.
type CreatedToken struct {
	workspace.TokenRecord
	Token string `json:"token"`
}

// RemovedSource is the answer to DELETE /v1/sources/{id}: the source as it
// was, and the job that was cancelled with it (null when none was active).
type RemovedSource struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Path         string  `json:"path"`
	CollectionID string  `json:"collection_id"`
	Removed      bool    `json:"removed"`
	CancelledJob *string `json:"cancelled_job"`
}

// RevokedToken is the answer to DELETE /v1/tokens/{id}.
type RevokedToken struct {
	ID      string `json:"id"`
	Revoked bool   `json:"revoked"`
}

// ErrorBody is the wire form of every failure: {"error":{"code","message"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code    workspace.Code `json:"code"`
	Message string         `json:"message"`
}

// NewErrorBody converts err into its sanitized wire form.
func NewErrorBody(err error) ErrorBody {
	p := workspace.Public(err)
	return ErrorBody{Error: ErrorDetail{Code: p.Code, Message: p.Message}}
}
