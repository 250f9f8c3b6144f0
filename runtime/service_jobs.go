package runtime

import (
	"context"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// AddSources registers a source and queues its first sync (add), or queues
// a sync of a registered one. Path-policy failures (OUT_OF_ROOTS,
// NOT_FOUND, INVALID_ARGUMENT) are answered at once and create no job. A
// source with a queued or running job answers with that job.
func (s *Local) AddSources(ctx context.Context, req interfaces.AddSourcesRequest) (interfaces.JobResult, error) {
	p, err := caller(ctx, interfaces.ToolGrant(interfaces.ToolAddSources))
	if err != nil {
		return interfaces.JobResult{}, err
	}
	ctx = carryOut(ctx)
	switch req.Action {
	case interfaces.SourceActionAdd:
		if req.Source == nil || req.SourceID != "" {
			return interfaces.JobResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "action add takes source (and no source_id)")
		}
		in := *req.Source
		if in.IsSelection() {
			return s.addSelection(ctx, p, in)
		}
		col, err := p.ResolveCollection(in.CollectionID)
		if err != nil {
			return interfaces.JobResult{}, err
		}
		if !s.owner.hasCollection(col) {
			return interfaces.JobResult{}, workspace.Errorf(workspace.CodeNotFound, "no collection %q", col)
		}
		in.CollectionID = col
		src, _, err := s.owner.idx().Add(ctx, in)
		if err != nil {
			return interfaces.JobResult{}, err
		}
		j, _, err := s.owner.queue.Enqueue(ctx, jobs.KindAdd, src.ID, src.CollectionID, p.ID)
		if err != nil {
			return interfaces.JobResult{}, err
		}
		s.owner.startJobs()
		return interfaces.JobResult{Job: j}, nil
	case interfaces.SourceActionSync:
		if req.SourceID == "" || req.Source != nil {
			return interfaces.JobResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "action sync takes source_id (and no source)")
		}
		src, err := s.visibleSource(ctx, p, req.SourceID)
		if err != nil {
			return interfaces.JobResult{}, err
		}
		j, _, err := s.owner.queue.Enqueue(ctx, jobs.KindSync, src.ID, src.CollectionID, p.ID)
		if err != nil {
			return interfaces.JobResult{}, err
		}
		s.owner.startJobs()
		return interfaces.JobResult{Job: j}, nil
	default:
		return interfaces.JobResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "action %q: use add or sync", req.Action)
	}
}

// visibleSource returns the source if the caller may see it; NOT_FOUND
// otherwise, exactly as for a source that does not exist.
func (s *Local) visibleSource(ctx context.Context, p workspace.Principal, id string) (sources.Source, error) {
	src, err := sources.GetSource(ctx, s.owner.db, id)
	if workspace.ErrorCode(err) == workspace.CodeNotFound || (err == nil && !p.CanSee(src.CollectionID)) {
		return sources.Source{}, workspace.Errorf(workspace.CodeNotFound, "no source with that id")
	}
	return src, err
}

const (
	defaultJobLimit = 20
	maxJobLimit     = 100
)

type jobCursor struct {
	After int64 `json:"a"`
}

// ManageJob lists, gets, cancels or retries the caller's collections' jobs.
func (s *Local) ManageJob(ctx context.Context, req interfaces.ManageJobRequest) (interfaces.ManageJobResult, error) {
	p, err := workspace.CallerFrom(ctx)
	if err != nil {
		return interfaces.ManageJobResult{}, err
	}
	q := s.owner.queue
	one := func(j jobs.Job, err error) (interfaces.ManageJobResult, error) {
		if err != nil {
			return interfaces.ManageJobResult{}, err
		}
		return interfaces.ManageJobResult{Job: &j}, nil
	}
	if req.Action != interfaces.JobActionList {
		if req.JobID == "" {
			if req.Action == interfaces.JobActionGet || req.Action == interfaces.JobActionCancel || req.Action == interfaces.JobActionRetry {
				return interfaces.ManageJobResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "action %s needs job_id", req.Action)
			}
		} else if req.State != "" || req.Cursor != "" || req.Limit != 0 {
			return interfaces.ManageJobResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "state, cursor and limit go with action list only")
		}
	}
	switch req.Action {
	case interfaces.JobActionList:
		if err := p.Require(workspace.GrantRead); err != nil {
			return interfaces.ManageJobResult{}, err
		}
		if req.JobID != "" {
			return interfaces.ManageJobResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "action list takes no job_id")
		}
		if req.State != "" && !jobs.ValidState(req.State) {
			return interfaces.ManageJobResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "state %q: use queued, running, succeeded, failed or cancelled", req.State)
		}
		limit, err := pageLimit(req.Limit, defaultJobLimit, maxJobLimit)
		if err != nil {
			return interfaces.ManageJobResult{}, err
		}
		scope := workspace.ScopeKey(p) + "|" + req.State
		var cur jobCursor
		if req.Cursor != "" {
			if err := s.owner.cursors.Open("jobs", scope, req.Cursor, &cur); err != nil {
				return interfaces.ManageJobResult{}, err
			}
		}
		list, next, err := q.List(ctx, p, jobs.ListOptions{State: req.State, After: cur.After, Limit: limit})
		if err != nil {
			return interfaces.ManageJobResult{}, err
		}
		res := interfaces.ManageJobResult{Jobs: list}
		if next > 0 {
			c, err := s.owner.cursors.Seal("jobs", scope, jobCursor{After: next})
			if err != nil {
				return interfaces.ManageJobResult{}, err
			}
			res.NextCursor = &c
		}
		return res, nil
	case interfaces.JobActionGet:
		if err := p.Require(workspace.GrantRead); err != nil {
			return interfaces.ManageJobResult{}, err
		}
		return one(q.Get(ctx, p, req.JobID))
	case interfaces.JobActionCancel:
		if err := p.Require(workspace.GrantWrite); err != nil {
			return interfaces.ManageJobResult{}, err
		}
		return one(q.Cancel(carryOut(ctx), p, req.JobID))
	case interfaces.JobActionRetry:
		if err := p.Require(workspace.GrantWrite); err != nil {
			return interfaces.ManageJobResult{}, err
		}
		j, err := q.Retry(carryOut(ctx), p, req.JobID)
		if err == nil {
			s.owner.startJobs()
		}
		return one(j, err)
	default:
		return interfaces.ManageJobResult{}, workspace.Errorf(workspace.CodeInvalidArgument, "action %q: use list, get, cancel or retry", req.Action)
	}
}

// GetJob returns one job of the caller's collections.
func (s *Local) GetJob(ctx context.Context, id string) (interfaces.JobResult, error) {
	p, err := caller(ctx, workspace.GrantRead)
	if err != nil {
		return interfaces.JobResult{}, err
	}
	j, err := s.owner.queue.Get(ctx, p, id)
	if err != nil {
		return interfaces.JobResult{}, err
	}
	return interfaces.JobResult{Job: j}, nil
}

// pageLimit applies a default and a bound to a page size.
func pageLimit(n, def, most int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0 || n > most:
		return 0, workspace.Errorf(workspace.CodeInvalidArgument, "limit must be between 1 and %d", most)
	}
	return n, nil
}

// carryOut detaches a write from its caller's cancellation: a write, once
// asked for, is carried out whole and answered. An HTTP client that
// half-closes its connection after sending the request (which cancels the
// request's context) still gets its job or token, and a caller that gives
// up never leaves a write half done nor is it told INTERNAL. Every write
// it covers is a few statements long.
func carryOut(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}
