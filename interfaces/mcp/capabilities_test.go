package mcpapi_test

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCapabilitiesMatchAnswers: at every protocol version, over a session
// on /mcp/ (stateless at 2026-07-28) and in memory, the server declares
// tools and resources and answers their methods, and declares neither
// prompts nor logging and answers their methods -32601.
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
				if caps == nil || caps.Tools == nil || caps.Resources == nil {
					t.Fatalf("capabilities %s: want tools and resources", dump(caps))
				}
				//lint:ignore SA1019 that logging is not declared is what is checked
				if caps.Prompts != nil || caps.Logging != nil || caps.Completions != nil {
					t.Fatalf("capabilities %s: declares what it does not serve", dump(caps))
				}
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
					t.Fatalf("resources/templates/list: %v", err)
				}
				notFound := func(what string, err error) {
					t.Helper()
					var werr *jsonrpc.Error
					if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeMethodNotFound {
						t.Errorf("%s: %v, want the JSON-RPC error -32601", what, err)
					}
				}
				_, err := cs.ListPrompts(ctx, nil)
				notFound("prompts/list", err)
				_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "x"})
				notFound("prompts/get", err)
				if v < "2026-07-28" {
					//lint:ignore SA1019 that logging/setLevel is refused is what is checked
					notFound("logging/setLevel", cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
				}
			})
		}
	}
}
