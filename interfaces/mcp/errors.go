package mcpapi

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// maxMessage bounds an error message built from the caller's input.
const maxMessage = 400

// errorEnvelope returns the sanitized {"error":{"code","message"}} of err.
func errorEnvelope(err error) []byte {
	b, mErr := json.Marshal(interfaces.NewErrorBody(err))
	if mErr != nil {
		// NewErrorBody holds two strings: this cannot fail.
		return []byte(`{"error":{"code":"INTERNAL","message":"internal error"}}`)
	}
	return b
}

// toolError is the tool-error form of err: isError, one text block with
// the sanitized envelope, no structuredContent.
func toolError(err error) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(errorEnvelope(err))}}}
	// SetError keeps the content and records err for sending middleware.
	res.SetError(err)
	return res
}

// resourceError maps a failed resource read to the JSON-RPC error the spec
// asks for: an unknown or out-of-scope id is the SDK's resource-not-found
// error (-32602); a refused caller is invalid params; anything else an
// internal error. The data carries the sanitized error envelope, so that a
// client can branch on the code.
func resourceError(uri string, err error) error {
	body := interfaces.NewErrorBody(err)
	data, _ := json.Marshal(struct {
		URI   string                 `json:"uri"`
		Error interfaces.ErrorDetail `json:"error"`
	}{workspace.Clip(uri, maxMessage), body.Error})
	switch body.Error.Code {
	case workspace.CodeNotFound:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found", Data: data}
	case workspace.CodeInvalidArgument, workspace.CodeUnauthenticated, workspace.CodePermissionDenied, workspace.CodeOutOfRoots:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: string(body.Error.Code) + ": " + body.Error.Message, Data: data}
	default:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: string(body.Error.Code) + ": " + body.Error.Message, Data: data}
	}
}

// errCancelled is what a call answers when its context ended before it
// did (see server.failure).
var errCancelled = workspace.Errorf(workspace.CodeUnavailable, "the request was cancelled")

// notFound is the error of an id no resource has.
func notFound(what string) error {
	return workspace.Errorf(workspace.CodeNotFound, "no such %s", what)
}
