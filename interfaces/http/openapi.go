package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// route documents one /v1 route for the OpenAPI document.
type route struct {
	method, path, id, summary string
	request, response         string // component schema names; "" for none
	status                    int    // success status (200 when 0)
	anonymous                 bool   // answers without a token
	binary                    bool   // the answer is raw bytes
	pathID                    bool   // the path has {id}
}

// routes lists every /v1 route; the MCP tool routes take the tool's
// argument object as their body and answer its result.
var routes = []route{
	{method: "get", path: "/v1/health", id: "health", summary: "Liveness; with a valid token also the owner's identity", response: "HealthResult", anonymous: true},
	{method: "get", path: "/v1/status", id: "status", summary: "The running owner: pid, URL, uptime, version, jobs", response: "StatusResult"},
	{method: "post", path: ToolRoutes[interfaces.ToolDiscover], id: interfaces.ToolDiscover, summary: "The discover tool: list kinds, facets, relations, profiles, languages, sources, settings, runs or models", request: "DiscoverArgs", response: "DiscoverResult"},
	{method: "post", path: ToolRoutes[interfaces.ToolSearch], id: interfaces.ToolSearch, summary: "The search tool: ranked evidence fitted to a token budget (rendered text in \"rendered\")", request: "SearchArgs", response: "QueryResult"},
	{method: "post", path: ToolRoutes[interfaces.ToolInspect], id: interfaces.ToolInspect, summary: "The inspect tool: what was indexed from a source, and why", request: "InspectArgs", response: "InspectResult"},
	{method: "post", path: ToolRoutes[interfaces.ToolAddSources], id: interfaces.ToolAddSources, summary: "The add_sources tool: add or sync a source as a durable job", request: "AddSourcesRequest", response: "JobResult"},
	{method: "post", path: ToolRoutes[interfaces.ToolManageJob], id: interfaces.ToolManageJob, summary: "The manage_job tool: list, get, cancel or retry jobs", request: "ManageJobRequest", response: "ManageJobResult"},
	{method: "get", path: "/v1/jobs/{id}", id: "get_job", summary: "One job", response: "JobResult", pathID: true},
	{method: "get", path: "/v1/evidence/{id}", id: "get_evidence", summary: "One evidence record with its text", response: "EvidenceResult", pathID: true},
	{method: "get", path: "/v1/assets/{id}", id: "get_asset", summary: "An asset's bytes with their Content-Type", binary: true, pathID: true},
	{method: "get", path: "/v1/tokens", id: "list_tokens", summary: "Stored tokens (never their secrets); manage grant", response: "TokenList"},
	{method: "post", path: "/v1/tokens", id: interfaces.OpCreateToken, summary: "Create a token, or rotate a named one; the secret is shown once; manage grant", request: "CreateTokenRequest", response: "CreatedToken", status: http.StatusCreated},
	{method: "delete", path: "/v1/tokens/{id}", id: "revoke_token", summary: "Revoke a token; manage grant", response: "RevokedToken", pathID: true},
	{method: "delete", path: "/v1/sources/{id}", id: "remove_source", summary: "Remove a source: its evidence, revisions and assets leave the index in one transaction, its active job ends; write grant on its collection", response: "RemovedSource", pathID: true},
}

// ToolRoutes maps each MCP tool to the /v1 path whose body is the tool's
// argument object.
var ToolRoutes = map[string]string{
	interfaces.ToolDiscover:   "/v1/" + interfaces.ToolDiscover,
	interfaces.ToolSearch:     "/v1/" + interfaces.ToolSearch,
	interfaces.ToolInspect:    "/v1/" + interfaces.ToolInspect,
	interfaces.ToolAddSources: "/v1/" + interfaces.ToolAddSources,
	interfaces.ToolManageJob:  "/v1/" + interfaces.ToolManageJob,
}

// OpenAPI returns the OpenAPI 3.1 document of the HTTP surface. Its
// component schemas are interfaces.Schemas, the same that the MCP tools
// advertise, so the two surfaces cannot disagree; each tool route's body
// carries the tool's example call.
func OpenAPI(version, serverURL string) ([]byte, error) {
	components := map[string]any{}
	for name, s := range interfaces.Schemas() {
		components[name] = s
	}
	paths := map[string]map[string]any{}
	for _, r := range routes {
		if paths[r.path] == nil {
			paths[r.path] = map[string]any{"options": optionsOp(r.id)}
		}
		paths[r.path][r.method] = routeOp(r)
	}
	paths["/openapi"] = openAPIPath()
	paths["/mcp/"] = mcpPath()
	doc := map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"info": map[string]any{
			"title":       "tychora",
			"version":     version,
			"description": "Local workspace daemon: scoped, token-budgeted search over your own files, folders and git repositories. Every /v1 body is the matching MCP tool's argument object or result. A GET route also answers HEAD (the same headers, no body); any other method a path does not list is 405 with the error envelope and an Allow header.",
		},
		"servers": []any{map[string]any{"url": serverURL}},
		"tags": []any{
			map[string]any{"name": "v1", "description": "the versioned HTTP API"},
			map[string]any{"name": "mcp", "description": "MCP over Streamable HTTP, behind the same Host, Origin and token checks"},
		},
		"security":   []any{map[string]any{"bearer": []string{}}},
		"paths":      paths,
		"components": map[string]any{"schemas": components, "securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
	}
	return json.Marshal(doc)
}

// errorResponse is a response with the error envelope.
func errorResponse(desc string) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{
		"application/json": map[string]any{"schema": ref("ErrorBody")}}}
}

