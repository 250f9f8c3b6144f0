package mcpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// HTTPOptions configure NewHTTPHandler. The zero value works.
type HTTPOptions struct {
	Options
	// SessionTimeout closes a session (of a client on a protocol older
	// than 2026-07-28) after this long without a request (default
	// DefaultSessionTimeout).
	SessionTimeout time.Duration
	// MaxSessionsPerCaller caps the sessions one caller (a token, by its
	// principal id) holds open (default DefaultMaxSessionsPerCaller), and
	// MaxSessions those of all callers together (default
	// DefaultMaxSessions). An initialize at a cap closes the session idle
	// the longest first: the caller's own at its cap, anyone's at the cap
	// in all; with none idle it is refused with UNAVAILABLE (503).
	MaxSessionsPerCaller int
	MaxSessions          int
}

// DefaultSessionTimeout is HTTPOptions.SessionTimeout's default. A client
// that comes back after longer gets 404 and opens a new session, as MCP
// asks of it.
const DefaultSessionTimeout = time.Hour

// allowedMethods are the methods /mcp/ takes (the Allow of its 405s).
const allowedMethods = "POST, DELETE"

// statelessSince is the first protocol version without sessions
// (SEP-2575): each request carries its version in the Mcp-Protocol-Version
// header and its _meta.
const statelessSince = "2026-07-28"

// HTTPHandler serves MCP over Streamable HTTP. Mount it behind the guard
// of interfaces/http, which authenticates every request and puts its
// workspace.Principal in the request context.
type HTTPHandler struct {
	server    *mcp.Server
	stateful  *mcp.StreamableHTTPHandler
	stateless *mcp.StreamableHTTPHandler
	handler   http.Handler
	sessions  *sessionTable // the stateful handler's, by caller

	// What Shutdown waits for: the HTTP requests being served, less the
	// subscriptions/listen streams among them, which wait for nothing but
	// their end and are ended by closing the sessions.
	requests atomic.Int64
	listens  atomic.Int64
	stopping atomic.Bool
	maxBody  int64 // MaxRequestBytes
	// cut ends the handlers still running when Shutdown gives up on
	// them: a session's Close waits for its handlers, which run in the
	// session's context, not in their HTTP request's.
	hard context.Context
	cut  context.CancelFunc
}

// NewHTTPHandler returns the Streamable HTTP handler over svc, for /mcp/
// and /mcp.
//
// Every request acts with its own caller: the principal the guard put in
// the request context (its token and X-Tychora-Scope), never the one that
// opened the session. A session is bound to the principal id that opened
// it; another token gets 403 on it. Sessions are capped per caller and in
// all (HTTPOptions): an initialize at a cap closes the session idle the
// longest first.
//
// Clients of every protocol version the SDK speaks are served on the same
// endpoint: a request whose Mcp-Protocol-Version header is 2026-07-28 or
// later goes to the SDK's stateless mode (no session, no initialize);
// everything else (initialize, and the requests of a session, whose header
// is older or absent) to its session-based mode. GET is 405: tychora sends
// nothing unasked, so it offers no standalone SSE stream; any method but
// POST and DELETE is 405 too. Every refusal before MCP runs, the SDK's
// own included, is the {"error":{"code","message"}} envelope.
func NewHTTPHandler(svc interfaces.Service, o HTTPOptions) *HTTPHandler {
	o.Options = o.Options.fill()
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxSessionsPerCaller <= 0 {
		o.MaxSessionsPerCaller = DefaultMaxSessionsPerCaller
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	// A fixed principal has no place behind a per-request guard.
	o.Principal = nil
	srv := NewServer(svc, o.Options)
	get := func(*http.Request) *mcp.Server { return srv }
	h := &HTTPHandler{server: srv, maxBody: o.MaxRequestBytes}
	h.sessions = newSessionTable(o.MaxSessionsPerCaller, o.MaxSessions, func() []*mcp.ServerSession { return slices.Collect(srv.Sessions()) })
	h.hard, h.cut = context.WithCancel(context.Background())
	srv.AddReceivingMiddleware(h.track)
	h.stateful = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Logger:              quiet(o.Logger),
		MaxRequestBodyBytes: o.MaxRequestBytes,
		SessionTimeout:      o.SessionTimeout,
	})
	h.stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       quiet(o.Logger),
		MaxRequestBodyBytes:          o.MaxRequestBytes,
		PropagateRequestCancellation: true,
	})
	dispatch := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := r.Context().Value(frameKey{}).(*frame); ok && h.screen(w, r, f) {
			return
		}
		if r.Header.Get("Mcp-Protocol-Version") >= statelessSince {
			h.stateless.ServeHTTP(w, r)
			return
		}
		h.serveSessions(w, r)
	})
	// The SDK hands each request's auth.TokenInfo to the handlers (in
	// RequestExtra), whereas a session's context is that of the request
	// that opened it. So the caller travels as TokenInfo.
	h.handler = auth.RequireBearerToken(principalToken, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(dispatch)
	return h
}

