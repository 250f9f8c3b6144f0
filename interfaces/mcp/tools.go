package mcpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// answer is what a tool produced: the exact structuredContent bytes and,
// for a rendered search, the text block that follows them.
type answer struct {
	structured []byte
	rendered   *string
}

// toolSpec is one tool: its definition and the adapter that decodes the
// arguments and calls the Service.
type toolSpec struct {
	tool *mcp.Tool
	call func(ctx context.Context, svc interfaces.Service, raw json.RawMessage) (answer, error)
}

func boolPtr(b bool) *bool { return &b }

// readOnly and the others are the annotations of DESIGN §4, every hint set
// explicitly.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)}
}

func toolSpecs() []toolSpec {
	return []toolSpec{
		{
			tool: &mcp.Tool{
				Name:        interfaces.ToolDiscover,
				Title:       "Discover",
				Description: discoverDescription,
				Annotations: readOnly("Discover"),
			},
			call: func(ctx context.Context, svc interfaces.Service, raw json.RawMessage) (answer, error) {
				args, err := interfaces.Decode[interfaces.DiscoverArgs](interfaces.ToolDiscover, raw)
				if err != nil {
					return answer{}, err
				}
				return marshalAnswer(svc.Discover(ctx, args))
			},
		},
		{
			tool: &mcp.Tool{
				Name:        interfaces.ToolSearch,
				Title:       "Search",
				Description: searchDescription,
				Annotations: readOnly("Search"),
			},
			call: search,
		},
		{
			tool: &mcp.Tool{
				Name:        interfaces.ToolInspect,
				Title:       "Inspect a source",
				Description: inspectDescription,
				Annotations: readOnly("Inspect a source"),
			},
			call: func(ctx context.Context, svc interfaces.Service, raw json.RawMessage) (answer, error) {
				args, err := interfaces.Decode[interfaces.InspectArgs](interfaces.ToolInspect, raw)
				if err != nil {
					return answer{}, err
				}
				return marshalAnswer(svc.Inspect(ctx, args))
			},
		},
		{
			tool: &mcp.Tool{
				Name:        interfaces.ToolAddSources,
				Title:       "Add or sync sources",
				Description: addSourcesDescription,
				Annotations: &mcp.ToolAnnotations{Title: "Add or sync sources", ReadOnlyHint: false, DestructiveHint: boolPtr(false), IdempotentHint: false, OpenWorldHint: boolPtr(false)},
			},
			call: func(ctx context.Context, svc interfaces.Service, raw json.RawMessage) (answer, error) {
				args, err := interfaces.Decode[interfaces.AddSourcesRequest](interfaces.ToolAddSources, raw)
				if err != nil {
					return answer{}, err
				}
				return marshalAnswer(svc.AddSources(ctx, args))
			},
		},
		{
			tool: &mcp.Tool{
				Name:        interfaces.ToolManageJob,
				Title:       "Manage source jobs",
				Description: manageJobDescription,
				Annotations: &mcp.ToolAnnotations{Title: "Manage source jobs", ReadOnlyHint: false, DestructiveHint: boolPtr(true), IdempotentHint: false, OpenWorldHint: boolPtr(false)},
			},
			call: func(ctx context.Context, svc interfaces.Service, raw json.RawMessage) (answer, error) {
				args, err := interfaces.Decode[interfaces.ManageJobRequest](interfaces.ToolManageJob, raw)
				if err != nil {
					return answer{}, err
				}
				return marshalAnswer(svc.ManageJob(ctx, args))
			},
		},
	}
}

// search forwards the service's structured bytes untouched: the token
// budget counted exactly them.
func search(ctx context.Context, svc interfaces.Service, raw json.RawMessage) (answer, error) {
	args, err := interfaces.Decode[interfaces.SearchArgs](interfaces.ToolSearch, raw)
	if err != nil {
		return answer{}, err
	}
	out, err := svc.Search(ctx, args)
	if err != nil {
		return answer{}, err
	}
	if !isJSONObject(out.Structured) {
		return answer{}, workspace.Wrap(workspace.CodeInternal, fmt.Errorf("search returned %d structured bytes that are not a JSON object", len(out.Structured)), "internal error")
	}
	return answer{structured: out.Structured, rendered: out.Rendered}, nil
}

// marshalAnswer is the answer of the tools whose result is a plain value.
func marshalAnswer[T any](v T, err error) (answer, error) {
	if err != nil {
		return answer{}, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return answer{}, workspace.Wrap(workspace.CodeInternal, err, "internal error")
	}
	return answer{structured: b}, nil
}

