package query

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tychora/tychora/workspace"
)

// RunHit is one hit as a run records it.
type RunHit struct {
	EvidenceID string  `json:"evidence_id"`
	Hash       string  `json:"hash"`
	Score      float64 `json:"score"`
}

// Run is a recorded search (DESIGN §7).
type Run struct {
	ID           string        `json:"id"`
	CreatedAt    time.Time     `json:"created_at"`
	Principal    string        `json:"principal"`
	RequestHash  string        `json:"request_hash"`
	Request      *QueryRequest `json:"request"` // kept only with query_history "full"
	Retained     bool          `json:"retained"`
	Render       string        `json:"render"`
	Hits         []RunHit      `json:"hits"`
	TotalMatches int           `json:"total_matches"`
	UsedTokens   int           `json:"used_tokens"`
	Truncated    bool          `json:"truncated"`
	DurationUS   int64         `json:"duration_us"`
	ReplayOf     *string       `json:"replay_of"`
	// Collections are the collections the run searched (the request's
	// collections filter, else the caller's reach); nil for all. Who may
	// see the run depends on them (canSeeRun).
	Collections []string `json:"collections"`
}

// RunCollections are the collections a search by p with request norm
// reaches: the collections filter when it names some (the engine refuses
// one outside p's reach), else p's collections; nil for all.
func RunCollections(p workspace.Principal, norm QueryRequest) []string {
	if f := norm.Filters; f != nil && len(f.Collections) > 0 {
		return slices.Clone(f.Collections)
	}
	if len(p.Collections) == 0 {
		// All, or none (a search that reached nothing): either way, seen
		// only by callers who reach every collection.
		return nil
	}
	return slices.Clone(p.Collections)
}

