package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
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
			args, question, err := searchArgs(c)
			if err != nil {
				return err
			}
			return withReads(c, e, func(ctx context.Context, svc interfaces.Service, inProcess bool) error {
				// Without an owner, the search of a large workspace first
				// reads the saved file index it ranks with, or builds and
				// saves it (seconds over tens of thousands of units): say
				// so on a terminal when it takes a while.
				stop := slowNote(e.stderr, inProcess && !c.Bool("json") && isTerminal(e.stderr), slowSearchAfter,
					"tychora: no owner is running, so this search first readies the index it ranks with (built once after a change, then read from .runtime/file-index; tychora serve keeps it in memory)…")
				out, err := svc.Search(ctx, args)
				stop()
				if err != nil {
					return err
				}
				if c.Bool("json") {
					res := out.Result
					res.Rendered = out.Rendered
					return printJSON(e.stdout, res)
				}
				return printSearch(c, e, searchPrinted{args: args, question: question, out: out, pending: pendingJobs(ctx, svc, inProcess)})
			})
		},
	}
}

// searchArgs reads the search command's flags and QUESTION into the
// arguments of search; question is "" for a replay.
func searchArgs(c *cli.Context) (interfaces.SearchArgs, string, error) {
	if _, err := render.ParseFormat(c.String("render")); err != nil {
		return interfaces.SearchArgs{}, "", withExit(exitUsage, err)
	}
	limit, err := intFlag(c, "limit", 1, query.MaxLimit)
	if err != nil {
		return interfaces.SearchArgs{}, "", err
	}
	budget, err := intFlag(c, "budget", 1, query.MaxBudgetTokens)
	if err != nil {
		return interfaces.SearchArgs{}, "", err
	}
	if _, err := collectionFlags(c); err != nil {
		return interfaces.SearchArgs{}, "", err
	}
	for _, name := range []string{"role", "exclude-role"} {
		for _, r := range c.StringSlice(name) {
			if !sources.ValidRole(r) {
				return interfaces.SearchArgs{}, "", usageError("--%s %q: use %s", name, r, strings.Join(sources.Roles(), ", "))
			}
		}
	}
	args := interfaces.SearchArgs{Render: c.String("render"), ReplayRunID: c.String("replay")}
	if c.IsSet("replay") && args.ReplayRunID == "" {
		return interfaces.SearchArgs{}, "", usageError("--replay is empty: give a run id (see tychora runs list)")
	}
	question := strings.Join(c.Args().Slice(), " ")
	if args.ReplayRunID == "" {
		if strings.TrimSpace(question) == "" {
			return interfaces.SearchArgs{}, "", usageError("search takes a QUESTION%s", seeHelp(c))
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
		return interfaces.SearchArgs{}, "", usageError("--replay takes no QUESTION")
	} else {
		// The retained request is replayed as it was: nothing of it
		// can be changed.
		for _, f := range []string{"limit", "collection", "kind", "language", "path", "source", "role", "exclude-role", "profile", "budget", "cursor"} {
			if c.IsSet(f) {
				return interfaces.SearchArgs{}, "", usageError("--replay re-runs the retained request as it was: leave out --%s", f)
			}
		}
	}
	return args, question, nil
}

// searchPrinted is what printSearch shows: the arguments, the question,
// the Service's answer and the note on jobs not yet run.
type searchPrinted struct {
	args     interfaces.SearchArgs
	question string
	out      interfaces.SearchOutput
	pending  string
}

// printSearch prints an answer for a person: the rendered answer or the
// list of hits, and a summary on stderr.
func printSearch(c *cli.Context, e *env, p searchPrinted) error {
	args, question, out, pending := p.args, p.question, p.out, p.pending
	res := out.Result
	if len(res.Hits) == 0 && out.Rendered == nil && res.ContentTotals.HitsAvailable <= res.ContentTotals.HitsReturned {
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
}

func truncNote(t bool) string {
	if t {
		return " · truncated to fit"
	}
	return ""
}

// printHits is the list view: one line per hit naming its file as it
// opens, and how many hits of the page the budget left out (never "no
// matches" when there were some).
func printHits(e *env, res query.QueryResult) {
	left := res.ContentTotals.HitsAvailable - res.ContentTotals.HitsReturned
	if len(res.Hits) == 0 {
		if left > 0 {
			fmt.Fprintf(e.stdout, "no hit fits the token budget: %d left out; raise --budget to see them\n", left)
		}
		return // "no matches" was said by the caller
	}
	defer func() {
		if left > 0 {
			fmt.Fprintf(e.stdout, "(%d more %s left out by the token budget; raise --budget to see %s)\n", left, plural(left, "hit", "hits"), plural(left, "it", "them"))
		}
	}()
	for i, h := range res.Hits {
		stale := ""
		if h.Stale {
			stale = " (changed on disk since indexed)"
		}
		title := h.Title
		if len(h.HeadingPath) > 0 {
			title = strings.Join(h.HeadingPath, " › ")
		}
		file := h.File
		if file == "" {
			file = h.Path
		}
		span := h.Span
		if h.Excerpt != nil {
			span = *h.Excerpt
		}
		fmt.Fprintf(e.stdout, "%2d. %s:%d-%d  %s  [%.3f]%s\n", i+1, file, span.StartLine, span.EndLine, title, h.Score, stale)
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
				if err := printDiscover(e, req.Subject, anyItems(res.Items)); err != nil {
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
// anyItems turns discover items into values for the table and record
// writers.
func anyItems(items []json.RawMessage) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

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
		Name:  "inspect",
		Usage: "show what was indexed from a source and why: " + strings.Join(interfaces.InspectSubjects, ", "),
		UsageText: "tychora inspect [--revision R] [--extraction E] [--include-content] [--limit N] [--cursor C] [--json] SUBJECT SOURCE_ID\n" +
			"tychora inspect [--budget N] [--cursor C] [--json] content SOURCE_ID PATH[:START-END]\n" +
			"tychora inspect [--budget N] [--cursor C] [--json] content FILE[:START-END]",
		Description: "Subject content prints the indexed lines of one file of the source (PATH as a\n" +
			"hit's path names it, or FILE, the absolute path a hit's file names; :START-END\n" +
			"for a range, :START from that line on), as many as --budget holds.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "revision", Usage: "a revision (default: the current one)"},
			&cli.StringFlag{Name: "extraction", Usage: "an extraction, for channels"},
			&cli.BoolFlag{Name: "include-content", Usage: "with revisions or coverage: the files' text"},
			&cli.IntFlag{Name: "limit", Usage: "page size, 1 to 200", DefaultText: "50"},
			&cli.StringFlag{Name: "cursor", Usage: "next_cursor of the previous page"},
			&cli.IntFlag{Name: "budget", Usage: "with content: answer budget in tokens, 1 to 1048576", DefaultText: "the default_max_tokens setting"},
			&cli.BoolFlag{Name: "json", Usage: "print the /v1/inspect body"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Get(0) == query.InspectContent {
				return inspectContent(c, e)
			}
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// inspectContent is `tychora inspect content SOURCE_ID PATH[:START-END]`,
// or `tychora inspect content FILE[:START-END]` with the absolute path a
// hit's file names.
func inspectContent(c *cli.Context, e *env) error {
	byFile := c.NArg() == 2 && filepath.IsAbs(c.Args().Get(1))
	if !byFile && (c.NArg() != 3 || c.Args().Get(1) == "") {
		return usageError("inspect content takes SOURCE_ID and PATH[:START-END], or an absolute FILE[:START-END]%s", seeHelp(c))
	}
	for _, f := range []string{"revision", "extraction", "include-content", "limit"} {
		if c.IsSet(f) {
			return usageError("inspect content serves the current revision's lines: leave out --%s", f)
		}
	}
	path, start, end, err := parseFileRange(c.Args().Get(c.NArg() - 1))
	if err != nil {
		return err
	}
	budget, err := intFlag(c, "budget", 1, query.MaxBudgetTokens)
	if err != nil {
		return err
	}
	req := interfaces.InspectRequest{Subject: query.InspectContent, SourceID: c.Args().Get(1), Path: path,
		StartLine: start, EndLine: end, Cursor: c.String("cursor")}
	if byFile {
		req.SourceID, req.Path, req.File = "", "", path
	}
	if budget > 0 {
		req.Budget = &query.Budget{MaxTokens: budget}
	}
	return withReads(c, e, func(ctx context.Context, svc interfaces.Service, _ bool) error {
		res, err := svc.Inspect(ctx, interfaces.InspectArgs{Request: req})
		if err != nil {
			return err
		}
		if c.Bool("json") {
			return printJSON(e.stdout, res)
		}
		var fc query.FileContent
		if err := json.Unmarshal([]byte(jsonString(res.Result)), &fc); err != nil {
			return err
		}
		fmt.Fprint(e.stdout, fc.Text)
		stale := ""
		if fc.Stale {
			stale = " · stale: the file changed since it was indexed; these are the indexed lines"
		}
		used, max := 0, 0
		if fc.Budget != nil {
			used, max = fc.Budget.UsedTokens, fc.Budget.MaxTokens
		}
		fmt.Fprintf(e.stderr, "tychora: %s lines %d-%d of %d · %d/%d tokens%s\n", fc.File, fc.StartLine, fc.EndLine, fc.Lines, used, max, stale)
		if fc.NextCursor != nil {
			fmt.Fprintf(e.stderr, "tychora: more with: %s\n", nextPageHint(c, e, *fc.NextCursor, c.Args().Slice()))
		}
		return nil
	})
}

// parseFileRange splits PATH[:START-END] (or PATH:START, from START to
// the end: end 0): the range is
// the part after the last colon when it is one; a path that itself ends in
// ":digits" needs an explicit range.
func parseFileRange(arg string) (path string, start, end int, err error) {
	i := strings.LastIndexByte(arg, ':')
	if i <= 0 {
		return arg, 0, 0, nil
	}
	spec := arg[i+1:]
	a, b, ranged := strings.Cut(spec, "-")
	if a == "" || !allDigitsCLI(a) || (ranged && (b == "" || !allDigitsCLI(b))) {
		return arg, 0, 0, nil // a colon that is part of the path
	}
	bad := func() (string, int, int, error) {
		return "", 0, 0, usageError("%q: a range is START-END or START, lines from 1, START ≤ END", spec)
	}
	if len(a) > 9 || len(b) > 9 {
		return bad()
	}
	start, _ = strconv.Atoi(a)
	if ranged {
		end, _ = strconv.Atoi(b)
	}
	if start < 1 || (ranged && end < start) {
		return bad()
	}
	return arg[:i], start, end, nil
}

func allDigitsCLI(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
