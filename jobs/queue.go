package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tychora/tychora/workspace"
)

// Runner does the work of one job. It reports progress through report
// (cheap to call often), returns promptly when ctx is cancelled, and must
// be safe to run again after a crash: a job interrupted at any point is run
// once more from the start.
type Runner interface {
	Run(ctx context.Context, job Job, report func(Progress)) error
}

// Options configure a Queue; zero values work.
type Options struct {
	// Workers run jobs concurrently (default 2).
	Workers int
	// Logger receives job failures; nil is silent.
	Logger *slog.Logger
	// ProgressEvery bounds how often progress is written (default 200ms).
	ProgressEvery time.Duration
}

// Queue is the durable job queue. Jobs live in SQLite; workers claim them
// in a transaction; a job running when the process died is queued again
// when the next Queue opens.
type Queue struct {
	db     *workspace.DB
	runner Runner
	opts   Options
	log    *slog.Logger

	wake   chan struct{}
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	active map[string]*activeJob // running in this process, by id
	closed bool
}

type activeJob struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// errUserCancel and errShutdown are the causes a running job's context is
// cancelled with.
var (
	errUserCancel = errors.New("cancelled by request")
	errShutdown   = errors.New("owner shutting down")
)

// Open returns the queue over db. Jobs left running by a process that died
// are queued again (they resume when Start runs the workers).
func Open(ctx context.Context, db *workspace.DB, runner Runner, o Options) (*Queue, error) {
	if o.Workers <= 0 {
		o.Workers = workspace.DefaultWorkers
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 200 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// Resume: whatever was running when the last owner died runs again.
	// A cancel that was asked for but not acknowledged becomes final.
	now := stamp(time.Now())
	if _, err := db.W.ExecContext(ctx, `UPDATE jobs SET state = 'cancelled', finished_at = ?
		WHERE state IN ('queued', 'running') AND cancel_requested = 1`, now); err != nil {
		return nil, fmt.Errorf("resume jobs: %w", err)
	}
	if _, err := db.W.ExecContext(ctx, `UPDATE jobs SET state = 'queued', resumes = resumes + 1
		WHERE state = 'running'`); err != nil {
		return nil, fmt.Errorf("resume jobs: %w", err)
	}
	qctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	return &Queue{db: db, runner: runner, opts: o, log: o.Logger, wake: make(chan struct{}, 1),
		ctx: qctx, stop: stop, active: map[string]*activeJob{}}, nil
}

// Start runs the workers. Indexing never happens on the caller's path.
func (q *Queue) Start() {
	for i := 0; i < q.opts.Workers; i++ {
		q.wg.Add(1)
		go q.worker()
	}
	q.poke()
}

func (q *Queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// recheckEvery is the safety net of idle workers: how often they look
// for a queued job that no wake-up announced (a claim that failed, say).
// The look is a read; only a queued job makes it a claim.
const recheckEvery = time.Minute

// worker claims and runs jobs. Every enqueue and retry wakes a worker;
// between them an idle worker sleeps, with no timer shorter than
// recheckEvery, so that an idle owner costs next to no CPU.
func (q *Queue) worker() {
	defer q.wg.Done()
	t := time.NewTimer(recheckEvery)
	defer t.Stop()
	claim := true
	for {
		if claim {
			job, ok, err := q.claim()
			if err != nil && q.ctx.Err() == nil {
				q.log.Error("claim job", workspace.LogErr, err)
			}
			if ok {
				q.poke() // more may be queued: another worker looks
				q.runJob(job)
				q.poke() // another worker may have slept through a wake
				continue
			}
		}
		t.Reset(recheckEvery)
		select {
		case <-q.ctx.Done():
			return
		case <-q.wake:
			claim = true
		case <-t.C:
			claim = q.anyQueued()
		}
	}
}

// anyQueued reports whether a job is queued, with a read.
func (q *Queue) anyQueued() bool {
	var n int
	err := q.db.R.QueryRowContext(q.ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE state = 'queued')`).Scan(&n)
	return err != nil || n == 1 // in doubt, try to claim
}

// claim moves the oldest queued job to running in one transaction.
func (q *Queue) claim() (Job, bool, error) {
	if q.ctx.Err() != nil {
		return Job{}, false, nil
	}
	row := q.db.W.QueryRowContext(q.ctx, `UPDATE jobs SET state = 'running', started_at = ?
		WHERE seq = (SELECT seq FROM jobs WHERE state = 'queued' ORDER BY seq LIMIT 1)
		RETURNING `+jobColumns, stamp(time.Now()))
	j, err := scanJob(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, err
	}
	return j, true, nil
}

func (q *Queue) runJob(j Job) {
	ctx, cancel := context.WithCancelCause(q.ctx)
	aj := &activeJob{cancel: cancel, done: make(chan struct{})}
	q.mu.Lock()
	q.active[j.ID] = aj
	q.mu.Unlock()
	// A cancel that raced the claim (the job was queued when asked) is
	// honoured before any work starts.
	if q.cancelRequested(ctx, j.ID) {
		cancel(errUserCancel)
	}
	defer func() {
		q.mu.Lock()
		delete(q.active, j.ID)
		q.mu.Unlock()
		close(aj.done)
		cancel(nil)
	}()

	var (
		pmu      sync.Mutex
		last     Progress
		lastSave time.Time
	)
	report := func(p Progress) {
		pmu.Lock()
		last = p
		due := time.Since(lastSave) >= q.opts.ProgressEvery
		if due {
			lastSave = time.Now()
		}
		pmu.Unlock()
		if due {
			q.saveProgress(j.ID, p)
		}
	}
	err := q.runner.Run(ctx, j, report)
	pmu.Lock()
	p := last
	pmu.Unlock()

	cause := context.Cause(ctx)
	final := context.WithoutCancel(q.ctx)
	switch {
	case err == nil:
		q.finish(final, j.ID, StateSucceeded, p, nil)
	case errors.Is(cause, errShutdown) || (q.ctx.Err() != nil && !errors.Is(cause, errUserCancel)):
		// Checkpoint: back to the queue, to resume at the next start.
		if _, e := q.db.W.ExecContext(final, `UPDATE jobs SET state = 'queued', `+progressSet+` WHERE id = ?`,
			p.FilesSeen, p.Indexed, p.Unchanged, p.Skipped, p.Bytes, p.Deleted, j.ID); e != nil {
			q.log.Error("checkpoint job", workspace.LogJobID, j.ID, workspace.LogErr, e)
		}
	case errors.Is(cause, errUserCancel) || q.cancelRequested(final, j.ID):
		q.finish(final, j.ID, StateCancelled, p, nil)
	default:
		pub := workspace.Public(err)
		if pub.Code == workspace.CodeInternal {
			q.log.Error("job failed", workspace.LogJobID, j.ID, workspace.LogErr, err)
		}
		q.finish(final, j.ID, StateFailed, p, &JobError{Code: pub.Code, Message: pub.Message})
	}
}

const progressSet = `files_seen = ?, indexed = ?, unchanged = ?, skipped = ?, bytes = ?, deleted = ?`

func (q *Queue) saveProgress(id string, p Progress) {
	if _, err := q.db.W.ExecContext(context.WithoutCancel(q.ctx), `UPDATE jobs SET `+progressSet+` WHERE id = ? AND state = 'running'`,
		p.FilesSeen, p.Indexed, p.Unchanged, p.Skipped, p.Bytes, p.Deleted, id); err != nil {
		q.log.Warn("save progress", workspace.LogJobID, id, workspace.LogErr, err)
	}
}

func (q *Queue) cancelRequested(ctx context.Context, id string) bool {
	var c int
	_ = q.db.W.QueryRowContext(ctx, `SELECT cancel_requested FROM jobs WHERE id = ?`, id).Scan(&c)
	return c == 1
}

func (q *Queue) finish(ctx context.Context, id, state string, p Progress, je *JobError) {
	var code, msg any
	if je != nil {
		code, msg = string(je.Code), je.Message
	}
	if _, err := q.db.W.ExecContext(ctx, `UPDATE jobs SET state = ?, finished_at = ?, error_code = ?, error_message = ?, `+progressSet+` WHERE id = ?`,
		state, stamp(time.Now()), code, msg, p.FilesSeen, p.Indexed, p.Unchanged, p.Skipped, p.Bytes, p.Deleted, id); err != nil {
		q.log.Error("finish job", workspace.LogJobID, id, workspace.LogErr, err)
	}
}

// Enqueue creates a job for sourceID, or returns the source's active
// (queued or running) job with existing = true: a sync asked for while one
// runs gets the running job's handle. The job syncs the whole source.
func (q *Queue) Enqueue(ctx context.Context, kind, sourceID, collection, principal string) (Job, bool, error) {
	return q.EnqueuePaths(ctx, kind, sourceID, collection, principal, nil)
}

// MaxPaths is the most paths a path-limited sync job names; a job that
// would name more syncs the whole source.
const MaxPaths = 1000

// EnqueuePaths is Enqueue for a sync that needs to look only at paths
// (relative to the source root, slash-separated; nil: the whole source).
// A queued job of the source takes the request in: it looks at the union
// of the paths, or at the whole source when either request asks for it.
// A running job is returned as it is.
func (q *Queue) EnqueuePaths(ctx context.Context, kind, sourceID, collection, principal string, paths []string) (Job, bool, error) {
	if kind != KindAdd && kind != KindSync {
		return Job{}, false, workspace.Errorf(workspace.CodeInvalidArgument, "job kind %q", kind)
	}
	if q.isClosed() {
		return Job{}, false, workspace.Errorf(workspace.CodeUnavailable, "the owner is shutting down")
	}
	if kind != KindSync || len(paths) > MaxPaths {
		paths = nil
	}
	j, inserted, err := q.insertOrActive(ctx, kind, sourceID, collection, principal, paths)
	if err != nil {
		return Job{}, false, err
	}
	if inserted {
		q.poke()
		return j, false, nil
	}
	if j.State == StateQueued && j.limited {
		if j, err = q.widen(ctx, j, paths); err != nil {
			return Job{}, false, err
		}
	}
	return j, true, nil
}

// insertOrActive inserts a queued job, or yields to the source's active
// job and reads it, in one write transaction: the active job cannot end
// between the insert that yields to it and its read.
func (q *Queue) insertOrActive(ctx context.Context, kind, sourceID, collection, principal string, paths []string) (Job, bool, error) {
	tx, err := q.db.W.BeginTx(ctx, nil)
	if err != nil {
		return Job{}, false, fmt.Errorf("enqueue: %w", err)
	}
	defer tx.Rollback()
	row := tx.QueryRowContext(ctx, `INSERT INTO jobs(id, kind, state, source_id, collection_id, principal, created_at, paths)
		VALUES(?, ?, 'queued', ?, ?, ?, ?, ?)
		ON CONFLICT(source_id) WHERE state IN ('queued', 'running') AND selection_id IS NULL DO NOTHING
		RETURNING `+jobColumns, uuid.NewString(), kind, sourceID, collection, principal, stamp(time.Now()), encodePaths(paths))
	j, err := scanJob(row)
	inserted := err == nil
	if errors.Is(err, sql.ErrNoRows) {
		row = tx.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE source_id = ? AND state IN ('queued', 'running') AND selection_id IS NULL`, sourceID)
		if j, err = scanJob(row); err != nil {
			return Job{}, false, fmt.Errorf("active job: %w", err)
		}
	} else if err != nil {
		return Job{}, false, fmt.Errorf("enqueue: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Job{}, false, fmt.Errorf("enqueue: %w", err)
	}
	return j, inserted, nil
}

// widen makes a queued path-limited job j also cover paths (nil: the
// whole source). A job claimed meanwhile is returned as it is now.
func (q *Queue) widen(ctx context.Context, j Job, paths []string) (Job, error) {
	var merged []string
	if paths != nil {
		set := make(map[string]bool, len(j.paths)+len(paths))
		for _, p := range j.paths {
			set[p] = true
		}
		grew := false
		for _, p := range paths {
			if !set[p] {
				set[p] = true
				grew = true
			}
		}
		if !grew {
			return j, nil
		}
		if len(set) <= MaxPaths {
			merged = make([]string, 0, len(set))
			for p := range set {
				merged = append(merged, p)
			}
			slices.Sort(merged)
		}
	}
	row := q.db.W.QueryRowContext(ctx, `UPDATE jobs SET paths = ? WHERE id = ? AND state = 'queued' RETURNING `+jobColumns,
		encodePaths(merged), j.ID)
	got, err := scanJob(row)
	if errors.Is(err, sql.ErrNoRows) {
		// Claimed (or cancelled) since it was read.
		got, err = scanJob(q.db.W.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, j.ID))
	}
	if err != nil {
		return Job{}, fmt.Errorf("widen job: %w", err)
	}
	return got, nil
}

