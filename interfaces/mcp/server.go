package mcpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// Options configure a server. The zero value works.
type Options struct {
	// Name and Version identify the server to clients (default "tychora"
	// and "dev").
	Name    string
	Version string
	// Instructions tell the client's model how to use the server; empty
	// means the built-in text.
	Instructions string
	// Logger receives the server's warnings and failures; nil is silent.
	// Nothing is ever written to stdout.
	Logger *slog.Logger
	// Principal, when set, is the caller of every request: the process's
	// grant, as under stdio. When nil, each request's caller comes from its
	// HTTP request (see NewHTTPHandler) or, without one, from the context
	// the session was connected with.
	Principal *workspace.Principal
	// MaxRequestBytes caps one inbound message: an HTTP request body under
	// NewHTTPHandler, a stdio frame under ServeStdio (default 4 MiB, the
	// max_request_bytes setting).
	MaxRequestBytes int64
}

func (o Options) fill() Options {
	o.Name = cmp.Or(o.Name, "tychora")
	o.Version = cmp.Or(o.Version, "dev")
	o.Instructions = cmp.Or(o.Instructions, defaultInstructions)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = workspace.DefaultMaxRequestBytes
	}
	return o
}

const defaultInstructions = `tychora searches the files, folders and git repositories that were added to this workspace, and answers within a token budget.
- Start with search: {"request":{"question":"..."}}. Add "render":"agent@1" for a compact, citation-first text answer. Narrow with request.filters (kinds, languages, paths globs, sources, collections, facets); size the answer with request.budget.max_tokens; continue with request.cursor = next_cursor. truncated:true means more matched than fit.
- Read a hit's whole text with the resource tychora://evidence/{evidence_id}; look inside a source with inspect.
- discover lists sources (their ids), kinds, facets, languages, profiles, settings and your past runs (replay one with search {"replay_run_id":...}).
- add_sources adds a path inside the ingest roots (or re-syncs a source) as a background job; follow it with manage_job get.
- Failures are tool results with isError true and {"error":{"code","message"}}; fix the arguments when the code is INVALID_ARGUMENT.`

// server holds what the tool and resource handlers share.
type server struct {
	svc   interfaces.Service
	log   *slog.Logger
	fixed *workspace.Principal
}

// NewServer returns the MCP server over svc: the five tools and the four
// resource templates. The same server may serve any number of sessions
// over any transport.
func NewServer(svc interfaces.Service, o Options) *mcp.Server {
	o = o.fill()
	s := &server{svc: svc, log: o.Logger}
	if o.Principal != nil {
		p := *o.Principal
		s.fixed = &p
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: o.Name, Title: "tychora", Version: o.Version}, &mcp.ServerOptions{
		Instructions: o.Instructions,
		Logger:       quiet(o.Logger),
		// What it declares is what it answers: tools and resources (which
		// never change while a server runs), prompts (there are none:
		// prompts/list answers an empty list) and logging (logging/setLevel
		// is taken; tychora sends the client no log messages). It declares
		// no completions, and completion/complete answers -32601
		// (TestCapabilitiesMatchAnswers).
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{},
			Prompts:   &mcp.PromptCapabilities{},
			//lint:ignore SA1019 clients before 2026-07-28 may set a log level, which the SDK takes
			Logging: &mcp.LoggingCapabilities{},
		},
		// What a caller sees depends on its grant: lists and reads may be
		// cached by its own client only.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.CacheScope = "private"
		},
	})
	srv.AddReceivingMiddleware(s.encodableErrors, s.listTools)
	s.addTools(srv)
	s.addResources(srv)
	return srv
}

// principalKey is the auth.TokenInfo.Extra key that carries the caller of
// an HTTP request to the handlers.
const principalKey = "tychora/principal"

// clientKey is the auth.TokenInfo.Extra key that carries the client
// instance the request named (workspace.ClientFrom: X-Tychora-Client, or
// the MCP session), which the owner's admission of searches tells callers
// apart by.
const clientKey = "tychora/client"

// caller returns the principal of req: the fixed one (stdio), else the one
// its HTTP request carried, else the one in ctx. ok is false when there is
// none.
func (s *server) caller(ctx context.Context, req mcp.Request) (workspace.Principal, bool) {
	if s.fixed != nil {
		return *s.fixed, s.fixed.Grant.Valid()
	}
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		p, ok := extra.TokenInfo.Extra[principalKey].(workspace.Principal)
		return p, ok && p.Grant.Valid()
	}
	return workspace.PrincipalFrom(ctx)
}

// callerContext returns ctx carrying the caller of req, or carrying no
// valid caller at all (so that the Service refuses with UNAUTHENTICATED).
func (s *server) callerContext(ctx context.Context, req mcp.Request) (context.Context, workspace.Principal, bool) {
	p, ok := s.caller(ctx, req)
	if !ok {
		return workspace.WithPrincipal(ctx, workspace.Principal{}), p, false
	}
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		if id, ok := extra.TokenInfo.Extra[clientKey].(string); ok {
			ctx = workspace.WithClient(ctx, id)
		}
	}
	return workspace.WithPrincipal(ctx, p), p, true
}

// structuredSince is the first protocol version with structuredContent
// (and outputSchema).
const structuredSince = "2025-06-18"

// structured reports whether a request negotiated at protocol version v may
// carry structuredContent. An unknown version was negotiated up to the
// SDK's newest handshake version, which has it.
func structured(v string) bool {
	if v == "" || !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		return true
	}
	return v >= structuredSince
}

// listTools is a receiving middleware that tailors tools/list to the
// caller: a caller without the write grant does not see add_sources (it
// stays callable, and fails with PERMISSION_DENIED), and a client of a
// protocol older than 2025-06-18 gets no outputSchema, since its results
// carry no structuredContent.
func (s *server) listTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		lreq, ok2 := req.(*mcp.ListToolsRequest)
		if !ok || !ok2 {
			return res, err
		}
		p, known := s.caller(ctx, req)
		canWrite := known && p.Can(workspace.GrantWrite)
		legacy := !structured(lreq.ProtocolVersion())
		tools := make([]*mcp.Tool, 0, len(lr.Tools))
		for _, t := range lr.Tools {
			if t.Name == interfaces.ToolAddSources && !canWrite {
				continue
			}
			if legacy && t.OutputSchema != nil {
				c := *t
				c.OutputSchema = nil
				t = &c
			}
			tools = append(tools, t)
		}
		lr.Tools = tools // lr is built afresh for every request
		return lr, nil
	}
}

// encodableErrors is a receiving middleware that keeps every JSON-RPC error
// encodable. The SDK's resource-not-found error quotes the URI with Go's %q
// into its JSON data, which is not JSON for a URI with control characters;
// such an error cannot be sent, and its session dies. The error is rebuilt
// here with the data encoded properly.
func (s *server) encodableErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var werr *jsonrpc.Error
		if err == nil || !errors.As(err, &werr) || len(werr.Data) == 0 || json.Valid(werr.Data) {
			return res, err
		}
		if rr, ok := req.(*mcp.ReadResourceRequest); ok && werr.Code == jsonrpc.CodeInvalidParams && rr.Params != nil {
			return nil, resourceError(rr.Params.URI, notFound("resource"))
		}
		return nil, &jsonrpc.Error{Code: werr.Code, Message: werr.Message}
	}
}

// quiet returns a logger that passes only warnings and errors: the SDK logs
// every session at info level, and stateless HTTP makes a session per
// request.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{l.Handler(), slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.min}
}
