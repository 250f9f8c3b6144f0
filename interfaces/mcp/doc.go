// Package mcpapi (folder interfaces/mcp) serves the five tools and four
// resource templates over MCP, for the stdio and Streamable HTTP
// transports alike, as thin adapters over interfaces.Service.
//
// NewServer builds the server: discover, search, inspect, add_sources and
// manage_job, registered with Server.AddTool and the schemas of package
// interfaces (InputSchema, OutputSchema, Schemas), and the templates
// tychora://schemas/{name}, tychora://kinds/{id}, tychora://evidence/{id}
// and tychora://assets/{id}. Arguments are validated against the input
// schema and decoded strictly before any work (interfaces.Decode); results travel as the exact
// JSON bytes in structuredContent (as the one text block for protocols
// before 2025-06-18); failures are tool errors holding
// {"error":{"code","message"}}.
//
// NewHTTPHandler serves Streamable HTTP behind the guard of interfaces/http,
// each request with its own principal, every protocol version on one
// endpoint. ServeStdio serves one stdio session with the process's
// principal. docs/mcp.md describes the whole surface.
package mcpapi
