package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/render"
	"github.com/tychora/tychora/sources"
)

func searchCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "search your sources",
		UsageText: "tychora search [--limit N] [--collection C]... [--kind K]... [--language L]... [--path GLOB]... [--source ID]... [--role R]... [--exclude-role R]... [--profile P] [--budget N] [--render FORMAT] [--cursor C] [--json] QUESTION",
		Description: "Keywords, identifiers (parseHTTPRequest matches \"parse http request\"), \"quoted\n" +
			"phrases\" or a plain question. --budget caps the answer in tokens (counted on the\n" +
			"bytes an MCP client receives); --render prints the answer as markdown@1 (for\n" +
			"people), agent@1 (compact, citation first) or hierarchical-evidence@1.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Usage: "most hits, 1 to 100", DefaultText: "10"},
			&cli.StringSliceFlag{Name: "collection", Usage: "only these collections (repeatable)"},
			&cli.StringSliceFlag{Name: "kind", Usage: "only these kinds: markdown, code, text, html, ... (repeatable)"},
			&cli.StringSliceFlag{Name: "language", Usage: "only these languages (repeatable)"},
			&cli.StringSliceFlag{Name: "path", Usage: "only paths matching this glob, ** crosses folders (repeatable)"},
			&cli.StringSliceFlag{Name: "source", Usage: "only these sources (repeatable)"},
			&cli.StringSliceFlag{Name: "role", Usage: "only files of this role: " + strings.Join(sources.Roles(), ", ") + " (repeatable)"},
			&cli.StringSliceFlag{Name: "exclude-role", Usage: "leave out files of this role (repeatable)"},
			&cli.StringFlag{Name: "profile", Usage: "ranking profile (see tychora discover profiles)"},
			&cli.IntFlag{Name: "budget", Usage: "answer budget in tokens, 1 to 1048576", DefaultText: "the default_max_tokens setting"},
			&cli.StringFlag{Name: "render", Usage: "markdown@1, agent@1 or hierarchical-evidence@1"},
			&cli.StringFlag{Name: "cursor", Usage: "next_cursor of the previous answer"},
			&cli.StringFlag{Name: "replay", Usage: "re-run a retained run (query_history \"full\") instead of QUESTION"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1/search body"},
		},
		Action: func(c *cli.Context) error {
			if _, err := render.ParseFormat(c.String("render")); err != nil {
				return withExit(exitUsage, err)
			}
			limit, err := intFlag(c, "limit", 1, query.MaxLimit)
			if err != nil {
				return err
			}
			budget, err := intFlag(c, "budget", 1, query.MaxBudgetTokens)
			if err != nil {
				return err
			}
			if _, err := collectionFlags(c); err != nil {
				return err
			}
			for _, name := range []string{"role", "exclude-role"} {
				for _, r := range c.StringSlice(name) {
					if !sources.ValidRole(r) {
						return usageError("--%s %q: use %s", name, r, strings.Join(sources.Roles(), ", "))
					}
				}
			}
			args := interfaces.SearchArgs{Render: c.String("render"), ReplayRunID: c.String("replay")}
			if c.IsSet("replay") && args.ReplayRunID == "" {
				return usageError("--replay is empty: give a run id (see tychora runs list)")
			}
			question := strings.Join(c.Args().Slice(), " ")
			if args.ReplayRunID == "" {
				if strings.TrimSpace(question) == "" {
					return usageError("search takes a QUESTION%s", seeHelp(c))
				}
				req := &query.QueryRequest{
					Question: question,
					Profile:  c.String("profile"),
					Limit:    limit,
					Cursor:   c.String("cursor"),
				}
				f := query.Filters{Collections: c.StringSlice("collection"), Kinds: c.StringSlice("kind"), Languages: c.StringSlice("language"),
					Paths: c.StringSlice("path"), Sources: c.StringSlice("source"),
					Roles: c.StringSlice("role"), ExcludeRoles: c.StringSlice("exclude-role")}
				if len(f.Collections)+len(f.Kinds)+len(f.Languages)+len(f.Paths)+len(f.Sources)+len(f.Roles)+len(f.ExcludeRoles) > 0 {
					req.Filters = &f
				}
				if budget > 0 {
					req.Budget = &query.Budget{MaxTokens: budget}
				}
				args.Request = req
			} else if c.NArg() > 0 {
				return usageError("--replay takes no QUESTION")
			} else {
				// The retained request is replayed as it was: nothing of it
				// can be changed.
				for _, f := range []string{"limit", "collection", "kind", "language", "path", "source", "role", "exclude-role", "profile", "budget", "cursor"} {
					if c.IsSet(f) {
						return usageError("--replay re-runs the retained request as it was: leave out --%s", f)
					}
				}
			}
			return withReads(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
				out, err := svc.Search(ctx, args)
				if err != nil {
					return err
				}
				res := out.Result
				if c.Bool("json") {
					res.Rendered = out.Rendered
					return printJSON(e.stdout, res)
				}
				pending := pendingJobs(ctx, svc, inProcess)
				if len(res.Hits) == 0 && out.Rendered == nil {
					if pending != "" {
						fmt.Fprintf(e.stdout, "no matches in what is indexed so far: %s\n", pending)
					} else {
						fmt.Fprintln(e.stdout, "no matches")
					}
					pending = ""
				}
				if out.Rendered != nil {
					fmt.Fprint(e.stdout, *out.Rendered)
					if !strings.HasSuffix(*out.Rendered, "\n") {
						fmt.Fprintln(e.stdout)
					}
				} else {
					printHits(e, res)
				}
				fmt.Fprintf(e.stderr, "tychora: %d of %d matches · %d/%d tokens (%s)%s · run %s\n", len(res.Hits), res.TotalMatches,
					res.Budget.UsedTokens, res.Budget.MaxTokens, res.Budget.Counter, truncNote(res.Truncated), res.RunID)
				if res.NextCursor != nil && args.ReplayRunID == "" {
					fmt.Fprintf(e.stderr, "tychora: more with: %s\n", nextPageHint(c, e, *res.NextCursor, []string{question}))
				}
				if pending != "" {
					fmt.Fprintf(e.stderr, "tychora: %s\n", pending)
				}
				return nil
			})
		},
	}
}