// routeOp is the operation of one /v1 route: its success response, an
// error response for every status a code maps to, and its request body.
func routeOp(r route) map[string]any {
	op := map[string]any{"operationId": r.id, "summary": r.summary, "tags": []string{"v1"}}
	status := r.status
	if status == 0 {
		status = http.StatusOK
	}
	responses := map[string]any{}
	switch {
	case r.binary:
		// The bytes with their registered MIME type (image/png,
		// image/svg+xml, ...; application/octet-stream when none).
		responses[itoa(status)] = map[string]any{"description": "the payload, with the asset's MIME type as its Content-Type (an image type, or application/octet-stream)", "content": map[string]any{
			"*/*": map[string]any{}}}
	default:
		responses[itoa(status)] = map[string]any{"description": "success", "content": map[string]any{
			"application/json": map[string]any{"schema": ref(r.response)}}}
	}
	for _, c := range workspace.Codes() {
		st := itoa(HTTPStatus(c))
		if _, ok := responses[st]; !ok {
			responses[st] = errorResponse("error (code " + string(c) + " and others with this status)")
		}
	}
	if r.request != "" {
		responses["413"] = errorResponse("the body is over max_request_bytes (INVALID_ARGUMENT)")
		responses["415"] = errorResponse("the body has a Content-Type other than application/json, or a Content-Encoding (INVALID_ARGUMENT)")
		media := map[string]any{"schema": ref(r.request)}
		if ex := interfaces.ToolExample(r.id); ex != "" {
			media["example"] = json.RawMessage(ex)
		}
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
			"application/json": media}}
	}
	op["responses"] = responses
	if r.anonymous {
		op["security"] = []any{map[string]any{}, map[string]any{"bearer": []string{}}}
	}
	if r.pathID {
		op["parameters"] = []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}}
	}
	return op
}

// openAPIPath is the operations of /openapi, this document.
func openAPIPath() map[string]any {
	return map[string]any{"get": map[string]any{
		"operationId": "openapi", "summary": "This document", "tags": []string{"v1"},
		"responses": map[string]any{"200": map[string]any{"description": "OpenAPI 3.1", "content": map[string]any{
			"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}},
			"401": errorResponse("missing or invalid token"), "403": errorResponse("refused Host or Origin")},
	}, "options": optionsOp("openapi")}
}

// mcpPath is the operations of /mcp/, MCP over Streamable HTTP.
func mcpPath() map[string]any {
	mcpOp := func(id, summary string) map[string]any {
		return map[string]any{
			"operationId": id, "summary": summary, "tags": []string{"mcp"},
			"responses": map[string]any{
				"200": map[string]any{"description": "a JSON-RPC answer, as JSON or as an event stream",
					"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}},
						"text/event-stream": map[string]any{"schema": map[string]any{"type": "string"}}}},
				"202": map[string]any{"description": "a notification or response was accepted"},
				"400": errorResponse("malformed request"), "401": errorResponse("missing or invalid token"),
				"403": errorResponse("refused Host or Origin; a session opened with another token"),
				"404": errorResponse("no such session (it ended or expired)"),
			},
		}
	}
	post := mcpOp("mcp_post", "MCP Streamable HTTP: send a JSON-RPC message (the five tools and four resource templates)")
	post["requestBody"] = map[string]any{"required": true, "content": map[string]any{
		"application/json": map[string]any{"schema": map[string]any{"type": "object", "description": "a JSON-RPC 2.0 request, notification or response"}}}}
	postResponses := post["responses"].(map[string]any)
	postResponses["413"] = errorResponse("the body is over max_request_bytes")
	postResponses["415"] = errorResponse("a Content-Type other than application/json, or a Content-Encoding")
	del := mcpOp("mcp_delete", "MCP Streamable HTTP: end a session")
	del["responses"].(map[string]any)["405"] = response405("with Mcp-Protocol-Version 2026-07-28 or later, which has no sessions")
	get := map[string]any{"operationId": "mcp_get", "summary": "No standalone SSE stream: tychora sends nothing unasked", "tags": []string{"mcp"},
		"responses": map[string]any{"405": response405("always: use POST or DELETE")}}
	return map[string]any{
		"get":     get,
		"post":    post,
		"delete":  del,
		"options": optionsOp("mcp"),
	}
}

// response405 is a 405 response: the error envelope (code
// INVALID_ARGUMENT) and the Allow header naming the path's methods.
func response405(desc string) map[string]any {
	return map[string]any{
		"description": "method not allowed (INVALID_ARGUMENT): " + desc,
		"headers": map[string]any{"Allow": map[string]any{
			"description": "the methods the path takes", "schema": map[string]any{"type": "string"}}},
		"content": map[string]any{"application/json": map[string]any{"schema": ref("ErrorBody")}},
	}
}

// optionsOp documents OPTIONS on a path: no CORS, so always refused (403
// for a foreign Origin, 405 otherwise), before authentication.
func optionsOp(id string) map[string]any {
	return map[string]any{
		"operationId": id + "_options", "summary": "No CORS: OPTIONS is always refused", "tags": []string{"v1"},
		"security": []any{map[string]any{}},
		"responses": map[string]any{
			"403": map[string]any{"description": "a foreign Origin (a CORS preflight), or a refused Host",
				"content": map[string]any{"application/json": map[string]any{"schema": ref("ErrorBody")}}},
			"405": response405("every OPTIONS that passed the Host and Origin checks"),
		},
	}
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
