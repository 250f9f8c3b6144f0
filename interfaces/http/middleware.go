package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/tychora/tychora/workspace"
)

// Authenticator maps a bearer secret to its principal.
type Authenticator interface {
	Authenticate(ctx context.Context, secret string) (workspace.Principal, error)
}

type anonymousKey struct{}

// guard runs the checks of DESIGN §8 in their fixed order: Host, Origin,
// authentication, scope, body size. Every refusal is the JSON error body.
type guard struct {
	authority string // the bound ip:port, exactly as Host must read
	origin    string // "http://" + authority
	auth      Authenticator
	maxBody   int64
	// bodyTimeout is how long a body may take to arrive once the
	// handler has the request's headers (Options.BodyTimeout).
	bodyTimeout time.Duration
}

func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 0. The body has bodyTimeout to arrive, whatever the request
		// turns out to be: a refused request's unread body is still
		// read (and discarded) by net/http before it answers.
		hasBody := r.Body != nil && r.Body != http.NoBody
		if hasBody {
			// Not every ResponseWriter has deadlines (a test's
			// recorder): such a body is read as it comes.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(g.bodyTimeout))
		}
		// 1. Host: the numeric bound authority only (DNS-rebinding defence).
		if r.Host != g.authority {
			writeError(w, workspace.Errorf(workspace.CodePermissionDenied, "Host not allowed: use %s", g.authority))
			return
		}
		// 2. Origin, when present, must be this server's own.
		if origins, ok := r.Header["Origin"]; ok {
			if len(origins) != 1 || origins[0] != g.origin {
				writeError(w, workspace.Errorf(workspace.CodePermissionDenied, "Origin not allowed"))
				return
			}
		}
		// No CORS: any OPTIONS that passed the Origin check is 405. It
		// comes before authentication (DESIGN §8), so its Allow is the
		// same for every path: naming a route's methods would tell a
		// caller without a token which routes exist.
		if r.Method == http.MethodOptions {
			writeError(w, &methodNotAllowed{allow: optionsAllow})
			return
		}
		// 3. Authentication. A token in the query string is ignored.
		ctx := r.Context()
		authz := r.Header.Values("Authorization")
		switch {
		case len(authz) == 0:
			if !anonymousAllowed(r) {
				writeError(w, workspace.Errorf(workspace.CodeUnauthenticated, "missing bearer token"))
				return
			}
			ctx = context.WithValue(ctx, anonymousKey{}, true)
		default:
			secret, ok := bearer(authz)
			if !ok {
				writeError(w, workspace.Errorf(workspace.CodeUnauthenticated, "invalid Authorization header: want Bearer TOKEN"))
				return
			}
			p, err := g.auth.Authenticate(ctx, secret)
			if err != nil {
				if workspace.ErrorCode(err) != workspace.CodeUnauthenticated {
					writeError(w, workspace.Wrap(workspace.CodeUnavailable, err, "cannot check the token now"))
					return
				}
				writeError(w, err)
				return
			}
			// 4. Scope narrowing.
			if vals := r.Header.Values(ScopeHeader); len(vals) > 0 {
				if len(vals) > 1 {
					writeError(w, workspace.Errorf(workspace.CodeInvalidArgument, "%s given more than once", ScopeHeader))
					return
				}
				gr, cs, err := ParseScope(vals[0])
				if err != nil {
					writeError(w, err)
					return
				}
				if p, err = p.Narrow(gr, cs); err != nil {
					writeError(w, err)
					return
				}
			}
			ctx = workspace.WithPrincipal(ctx, p)
			if id := clientID(r); id != "" {
				ctx = workspace.WithClient(ctx, id)
			}
		}
		// 5. Body size: refuse a declared length over the limit before
		// reading anything, and cap what is read otherwise.
		if r.ContentLength > g.maxBody {
			writeError(w, errBodyTooLarge)
			return
		}
		if hasBody {
			body, err := g.readBody(w, r)
			if err != nil {
				writeError(w, err)
				return
			}
			r.Body = body
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// readBody reads r's whole body, at most maxBody bytes, before the
// handler runs, then lifts the read deadline: what the handler does next
// (a long search, an MCP answer streamed as SSE) has no time limit of the
// guard's, and no deadline is left on the connection to fail its next
// read, which net/http would take for the client gone and cancel the
// request's context. (net/http lifts it too once a body is read, but
// does not promise to.)
func (g *guard) readBody(w http.ResponseWriter, r *http.Request) (*bufferedBody, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.maxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, errBodyTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The connection cannot be read from again: net/http closes it
		// after this answer.
		w.Header().Set("Connection", "close")
		return nil, &bodyTimeoutError{after: g.bodyTimeout}
	case err != nil:
		return nil, workspace.Errorf(workspace.CodeInvalidArgument, "cannot read the request body")
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return &bufferedBody{Reader: bytes.NewReader(b), bytes: b}, nil
}

// bufferedBody is a request body the guard has read whole.
type bufferedBody struct {
	*bytes.Reader
	bytes []byte
}

func (*bufferedBody) Close() error { return nil }

// bodyTimeoutError is a body that did not arrive within the guard's
// bound: 408 with code INVALID_ARGUMENT.
type bodyTimeoutError struct{ after time.Duration }

func (e *bodyTimeoutError) Error() string {
	return fmt.Sprintf("the request body did not arrive within %s of its headers: send it whole, at once", e.after)
}

// clientID is the client instance a request names: its X-Tychora-Client
// header, else its MCP session; "" when neither is a valid id.
func clientID(r *http.Request) string {
	for _, h := range []string{workspace.ClientHeader, "Mcp-Session-Id"} {
		if id := r.Header.Get(h); workspace.ValidClientID(id) {
			return id
		}
	}
	return ""
}

// anonymousAllowed reports whether r may proceed without a token: only the
// token-less health answer (GET, or HEAD without its body).
func anonymousAllowed(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/v1/health"
}

func isAnonymous(ctx context.Context) bool {
	v, _ := ctx.Value(anonymousKey{}).(bool)
	return v
}

// bearer extracts the token of a single "Bearer TOKEN" header.
func bearer(vals []string) (string, bool) {
	if len(vals) != 1 {
		return "", false
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// methodNotAllowed is a 405; allow lists the methods the route takes.
type methodNotAllowed struct{ allow string }

func (*methodNotAllowed) Error() string { return "method not allowed" }

// optionsAllow is the Allow of every OPTIONS refusal: the methods the API
// uses anywhere.
const optionsAllow = "GET, HEAD, POST, DELETE"
