package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	httpapi "github.com/tychora/tychora/interfaces/http"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// ErrNoOwner means no owner runs for the workspace (or the one that
// endpoint.json names could not be proven).
var ErrNoOwner = errors.New("no tychora owner is running for this workspace")

// OwnerRunningError is returned when another process owns the workspace.
type OwnerRunningError struct {
	PID int
	URL string
}

func (e *OwnerRunningError) Error() string {
	if e.PID == 0 {
		return "another tychora process owns this workspace"
	}
	return fmt.Sprintf("another tychora owner runs for this workspace (pid %d, %s)", e.PID, e.URL)
}

func ownerRunning(e *OwnerRunningError) error {
	return workspace.Wrap(workspace.CodeConflict, e, e.Error())
}

// jobsStopWait bounds how long shutdown waits for running jobs to
// checkpoint (cancel is cooperative and prompt: well under a second).
const jobsStopWait = 10 * time.Second

// Options configure an owner. The zero value (with Dir set) works.
type Options struct {
	// Dir is the absolute workspace directory.
	Dir string
	// Create makes a missing workspace with default settings.
	Create bool
	// Listen overrides the listen setting (127.0.0.1 or ::1 only).
	Listen string
	// StoppingWait bounds how long a start waits for an owner in state
	// "stopping" to let go of the lock (default 15s).
	StoppingWait time.Duration
	// ShutdownWait bounds how long Close waits for requests in flight
	// (default 10s).
	ShutdownWait time.Duration
	// Logger receives the owner's logs; nil is silent.
	Logger *slog.Logger
	// NoJobs leaves the job queue's workers stopped until a job is added,
	// synced or retried through this owner: an owner opened for a command
	// that only reads (OpenLocal for `jobs list`, `search`, ...) must not
	// resume the queued and interrupted jobs only to abort them a moment
	// later when the command ends.
	NoJobs bool
	// WrapMCP, when set, wraps the Streamable HTTP MCP handler (behind
	// the token and Host checks): serve --record-http records sessions
	// with it.
	WrapMCP func(http.Handler) http.Handler
	// NoWatch leaves the sources unwatched whatever the watch setting
	// says: OpenLocal's owner lives for one command.
	NoWatch bool
	// NoWarm leaves the search's file index to the first search that
	// needs it, which builds it and waits (query.Engine.StartWarm not
	// called): OpenLocal's owner answers one command, whose search would
	// otherwise come before a large workspace's index is built behind it
	// and rank without it, better or worse by the machine's speed.
	NoWarm bool
	// WatchDebounce, WatchMaxDelay, WatchRescan and MaxWatches tune
	// watching (sources.WatchOptions: Debounce, MaxDelay, Rescan,
	// MaxWatches); zero values
	// are the defaults.
	WatchDebounce time.Duration
	WatchMaxDelay time.Duration
	WatchRescan   time.Duration
	MaxWatches    int
}

// Owner is the single process that holds a workspace: the lock, the
// database, the loopback listener and endpoint.json.
type Owner struct {
	// fg counts the searches being ranked; the syncs and the file
	// index's builds give way to them (workspace.Foreground).
	fg        workspace.Foreground
	layout    workspace.Layout
	created   bool
	db        *workspace.DB
	tokens    *workspace.Tokens
	lock      *workspace.Lock
	log       *slog.Logger
	id        string
	secret    string
	startedAt time.Time
	ln        net.Listener
	srv       *http.Server
	url       string
	svc       *Local
	serveErr  chan error
	cursors   *workspace.Cursors
	assets    *sources.Assets
	queue     *jobs.Queue
	jobsOnce  sync.Once

	discoverer *query.Discoverer
	engine     *query.Engine
	searcher   *query.Searcher[[]render.HitCost] // ranking, its cache, admission and runs
	runs       *query.Recorder
	memo       *render.Memo // token counts shared by the fits of cached rankings
	// life ends when the owner stops serving (close): work done for
	// several callers at once runs on it.
	life       context.Context
	endLife    context.CancelFunc
	inspector  *query.Inspector
	merger     *merger // merges the index while no job runs
	mcp        *mcpapi.HTTPHandler
	watcherp   atomic.Pointer[sources.Watcher] // nil when nothing is watched
	ixp        atomic.Pointer[sources.Indexer] // replaced when the settings it takes change
	conf       atomic.Pointer[workspace.Settings]
	reload     reloadState
	watchSetup sync.WaitGroup // the first watches, set up beside the start
	watchReady atomic.Bool    // the first watches are set up

	connMu   sync.Mutex
	newConns map[net.Conn]struct{} // accepted, no request read yet (see closeNewConns)

	closeOnce sync.Once
	closeErr  error
	opts      Options
}