// principalToken is the auth.TokenVerifier that turns the principal the
// guard authenticated into the request's TokenInfo. The bearer secret was
// checked by the guard already.
func principalToken(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
	p, ok := workspace.PrincipalFrom(r.Context())
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	extra := map[string]any{principalKey: p}
	if id := workspace.ClientFrom(r.Context()); id != "" {
		extra[clientKey] = id
	}
	return &auth.TokenInfo{UserID: p.ID, Extra: extra}, nil
}

// writeEnvelope writes err's {"error":{"code","message"}} with status.
func writeEnvelope(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(errorEnvelope(err), '\n'))
}

// writeRPCError answers 400 with a JSON-RPC error response (id null).
func writeRPCError(w http.ResponseWriter, code int, msg string) {
	writeRPC(w, rpcErrorLine(code, msg))
}

// writeRPC answers 400 with body, JSON-RPC error responses: the status
// the SDK gives the JSON-RPC errors it writes itself (its client reads the
// error from such a body).
func writeRPC(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(body)
}

// ServeHTTP implements http.Handler. Once Shutdown has begun, a new
// request is refused with UNAVAILABLE (503).
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Counted before the check, so that Shutdown either waits for this
	// request or the request sees that it is stopping.
	h.requests.Add(1)
	defer h.requests.Add(-1)
	if h.stopping.Load() {
		writeEnvelope(w, http.StatusServiceUnavailable, errShuttingDown)
		return
	}
	switch r.Method {
	case http.MethodPost, http.MethodDelete:
	case http.MethodGet:
		// tychora never sends a message the client did not ask for, so
		// it offers no standalone SSE stream (the spec's 405): no stream
		// hangs open to hold up a shutdown.
		w.Header().Set("Allow", allowedMethods)
		writeEnvelope(w, http.StatusMethodNotAllowed, workspace.Errorf(workspace.CodeInvalidArgument, "method not allowed: this server offers no SSE stream on GET; use POST or DELETE"))
		return
	default:
		w.Header().Set("Allow", allowedMethods)
		writeEnvelope(w, http.StatusMethodNotAllowed, workspace.Errorf(workspace.CodeInvalidArgument, "method not allowed: use POST or DELETE"))
		return
	}
	// What the SDK refuses itself (a session it does not know, another
	// token on a session, a bad Accept, ...) it answers in plain text:
	// the envelope instead, with the SDK's status.
	ew := &envelopeWriter{ResponseWriter: w}
	defer ew.finish()
	w = ew
	if r.Method == http.MethodPost {
		if r.Body == nil {
			r.Body = http.NoBody
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe) || int64(len(body)) > h.maxBody:
			writeEnvelope(w, http.StatusRequestEntityTooLarge, workspace.Errorf(workspace.CodeInvalidArgument, "request body is too large"))
			return
		case err != nil:
			writeEnvelope(w, http.StatusBadRequest, workspace.Errorf(workspace.CodeInvalidArgument, "cannot read the request body"))
			return
		}
		if err := mcpMedia.CheckMediaType(r.Header.Values("Content-Type"), r.Header.Values("Content-Encoding")); err != nil {
			if err.Encoding {
				w.Header().Set("Accept-Encoding", "identity")
			}
			writeEnvelope(w, http.StatusUnsupportedMediaType, workspace.Errorf(workspace.CodeInvalidArgument, "%s", err.Message))
			return
		}
		switch {
		case len(body) == 0:
			// (Blanks are a body that is not JSON: the parse error.)
			writeEnvelope(w, http.StatusBadRequest, workspace.Errorf(workspace.CodeInvalidArgument, "request body is empty: want a JSON-RPC message"))
			return
		case !utf8.Valid(body):
			// JSON text is UTF-8; the SDK's decoder would quietly turn
			// other bytes into U+FFFD and run the request on altered
			// arguments.
			writeEnvelope(w, http.StatusBadRequest, workspace.Errorf(workspace.CodeInvalidArgument, "request body is not valid UTF-8"))
			return
		}
		msgs, batch, code, msg := parseFrame(body)
		if code != 0 {
			writeRPCError(w, code, msg)
			return
		}
		if v := r.Header.Get("Mcp-Protocol-Version"); (slices.Contains(mcp.SupportedProtocolVersions(), v) || v >= statelessSince) &&
			!batchesAllowed(v) && batch {
			// The SDK refuses it too, with a plain-text 400. (An unknown
			// version is the SDK's to refuse; the header is not echoed.)
			writeRPCError(w, rpcInvalidRequest, "Invalid Request: protocol version 2025-06-18 and later have no JSON-RPC batches: send one message per request")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r = r.WithContext(context.WithValue(r.Context(), frameKey{}, &frame{msgs: msgs, batch: batch}))
	}
	h.handler.ServeHTTP(w, r)
}