func truncNote(t bool) string {
	if t {
		return " · truncated to fit"
	}
	return ""
}

func printHits(e *env, res query.QueryResult) {
	for i, h := range res.Hits {
		stale := ""
		if h.Stale {
			stale = " (changed on disk since indexed)"
		}
		title := h.Title
		if len(h.HeadingPath) > 0 {
			title = strings.Join(h.HeadingPath, " › ")
		}
		fmt.Fprintf(e.stdout, "%2d. %s:%d-%d  %s  [%.3f]%s\n", i+1, h.Path, h.Span.StartLine, h.Span.EndLine, title, h.Score, stale)
		if h.Snippet != "" {
			fmt.Fprintf(e.stdout, "    %s\n", strings.ReplaceAll(strings.TrimSpace(h.Snippet), "\n", "\n    "))
		}
	}
}

func discoverCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "discover",
		Usage:     "list what the workspace holds: " + strings.Join(interfaces.DiscoverSubjects, ", "),
		UsageText: "tychora discover [--limit N] [--cursor C] [--json] SUBJECT",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Usage: "page size, 1 to 200", DefaultText: "50"},
			&cli.StringFlag{Name: "cursor", Usage: "next_cursor of the previous page"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1/discover body"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || !slices.Contains(interfaces.DiscoverSubjects, c.Args().First()) {
				return usageError("discover takes one SUBJECT: %s", strings.Join(interfaces.DiscoverSubjects, ", "))
			}
			limit, err := intFlag(c, "limit", 1, maxDiscoverPage)
			if err != nil {
				return err
			}
			req := interfaces.DiscoverRequest{Subject: c.Args().First(), Limit: limit, Cursor: c.String("cursor")}
			return withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				res, err := svc.Discover(ctx, interfaces.DiscoverArgs{Request: req})
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				if err := printDiscover(e, req.Subject, res.Items); err != nil {
					return err
				}
				if res.NextCursor != nil {
					fmt.Fprintf(e.stderr, "tychora: more with: %s\n", nextPageHint(c, e, *res.NextCursor, c.Args().Slice()))
				}
				return nil
			})
		},
	}
}

