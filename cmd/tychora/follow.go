package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	"github.com/tychora/tychora/jobs"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

// How add and sync follow a durable job whose owner goes away (a restart,
// a takeover, a sibling command that held the workspace and ended): they
// look for the next owner through endpoint.json with a growing pause, and
// when none has come after takeoverAfter they take the workspace
// themselves and run the queue, so the job still ends. They give up only
// when the workspace stays held by a process that does not answer for
// followGiveUp.
const (
	takeoverAfter   = 5 * time.Second
	followGiveUp    = 30 * time.Second
	reconnectPause  = 100 * time.Millisecond
	reconnectMax    = time.Second
	followPollEvery = 100 * time.Millisecond
)

// runJob submits req (an add or a sync) and follows the job it names.
// A submission the owner never answered (it went away in between) is sent
// again to the next owner: an add of the same path and a sync of a source
// with a job queued or running answer with the same job.
func runJob(c *cli.Context, e *env, req interfaces.AddSourcesRequest) error {
	dir, err := existingWorkspace(c)
	if err != nil {
		return err
	}
	return retryLost(c, func() error {
		return withService(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
			res, err := svc.AddSources(ctx, req)
			if err != nil {
				if !inProcess && httpapi.IsUnreachable(err) {
					return &ownerLost{err}
				}
				return err
			}
			f := &follower{c: c, e: e, dir: dir, svc: svc, inProcess: inProcess}
			return f.follow(ctx, res.Job)
		})
	})
}

// follower follows one job through whichever owner holds the workspace.
type follower struct {
	c   *cli.Context
	e   *env
	dir string
	svc interfaces.Service
	// inProcess: svc is this process's own owner (the one withService
	// opened, or own).
	inProcess bool
	own       *tyruntime.Owner // the owner this process became while following
}

// follow prints a job, first waiting for it to end when --wait is set or
// the job runs in this process. The job id goes to stderr as soon as the
// job is followed. Ctrl-C stops following; a job run in this process is
// then checkpointed and resumes at the next start, one in the running
// owner goes on there. A job that ends failed or cancelled is exit
// status 1.
func (f *follower) follow(ctx context.Context, j jobs.Job) (err error) {
	defer func() {
		if f.own != nil {
			err = errors.Join(err, f.own.Close(context.WithoutCancel(ctx)))
		}
	}()
	c, e := f.c, f.e
	asJSON := c.Bool("json")
	if (f.inProcess || c.Bool("wait")) && !j.Final() {
		fmt.Fprintf(e.stderr, "tychora: job %s %s\n", j.ID, j.State)
		sctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		bar := newProgress(e, asJSON)
		t := time.NewTicker(followPollEvery)
		defer t.Stop()
	loop:
		for {
			select {
			case <-sctx.Done():
				bar.finish()
				fmt.Fprintln(e.stderr, f.interruptNote(ctx, j))
				return withExit(exitFailure, errSilent)
			case <-t.C:
			}
			res, err := f.svc.GetJob(f.callContext(ctx), j.ID)
			if err != nil && !f.inProcess && ownerGone(err) {
				bar.finish()
				err = f.reconnect(sctx, j)
				if err == nil {
					continue
				}
				if sctx.Err() != nil && ctx.Err() == nil {
					fmt.Fprintln(e.stderr, f.interruptNote(ctx, j))
					return withExit(exitFailure, errSilent)
				}
			}
			if err != nil {
				bar.finish()
				return err
			}
			j = res.Job
			bar.update(j)
			if j.Final() {
				break loop
			}
		}
		bar.finish()
	}
	changed := j.Progress.Indexed > 0 || j.Progress.Deleted > 0
	if l, ok := f.svc.(*tyruntime.Local); ok && f.inProcess && j.State == jobs.StateSucceeded && changed {
		// This process is the owner and changed the index: it builds the
		// search's file index now and saves it, so that the next command's
		// search reads it (seconds over a large workspace; nothing over a
		// small one). Ctrl-C skips it; the next search builds it then.
		pctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		quiet := slowNote(e.stderr, !asJSON && isTerminal(e.stderr), slowSearchAfter,
			"tychora: preparing the search index for the next search…")
		_ = l.PrepareSearch(pctx)
		quiet()
		stop()
	}
	if asJSON {
		if err := printJSON(e.stdout, interfaces.JobResult{Job: j}); err != nil {
			return err
		}
	} else {
		printJob(e, j)
	}
	if j.State == jobs.StateFailed {
		if j.Error != nil {
			return withExit(exitFailure, &workspace.Error{Code: j.Error.Code, Message: j.Error.Message})
		}
		return withExit(exitFailure, workspace.Errorf(workspace.CodeInternal, "job failed"))
	}
	if j.State == jobs.StateCancelled {
		// Not a success; the job printed above says what happened.
		return withExit(exitFailure, errSilent)
	}
	return nil
}

