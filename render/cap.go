package render

import (
	"github.com/tychora/tychora/workspace"
)

// MaxResultBytes caps every serialized MCP CallToolResult (DESIGN §6).
const MaxResultBytes = 4 << 20

// CheckResultSize returns nil when a serialized CallToolResult of n bytes
// may be sent, and otherwise a small OUTPUT_BUDGET_EXCEEDED error for the
// client to receive instead.
func CheckResultSize(n int) error {
	if n <= MaxResultBytes {
		return nil
	}
	return workspace.Errorf(workspace.CodeOutputBudgetExceeded,
		"the result is %d bytes, over the %d-byte (4 MiB) limit of one tool result: narrow the request (a smaller limit or budget, fewer items, or without include_content)",
		n, MaxResultBytes)
}
