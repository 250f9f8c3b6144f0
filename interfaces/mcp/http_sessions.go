package mcpapi

import (
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/workspace"
)

// The defaults of HTTPOptions' session caps.
const (
	// DefaultMaxSessionsPerCaller is how many MCP sessions one caller (a
	// token: its principal id) may hold open at once: far more than the
	// agents one person runs against one workspace.
	DefaultMaxSessionsPerCaller = 64
	// DefaultMaxSessions is how many MCP sessions the owner holds open in
	// all. An idle session costs about 21 KB of resident memory (the
	// SDK's connection, its reading goroutine and its buffers:
	// bench/README.md, "sessions"), so these hold about 5 MB.
	DefaultMaxSessions = 256
)

// sessionTable keeps the open sessions of the session-based handler, by
// caller, to cap them: an initialize that would pass a cap first closes
// the caller's (or, for the cap in all, anyone's) session idle the
// longest; when every one of them is busy, it is refused. The SDK keeps
// no owner or use time of its sessions where tychora can read them, so
// the table learns a session's id from the initialize's answer and its
// use from the requests that name it; a session the SDK closed itself
// (its idle timeout, DELETE, Close) leaves the table when a cap is next
// checked.
type sessionTable struct {
	perCaller, total int
	// live lists the SDK's open sessions.
	live func() []*mcp.ServerSession

	mu      sync.Mutex
	byID    map[string]*sessionEntry
	count   map[string]int // caller → sessions in byID and initializes in flight
	opening int            // initializes in flight
	clock   uint64         // ticks at each use, for "idle the longest"
}

type sessionEntry struct {
	caller   string
	session  *mcp.ServerSession
	busy     int    // requests in flight
	lastUsed uint64 // the clock when its last request ended
}

func newSessionTable(perCaller, total int, live func() []*mcp.ServerSession) *sessionTable {
	return &sessionTable{perCaller: perCaller, total: total, live: live, byID: map[string]*sessionEntry{}, count: map[string]int{}}
}

// errSessionsBusy is an initialize refused at a cap.
func errSessionsBusy(perCaller bool, limit int) error {
	if perCaller {
		return workspace.Errorf(workspace.CodeUnavailable, "this token has %d MCP sessions open, each with a request in flight: end one (DELETE) or retry when one is idle", limit)
	}
	return workspace.Errorf(workspace.CodeUnavailable, "the owner has %d MCP sessions open, each with a request in flight: retry later", limit)
}

// reserve makes room for a session of caller to open: under a cap, or by
// closing the session idle the longest (the caller's, then anyone's).
// Call opened with the new session's id once the SDK has answered.
func (t *sessionTable) reserve(caller string) (opened func(id string), err error) {
	t.mu.Lock()
	var evict []*mcp.ServerSession
	if t.count[caller] >= t.perCaller || len(t.byID)+t.opening >= t.total {
		t.prune()
	}
	if t.count[caller] >= t.perCaller {
		e := t.idlest(caller)
		if e == nil {
			t.mu.Unlock()
			return nil, errSessionsBusy(true, t.perCaller)
		}
		evict = append(evict, t.drop(e))
	}
	if len(t.byID)+t.opening >= t.total {
		e := t.idlest("")
		if e == nil {
			t.mu.Unlock()
			for _, ss := range evict {
				_ = ss.Close()
			}
			return nil, errSessionsBusy(false, t.total)
		}
		evict = append(evict, t.drop(e))
	}
	t.count[caller]++
	t.opening++
	t.mu.Unlock()
	// Idle sessions: closing one waits for nothing. A request that
	// reaches it from now on is the SDK's 404, after which the client
	// starts a new session.
	for _, ss := range evict {
		_ = ss.Close()
	}
	return func(id string) { t.opened(caller, id) }, nil
}

