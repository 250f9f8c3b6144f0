package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/tychora/tychora/workspace"
)

// Stop asks the owner of the workspace at dir to stop, from any other
// process, and waits (up to wait) until it has: it proves the owner first
// (ConnectLocal), then sends it SIGTERM, which runs the ordered shutdown of
// DESIGN §9 (endpoint.json marked stopping, requests drained, running jobs
// checkpointed back to the queue, storage closed, endpoint.json removed).
// No owner is ErrNoOwner. It returns the endpoint of the owner it stopped.
func Stop(ctx context.Context, dir string, wait time.Duration) (Endpoint, error) {
	_, ep, err := ConnectLocal(ctx, dir)
	if err != nil {
		return Endpoint{}, err
	}
	if ep.PID == os.Getpid() {
		return Endpoint{}, workspace.Errorf(workspace.CodeInvalidArgument, "this process is the owner")
	}
	if err := syscall.Kill(ep.PID, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return ep, nil // gone already
		}
		return Endpoint{}, workspace.Wrap(workspace.CodeUnavailable, err, fmt.Sprintf("cannot signal the owner (pid %d)", ep.PID))
	}
	l := workspace.NewLayout(dir)
	deadline := time.Now().Add(wait)
	for {
		cur, err := ReadEndpoint(l)
		gone := !pidAlive(ep.PID) || (err != nil && errors.Is(err, os.ErrNotExist)) || (err == nil && cur.PID != ep.PID)
		if gone {
			return ep, nil
		}
		if time.Now().After(deadline) {
			return ep, workspace.Errorf(workspace.CodeUnavailable, "the owner (pid %d) is still stopping after %s", ep.PID, wait)
		}
		select {
		case <-ctx.Done():
			return ep, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
