package runtime

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/workspace"
)

// proveTimeout bounds the health call that proves an endpoint.
const proveTimeout = 2 * time.Second

// ConnectLocal returns a client for the owner of the workspace at dir, or
// ErrNoOwner. endpoint.json is never trusted as it stands: the pid must be
// alive and an authenticated /v1/health must answer with the same
// workspace_id and the same workspace directory (an endpoint.json copied
// with its workspace names the original's owner). The endpoint is returned
// with the client.
func ConnectLocal(ctx context.Context, dir string) (*httpapi.Client, Endpoint, error) {
	l := workspace.NewLayout(dir)
	ep, err := ReadEndpoint(l)
	if err != nil || ep.State != StateRunning || !pidAlive(ep.PID) || ep.Token == "" {
		return nil, Endpoint{}, ErrNoOwner
	}
	c, err := httpapi.NewClient(ep.URL, ep.Token, nil)
	if err != nil {
		return nil, Endpoint{}, ErrNoOwner
	}
	c.Instance = clientInstance()
	hctx, cancel := context.WithTimeout(ctx, proveTimeout)
	defer cancel()
	h, err := c.Health(hctx)
	if err != nil || h.WorkspaceID != ep.WorkspaceID || h.PID != ep.PID || h.Workspace != realDir(l.Dir) {
		if ctx.Err() != nil {
			return nil, Endpoint{}, ctx.Err()
		}
		return nil, Endpoint{}, ErrNoOwner
	}
	return c, ep, nil
}

// clientInstance is this process's X-Tychora-Client id: the owner shares
// its searches fairly between processes that hold the same token (every
// bridge and CLI command holds the owner token).
var clientInstance = sync.OnceValue(func() string { return uuid.NewString() })

// OpenLocal opens the workspace in-process for one command: it becomes the
// owner (lock, storage, loopback listener, endpoint.json) so that siblings
// delegate to it while it runs. The caller Closes it. Its job queue stays
// still (NoJobs) until the command, or a sibling through it, adds, syncs or
// retries a job: a command that only reads leaves the queue as it found it.
// Its search builds the file index, or reads the one an earlier owner
// saved, before it ranks (NoWarm), as a one-shot engine does, so that a
// command's answer does not depend on how fast the machine built it.
func OpenLocal(ctx context.Context, o Options) (*Owner, error) {
	o.NoJobs = true
	o.NoWatch = true
	o.NoWarm = true
	return Start(ctx, o)
}

// IsOwnerRunning reports whether err says another owner holds the
// workspace.
func IsOwnerRunning(err error) bool {
	var e *OwnerRunningError
	return errors.As(err, &e)
}