// errShuttingDown is what a call cut by Shutdown answers.
var errShuttingDown = workspace.Errorf(workspace.CodeUnavailable, "the tychora owner is shutting down")

// track is a receiving middleware that counts the subscriptions/listen
// streams open (they end only when their session does, so Shutdown does
// not wait for them), and ends every handler when Shutdown cuts them: a
// tool call cut that way answers UNAVAILABLE.
func (h *HTTPHandler) track(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "subscriptions/listen" {
			h.listens.Add(1)
			defer h.listens.Add(-1)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(h.hard, cancel)()
		res, err := next(ctx, method, req)
		if tr, ok := res.(*mcp.CallToolResult); ok && tr != nil && tr.IsError && h.hard.Err() != nil {
			return toolError(errShuttingDown), nil
		}
		return res, err
	}
}

// closeWait bounds how long Shutdown waits, once it cut the handlers
// still running, for their answers to go out and the sessions to close.
const closeWait = 2 * time.Second

// Shutdown stops the handler gracefully: new requests are refused with
// UNAVAILABLE (503); the requests in flight (tool calls, resource reads)
// run to their answer until ctx ends; then whatever still runs is cut (a
// tool call answers UNAVAILABLE, a subscriptions/listen stream ends) and
// every session is closed. It returns ctx's error when it had to cut a
// request. Call it when the owner stops, alongside http.Server.Shutdown.
func (h *HTTPHandler) Shutdown(ctx context.Context) error {
	h.stopping.Store(true)
	err := waitUntil(ctx, func() bool { return h.requests.Load()-h.listens.Load() <= 0 })
	h.cut()
	cctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if waitUntil(cctx, func() bool { return h.requests.Load() <= 0 }) != nil {
		err = errors.Join(err, errors.New("mcp: requests still running after they were cut"))
	}
	closed := make(chan struct{})
	go func() {
		_ = h.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-cctx.Done():
		err = errors.Join(err, errors.New("mcp: sessions still closing after the shutdown"))
	}
	return err
}

// waitUntil polls done until it holds or ctx ends.
func waitUntil(ctx context.Context, done func() bool) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Close ends every open MCP session at once, with its requests in flight,
// so that no session outlives the server (an idle one otherwise lasts
// until SessionTimeout). New requests are still served. Shutdown lets the
// requests in flight finish first.
func (h *HTTPHandler) Close() error {
	for ss := range h.server.Sessions() {
		_ = ss.Close()
	}
	return nil
}
