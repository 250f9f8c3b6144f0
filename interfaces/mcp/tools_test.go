package mcpapi_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	mcpapi "github.com/tychora/tychora/interfaces/mcp"
	"github.com/tychora/tychora/workspace"
)

// wantAnnotations are the hints of DESIGN §4.
var wantAnnotations = map[string]map[string]any{
	"discover":    {"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false, "openWorldHint": false},
	"search":      {"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false, "openWorldHint": false},
	"inspect":     {"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false, "openWorldHint": false},
	"add_sources": {"readOnlyHint": false, "idempotentHint": false, "destructiveHint": false, "openWorldHint": false},
	"manage_job":  {"readOnlyHint": false, "idempotentHint": false, "destructiveHint": true, "openWorldHint": false},
}

func listTools(t testing.TB, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

func TestToolsList(t *testing.T) {
	own := startOwner(t)
	cs := memSession(t, own.Service(), ownerP, "")
	tools := listTools(t, cs)
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"add_sources", "discover", "inspect", "manage_job", "search"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	for name, tool := range tools {
		// Annotations as they travel, every hint explicit.
		var ann map[string]any
		b, _ := json.Marshal(tool.Annotations)
		_ = json.Unmarshal(b, &ann)
		for k, want := range wantAnnotations[name] {
			if got, ok := ann[k]; !ok || got != want {
				t.Errorf("%s: annotation %s = %v (present %v), want %v", name, k, got, ok, want)
			}
		}
		if len(tool.Description) < 200 {
			t.Errorf("%s: description too thin for a model: %q", name, tool.Description)
		}
		// One complete example call, which the tool takes: its ids may
		// name nothing (NOT_FOUND), but its arguments are valid.
		ex := interfaces.ToolExample(name)
		if ex == "" || strings.Count(tool.Description, "Example: "+ex) != 1 {
			t.Errorf("%s: the description does not carry its example call %s once", name, ex)
		}
		if res := call(t, cs, name, json.RawMessage(ex)); res.IsError {
			if code := envelope(t, res); code == workspace.CodeInvalidArgument {
				t.Errorf("%s: the example %s is refused: %s", name, ex, res.Content[0].(*mcp.TextContent).Text)
			}
		}
		in, _ := tool.InputSchema.(map[string]any)
		if in["type"] != "object" || in["additionalProperties"] != false {
			t.Errorf("%s: input schema root %v", name, dump(in))
		}
		out, _ := tool.OutputSchema.(map[string]any)
		if out["type"] != "object" {
			t.Errorf("%s: output schema root type %v, want object", name, out["type"])
		}
		// The advertised schema is InputSchema's.
		want, _ := json.Marshal(interfaces.InputSchema(name))
		got, _ := json.Marshal(tool.InputSchema)
		var w, g any
		_ = json.Unmarshal(want, &w)
		_ = json.Unmarshal(got, &g)
		if dump(w) != dump(g) {
			t.Errorf("%s: advertised input schema differs from InputSchema", name)
		}
	}
}

// checkOutcome asserts the invariants of every tool answer: a tool error is
// the envelope; a success is one structured JSON object matching the output
// schema, with no duplicate text block.
func checkOutcome(t testing.TB, tool string, res *mcp.CallToolResult) (ok bool, code workspace.Code) {
	t.Helper()
	if res.IsError {
		return false, envelope(t, res)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil || len(b) == 0 || b[0] != '{' {
		t.Fatalf("%s: structuredContent is not an object: %s", tool, b)
	}
	// A success carries no duplicate text block; a rendered search carries
	// its rendered text as the one block (DESIGN §6).
	var rendered struct {
		Budget struct {
			RenderTarget *string `json:"render_target"`
		} `json:"budget"`
	}
	want := 0
	if tool == "search" && json.Unmarshal(b, &rendered) == nil && rendered.Budget.RenderTarget != nil {
		want = 1
		if len(res.Content) == 1 {
			if _, ok := res.Content[0].(*mcp.TextContent); !ok {
				t.Errorf("search: the rendered block is not text: %s", dump(res))
			}
		}
	}
	if len(res.Content) != want {
		t.Errorf("%s: success has %d content blocks, want %d: %s", tool, len(res.Content), want, dump(res))
	}
	validateJSON(t, tool, b)
	return true, ""
}

func TestEveryToolAnswers(t *testing.T) {
	own := startOwner(t)
	cs := memSession(t, own.Service(), ownerP, "")
	cases := []struct {
		tool     string
		args     any
		mustWork bool // the Service of this build implements it
	}{
		{"discover", map[string]any{"request": map[string]any{"subject": "sources"}}, true},
		{"discover", map[string]any{"request": map[string]any{"subject": "kinds", "limit": 2}}, true},
		{"search", map[string]any{"request": map[string]any{"question": "tokens"}}, false},
		{"search", map[string]any{"request": map[string]any{"question": "tokens"}, "render": "agent@1"}, false},
		{"search", map[string]any{"replay_run_id": "run_nope"}, false},
		{"inspect", map[string]any{"request": map[string]any{"subject": "source", "source_id": "src_nope"}}, false},
		{"add_sources", map[string]any{"action": "sync", "source_id": "src_nope"}, false},
		{"manage_job", map[string]any{"action": "list"}, true},
		{"manage_job", map[string]any{"action": "get", "job_id": "job_nope"}, false},
	}
	for _, c := range cases {
		res := call(t, cs, c.tool, c.args)
		if res.IsError {
			code := envelope(t, res)
			if c.mustWork {
				t.Errorf("%s %s: %s", c.tool, dump(c.args), dump(res))
			}
			t.Logf("%s: tool error %s", c.tool, code)
			continue
		}
		if c.tool == "search" && strings.Contains(dump(c.args), "render") {
			// A rendered search carries exactly one text block.
			if len(res.Content) != 1 {
				t.Errorf("rendered search has %d blocks", len(res.Content))
			}
			continue
		}
		checkOutcome(t, c.tool, res)
	}
}

func TestUnknownToolIsJSONRPCError(t *testing.T) {
	own := startOwner(t)
	cs := memSession(t, own.Service(), ownerP, "")
	_, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("unknown tool: %v, want a JSON-RPC -32602 error", err)
	}
}

func TestInvalidArguments(t *testing.T) {
	own := startOwner(t)
	cs := memSession(t, own.Service(), ownerP, "")
	cases := []struct {
		name string
		tool string
		args any
	}{
		{"unknown field", "discover", map[string]any{"request": map[string]any{"subject": "sources"}, "extra": 1}},
		{"unknown nested field", "discover", map[string]any{"request": map[string]any{"subject": "sources", "Subject": "x"}}},
		{"wrong type", "discover", map[string]any{"request": map[string]any{"subject": 7}}},
		{"missing required", "inspect", map[string]any{"request": map[string]any{"subject": "source"}}},
		{"missing everything", "manage_job", map[string]any{}},
		{"not in enum", "manage_job", map[string]any{"action": "delete"}},
		{"not an integer", "manage_job", map[string]any{"action": "list", "limit": 2.5}},
		{"out of int range", "manage_job", map[string]any{"action": "list", "limit": 1e30}},
		{"null request", "search", map[string]any{"request": nil}},
		{"array arguments", "search", json.RawMessage(`[1,2]`)},
		{"string arguments", "discover", json.RawMessage(`"sources"`)},
		{"both request and replay", "search", map[string]any{"request": map[string]any{"question": "q"}, "replay_run_id": "r"}},
		{"neither request nor replay", "search", map[string]any{"render": "agent@1"}},
		{"unknown render", "search", map[string]any{"request": map[string]any{"question": "q"}, "render": "html@9"}},
		{"unknown filter", "search", map[string]any{"request": map[string]any{"question": "q", "filters": map[string]any{"color": []string{"red"}}}}},
		{"facet not a string", "search", map[string]any{"request": map[string]any{"question": "q", "filters": map[string]any{"facets": map[string]any{"language": 1}}}}},
		{"unknown source field", "add_sources", map[string]any{"action": "add", "source": map[string]any{"path": "x", "recursive": true}}},
		{"unknown kind", "add_sources", map[string]any{"action": "add", "source": map[string]any{"path": "x", "kind": "zip"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, cs, c.tool, c.args)
			if code := envelope(t, res); code != workspace.CodeInvalidArgument {
				t.Fatalf("code %s, want INVALID_ARGUMENT: %s", code, dump(res))
			}
		})
	}
}

func TestNoCallerIsUnauthenticated(t *testing.T) {
	own := startOwner(t)
	ctx := testCtx(t)
	// No fixed principal and none in the context.
	srv := mcpapi.NewServer(own.Service(), mcpapi.Options{})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := newClient().Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close(); _ = ss.Wait() }()
	res := call(t, cs, "discover", map[string]any{"request": map[string]any{"subject": "sources"}})
	if code := envelope(t, res); code != workspace.CodeUnauthenticated {
		t.Fatalf("code %s, want UNAUTHENTICATED", code)
	}
	if _, ok := listTools(t, cs)["add_sources"]; ok {
		t.Error("an unknown caller sees add_sources")
	}
	// A principal in the session's context is the fallback caller.
	srv2 := mcpapi.NewServer(own.Service(), mcpapi.Options{})
	st2, ct2 := mcp.NewInMemoryTransports()
	ss2, err := srv2.Connect(workspace.WithPrincipal(ctx, readerP), st2, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs2, err := newClient().Connect(ctx, ct2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs2.Close(); _ = ss2.Wait() }()
	ok, _ := checkOutcome(t, "discover", call(t, cs2, "discover", map[string]any{"request": map[string]any{"subject": "sources"}}))
	if !ok {
		t.Error("the context's principal was not used")
	}
}

func TestGrantsInMemory(t *testing.T) {
	own := startOwner(t)
	for _, c := range []struct {
		p         workspace.Principal
		seesWrite bool
	}{{readerP, false}, {writerP, true}, {ownerP, true}} {
		cs := memSession(t, own.Service(), c.p, "")
		if _, ok := listTools(t, cs)["add_sources"]; ok != c.seesWrite {
			t.Errorf("%s: add_sources listed %v", c.p.Grant, ok)
		}
		// Even malformed arguments are refused on the grant first.
		res := call(t, cs, "add_sources", map[string]any{"nonsense": true})
		code := envelope(t, res)
		if c.seesWrite && code != workspace.CodeInvalidArgument || !c.seesWrite && code != workspace.CodePermissionDenied {
			t.Errorf("%s: add_sources with bad arguments: %s", c.p.Grant, code)
		}
		res = call(t, cs, "manage_job", map[string]any{"action": "cancel", "job_id": "job_nope"})
		if code := envelope(t, res); (code == workspace.CodePermissionDenied) == c.seesWrite {
			t.Errorf("%s: cancel: %s", c.p.Grant, code)
		}
	}
}