// callContext is ctx with the principal the in-process Service needs (an
// owner taken over while following; withService's own ctx has it already).
func (f *follower) callContext(ctx context.Context) context.Context {
	if f.own != nil {
		return tyruntime.OwnerContext(ctx)
	}
	return ctx
}

// ownerGone reports whether err means the owner followed is no longer
// there to answer: no answer at all, its token refused (another owner now
// holds the port), or UNAVAILABLE (it is stopping).
func ownerGone(err error) bool {
	return httpapi.IsUnreachable(err) || workspace.ErrorCode(err) == workspace.CodeUnavailable
}

// reconnect finds the owner after the one that went away, following the
// job j: the next owner endpoint.json names, or, when none has come after
// takeoverAfter, this process, which takes the workspace and runs the
// queue. The job stays the same durable job; only the owner changes.
func (f *follower) reconnect(ctx context.Context, j jobs.Job) error {
	fmt.Fprintf(f.e.stderr, "tychora: the owner went away; job %s is kept in the queue, looking for the next owner\n", j.ID)
	start := time.Now()
	pause := reconnectPause
	for {
		client, _, err := tyruntime.ConnectLocal(ctx, f.dir)
		if err == nil {
			f.svc = client
			fmt.Fprintf(f.e.stderr, "tychora: following job %s through the owner at %s\n", j.ID, client.BaseURL())
			return nil
		}
		if !errors.Is(err, tyruntime.ErrNoOwner) {
			return err
		}
		if time.Since(start) >= takeoverAfter {
			// It holds the workspace for this job only: no watches.
			own, err := tyruntime.Start(ctx, tyruntime.Options{Dir: f.dir, Logger: quietLogger(f.c, f.e), NoWatch: true})
			if err == nil {
				f.own, f.svc, f.inProcess = own, own.Service(), true
				fmt.Fprintf(f.e.stderr, "tychora: no owner came back; job %s runs in this process\n", j.ID)
				return nil
			}
			if !tyruntime.IsOwnerRunning(err) {
				return err
			}
			if time.Since(start) >= followGiveUp {
				return workspace.Wrap(workspace.CodeUnavailable, err, fmt.Sprintf(
					"lost the owner while following job %s and none answered for %s; the job resumes when an owner runs (tychora jobs get %s)",
					j.ID, followGiveUp, j.ID))
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, reconnectMax)
	}
}

// interruptNote says, after Ctrl-C, where the job j (last seen state) is
// left: asked again of the owner, since it may have moved on.
func (f *follower) interruptNote(ctx context.Context, j jobs.Job) string {
	if f.inProcess {
		// Closing this process's owner checkpoints a running job back to
		// the queue.
		return fmt.Sprintf("tychora: stopped job %s (state %s); it goes back to the queue and resumes when an owner next starts", j.ID, j.State)
	}
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if res, err := f.svc.GetJob(qctx, j.ID); err == nil {
		j = res.Job
	}
	if j.Final() {
		return fmt.Sprintf("tychora: stopped following job %s; it has ended (state %s)", j.ID, j.State)
	}
	return fmt.Sprintf("tychora: stopped following job %s; the job goes on in the owner (state %s)", j.ID, j.State)
}