// opened ends a reservation: the SDK's session id (none when the
// initialize failed, and the SDK closed the session) joins the table.
func (t *sessionTable) opened(caller, id string) {
	var ss *mcp.ServerSession
	if id != "" {
		for _, s := range t.live() {
			if s.ID() == id {
				ss = s
				break
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.opening--
	if ss == nil {
		t.release(caller)
		return
	}
	t.clock++
	t.byID[id] = &sessionEntry{caller: caller, session: ss, lastUsed: t.clock}
}

// sessions returns the set of the SDK's open sessions.
func (t *sessionTable) sessions() map[*mcp.ServerSession]struct{} {
	out := map[*mcp.ServerSession]struct{}{}
	for _, ss := range t.live() {
		out[ss] = struct{}{}
	}
	return out
}

// use marks session id busy until the returned func is called.
func (t *sessionTable) use(id string) (done func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.byID[id]
	if e == nil {
		return func() {}
	}
	e.busy++
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		e.busy--
		t.clock++
		e.lastUsed = t.clock
	}
}

// prune drops the sessions the SDK has closed. t.mu is held.
func (t *sessionTable) prune() {
	live := t.sessions()
	for _, e := range t.byID {
		if _, ok := live[e.session]; !ok {
			t.drop(e)
		}
	}
}

// idlest returns the session of caller ("": of anyone) without a request
// in flight whose last request ended first, or nil. t.mu is held.
func (t *sessionTable) idlest(caller string) *sessionEntry {
	var best *sessionEntry
	for _, e := range t.byID {
		if e.busy == 0 && (caller == "" || e.caller == caller) && (best == nil || e.lastUsed < best.lastUsed) {
			best = e
		}
	}
	return best
}

// drop removes e from the table and returns its session. t.mu is held.
func (t *sessionTable) drop(e *sessionEntry) *mcp.ServerSession {
	delete(t.byID, e.session.ID())
	t.release(e.caller)
	return e.session
}

// release takes one session off caller's count. t.mu is held.
func (t *sessionTable) release(caller string) {
	if t.count[caller]--; t.count[caller] <= 0 {
		delete(t.count, caller)
	}
}

// opensSession reports whether a body sent without a session id holds an
// initialize, with which the session-based handler opens a session that
// outlives the request.
func opensSession(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	f, ok := r.Context().Value(frameKey{}).(*frame)
	if !ok {
		return false
	}
	for _, m := range f.msgs {
		if m.method == "initialize" && m.call() {
			return true
		}
	}
	return false
}

// errNoSession refuses a POST that names no session and opens none.
var errNoSession = workspace.Errorf(workspace.CodeInvalidArgument,
	"no MCP session: send initialize first and then the Mcp-Session-Id it answers with (or, at protocol version %s and later, which has no sessions, send the Mcp-Protocol-Version header)", statelessSince)

// serveSessions passes r to the session-based handler, keeping the
// session table: a request that opens a session reserves its place
// first, one on a session marks it busy while it runs.
func (h *HTTPHandler) serveSessions(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		defer h.sessions.use(id)()
		h.stateful.ServeHTTP(w, r)
		return
	}
	if !opensSession(r) {
		if r.Method == http.MethodPost {
			// The SDK would open a session for it that never saw an
			// initialize, answer its requests with the JSON-RPC code 0
			// and log each as an error. The Streamable HTTP transport
			// asks for a 400 instead.
			writeEnvelope(w, http.StatusBadRequest, errNoSession)
			return
		}
		h.stateful.ServeHTTP(w, r)
		return
	}
	caller := ""
	if p, ok := workspace.PrincipalFrom(r.Context()); ok {
		caller = p.ID
	}
	opened, err := h.sessions.reserve(caller)
	if err != nil {
		writeEnvelope(w, http.StatusServiceUnavailable, err)
		return
	}
	ow := &openingWriter{ResponseWriter: w, opened: opened}
	h.stateful.ServeHTTP(ow, r)
	ow.open()
}

// openingWriter passes the answer to an initialize through and, before
// anything of it goes out, hands opened the session id the SDK put in its
// header: the client may use the session as soon as it has the answer,
// and must find the session in the table then.
type openingWriter struct {
	http.ResponseWriter
	once   sync.Once
	opened func(id string)
}

func (o *openingWriter) open() {
	o.once.Do(func() { o.opened(o.Header().Get("Mcp-Session-Id")) })
}

func (o *openingWriter) WriteHeader(code int) {
	o.open()
	o.ResponseWriter.WriteHeader(code)
}

func (o *openingWriter) Write(b []byte) (int, error) {
	o.open()
	return o.ResponseWriter.Write(b)
}

// FlushError is what http.ResponseController calls to flush.
func (o *openingWriter) FlushError() error {
	o.open()
	return http.NewResponseController(o.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (o *openingWriter) Unwrap() http.ResponseWriter { return o.ResponseWriter }
