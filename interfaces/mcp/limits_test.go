package mcpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

var inspectArgs = map[string]any{"request": map[string]any{"subject": "revisions", "source_id": "src_1", "include_content": true}}

func TestOversizedResult(t *testing.T) {
	own := startOwner(t)
	big := strings.Repeat("x", interfaces.MaxResultBytes+1)
	cs := memSession(t, stubbed(own.Service(), stub{inspect: map[string]any{"content": big}}), ownerP, "")
	res := call(t, cs, "inspect", inspectArgs)
	if code := envelope(t, res); code != workspace.CodeOutputBudgetExceeded {
		t.Fatalf("oversized inspect: %s", code)
	}
	if b, _ := json.Marshal(res); len(b) > 1024 {
		t.Errorf("the refusal is %d bytes, want a small error", len(b))
	}

	// A search whose bytes are over the cap.
	structured, _ := json.Marshal(map[string]string{"run_id": big})
	cs = memSession(t, stubbed(own.Service(), stub{structured: structured}), ownerP, "")
	res = call(t, cs, "search", map[string]any{"request": map[string]any{"question": "q"}})
	if code := envelope(t, res); code != workspace.CodeOutputBudgetExceeded {
		t.Fatalf("oversized search: %s", code)
	}
}

// TestCapCountsTheSerializedResult: a result just under the cap as
// structuredContent grows past it as an escaped text block (old protocol).
func TestCapCountsTheSerializedResult(t *testing.T) {
	own := startOwner(t)
	quotes := strings.Repeat(`"`, interfaces.MaxResultBytes/3)
	svc := stubbed(own.Service(), stub{inspect: quotes})
	modern := call(t, memSession(t, svc, ownerP, ""), "inspect", inspectArgs)
	if modern.IsError {
		t.Fatalf("a %d-byte result is refused: %s", len(quotes), dump(modern.Content))
	}
	old := call(t, memSession(t, svc, ownerP, "2025-03-26"), "inspect", inspectArgs)
	if code := envelope(t, old); code != workspace.CodeOutputBudgetExceeded {
		t.Fatalf("old protocol, doubly escaped: %s", code)
	}
}

func TestMalformedSearchBytesAreInternal(t *testing.T) {
	own := startOwner(t)
	for _, bad := range []string{"", "[]", `{"a":`, "null", `"x"`} {
		cs := memSession(t, stubbed(own.Service(), stub{structured: []byte(bad)}), ownerP, "")
		res := call(t, cs, "search", map[string]any{"request": map[string]any{"question": "q"}})
		if code := envelope(t, res); code != workspace.CodeInternal {
			t.Errorf("structured %q: %s", bad, code)
		}
	}
}

func TestRenderedSearchInMemory(t *testing.T) {
	own := startOwner(t)
	want := sampleStructured(t)
	rendered := "rendered <text>"
	svc := stubbed(own.Service(), stub{structured: want, rendered: &rendered})
	res := call(t, memSession(t, svc, readerP, ""), "search", map[string]any{"request": map[string]any{"question": "q"}, "render": "agent@1"})
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != rendered {
		t.Fatalf("rendered search: %s", dump(res))
	}
	validateJSON(t, "search", mustJSON(t, res.StructuredContent))
	old := call(t, memSession(t, svc, readerP, "2024-11-05"), "search", map[string]any{"request": map[string]any{"question": "q"}, "render": "agent@1"})
	if old.StructuredContent != nil || len(old.Content) != 2 ||
		old.Content[0].(*mcp.TextContent).Text != string(want) || old.Content[1].(*mcp.TextContent).Text != rendered {
		t.Fatalf("old protocol rendered search: %s", dump(old))
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