// RequestHash is the hex sha256 of the normalized request's JSON.
func RequestHash(req QueryRequest) string {
	b, _ := json.Marshal(req)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Recorder records runs without putting a write on the search path: runs
// queue in memory and are written in batches, one transaction each. A read
// of runs first flushes what is queued, so a run is visible as soon as its
// search has answered.
type Recorder struct {
	db       *workspace.DB
	full     bool
	log      *slog.Logger
	mu       sync.Mutex
	pending  []Run
	flushMu  sync.Mutex
	queued   chan struct{} // a run was queued into an empty queue
	kick     chan struct{} // the queue is full enough to write at once
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	// keep is how many runs the table holds at most (KeepRuns); sinceTrim
	// counts the runs written since the last trim.
	keep      int
	sinceTrim int
}

// KeepRuns is how many runs the index keeps: older ones are deleted, a
// few at a time, as new ones are written. A run takes about half a
// kilobyte (more with query_history "full"), so the table stays near
// 50 MB however long a workspace serves; replay and `runs diff` reach the
// last KeepRuns searches.
const KeepRuns = 100_000

// trimEvery is how many runs are written between two trims.
const trimEvery = 1000

// NewRecorder starts a recorder; full keeps request bodies
// (query_history "full"). Close flushes and stops it.
func NewRecorder(db *workspace.DB, full bool, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{db: db, full: full, log: log, queued: make(chan struct{}, 1), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		keep: KeepRuns, sinceTrim: trimEvery}
	go r.loop()
	return r
}

// NewRunID returns a fresh run id: "run_" and the 128 bits of a random
// UUID as 39 decimal digits. Every run id then costs the same tokens (each
// group of three digits is one token in every counter: see
// TestRunIDTokens), so the smallest answer to a request, which holds its
// run id, is the same on every call and the minimum an
// OUTPUT_BUDGET_EXCEEDED error names is one a retry can rely on. A UUID's
// hex spelling tokenizes to a varying count.
func NewRunID() string {
	u := uuid.New()
	return fmt.Sprintf("run_%039s", new(big.Int).SetBytes(u[:]).String())
}

// Record queues a run. The request body is dropped unless history is full.
func (r *Recorder) Record(run Run) {
	if !r.full {
		run.Request = nil
	}
	r.mu.Lock()
	r.pending = append(r.pending, run)
	n := len(r.pending)
	r.mu.Unlock()
	if n == 1 {
		select {
		case r.queued <- struct{}{}:
		default:
		}
	}
	if n >= 256 {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// recordEvery is how long a queued run waits for others to be written
// with it. Every write to the index makes each read connection drop its
// page cache and its mapping of the file at its next search (SQLite resets
// a reader's pager when the WAL changed): written every 100 ms, the
// resets (the unmapping, the pages read again) were about a twentieth of
// the owner's CPU in a profile under bench/load.sh, besides the kernel's
// page faults (bench/README.md, "Cheaper reranking"). Reads of runs flush
// first, so a run is found as soon as its search has answered whatever
// the interval.
const recordEvery = time.Second

// loop writes the queued runs: recordEvery after the first of a batch was
// queued, or at once when many are. With nothing queued it sleeps without
// a timer, so that an idle owner does not wake up.
func (r *Recorder) loop() {
	defer close(r.done)
	flush := func() {
		if err := r.Flush(context.Background()); err != nil {
			r.log.Error("record runs", workspace.LogErr, err)
		}
	}
	for {
		select {
		case <-r.stop:
			flush()
			return
		case <-r.queued:
		case <-r.kick:
		}
		t := time.NewTimer(recordEvery)
		select {
		case <-r.stop:
			t.Stop()
			flush()
			return
		case <-t.C:
		case <-r.kick:
			t.Stop()
		}
		flush()
	}
}

// Flush writes every queued run.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	tx, err := r.db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record runs: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO runs(id, created_at, principal, request_hash, request, render, hits,
		total_matches, used_tokens, truncated, duration_us, replay_of, collections) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("record runs: %w", err)
	}
	defer stmt.Close()
	for _, run := range batch {
		var req any
		if run.Request != nil {
			b, _ := json.Marshal(run.Request)
			req = string(b)
		}
		hits := run.Hits
		if hits == nil {
			hits = []RunHit{}
		}
		hb, _ := json.Marshal(hits)
		trunc := 0
		if run.Truncated {
			trunc = 1
		}
		var colls any
		if run.Collections != nil {
			b, _ := json.Marshal(run.Collections)
			colls = string(b)
		}
		if _, err := stmt.ExecContext(ctx, run.ID, run.CreatedAt.UTC().Format(time.RFC3339Nano), run.Principal, run.RequestHash,
			req, run.Render, string(hb), run.TotalMatches, run.UsedTokens, trunc, run.DurationUS, run.ReplayOf, colls); err != nil {
			return fmt.Errorf("record runs: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	r.sinceTrim += len(batch)
	// The first flush, and every trimEvery runs, cut the table back to
	// the newest keep runs, in a statement of its own: a trim that fails
	// (a full disk) loses no run and is tried again at the next flush.
	// The cut is found from the newest seq, a lookup at the end of the
	// table's b-tree: seq is AUTOINCREMENT and only this statement
	// deletes runs, always the oldest, so the seqs kept are consecutive.
	// (Counting keep rows down from the newest instead read the whole
	// table, about 50 ms at KeepRuns, holding the write lock.)
	if r.sinceTrim > trimEvery {
		if _, err := r.db.W.ExecContext(ctx, `DELETE FROM runs WHERE seq <= (SELECT max(seq) FROM runs) - ?`, r.keep); err != nil {
			r.log.Warn("old runs not trimmed", workspace.LogErr, err)
			return nil
		}
		r.sinceTrim = 0
	}
	return nil
}

// Close flushes and stops the recorder.
func (r *Recorder) Close() {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
}

const runColumns = `id, created_at, principal, request_hash, request, render, hits, total_matches, used_tokens, truncated, duration_us, replay_of, collections`

func scanRun(s interface{ Scan(...any) error }) (Run, error) {
	var (
		run           Run
		created, hits string
		req, replayOf sql.NullString
		colls         sql.NullString
		trunc         int
	)
	if err := s.Scan(&run.ID, &created, &run.Principal, &run.RequestHash, &req, &run.Render, &hits,
		&run.TotalMatches, &run.UsedTokens, &trunc, &run.DurationUS, &replayOf, &colls); err != nil {
		return Run{}, err
	}
	if colls.Valid {
		if err := json.Unmarshal([]byte(colls.String), &run.Collections); err != nil || len(run.Collections) == 0 {
			run.Collections = nil // unreadable or empty: as all, seen by callers of every collection only
		}
	}
	run.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	if req.Valid {
		var q QueryRequest
		if json.Unmarshal([]byte(req.String), &q) == nil {
			run.Request = &q
			run.Retained = true
		}
	}
	_ = json.Unmarshal([]byte(hits), &run.Hits)
	if run.Hits == nil {
		run.Hits = []RunHit{}
	}
	run.Truncated = trunc == 1
	if replayOf.Valid {
		run.ReplayOf = &replayOf.String
	}
	return run, nil
}

// canSeeRun: callers see their own runs, and a manage grant every
// principal's; either way only runs whose collections are all within the
// caller's reach (DESIGN §7 with §3's "callers only ever see ... their
// collections": a manager of one collection, or a token narrowed to one, sees
// no question asked of another).
func canSeeRun(p workspace.Principal, run Run) bool {
	if !p.Can(workspace.GrantManage) && run.Principal != p.ID {
		return false
	}
	if p.AllCollections() {
		return true
	}
	if run.Collections == nil {
		return false
	}
	for _, c := range run.Collections {
		if !p.CanSee(c) {
			return false
		}
	}
	return true
}

// GetRun returns a run the caller may see; NOT_FOUND otherwise.
func (r *Recorder) GetRun(ctx context.Context, p workspace.Principal, id string) (Run, error) {
	if err := r.Flush(ctx); err != nil {
		return Run{}, err
	}
	run, err := scanRun(r.db.R.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !canSeeRun(p, run)) {
		return Run{}, workspace.Errorf(workspace.CodeNotFound, "no run with that id")
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run: %w", err)
	}
	return run, nil
}

// ListRuns returns up to limit runs the caller may see, newest first,
// recorded before the run numbered before (0: from the newest), and the
// number to pass as before for the next page (0 when there is none). A
// run recorded while a caller pages does not shift the pages.
func (r *Recorder) ListRuns(ctx context.Context, p workspace.Principal, before int64, limit int) ([]Run, int64, error) {
	if err := r.Flush(ctx); err != nil {
		return nil, 0, err
	}
	q := `SELECT seq, ` + runColumns + ` FROM runs WHERE (?1 = 0 OR seq < ?1)`
	args := []any{before}
	if !p.Can(workspace.GrantManage) {
		q += ` AND principal = ?2`
		args = append(args, p.ID)
	} else {
		q += ` AND ?2 IS NULL`
		args = append(args, nil)
	}
	if !p.AllCollections() {
		b, _ := json.Marshal(p.Collections)
		q += ` AND collections IS NOT NULL AND json_valid(collections) AND json_array_length(collections) > 0 AND NOT EXISTS (
			SELECT 1 FROM json_each(runs.collections) WHERE value NOT IN (SELECT value FROM json_each(?3)))`
		args = append(args, string(b))
	}
	q += ` ORDER BY seq DESC LIMIT ?` + fmt.Sprint(len(args)+1)
	args = append(args, limit+1)
	rows, err := r.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	out := []Run{}
	var seqs []int64
	for rows.Next() {
		var seq int64
		run, err := scanRun(seqScanner{rows, &seq})
		if err != nil {
			return nil, 0, fmt.Errorf("list runs: %w", err)
		}
		if !canSeeRun(p, run) {
			// The SQL above is the filter; this is its check. Skipping the
			// row would end the pages early without a word.
			return nil, 0, workspace.Errorf(workspace.CodeInternal, "list runs: run %s passed the SQL filter but not canSeeRun", run.ID)
		}
		out = append(out, run)
		seqs = append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = seqs[limit-1]
	}
	return out, next, nil
}

// seqScanner scans a leading seq column, then the run's.
type seqScanner struct {
	rows *sql.Rows
	seq  *int64
}

func (s seqScanner) Scan(dest ...any) error {
	return s.rows.Scan(append([]any{s.seq}, dest...)...)
}

// Drift outcomes of DiffRuns, which are also the exit codes of
// `tychora runs diff`.
const (
	DiffSame      = 0 // the same hits, in the same order, with the same scores and hashes
	DiffReordered = 1 // the same set of hits, in another order or with other scores or hashes
	DiffChanged   = 2 // the sets of hit ids differ
)

// RunDiff says where two runs drift apart.
type RunDiff struct {
	A, B string `json:"-"`
	// Outcome is DiffSame, DiffReordered or DiffChanged.
	Outcome int `json:"outcome"`
	// FirstDrift is the 1-based rank where the runs first differ (id,
	// hash or score); 0 when they do not.
	FirstDrift int      `json:"first_drift"`
	Reason     string   `json:"reason"`
	OnlyInA    []string `json:"only_in_a"`
	OnlyInB    []string `json:"only_in_b"`
}

// DiffRuns compares the hit lists of two runs.
func DiffRuns(a, b Run) RunDiff {
	d := RunDiff{A: a.ID, B: b.ID, OnlyInA: []string{}, OnlyInB: []string{}}
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, h := range a.Hits {
		inA[h.EvidenceID] = true
	}
	for _, h := range b.Hits {
		inB[h.EvidenceID] = true
	}
	for _, h := range a.Hits {
		if !inB[h.EvidenceID] {
			d.OnlyInA = append(d.OnlyInA, h.EvidenceID)
		}
	}
	for _, h := range b.Hits {
		if !inA[h.EvidenceID] {
			d.OnlyInB = append(d.OnlyInB, h.EvidenceID)
		}
	}
	n := max(len(a.Hits), len(b.Hits))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(a.Hits) || i >= len(b.Hits):
			d.Reason = "one run has fewer hits"
		case a.Hits[i].EvidenceID != b.Hits[i].EvidenceID:
			d.Reason = "another hit at this rank"
		case a.Hits[i].Hash != b.Hits[i].Hash:
			d.Reason = "the hit's content changed"
		case a.Hits[i].Score != b.Hits[i].Score:
			d.Reason = "the hit's score changed"
		default:
			continue
		}
		d.FirstDrift = i + 1
		break
	}
	switch {
	case len(d.OnlyInA) > 0 || len(d.OnlyInB) > 0:
		d.Outcome = DiffChanged
	case d.FirstDrift > 0:
		d.Outcome = DiffReordered
	default:
		d.Outcome = DiffSame
	}
	return d
}
