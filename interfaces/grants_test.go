package interfaces

import (
	"testing"

	"github.com/tychora/tychora/workspace"
)

// TestToolGrants: every tool names its least grant, as DESIGN §8's ladder
// has it; only add_sources needs more than read.
func TestToolGrants(t *testing.T) {
	if len(toolGrants) != len(ToolNames()) {
		t.Fatalf("%d tool grants for %d tools", len(toolGrants), len(ToolNames()))
	}
	for _, tool := range ToolNames() {
		want := workspace.GrantRead
		if tool == ToolAddSources {
			want = workspace.GrantWrite
		}
		if g, ok := toolGrants[tool]; !ok || g != want || ToolGrant(tool) != want {
			t.Errorf("%s needs %q, want %q", tool, g, want)
		}
	}
	if g := ToolGrant("nope"); g != workspace.GrantManage {
		t.Errorf("an unknown tool needs %q, want manage", g)
	}
}
