package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// Options configure the handler. Zero values are not enough here: Authority
// and Auth are required.
type Options struct {
	// Authority is the bound numeric "ip:port" that Host must equal.
	Authority string
	// Auth checks bearer secrets.
	Auth Authenticator
	// MaxRequestBytes caps request bodies (default 4 MiB).
	MaxRequestBytes int64
	// BodyTimeout bounds how long a request body may take to arrive
	// once its headers have (default DefaultBodyTimeout): a body still
	// incomplete then is refused with 408 and the connection closed.
	// Only the body is timed; the answer, however long, is not.
	BodyTimeout time.Duration
	// MCP, when set, serves /mcp/ and /mcp behind the same checks.
	MCP http.Handler
	// Logger receives request failures; nil is silent.
	Logger *slog.Logger
	// OpenAPI is the document served at GET /openapi (see OpenAPI).
	OpenAPI []byte
}

// DefaultBodyTimeout is Options.BodyTimeout's default: the time a
// max_request_bytes body (4 MiB) may take after its headers. Over
// loopback such a body takes milliseconds; a client that sends slower
// than about 400 KiB/s holds a connection for no reason a local client
// has.
const DefaultBodyTimeout = 10 * time.Second

// NewHandler returns the HTTP API over svc.
func NewHandler(svc interfaces.Service, o Options) http.Handler {
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = workspace.DefaultMaxRequestBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	g := &guard{authority: o.Authority, origin: "http://" + o.Authority, auth: o.Auth, maxBody: o.MaxRequestBytes, bodyTimeout: o.BodyTimeout}
	h := &handlers{svc: svc, tokens: svc, log: o.Logger}

	r := chi.NewRouter()
	// HEAD is answered as GET without the body, on every GET route.
	r.Use(middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, workspace.Errorf(workspace.CodeNotFound, "no such route"))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, &methodNotAllowed{allow: allowed(r, req)})
	})
	r.Get("/v1/health", h.health)
	r.Get("/v1/status", h.status)
	r.Get("/v1/tokens", h.listTokens)
	r.Post("/v1/tokens", h.createToken)
	r.Delete("/v1/tokens/{id}", h.revokeToken)
	r.Delete("/v1/sources/{id}", h.removeSource)
	h.routeTools(r)
	if o.OpenAPI != nil {
		doc := o.OpenAPI
		r.Get("/openapi", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(doc)
		})
	}
	if o.MCP != nil {
		// MCP takes POST and DELETE (no GET: tychora offers no SSE
		// stream), at /mcp/ and /mcp only.
		for _, p := range []string{"/mcp", "/mcp/"} {
			r.Method(http.MethodPost, p, o.MCP)
			r.Method(http.MethodDelete, p, o.MCP)
		}
	}
	return g.wrap(r)
}

type handlers struct {
	svc    interfaces.Service
	tokens interfaces.TokenAdmin
	log    *slog.Logger
}

// fail writes err and logs internal failures (never their detail to the
// caller). A request whose context ended first — its client went away or
// cancelled it (a stdio bridge whose client cancelled the MCP call), or
// the server is stopping — failed for that reason: it is logged at debug
// level only.
func (h *handlers) fail(w http.ResponseWriter, r *http.Request, err error) {
	var mte *interfaces.MediaTypeError
	var mbe *http.MaxBytesError
	switch c := workspace.ErrorCode(err); {
	case errors.As(err, &mte) || errors.As(err, &mbe) || errors.Is(err, errBodyTooLarge):
		// The caller's request, refused (415, 413): nothing failed here.
	case r.Context().Err() != nil:
		h.log.Debug("request cancelled", workspace.LogMethod, r.Method, workspace.LogPath, r.URL.Path, workspace.LogErr, err)
	case c == workspace.CodeInternal || c == workspace.CodeUnavailable:
		h.log.Error("request failed", workspace.LogMethod, r.Method, workspace.LogPath, r.URL.Path, workspace.LogErr, err)
	}
	writeError(w, err)
}

func (h *handlers) health(w http.ResponseWriter, r *http.Request) {
	if isAnonymous(r.Context()) {
		writeJSON(w, http.StatusOK, interfaces.HealthResult{Status: "ok"})
		return
	}
	res, err := h.svc.Health(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handlers) status(w http.ResponseWriter, r *http.Request) {
	res, err := h.svc.Status(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handlers) listTokens(w http.ResponseWriter, r *http.Request) {
	res, err := h.tokens.ListTokens(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handlers) createToken(w http.ResponseWriter, r *http.Request) {
	// The grant is checked before the body is read: a reader learns nothing
	// from a well- or ill-formed body.
	if err := requireGrant(r, workspace.GrantManage); err != nil {
		h.fail(w, r, err)
		return
	}
	var req interfaces.CreateTokenRequest
	if err := h.decodeBody(r, interfaces.OpCreateToken, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.tokens.CreateToken(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, res)
}

func (h *handlers) revokeToken(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if err := h.tokens.RevokeToken(r.Context(), id); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, interfaces.RevokedToken{ID: id, Revoked: true})
}

func (h *handlers) removeSource(w http.ResponseWriter, r *http.Request) {
	res, err := h.svc.RemoveSource(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func requireGrant(r *http.Request, need workspace.Grant) error {
	p, err := workspace.CallerFrom(r.Context())
	if err != nil {
		return err
	}
	return p.Require(need)
}

// allowed lists the methods mux routes the path of r to, for the Allow
// header of a 405: HEAD wherever GET is (middleware.GetHead).
func allowed(mux chi.Router, r *http.Request) string {
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	var ms []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		if mux.Match(chi.NewRouteContext(), m, path) {
			ms = append(ms, m)
			if m == http.MethodGet {
				ms = append(ms, http.MethodHead)
			}
		}
	}
	return strings.Join(ms, ", ")
}