// isJSONObject reports whether b is one valid JSON object.
func isJSONObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return json.Valid(b)
		}
		return false
	}
	return false
}

// addTools registers the five tools with their schemas.
func (s *server) addTools(srv *mcp.Server) {
	for _, spec := range toolSpecs() {
		spec.tool.InputSchema = interfaces.InputSchema(spec.tool.Name)
		spec.tool.OutputSchema = interfaces.OutputSchema(spec.tool.Name)
		srv.AddTool(spec.tool, s.toolHandler(spec))
	}
}

// toolHandler adapts spec to the SDK. Every outcome is a CallToolResult:
// failures are tool errors the model can read, never JSON-RPC errors.
func (s *server) toolHandler(spec toolSpec) mcp.ToolHandler {
	name := spec.tool.Name
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("mcp tool panicked", workspace.LogTool, name, workspace.LogPanic, r, workspace.LogStack, string(debug.Stack()))
				res = toolError(workspace.Errorf(workspace.CodeInternal, "internal error"))
			}
		}()
		ctx, p, ok := s.callerContext(ctx, req)
		if !ok {
			return toolError(workspace.Errorf(workspace.CodeUnauthenticated, "no caller identity")), nil
		}
		// A caller below the tool's grant learns nothing from its
		// arguments: refused before they are read, by the Service's own
		// rule (interfaces.ToolGrant).
		if err := p.Require(interfaces.ToolGrant(name)); err != nil {
			return toolError(err), nil
		}
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		ans, err := spec.call(ctx, s.svc, raw)
		if err != nil {
			return toolError(s.failure(ctx, slog.String(workspace.LogTool, name), err)), nil
		}
		return s.result(name, ans, structured(req.ProtocolVersion())), nil
	}
}

// result builds the success form of ans: the bytes as structuredContent
// (or, before 2025-06-18, as the one text block), then the rendered text
// block if any. A result over interfaces.MaxResultBytes serialized is refused.
func (s *server) result(tool string, ans answer, modern bool) *mcp.CallToolResult {
	if len(ans.structured) > interfaces.MaxResultBytes {
		return tooLarge(len(ans.structured))
	}
	res := &mcp.CallToolResult{}
	if modern {
		res.StructuredContent = json.RawMessage(ans.structured)
	} else {
		res.Content = append(res.Content, &mcp.TextContent{Text: string(ans.structured)})
	}
	if ans.rendered != nil {
		res.Content = append(res.Content, &mcp.TextContent{Text: *ans.rendered})
	}
	// Below the cap for sure: JSON spells a byte in at most six ("\u00XX"),
	// and the envelope around the blocks is small. Most answers stop here,
	// unmeasured.
	if resultBound(ans) <= interfaces.MaxResultBytes {
		return res
	}
	// Measure what the SDK will send: it encodes the result with
	// encoding/json, as here.
	b, err := json.Marshal(res)
	if err != nil {
		s.log.Error("mcp result does not encode", workspace.LogTool, tool, workspace.LogErr, err)
		return toolError(workspace.Wrap(workspace.CodeInternal, err, "internal error"))
	}
	if len(b) > interfaces.MaxResultBytes {
		return tooLarge(len(b))
	}
	return res
}

// resultBound bounds the encoded size of the result of ans.
func resultBound(ans answer) int {
	n := len(ans.structured)
	if ans.rendered != nil {
		n += len(*ans.rendered)
	}
	return 1024 + 6*n
}

func tooLarge(n int) *mcp.CallToolResult {
	return toolError(interfaces.CheckResultSize(n))
}

// failure is what a call that failed with err answers, and logs what the
// caller cannot act on (its detail never leaves); what names the tool or
// the resource, as the log attribute it is. A call whose context
// ended first — the client cancelled it (notifications/cancelled), its
// session or connection ended, the owner is stopping — failed for that
// reason and no other: it answers errCancelled, logged at debug level
// only. (The SDK answers every request it took, cancelled or not; a client
// ignores the answer to a request it cancelled.)
func (s *server) failure(ctx context.Context, what slog.Attr, err error) error {
	if ctx.Err() != nil {
		s.log.Debug("mcp call cancelled", what, workspace.LogErr, err)
		return errCancelled
	}
	s.logFailure(what, err)
	return err
}

// logFailure logs what the caller cannot act on; its detail never leaves.
func (s *server) logFailure(what slog.Attr, err error) {
	switch workspace.ErrorCode(err) {
	case workspace.CodeInternal:
		s.log.Error("mcp call failed", what, workspace.LogErr, err)
	case workspace.CodeUnavailable:
		s.log.Warn("mcp call failed", what, workspace.LogErr, err)
	}
}
