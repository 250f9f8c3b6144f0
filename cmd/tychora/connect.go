package main

import (
	"context"
	"errors"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	tyruntime "github.com/tychora/tychora/runtime"
)

// connectWait bounds how long a command retries while another process is
// between owning the workspace and publishing its endpoint.
const connectWait = 15 * time.Second

// withService runs fn against the workspace's Service: through the running
// owner when there is one (ConnectLocal), otherwise in-process, holding the
// lock and publishing endpoint.json while fn runs (OpenLocal). inProcess
// tells fn which it got.
func withService(c *cli.Context, e *env, fn func(ctx context.Context, svc interfaces.Service, inProcess bool) error) error {
	dir, err := existingWorkspace(c)
	if err != nil {
		return err
	}
	ctx := c.Context
	deadline := time.Now().Add(connectWait)
	for {
		client, _, err := tyruntime.ConnectLocal(ctx, dir)
		if err == nil {
			return fn(ctx, client, false)
		}
		if !errors.Is(err, tyruntime.ErrNoOwner) {
			return err
		}
		own, err := tyruntime.OpenLocal(ctx, tyruntime.Options{Dir: dir, Logger: quietLogger(c, e)})
		if err == nil {
			ferr := fn(tyruntime.OwnerContext(ctx), own.Service(), true)
			cerr := own.Close(context.WithoutCancel(ctx))
			return errors.Join(ferr, cerr)
		}
		if !tyruntime.IsOwnerRunning(err) || time.Now().After(deadline) {
			return err
		}
		// Another process holds the lock but is not answering yet: it is
		// starting or stopping. Try again shortly.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// withReads is withService for a command that only reads: when the owner it
// reached goes away before answering (a sibling command that held the
// workspace ended), fn runs again against the next owner, within
// connectWait. fn must print nothing before its last call succeeds.
func withReads(c *cli.Context, e *env, fn func(ctx context.Context, svc interfaces.Service, inProcess bool) error) error {
	return retryLost(c, func() error {
		return withService(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
			err := fn(ctx, svc, inProcess)
			if err != nil && !inProcess && httpapi.IsUnreachable(err) {
				return &ownerLost{err}
			}
			return err
		})
	})
}

// ownerLost marks a call that the owner never answered: it went away
// first. The call may be sent again to the next owner.
type ownerLost struct{ err error }

func (o *ownerLost) Error() string { return o.err.Error() }
func (o *ownerLost) Unwrap() error { return o.err }

// retryLost runs attempt again, after a short pause, while it fails with
// ownerLost, within connectWait.
func retryLost(c *cli.Context, attempt func() error) error {
	deadline := time.Now().Add(connectWait)
	for {
		err := attempt()
		var lost *ownerLost
		if !errors.As(err, &lost) {
			return err
		}
		if time.Now().After(deadline) {
			return lost.err
		}
		select {
		case <-c.Context.Done():
			return c.Context.Err()
		case <-time.After(reconnectPause):
		}
	}
}
