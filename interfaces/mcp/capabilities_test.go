package mcpapi_test

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCapabilitiesMatchAnswers: at every protocol version, over a session
// on /mcp/ (stateless at 2026-07-28) and in memory, every method the
// server answers is of a capability it declares: tools, resources,
// prompts (none: an empty list) and logging (before 2026-07-28, which
// removed it); completions, which it does not declare, answer -32601.
func TestCapabilitiesMatchAnswers(t *testing.T) {
	own := startOwner(t)
	for _, v := range mcp.SupportedProtocolVersions() {
		for _, over := range []string{"http", "memory"} {
			t.Run(v+"/"+over, func(t *testing.T) {
				var cs *mcp.ClientSession
				if over == "http" {
					cs = httpSession(t, own, own.Token(), "", v)
				} else {
					cs = memSession(t, own.Service(), ownerP, v)
				}
				ctx := testCtx(t)
				caps := cs.InitializeResult().Capabilities
				if caps == nil || caps.Tools == nil || caps.Resources == nil || caps.Prompts == nil {
					t.Fatalf("capabilities %s: want tools, resources and prompts", dump(caps))
				}
				if caps.Completions != nil {
					t.Fatalf("capabilities %s: declares completions", dump(caps))
				}
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
					t.Fatalf("resources/templates/list: %v", err)
				}
				if res, err := cs.ListPrompts(ctx, nil); err != nil || len(res.Prompts) != 0 {
					t.Fatalf("prompts/list: %v %s", err, dump(res))
				}
				if v < "2026-07-28" {
					//lint:ignore SA1019 that logging is declared and taken is what is checked
					if caps.Logging == nil {
						t.Fatalf("capabilities %s: want logging", dump(caps))
					}
					//lint:ignore SA1019 that logging/setLevel is taken is what is checked
					if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
						t.Fatalf("logging/setLevel: %v", err)
					}
				}
				_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "x"}, Argument: mcp.CompleteParamsArgument{Name: "a", Value: "b"}})
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeMethodNotFound {
					t.Errorf("completion/complete: %v, want the JSON-RPC error -32601", err)
				}
			})
		}
	}
}
