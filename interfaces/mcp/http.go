package mcpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
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
	h := &HTTPHandler{server: srv, maxBody: o.MaxRequestBytes}
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

// JSON-RPC error codes of a body that is no JSON-RPC message.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// checkJSONRPC tells a body that cannot be a JSON-RPC message from one
// the SDK should see, and returns code 0 for a body to pass on. Not JSON
// at all is a parse error; JSON that is not a message object (or a batch
// of them) the SDK can decode is an invalid request: "jsonrpc" other than
// "2.0", an id that is not a string, number or null, a method that is not
// a string, a response without an id, an error member that is not an
// error object, or nesting deeper than the SDK decodes (maxRPCDepth). The
// SDK answers these with a plain-text 400 over HTTP and ends a stdio
// session on them; a JSON-RPC client expects the error response with a
// null id that JSON-RPC 2.0 and the MCP transports allow.
func checkJSONRPC(body []byte) (code int, msg string) {
	if !json.Valid(body) {
		return rpcParseError, "Parse error: the message is not valid JSON"
	}
	if tooDeep(body, maxRPCDepth) {
		return rpcInvalidRequest, fmt.Sprintf("Invalid Request: the message nests deeper than %d levels", maxRPCDepth)
	}
	var batch []json.RawMessage
	switch b := bytes.TrimLeft(body, " \t\r\n"); {
	case len(b) > 0 && b[0] == '[':
		if json.Unmarshal(body, &batch) != nil || len(batch) == 0 {
			return rpcInvalidRequest, "Invalid Request: an empty or malformed batch"
		}
	case len(b) > 0 && b[0] == '{':
		batch = []json.RawMessage{body}
	default:
		return rpcInvalidRequest, "Invalid Request: a JSON-RPC message is a JSON object"
	}
	ids := map[string]bool{}
	for _, m := range batch {
		why, id := badMessage(m)
		if why != "" {
			return rpcInvalidRequest, "Invalid Request: " + why
		}
		// The SDK tells the requests and notifications of a batch apart by
		// id (none counts as one): two with the same id, or two without,
		// end its session. Responses (no method) have ids of the other
		// side's requests and are not counted.
		if len(batch) > 1 && id != respID {
			if ids[id] {
				return rpcInvalidRequest, "Invalid Request: a batch holds two messages with the same id, or two notifications"
			}
			ids[id] = true
		}
	}
	return 0, ""
}

// maxRPCDepth is the deepest nesting the SDK decodes.
const maxRPCDepth = 1000

// respID is the id badMessage gives a response (a message without a
// method).
const respID = "response"

// badMessage says what makes m no JSON-RPC message, "" when nothing does,
// and gives its id as the SDK tells ids apart ("" for none or null,
// respID for a response).
// Member names match exactly, as the SDK's decoder matches them.
func badMessage(m json.RawMessage) (why, id string) {
	var f map[string]json.RawMessage
	if json.Unmarshal(m, &f) != nil || f == nil {
		return "a JSON-RPC message is a JSON object", ""
	}
	if v, ok := f["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		var tag string
		if !ok || json.Unmarshal(v, &tag) != nil || tag != "2.0" {
			return `a JSON-RPC message has "jsonrpc": "2.0"`, ""
		}
	}
	hasID := false
	if v, ok := f["id"]; ok {
		switch kind(v) {
		case 'n':
		case '"':
			var s string
			if json.Unmarshal(v, &s) != nil {
				return "the id is a string, a number or null", ""
			}
			hasID, id = true, "s:"+s
		case '0':
			n, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			if err != nil {
				return "the id is out of range", ""
			}
			hasID, id = true, "n:"+strconv.FormatInt(int64(n), 10)
		default:
			return "the id is a string, a number or null", ""
		}
	}
	method, hasMethod := f["method"]
	if hasMethod && kind(method) != '"' && kind(method) != 'n' {
		return "the method is a string", ""
	}
	if !hasMethod && !hasID {
		return "a message without a method is a response, which has an id", ""
	}
	if !hasMethod {
		id = respID
	}
	if v, ok := f["error"]; ok && kind(v) != 'n' {
		var e map[string]json.RawMessage
		if kind(v) != '{' || json.Unmarshal(v, &e) != nil {
			return "the error member is an object", ""
		}
		if c, ok := e["code"]; ok && kind(c) != 'n' {
			if _, err := strconv.ParseInt(string(bytes.TrimSpace(c)), 10, 64); err != nil {
				return "the error code is an integer", ""
			}
		}
		if msg, ok := e["message"]; ok && kind(msg) != '"' && kind(msg) != 'n' {
			return "the error message is a string", ""
		}
	}
	return "", id
}

// kind classifies a JSON value by its first byte: '"' string, '0' number,
// 'n' null, '{' object, '[' array, 't' or 'f' boolean.
func kind(v json.RawMessage) byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; {
	case c == '-' || c >= '0' && c <= '9':
		return '0'
	default:
		return c
	}
}

// tooDeep reports whether the JSON text b nests objects and arrays deeper
// than max.
func tooDeep(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// writeRPCError answers 400 with a JSON-RPC error response (id null).
func writeRPCError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(rpcErrorLine(code, msg))
}

// rpcErrorLine is a JSON-RPC error response with a null id, and a newline.
func rpcErrorLine(code int, msg string) []byte {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	out, _ := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      *struct{} `json:"id"`
		Error   rpcError  `json:"error"`
	}{"2.0", nil, rpcError{code, msg}})
	return append(out, '\n')
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
	if r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
		// JSON text is UTF-8; the SDK's decoder would quietly turn other
		// bytes into U+FFFD and run the request on altered arguments.
		body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe) || int64(len(body)) > h.maxBody:
			writeEnvelope(w, http.StatusRequestEntityTooLarge, workspace.Errorf(workspace.CodeInvalidArgument, "request body is too large"))
			return
		case err != nil:
			writeEnvelope(w, http.StatusBadRequest, workspace.Errorf(workspace.CodeInvalidArgument, "cannot read the request body"))
			return
		case !utf8.Valid(body):
			writeEnvelope(w, http.StatusBadRequest, workspace.Errorf(workspace.CodeInvalidArgument, "request body is not valid UTF-8"))
			return
		}
		if code, msg := checkJSONRPC(body); code != 0 {
			writeRPCError(w, code, msg)
			return
		}
		if v := r.Header.Get("Mcp-Protocol-Version"); (slices.Contains(mcp.SupportedProtocolVersions(), v) || v >= statelessSince) &&
			!batchesAllowed(v) && bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
			// The SDK refuses it too, with a plain-text 400. (An unknown
			// version is the SDK's to refuse; the header is not echoed.)
			writeRPCError(w, rpcInvalidRequest, "Invalid Request: protocol version 2025-06-18 and later have no JSON-RPC batches: send one message per request")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
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
