package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

func tokenCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "token",
		Usage: "create, list and revoke access tokens",
		Description: "Tokens let MCP clients and scripts reach the owner's HTTP API. A token holds a\n" +
			"grant (read < write < manage) limited to collections (none named: all).\n" +
			"Secrets are shown once, stored only as hashes, and compared in constant time.",
		Subcommands: []*cli.Command{tokenCreateCommand(e), tokenListCommand(e), tokenRevokeCommand(e)},
	}
}

func tokenCreateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create a token and print its secret once",
		UsageText: "tychora token create --grant read|write|manage [--collection C]... [--name N] [--json]",
		Description: "Creating a token under a name one of the tokens you manage has rotates it:\n" +
			"the same id, the new grant and collections, and a new secret (the old one\n" +
			"stops working). A name only a token out of your reach has gives a new token.",
		Flags: []cli.Flag{
			// Required, but checked in Action: urfave's own check
			// prints the help on stdout.
			&cli.StringFlag{Name: "grant", Usage: "read, write or manage (required)"},
			&cli.StringSliceFlag{Name: "collection", Usage: "limit the token to this collection (repeatable)"},
			&cli.StringFlag{Name: "name", Usage: "a name; re-creating a named token rotates its secret"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1 body"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			if !c.IsSet("grant") {
				return usageError("token create needs --grant read, write or manage%s", seeHelp(c))
			}
			grant, err := workspace.ParseGrant(c.String("grant"))
			if err != nil {
				return withExit(exitUsage, err)
			}
			cols, err := collectionFlags(c)
			if err != nil {
				return err
			}
			req := interfaces.CreateTokenRequest{
				Grant:       grant,
				Collections: cols,
				Name:        c.String("name"),
			}
			return withService(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				res, err := svc.CreateToken(ctx, req)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				fmt.Fprintf(e.stdout, "token id  %s\n", res.ID)
				fmt.Fprintf(e.stdout, "grant     %s on %s\n", res.Grant, collectionsText(res.Collections))
				fmt.Fprintf(e.stdout, "secret    %s\n", res.Token)
				fmt.Fprintln(e.stderr, "tychora: the secret is shown only now; store it safely")
				return nil
			})
		},
	}
}

func tokenListCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list tokens (never their secrets)",
		UsageText: "tychora token list [--json]",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the /v1 body"}},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				res, err := svc.ListTokens(ctx)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				if len(res.Tokens) == 0 {
					fmt.Fprintln(e.stdout, "no tokens (create one with tychora token create --grant read)")
					return nil
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tGRANT\tCOLLECTIONS\tCREATED\tLAST USED")
				for _, t := range res.Tokens {
					name, last := "-", "never"
					if t.Name != nil {
						name = *t.Name
					}
					if t.LastUsedAt != nil {
						last = t.LastUsedAt.Local().Format(time.DateTime)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, name, t.Grant, collectionsText(t.Collections),
						t.CreatedAt.Local().Format(time.DateTime), last)
				}
				return tw.Flush()
			})
		},
	}
}

func tokenRevokeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "revoke",
		Usage:     "revoke a token by id",
		UsageText: "tychora token revoke [--json] TOKEN_ID",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the /v1 body"}},
		Action: func(c *cli.Context) error {
			id, err := oneArg(c, "TOKEN_ID")
			if err != nil {
				return err
			}
			return withService(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				if err := svc.RevokeToken(ctx, id); err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, interfaces.RevokedToken{ID: id, Revoked: true})
				}
				fmt.Fprintf(e.stdout, "revoked %s\n", id)
				return nil
			})
		},
	}
}

func collectionsText(cs []string) string {
	if len(cs) == 0 {
		return "all collections"
	}
	return strings.Join(cs, ",")
}
