// Package mcpapi (folder interfaces/mcp) serves the five tools and four
// resource templates over MCP, for the stdio and Streamable HTTP
// transports alike, as thin adapters over interfaces.Service.
package mcpapi
