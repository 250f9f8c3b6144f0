package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	httpapi "github.com/tychora/tychora/interfaces/http"
	tyruntime "github.com/tychora/tychora/runtime"
	"github.com/tychora/tychora/workspace"
)

var mcpClients = []string{"claude-code", "claude-desktop", "cursor", "vscode"}

func mcpConfigCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "mcp-config",
		Usage:     "print ready-to-paste MCP client configuration",
		UsageText: "tychora [--workspace W] mcp-config [--http [--rotate]] [--client claude-code|claude-desktop|cursor|vscode]",
		Description: "Without --http: a stdio server entry that starts this binary on this workspace\n" +
			"(the client runs `tychora serve --stdio`; it becomes the owner or bridges to\n" +
			"the running one). With --http: an entry for the running owner's Streamable\n" +
			"HTTP endpoint with a named token \"mcp-CLIENT\" (write grant). Its secret is\n" +
			"kept in .runtime/mcp-tokens.json (0600), so running mcp-config --http again\n" +
			"prints the same configuration; --rotate gives the token a new secret (configs\n" +
			"holding the old one stop working). The owner keeps the port it last used while\n" +
			"it is free; pin it with the listen setting in tychora.json (e.g. \"listen\":\n" +
			"\"127.0.0.1:7419\") to be sure the URL survives restarts.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "http", Usage: "configure Streamable HTTP instead of stdio"},
			&cli.StringFlag{Name: "client", Value: "claude-code", Usage: "claude-code, claude-desktop, cursor or vscode"},
			&cli.BoolFlag{Name: "rotate", Usage: "with --http: give the token a new secret (configs holding the old one stop working)"},
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
			if c.Bool("rotate") && !c.Bool("http") {
				return usageError("--rotate goes with --http: a stdio configuration holds no token")
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
			if _, port, _ := net.SplitHostPort(s.Listen); port == "0" {
				fmt.Fprintf(e.stderr, "tychora: the owner keeps this port (%s) across restarts while it is free; to be sure of it, set \"listen\": \"%s\" in %s\n",
					ep.URL, strings.TrimPrefix(ep.URL, "http://"), workspace.NewLayout(dir).Settings)
			}
			secret, err := mcpToken(context.WithoutCancel(c.Context), e, ownerClient, ep, workspace.NewLayout(dir), "mcp-"+client, c.Bool("rotate"))
			if err != nil {
				return err
			}
			entry := map[string]any{"url": url, "headers": map[string]string{"Authorization": "Bearer " + secret}}
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

// mcpToken is the secret of the write token named name that mcp-config
// --http prints. The secret printed last time is printed again while it
// still works; a new one is made only for a new token or with rotate. A
// token of that name whose secret is not kept (made by token create, or
// rotated since) is left alone unless rotate is given: rotating it would
// break whoever holds it.
func mcpToken(ctx context.Context, e *env, owner interfaces.TokenAdmin, ep tyruntime.Endpoint, l workspace.Layout, name string, rotate bool) (string, error) {
	list, err := owner.ListTokens(ctx)
	if err != nil {
		return "", err
	}
	var existing *workspace.TokenRecord
	for i, t := range list.Tokens {
		if t.Name != nil && *t.Name == name {
			existing = &list.Tokens[i]
		}
	}
	kept, err := workspace.LoadKeptTokens(l)
	if err != nil {
		fmt.Fprintf(e.stderr, "tychora: %s is unreadable (%v); it will be written again\n", l.MCPTokens, err)
		kept = map[string]workspace.KeptToken{}
	}
	k, isKept := kept[name]
	keptWorks := existing != nil && isKept && k.ID == existing.ID && existing.Grant == workspace.GrantWrite && secretWorks(ctx, ep.URL, k.Secret)
	if existing != nil && !rotate {
		if keptWorks {
			fmt.Fprintf(e.stderr, "tychora: token %q (write), the same secret as printed before (a new one with --rotate)\n", name)
			return k.Secret, nil
		}
		why := "whose secret this workspace does not keep (it was made by tychora token create, or by an older tychora)"
		if isKept && k.ID == existing.ID {
			why = "that was rotated or changed since mcp-config printed it (by tychora token create --name " + name + ")"
		}
		return "", workspace.Errorf(workspace.CodeConflict, "a token named %s exists %s: run mcp-config --http --rotate to give it a new secret (whatever holds the current one stops working), or revoke it with tychora token revoke %s", name, why, existing.ID)
	}
	tok, err := owner.CreateToken(ctx, interfaces.CreateTokenRequest{Grant: workspace.GrantWrite, Name: name})
	if err != nil {
		return "", err
	}
	if err := workspace.SaveKeptToken(l, name, workspace.KeptToken{ID: tok.ID, Secret: tok.Token}); err != nil {
		fmt.Fprintf(e.stderr, "tychora: could not keep the secret in %s (%v): the next mcp-config --http cannot print it again\n", l.MCPTokens, err)
	}
	if existing != nil {
		fmt.Fprintf(e.stderr, "tychora: token %q (write) rotated: the secret below replaces the earlier one, which stops working now\n", name)
	} else {
		fmt.Fprintf(e.stderr, "tychora: token %q (write) created; mcp-config --http prints the same secret again\n", name)
	}
	return tok.Token, nil
}

// secretWorks reports whether the owner at url accepts secret.
func secretWorks(ctx context.Context, url, secret string) bool {
	c, err := httpapi.NewClient(url, secret, nil)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = c.Health(ctx)
	return err == nil
}