// printDiscover prints a discover page for a person: a table for the
// subjects whose items are flat, records for the rest.
func printDiscover(e *env, subject string, items []any) error {
	switch {
	case len(items) == 0:
		fmt.Fprintln(e.stdout, discoverNothing(subject))
		return nil
	case subject == query.SubjectSettings:
		return writeTable(e.stdout, items, "key", "value")
	case subject == "languages":
		return writeTable(e.stdout, items, "language", "files", "units")
	}
	writeRecords(e.stdout, items)
	return nil
}

// discoverNothing says why a discover subject lists nothing.
func discoverNothing(subject string) string {
	switch subject {
	case query.SubjectSources:
		return "no sources yet (add one with tychora add PATH)"
	case query.SubjectRuns:
		return "no runs yet (every search records one)"
	case "languages", "facets", "relations":
		return "nothing indexed yet (add a source with tychora add PATH)"
	}
	return "nothing"
}

func inspectCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show what was indexed from a source and why: " + strings.Join(interfaces.InspectSubjects, ", "),
		UsageText: "tychora inspect [--revision R] [--extraction E] [--include-content] [--limit N] [--cursor C] [--json] SUBJECT SOURCE_ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "revision", Usage: "a revision (default: the current one)"},
			&cli.StringFlag{Name: "extraction", Usage: "an extraction, for channels"},
			&cli.BoolFlag{Name: "include-content", Usage: "with revisions or coverage: the files' text"},
			&cli.IntFlag{Name: "limit", Usage: "page size, 1 to 200", DefaultText: "50"},
			&cli.StringFlag{Name: "cursor", Usage: "next_cursor of the previous page"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1/inspect body"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 || !slices.Contains(interfaces.InspectSubjects, c.Args().Get(0)) || c.Args().Get(1) == "" {
				return usageError("inspect takes SUBJECT (%s) and SOURCE_ID%s", strings.Join(interfaces.InspectSubjects, ", "), seeHelp(c))
			}
			limit, err := intFlag(c, "limit", 1, maxInspectPage)
			if err != nil {
				return err
			}
			req := interfaces.InspectRequest{Subject: c.Args().Get(0), SourceID: c.Args().Get(1), RevisionID: c.String("revision"),
				ExtractionID: c.String("extraction"), IncludeContent: c.Bool("include-content"), Limit: limit, Cursor: c.String("cursor")}
			return withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
				res, err := svc.Inspect(ctx, interfaces.InspectArgs{Request: req})
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, res)
				}
				return printInspect(c, e, req.Subject, res)
			})
		},
	}
}

// printInspect prints an inspect answer for a person: the source as a
// record, a page of coverage as a table, other pages as records.
func printInspect(c *cli.Context, e *env, subject string, res interfaces.InspectResult) error {
	m, _ := jsonValue(res.Result).(map[string]any)
	items, isPage := m["items"].([]any)
	if !isPage {
		writeRecord(e.stdout, "", m)
		return nil
	}
	for _, k := range []string{"source_id", "revision_id"} {
		if v, ok := m[k].(string); ok {
			fmt.Fprintf(e.stdout, "%s: %s\n", strings.ReplaceAll(k, "_", " "), v)
		}
	}
	switch {
	case len(items) == 0:
		fmt.Fprintf(e.stdout, "no %s\n", strings.ReplaceAll(subject, "_", " "))
	case subject == "coverage":
		fmt.Fprintln(e.stdout)
		if err := writeTable(e.stdout, items, "path", "status", "kind", "language", "size", "units", "reason"); err != nil {
			return err
		}
	default:
		fmt.Fprintln(e.stdout)
		writeRecords(e.stdout, items)
	}
	if next, ok := m["next_cursor"].(string); ok && next != "" {
		fmt.Fprintf(e.stderr, "tychora: more with: %s\n", nextPageHint(c, e, next, c.Args().Slice()))
	}
	return nil
}

func mustJSON(v any) string { return jsonString(v) }
