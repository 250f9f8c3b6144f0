package interfaces

// The five tools: their MCP names, the last segment of their /v1 routes
// and the operationIds of those routes.
const (
	ToolDiscover   = "discover"
	ToolSearch     = "search"
	ToolInspect    = "inspect"
	ToolAddSources = "add_sources"
	ToolManageJob  = "manage_job"
)

// OpCreateToken names the body of POST /v1/tokens (its OpenAPI
// operationId) for ValidateArguments and Decode: it is checked against the
// CreateTokenRequest schema, as a tool's body is against its input schema.
const OpCreateToken = "create_token"

// ToolNames returns the five tool names in a stable order.
func ToolNames() []string {
	return []string{ToolDiscover, ToolSearch, ToolInspect, ToolAddSources, ToolManageJob}
}

// toolExamples holds one complete call of each tool: its arguments as a
// tool description shows them, and a /v1 body as its route takes it.
// TestToolExamplesDecode decodes each with Decode.
var toolExamples = map[string]string{
	ToolDiscover:   `{"request":{"subject":"sources","limit":20}}`,
	ToolSearch:     `{"request":{"question":"how are tokens stored","filters":{"paths":["docs/**/*.md"],"exclude_roles":["test"]},"limit":5,"budget":{"max_tokens":2000}},"render":"agent@1"}`,
	ToolInspect:    `{"request":{"subject":"content","source_id":"src_5f0c2a9d41e7b388","path":"docs/tokens.md","start_line":1,"end_line":60}}`,
	ToolAddSources: `{"action":"add","source":{"path":"docs","kind":"folder","include":["**/*.md"],"name":"docs"}}`,
	ToolManageJob:  `{"action":"get","job_id":"5b0e7f2a-3c41-4d8e-9a6b-1f2e3d4c5b6a"}`,
}

// ToolExample returns the example call of tool ("" for an unknown one).
func ToolExample(tool string) string { return toolExamples[tool] }