// encodePaths is the paths column: a JSON array, or NULL for the whole
// source.
func encodePaths(paths []string) any {
	if paths == nil {
		return nil
	}
	b, _ := json.Marshal(paths)
	return string(b)
}

// Get returns the job with id if its collection is visible to p, else
// NOT_FOUND.
func (q *Queue) Get(ctx context.Context, p workspace.Principal, id string) (Job, error) {
	j, err := scanJob(q.db.R.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !p.CanSee(j.CollectionID)) {
		return Job{}, workspace.Errorf(workspace.CodeNotFound, "no job with that id")
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job: %w", err)
	}
	return j, nil
}

// ListOptions select jobs to list.
type ListOptions struct {
	State  string // "" for all
	After  int64  // seq to continue after (from a cursor); 0 from the start
	Limit  int
	Source string // "" for all
}

// List returns p's visible jobs newest first, and the seq to continue
// after (0 when there are no more).
func (q *Queue) List(ctx context.Context, p workspace.Principal, o ListOptions) ([]Job, int64, error) {
	var (
		where []string
		args  []any
	)
	if o.State != "" {
		where = append(where, "state = ?")
		args = append(args, o.State)
	}
	if o.Source != "" {
		where = append(where, "source_id = ?")
		args = append(args, o.Source)
	}
	if !p.AllCollections() {
		if len(p.Collections) == 0 {
			return []Job{}, 0, nil
		}
		where = append(where, "collection_id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(p.Collections)), ",")+")")
		for _, c := range p.Collections {
			args = append(args, c)
		}
	}
	if o.After > 0 {
		where = append(where, "seq < ?")
		args = append(args, o.After)
	}
	query := `SELECT ` + jobColumns + ` FROM jobs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq DESC LIMIT ?"
	args = append(args, o.Limit+1)
	rows, err := q.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	out := []Job{}
	var seqs []int64
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, j)
		seqs = append(seqs, j.seq)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	var next int64
	if len(out) > o.Limit {
		out = out[:o.Limit]
		next = seqs[o.Limit-1]
	}
	return out, next, nil
}

// cancelWait bounds how long Cancel waits for a running job to stop.
const cancelWait = 5 * time.Second

// Cancel stops a queued job at once and asks a running one to stop,
// waiting (boundedly) until it has. A job in a final state is CONFLICT.
func (q *Queue) Cancel(ctx context.Context, p workspace.Principal, id string) (Job, error) {
	j, err := q.Get(ctx, p, id)
	if err != nil {
		return Job{}, err
	}
	if j.Final() {
		return Job{}, workspace.Errorf(workspace.CodeConflict, "job is %s: only queued or running jobs can be cancelled", j.State)
	}
	// A job running here is told before anything is written: its apply
	// transaction holds the one writer connection, and a write would
	// wait for it to commit.
	q.mu.Lock()
	aj := q.active[id]
	q.mu.Unlock()
	if aj != nil {
		aj.cancel(errUserCancel)
	}
	now := stamp(time.Now())
	// A queued job is cancelled in place; a running one is flagged.
	res, err := q.db.W.ExecContext(ctx, `UPDATE jobs SET state = 'cancelled', finished_at = ?, cancel_requested = 1
		WHERE id = ? AND state = 'queued'`, now, id)
	if err != nil {
		return Job{}, fmt.Errorf("cancel job: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := q.db.W.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'`, id); err != nil {
			return Job{}, fmt.Errorf("cancel job: %w", err)
		}
		if aj == nil {
			// Claimed since it was looked up: a worker started it after
			// reading no flag. Tell it now.
			q.mu.Lock()
			aj = q.active[id]
			q.mu.Unlock()
			if aj != nil {
				aj.cancel(errUserCancel)
			}
		}
		if aj != nil {
			select {
			case <-aj.done:
			case <-time.After(cancelWait):
			case <-ctx.Done():
			}
		}
	}
	got, err := q.Get(ctx, p, id)
	if err == nil && got.Final() && got.State != StateCancelled {
		// Its revision committed before the cancel reached it.
		return Job{}, workspace.Errorf(workspace.CodeConflict, "job %s before the cancel reached it", got.State)
	}
	return got, err
}