// Start makes this process the owner of the workspace: it takes the lock
// (waiting for an owner that is stopping), opens storage, listens on
// loopback and publishes endpoint.json. Another live owner is an
// *OwnerRunningError.
func Start(ctx context.Context, o Options) (*Owner, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StoppingWait <= 0 {
		o.StoppingWait = 15 * time.Second
	}
	if o.ShutdownWait <= 0 {
		o.ShutdownWait = 10 * time.Second
	}
	l := workspace.NewLayout(o.Dir)
	own := &Owner{layout: l, log: o.Logger, opts: o, serveErr: make(chan error, 1)}

	if !l.Exists() {
		if !o.Create {
			return nil, workspace.Errorf(workspace.CodeNotFound, "no workspace at %s (run tychora init)", l.Dir)
		}
		if err := initWorkspace(l, workspace.DefaultSettings(l.Dir)); err != nil && !errors.Is(err, errExists) {
			return nil, workspace.StorageError("create the workspace", l.Dir, err)
		} else if err == nil {
			own.created = true
		}
	}
	lock, err := acquire(ctx, l, o.StoppingWait)
	if err != nil {
		return nil, workspace.StorageError("open the workspace", l.Dir, err)
	}
	own.lock = lock
	if err := own.open(ctx); err != nil {
		own.abort()
		return nil, workspace.StorageError("open the workspace", l.Dir, err)
	}
	return own, nil
}

