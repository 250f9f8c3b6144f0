// Command tapeserver is a small stdio MCP server for the tape tests: a
// tool "echo" that returns its text with a count of the calls so far, and
// a tool "ask" that asks the user through the client (elicitation/create,
// a server-initiated request).
package main

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text"`
}

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tapeserver", Version: "1"}, nil)
	var calls atomic.Int64
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo the text"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		n := calls.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s #%d", a.Text, n)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Description: "ask the user (elicitation)"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: a.Text})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