// Retry queues a failed or cancelled job again under the same id with
// attempt + 1. Any other state is CONFLICT, as is a source that has
// another active job. A retried sync looks at the whole source, even if
// the job named paths.
func (q *Queue) Retry(ctx context.Context, p workspace.Principal, id string) (Job, error) {
	j, err := q.Get(ctx, p, id)
	if err != nil {
		return Job{}, err
	}
	if j.State != StateFailed && j.State != StateCancelled {
		return Job{}, workspace.Errorf(workspace.CodeConflict, "job is %s: only failed or cancelled jobs can be retried", j.State)
	}
	res, err := q.db.W.ExecContext(ctx, `UPDATE jobs SET state = 'queued', attempt = attempt + 1, cancel_requested = 0,
		error_code = NULL, error_message = NULL, started_at = NULL, finished_at = NULL, paths = NULL,
		files_seen = 0, indexed = 0, unchanged = 0, skipped = 0, bytes = 0, deleted = 0
		WHERE id = ? AND state IN ('failed', 'cancelled')`, id)
	if err != nil {
		if isUniqueViolation(err) {
			return Job{}, workspace.Errorf(workspace.CodeConflict, "the source has another queued or running job")
		}
		return Job{}, fmt.Errorf("retry job: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Job{}, workspace.Errorf(workspace.CodeConflict, "job changed state: try again")
	}
	q.poke()
	return q.Get(ctx, p, id)
}

func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// Counts returns how many jobs of the collections p sees are queued and
// running.
func (q *Queue) Counts(ctx context.Context, p workspace.Principal) (queued, running int, err error) {
	query := `SELECT COALESCE(SUM(state = 'queued'), 0), COALESCE(SUM(state = 'running'), 0)
		FROM jobs WHERE state IN ('queued', 'running')`
	var args []any
	if !p.AllCollections() {
		if len(p.Collections) == 0 {
			return 0, 0, nil
		}
		query += " AND collection_id IN (" + strings.TrimSuffix(strings.Repeat("?,", len(p.Collections)), ",") + ")"
		for _, c := range p.Collections {
			args = append(args, c)
		}
	}
	err = q.db.R.QueryRowContext(ctx, query, args...).Scan(&queued, &running)
	return
}

// Wait blocks until job id is final or ctx ends, polling the database.
func (q *Queue) Wait(ctx context.Context, p workspace.Principal, id string, onProgress func(Job)) (Job, error) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		j, err := q.Get(ctx, p, id)
		if err != nil {
			return Job{}, err
		}
		if onProgress != nil {
			onProgress(j)
		}
		if j.Final() {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-t.C:
		}
	}
}

func (q *Queue) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// Close stops claiming, checkpoints running jobs (they go back to the
// queue and resume at the next start) and waits for the workers.
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	for _, aj := range q.active {
		aj.cancel(errShutdown)
	}
	q.mu.Unlock()
	q.stop()
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("jobs: workers did not stop: %w", ctx.Err())
	}
}
