package runtime

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/workspace"
)

// Bridge is a Service that follows the workspace's owner: it talks to the
// running owner over HTTP, and when that owner goes away it reconnects to
// the next one or takes the lock and becomes the owner itself, so that one
// agent exiting never breaks another's session. The caller's principal
// travels in ctx as for Local; over HTTP the owner token is narrowed to it
// with the scope header.
type Bridge struct {
	opts  Options
	scope workspace.Principal

	mu     sync.Mutex
	client *httpapi.Client
	own    *Owner // set when this bridge became the owner
	closed bool
}

var _ interfaces.Service = (*Bridge)(nil)

// NewBridge returns a bridge for the workspace in o.Dir, limited to scope
// (the grant of the process it serves). It connects lazily.
func NewBridge(o Options, scope workspace.Principal) *Bridge {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Bridge{opts: o, scope: scope}
}

// Attach makes b start from an owner this process already runs.
func (b *Bridge) Attach(own *Owner) {
	b.mu.Lock()
	b.own = own
	b.mu.Unlock()
}

// Owner returns the owner this bridge runs, or nil when it talks to
// another process.
func (b *Bridge) Owner() *Owner {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.own
}

// current returns the service to use now, connecting or taking over when
// there is none. stale is a client that just failed and must be replaced.
func (b *Bridge) current(ctx context.Context, stale *httpapi.Client) (interfaces.Service, *httpapi.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, nil, workspace.Errorf(workspace.CodeUnavailable, "the bridge is closed")
	}
	if b.own != nil {
		return b.own.Service(), nil, nil
	}
	if b.client != nil && b.client != stale {
		return b.client, b.client, nil
	}
	b.client = nil
	deadline := time.Now().Add(b.wait())
	for {
		c, _, err := ConnectLocal(ctx, b.opts.Dir)
		if err == nil {
			c.Scope = httpapi.FormatScope(b.scope)
			b.client = c
			return c, c, nil
		}
		if !errors.Is(err, ErrNoOwner) {
			return nil, nil, err
		}
		own, err := Start(ctx, b.opts)
		if err == nil {
			b.own = own
			if own.Created() {
				// DESIGN §2: serve says so when it creates a workspace.
				b.opts.Logger.Warn("created workspace with default settings",
					workspace.LogWorkspace, b.opts.Dir, workspace.LogIngestRoot, own.Settings().IngestRoots[0])
			}
			b.opts.Logger.Info("became the owner", workspace.LogWorkspace, b.opts.Dir)
			return own.Service(), nil, nil
		}
		if !IsOwnerRunning(err) && workspace.ErrorCode(err) != workspace.CodeInternal {
			// The workspace refused to open (a full disk, a permission):
			// its own words say why.
			return nil, nil, err
		}
		if !IsOwnerRunning(err) || time.Now().After(deadline) {
			return nil, nil, workspace.Wrap(workspace.CodeUnavailable, err, "no tychora owner could be reached or started")
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (b *Bridge) wait() time.Duration {
	if b.opts.StoppingWait > 0 {
		return b.opts.StoppingWait
	}
	return 15 * time.Second
}

// call runs fn against the current service, once more against a new one
// when the owner could not be reached.
func bridgeCall[T any](b *Bridge, ctx context.Context, fn func(interfaces.Service) (T, error)) (T, error) {
	svc, c, err := b.current(ctx, nil)
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := fn(svc)
	if c != nil && httpapi.IsUnreachable(err) {
		svc, _, err2 := b.current(ctx, c)
		if err2 != nil {
			var zero T
			return zero, err2
		}
		return fn(svc)
	}
	return out, err
}

// Close stops the owner this bridge became, if any.
func (b *Bridge) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	own := b.own
	b.mu.Unlock()
	if own != nil {
		return own.Close(ctx)
	}
	return nil
}

// Health forwards to the current owner.
func (b *Bridge) Health(ctx context.Context) (interfaces.HealthResult, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.HealthResult, error) { return s.Health(ctx) })
}

// Status forwards to the current owner.
func (b *Bridge) Status(ctx context.Context) (interfaces.StatusResult, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.StatusResult, error) { return s.Status(ctx) })
}

// ListTokens forwards to the current owner.
func (b *Bridge) ListTokens(ctx context.Context) (interfaces.TokenList, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.TokenList, error) { return s.ListTokens(ctx) })
}

// CreateToken forwards to the current owner.
func (b *Bridge) CreateToken(ctx context.Context, req interfaces.CreateTokenRequest) (interfaces.CreatedToken, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.CreatedToken, error) { return s.CreateToken(ctx, req) })
}

// RemoveSource forwards to the current owner.
func (b *Bridge) RemoveSource(ctx context.Context, id string) (interfaces.RemovedSource, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.RemovedSource, error) { return s.RemoveSource(ctx, id) })
}

// RevokeToken forwards to the current owner.
func (b *Bridge) RevokeToken(ctx context.Context, id string) error {
	_, err := bridgeCall(b, ctx, func(s interfaces.Service) (struct{}, error) { return struct{}{}, s.RevokeToken(ctx, id) })
	return err
}

// Discover forwards to the current owner.
func (b *Bridge) Discover(ctx context.Context, args interfaces.DiscoverArgs) (interfaces.DiscoverResult, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.DiscoverResult, error) { return s.Discover(ctx, args) })
}

// Search forwards to the current owner.
func (b *Bridge) Search(ctx context.Context, args interfaces.SearchArgs) (interfaces.SearchOutput, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.SearchOutput, error) { return s.Search(ctx, args) })
}

// Inspect forwards to the current owner.
func (b *Bridge) Inspect(ctx context.Context, args interfaces.InspectArgs) (interfaces.InspectResult, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.InspectResult, error) { return s.Inspect(ctx, args) })
}

// AddSources forwards to the current owner.
func (b *Bridge) AddSources(ctx context.Context, req interfaces.AddSourcesRequest) (interfaces.JobResult, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.JobResult, error) { return s.AddSources(ctx, req) })
}

// ManageJob forwards to the current owner.
func (b *Bridge) ManageJob(ctx context.Context, req interfaces.ManageJobRequest) (interfaces.ManageJobResult, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.ManageJobResult, error) { return s.ManageJob(ctx, req) })
}

// GetJob forwards to the current owner.
func (b *Bridge) GetJob(ctx context.Context, id string) (interfaces.JobResult, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.JobResult, error) { return s.GetJob(ctx, id) })
}

// Evidence forwards to the current owner.
func (b *Bridge) Evidence(ctx context.Context, id string) (interfaces.EvidenceResult, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.EvidenceResult, error) { return s.Evidence(ctx, id) })
}

// Asset forwards to the current owner.
func (b *Bridge) Asset(ctx context.Context, id string) (interfaces.Asset, error) {
	return bridgeCall(b, ctx, func(s interfaces.Service) (interfaces.Asset, error) { return s.Asset(ctx, id) })
}