// acquire takes the lock, waiting while the holder announces "stopping".
func acquire(ctx context.Context, l workspace.Layout, wait time.Duration) (*workspace.Lock, error) {
	deadline := time.Now().Add(wait)
	for {
		lock, err := workspace.AcquireLock(l)
		if err == nil {
			return lock, nil
		}
		if !errors.Is(err, workspace.ErrLocked) {
			return nil, err
		}
		ep, rerr := ReadEndpoint(l)
		// The holder may be starting (no endpoint yet) or stopping: both
		// pass soon. A running owner is an answer.
		if rerr == nil && ep.State == StateRunning && pidAlive(ep.PID) {
			return nil, ownerRunning(&OwnerRunningError{PID: ep.PID, URL: ep.URL})
		}
		if time.Now().After(deadline) {
			if rerr == nil {
				return nil, ownerRunning(&OwnerRunningError{PID: ep.PID, URL: ep.URL})
			}
			return nil, ownerRunning(&OwnerRunningError{})
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// open opens what the owner holds, in order: the settings, storage, the
// engines and the job queue, the listener; then it publishes the owner
// and starts its jobs and watches.
func (own *Owner) open(ctx context.Context) error {
	s, err := own.loadSettings()
	if err != nil {
		return err
	}
	// Whatever endpoint.json says now is stale: we hold the lock.
	if err := RemoveEndpoint(own.layout); err != nil {
		return fmt.Errorf("remove stale endpoint: %w", err)
	}
	if err := own.openStorage(ctx, s); err != nil {
		return err
	}
	if err := own.openEngines(ctx, s); err != nil {
		return err
	}
	own.startedAt = time.Now().UTC().Truncate(time.Second)
	if err := own.serve(ctx, s); err != nil {
		return err
	}
	if err := own.publish(StateRunning); err != nil {
		return err
	}
	if !own.opts.NoJobs {
		own.startJobs()
	}
	if !own.opts.NoWatch {
		if s.Watching() {
			own.startWatching()
		}
		own.watchSettings()
	}
	own.log.Info("owner started", workspace.LogWorkspace, own.layout.Dir, workspace.LogURL, own.url, workspace.LogPID, os.Getpid())
	return nil
}

// loadSettings reads tychora.json, applies Options.Listen over it and
// puts the result in force.
func (own *Owner) loadSettings() (workspace.Settings, error) {
	s, err := workspace.LoadSettings(own.layout)
	if err != nil {
		return s, err
	}
	if own.opts.Listen != "" {
		if err := workspace.CheckListen(own.opts.Listen); err != nil {
			return s, err
		}
		s.Listen = own.opts.Listen
	}
	own.conf.Store(&s)
	return s, nil
}

// openStorage opens the index, the tokens, the cursor key, the assets
// and the indexer.
func (own *Owner) openStorage(ctx context.Context, s workspace.Settings) error {
	var err error
	if own.db, err = workspace.OpenDB(ctx, own.layout.DB); err != nil {
		return err
	}
	if own.id, err = workspace.WorkspaceID(ctx, own.db); err != nil {
		return err
	}
	if own.tokens, own.secret, err = workspace.NewTokens(own.db); err != nil {
		return err
	}
	if own.cursors, err = workspace.NewCursors(ctx, own.db); err != nil {
		return err
	}
	policy, err := sources.NewPolicy(s.IngestRoots, own.layout.Dir)
	if err != nil {
		return err
	}
	own.assets = sources.NewAssets(own.layout.Assets)
	// What a sync that never committed left among the assets goes now,
	// before any job runs.
	if n, err := sources.SweepAssets(ctx, own.db, own.assets); err != nil {
		own.log.Warn("assets not swept", workspace.LogErr, err)
	} else if n > 0 {
		own.log.Info("removed assets no revision recorded", workspace.LogFiles, n)
	}
	own.ixp.Store(sources.NewIndexer(own.db, policy, own.assets, sources.Options{
		MaxFileBytes:    s.MaxFileBytes,
		DefaultExcludes: s.DefaultExcludes,
		Logger:          own.log,
		Publish:         own.prepareCommit,
		Yield:           own.fg.Yield,
	}))
	return nil
}

// prepareCommit builds, in a writer's transaction about to commit, the
// search's file index of the generation it holds
// (query.Engine.PrepareCommit): the searches after the commit find it
// ready.
func (own *Owner) prepareCommit(ctx context.Context, tx *sql.Tx) func(bool) {
	if own.engine == nil {
		return nil
	}
	return own.engine.PrepareCommit(ctx, tx)
}

// openEngines makes the engines over storage: search, discover, inspect,
// the merger and the job queue.
func (own *Owner) openEngines(ctx context.Context, s workspace.Settings) error {
	own.engine = &query.Engine{DB: own.db, Cursors: own.cursors, CollectionsNow: func() []string { return own.cfg().Collections }, Foreground: &own.fg,
		SavedIndex: own.layout.FileIndex}
	own.runs = query.NewRecorder(own.db, s.QueryHistory == "full", own.log)
	own.life, own.endLife = context.WithCancel(context.WithoutCancel(ctx))
	if !own.opts.NoWarm {
		own.engine.StartWarm(own.life)
		// The default token counter loads its vocabulary once per
		// process (tens of milliseconds): before the first answer.
		go render.CounterFor("")
	}
	own.searcher = query.NewSearcher[[]render.HitCost](own.life, query.SearcherOptions{Ranker: own.engine, DB: own.db, Runs: own.runs,
		Slots: rankSlots(own.db.Readers()), CacheSize: searchCacheSize, Logger: own.log, Foreground: &own.fg})
	own.memo = render.NewMemo(searchMemoBytes)
	own.discoverer = &query.Discoverer{DB: own.db, Cursors: own.cursors, Runs: own.runs, Models: counterItems()}
	own.inspector = &query.Inspector{DB: own.db, Cursors: own.cursors}
	own.merger = &merger{ix: own.idx, log: own.log}
	// Jobs left running by a process that died are queued again now and
	// resume once the workers start, after the owner is published.
	runner := syncRunner{ix: own.idx, applied: own.searcher.IndexChanged, began: own.syncBegan, ended: own.syncEnded, log: own.log, merge: own.merger}
	var err error
	own.queue, err = jobs.Open(ctx, own.db, runner, jobs.Options{Workers: s.Workers, Logger: own.log})
	return err
}

// serve listens on loopback and serves /v1 and MCP over the in-process
// Service.
func (own *Owner) serve(ctx context.Context, s workspace.Settings) error {
	var err error
	if own.ln, err = listen(own.layout, s.Listen); err != nil {
		return workspace.Wrap(workspace.CodeUnavailable, err, fmt.Sprintf("cannot listen on %s", s.Listen))
	}
	authority := own.ln.Addr().String()
	own.url = "http://" + authority
	own.svc = &Local{owner: own}
	own.mcp = mcpapi.NewHTTPHandler(own.svc, mcpapi.HTTPOptions{Options: mcpapi.Options{Version: Version, Logger: own.log, MaxRequestBytes: s.MaxRequestBytes}})
	doc, err := httpapi.OpenAPI(Version, own.url)
	if err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	var mcpHandler http.Handler = own.mcp
	if own.opts.WrapMCP != nil {
		mcpHandler = own.opts.WrapMCP(own.mcp)
	}
	handler := httpapi.NewHandler(own.svc, httpapi.Options{
		OpenAPI:         doc,
		Authority:       authority,
		Auth:            own.tokens,
		MaxRequestBytes: s.MaxRequestBytes,
		MCP:             mcpHandler,
		Logger:          own.log,
	})
	own.srv = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		// "OPTIONS *" would otherwise be answered 200 by net/http itself,
		// before the Host and Origin checks.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(own.log.Handler(), slog.LevelWarn),
		BaseContext:                  func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ConnState:                    own.connState,
	}
	go func() { own.serveErr <- own.srv.Serve(own.ln) }()
	return nil
}

// counterItems are the items of discover models: the token counters.
func counterItems() []any {
	var out []any
	for _, c := range render.Counters() {
		out = append(out, c)
	}
	return out
}

// startJobs starts the job queue's workers, once.
func (own *Owner) startJobs() {
	own.jobsOnce.Do(own.queue.Start)
}

func (own *Owner) publish(state string) error {
	return WriteEndpoint(own.layout, Endpoint{
		Version:        1,
		State:          state,
		WorkspaceID:    own.id,
		PID:            os.Getpid(),
		URL:            own.url,
		MCPURL:         own.url + "/mcp/",
		Token:          own.secret,
		StartedAt:      own.startedAt,
		TychoraVersion: Version,
	})
}

// abort releases what a failed start took.
func (own *Owner) abort() {
	if own.srv != nil {
		_ = own.srv.Close()
	} else if own.ln != nil {
		_ = own.ln.Close()
	}
	if own.queue != nil {
		_ = own.queue.Close(context.Background())
	}
	if own.merger != nil {
		own.merger.close()
	}
	if own.runs != nil {
		own.runs.Close()
	}
	if own.endLife != nil {
		own.endLife()
	}
	own.stopSettingsWatch()
	own.stopWatching()
	if own.engine != nil {
		_ = own.engine.Close()
	}
	if own.db != nil {
		_ = own.db.Close()
	}
	if own.srv != nil {
		_ = RemoveEndpoint(own.layout)
	}
	_ = own.lock.Release()
}

// Created reports whether Start created the workspace.
func (own *Owner) Created() bool { return own.created }

// URL is the owner's base URL, http://127.0.0.1:PORT.
func (own *Owner) URL() string { return own.url }

// Token is the owner token (manage on all collections).
func (own *Owner) Token() string { return own.secret }

// WorkspaceID is the workspace's UUID.
func (own *Owner) WorkspaceID() string { return own.id }

// Layout is the workspace layout.
func (own *Owner) Layout() workspace.Layout { return own.layout }

// Settings are the settings in force.
func (own *Owner) Settings() workspace.Settings { return own.cfg() }

// cfg is the settings in force (tychora.json, reloaded when it changes).
func (own *Owner) cfg() workspace.Settings { return *own.conf.Load() }

// idx is the indexer of the settings in force.
func (own *Owner) idx() *sources.Indexer { return own.ixp.Load() }

// watch is the watcher, nil when nothing is watched.
func (own *Owner) watch() *sources.Watcher { return own.watcherp.Load() }

// Service is the in-process Service. Callers put their principal in ctx
// (workspace.WithPrincipal); OwnerContext does it for the owner's own.
func (own *Owner) Service() *Local { return own.svc }

// OwnerContext returns ctx carrying the owner principal (manage, all
// collections).
func OwnerContext(ctx context.Context) context.Context {
	return workspace.WithPrincipal(ctx, workspace.Principal{ID: workspace.OwnerPrincipalID, Grant: workspace.GrantManage})
}

// Done is closed when the HTTP server stops on its own (a listener
// failure).
func (own *Owner) Done() <-chan error { return own.serveErr }

// Merging reports whether a merge of the index is due or in progress
// (docs/ingest.md, "Maintenance"): the owner still has work to do although
// no job runs.
func (own *Owner) Merging() bool { return own.merger != nil && own.merger.pending() }

// Close shuts the owner down in order: mark endpoint.json stopping, stop
// admitting and wait a bounded time for requests in flight, close storage,
// remove endpoint.json, release the lock. It is safe to call more than
// once.
func (own *Owner) Close(ctx context.Context) error {
	own.closeOnce.Do(func() { own.closeErr = own.close(ctx) })
	return own.closeErr
}

func (own *Owner) close(ctx context.Context) error {
	var errs []error
	if err := own.publish(StateStopping); err != nil {
		// The announcement only tells waiting siblings to keep waiting
		// (a full disk can refuse it); the stop goes on, and removing
		// endpoint.json below is what matters.
		own.log.Warn("endpoint.json not marked stopping", workspace.LogErr, err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), own.opts.ShutdownWait)
	defer cancel()
	// The listener stops admitting and the requests in flight get a
	// bounded time to finish. MCP refuses new requests with UNAVAILABLE,
	// lets its calls in flight answer, then closes its sessions (which
	// ends any subscriptions/listen stream, so the HTTP shutdown is not
	// held up by one). Closing the sessions first would cut the calls in
	// flight without an answer.
	shut := make(chan error, 1)
	go func() { shut <- own.srv.Shutdown(sctx) }()
	if own.mcp != nil {
		if err := own.mcp.Shutdown(sctx); err != nil {
			own.log.Warn("MCP requests still open after the shutdown wait were cut", workspace.LogWait, own.opts.ShutdownWait)
		}
	}
	// Connections that have sent nothing yet do not hold the shutdown up
	// beyond a short grace.
	var serr error
	select {
	case serr = <-shut:
	case <-time.After(newConnGrace):
		own.closeNewConns()
		serr = <-shut
	}
	if err := serr; err != nil {
		// The bounded wait is over: what is still open is cut off. That is
		// the designed end of a shutdown, not a failure.
		own.log.Warn("requests still open after the shutdown wait were closed", workspace.LogWait, own.opts.ShutdownWait)
		_ = own.srv.Close()
	}
	own.stopSettingsWatch()
	own.endLife()      // rankings shared by callers who are gone, watches
	own.stopWatching() // no more syncs are asked for
	// Running jobs are checkpointed: back to the queue, resumed next start.
	qctx, qcancel := context.WithTimeout(context.WithoutCancel(ctx), jobsStopWait)
	defer qcancel()
	if err := own.queue.Close(qctx); err != nil {
		errs = append(errs, err)
	}
	own.merger.close() // a merge in progress rolls back: the next owner merges
	own.runs.Close()
	_ = own.engine.Close() // its prepared statements, before their pool
	if err := own.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close index: %w", err))
	}
	if err := RemoveEndpoint(own.layout); err != nil {
		errs = append(errs, err)
	}
	if err := own.lock.Release(); err != nil {
		errs = append(errs, err)
	}
	own.log.Info("owner stopped", workspace.LogWorkspace, own.layout.Dir)
	return errors.Join(errs...)
}

// newConnGrace is how long a shutdown lets a connection that has sent no
// request yet deliver one before it is closed.
const newConnGrace = 200 * time.Millisecond

// connState tracks the connections that have not sent a request yet.
func (own *Owner) connState(c net.Conn, st http.ConnState) {
	own.connMu.Lock()
	defer own.connMu.Unlock()
	if st == http.StateNew {
		if own.newConns == nil {
			own.newConns = map[net.Conn]struct{}{}
		}
		own.newConns[c] = struct{}{}
		return
	}
	delete(own.newConns, c)
}

// closeNewConns closes the connections that have not sent a request.
// http.Server.Shutdown waits five seconds before it takes such a
// connection for idle, and HTTP clients open them ahead of need (a
// transport dials while waiting for a busy connection, and keeps the new
// one): a shutdown that waited for them kept the lock, and every bridge of
// the workspace waiting for it, five seconds longer. Nothing was asked on
// them, so nothing is cut.
func (own *Owner) closeNewConns() {
	own.connMu.Lock()
	defer own.connMu.Unlock()
	for c := range own.newConns {
		_ = c.Close()
		delete(own.newConns, c)
	}
}
