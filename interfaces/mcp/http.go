package mcpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// HTTPOptions configure NewHTTPHandler. The zero value works.
type HTTPOptions struct {
	Options
	// SessionTimeout closes a session (of a client on a protocol older
	// than 2026-07-28) after this long without a request (default 24h).
	SessionTimeout time.Duration
}

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
}

// NewHTTPHandler returns the Streamable HTTP handler over svc, for /mcp/
// and /mcp.
//
// Every request acts with its own caller: the principal the guard put in
// the request context (its token and X-Tychora-Scope), never the one that
// opened the session. A session is bound to the principal id that opened
// it; another token gets 403 on it.
//
// Clients of every protocol version the SDK speaks are served on the same
// endpoint: a request whose Mcp-Protocol-Version header is 2026-07-28 or
// later goes to the SDK's stateless mode (no session, no initialize);
// everything else (initialize, and the requests of a session, whose header
// is older or absent) to its session-based mode. GET is 405: tychora sends
// nothing unasked, so it offers no standalone SSE stream.
func NewHTTPHandler(svc interfaces.Service, o HTTPOptions) *HTTPHandler {
	o.Options = o.Options.fill()
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = 24 * time.Hour
	}
	// A fixed principal has no place behind a per-request guard.
	o.Principal = nil
	srv := NewServer(svc, o.Options)
	get := func(*http.Request) *mcp.Server { return srv }
	h := &HTTPHandler{
		server: srv,
		stateful: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Logger:              quiet(o.Logger),
			MaxRequestBodyBytes: o.MaxRequestBytes,
			SessionTimeout:      o.SessionTimeout,
		}),
		stateless: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			Logger:                       quiet(o.Logger),
			MaxRequestBodyBytes:          o.MaxRequestBytes,
			PropagateRequestCancellation: true,
		}),
	}
	dispatch := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// tychora never sends a message the client did not ask for,
			// so it offers no standalone SSE stream (the spec's 405): no
			// stream hangs open to hold up a shutdown.
			w.Header().Set("Allow", "POST, DELETE")
			writeEnvelope(w, http.StatusMethodNotAllowed, workspace.Errorf(workspace.CodeInvalidArgument, "method not allowed: this server offers no SSE stream on GET"))
			return
		}
		if r.Header.Get("Mcp-Protocol-Version") >= statelessSince {
			h.stateless.ServeHTTP(w, r)
			return
		}
		h.stateful.ServeHTTP(w, r)
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
	return &auth.TokenInfo{UserID: p.ID, Extra: map[string]any{principalKey: p}}, nil
}

// writeEnvelope writes err's {"error":{"code","message"}} with status.
func writeEnvelope(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(errorEnvelope(err), '\n'))
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.handler.ServeHTTP(w, r)
}

// Close ends every open MCP session, with its requests in flight, so that
// no session outlives the server (an idle one otherwise lasts until
// SessionTimeout). New requests are still served; call Close once the
// listener stops admitting.
func (h *HTTPHandler) Close() error {
	for ss := range h.server.Sessions() {
		_ = ss.Close()
	}
	return nil
}
