package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

var mcpClients = []string{"claude-code", "claude-desktop", "cursor", "vscode"}

func mcpConfigCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "mcp-config",
		Usage:     "print ready-to-paste MCP client configuration",
		UsageText: "tychora [--workspace W] mcp-config [--http] [--client claude-code|claude-desktop|cursor|vscode]",
		Description: "Without --http: a stdio server entry that starts this binary on this workspace\n" +
			"(the client runs `tychora serve --stdio`; it becomes the owner or bridges to\n" +
			"the running one). With --http: an entry for the running owner's Streamable\n" +
			"HTTP endpoint with a named token \"mcp-CLIENT\" (write grant) whose secret is\n" +
			"rotated and printed on every run. Pin the port with the listen setting in\n" +
			"tychora.json (e.g. \"listen\": \"127.0.0.1:7419\") so the URL survives restarts.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "http", Usage: "configure Streamable HTTP instead of stdio"},
			&cli.StringFlag{Name: "client", Value: "claude-code", Usage: "claude-code, claude-desktop, cursor or vscode"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			client := c.String("client")
			if !slices.Contains(mcpClients, client) {
				return usageError("--client %q: use claude-code, claude-desktop, cursor or vscode", client)
			}
			dir, err := workspaceDir(c)
			if err != nil {
				return err
			}
			if !c.Bool("http") {
				bin, err := os.Executable()
				if err != nil {
					return err
				}
				if resolved, err := filepath.EvalSymlinks(bin); err == nil {
					bin = resolved
				}
				entry := map[string]any{"command": bin, "args": []string{"--workspace", dir, "serve", "--stdio"}}
				return printConfig(e, client, entry)
			}
			if client == "claude-desktop" {
				return usageError("Claude Desktop's config file takes stdio servers: run mcp-config without --http")
			}
			s, err := workspace.LoadSettings(workspace.NewLayout(dir))
			if err != nil {
				return err
			}
			ownerClient, ep, err := tyruntime.ConnectLocal(c.Context, dir)
			if err != nil {
				return withExit(exitNoOwner, workspace.Errorf(workspace.CodeUnavailable, "start the owner first (tychora serve), then run mcp-config --http"))
			}
			url := ep.MCPURL
			_, port, _ := net.SplitHostPort(s.Listen)
			if port == "0" {
				fmt.Fprintf(e.stderr, "tychora: the owner listens on a port chosen at start (%s); set \"listen\": \"127.0.0.1:PORT\" in %s so this URL survives restarts\n",
					ep.URL, workspace.NewLayout(dir).Settings)
			}
			tok, err := ownerClient.CreateToken(context.WithoutCancel(c.Context), interfaces.CreateTokenRequest{Grant: workspace.GrantWrite, Name: "mcp-" + client})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "tychora: token %q (write) rotated; the secret below replaces any earlier one\n", "mcp-"+client)
			entry := map[string]any{"url": url, "headers": map[string]string{"Authorization": "Bearer " + tok.Token}}
			switch client {
			case "claude-code", "vscode":
				entry["type"] = "http"
			}
			return printConfig(e, client, entry)
		},
	}
}

// printConfig prints the client's configuration file fragment.
func printConfig(e *env, client string, entry map[string]any) error {
	var doc map[string]any
	switch client {
	case "vscode":
		if _, ok := entry["command"]; ok {
			entry["type"] = "stdio"
		}
		doc = map[string]any{"servers": map[string]any{"tychora": entry}}
		fmt.Fprintln(e.stderr, "tychora: put this in .vscode/mcp.json (or your user mcp.json)")
	case "cursor":
		doc = map[string]any{"mcpServers": map[string]any{"tychora": entry}}
		fmt.Fprintln(e.stderr, "tychora: put this in ~/.cursor/mcp.json (or .cursor/mcp.json in a project)")
	case "claude-desktop":
		doc = map[string]any{"mcpServers": map[string]any{"tychora": entry}}
		fmt.Fprintln(e.stderr, "tychora: merge this into claude_desktop_config.json")
	default:
		doc = map[string]any{"mcpServers": map[string]any{"tychora": entry}}
		fmt.Fprintln(e.stderr, "tychora: put this in .mcp.json at your project root (Claude Code)")
	}
	// Meant for pasting into a file: indented, unlike the --json bodies.
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(b, '\n'))
	return err
}
