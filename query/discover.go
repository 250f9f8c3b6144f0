package query

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// Discover subjects answered by this package.
const (
	SubjectKinds     = "kinds"
	SubjectFacets    = "facets"
	SubjectRelations = "relations"
	SubjectProfiles  = "profiles"
	SubjectLanguages = "languages"
	SubjectSources   = "sources"
	SubjectSettings  = "settings"
	SubjectRuns      = "runs"
	SubjectModels    = "models"
)

// Discoverer answers discover: what exists in the workspace, scoped by the
// caller's grant, paged with cursors bound to that scope.
//
// What changes while the owner runs (its settings, reloaded; how its
// sources are watched) is no field of a Discoverer: each call is given it
// as a DiscoverState.
type Discoverer struct {
	DB      *workspace.DB
	Cursors *workspace.Cursors
	// Runs, when set, answers discover runs a page at a time, by run
	// number, so that its pages do not shift when searches are recorded
	// meanwhile; nil leaves runs unknown.
	Runs *Recorder
	// Models are the items of discover models: the token counters, which
	// package render knows.
	Models []any
}

// DiscoverState is what one discover call reads of the workspace as it
// stands: the values are taken once, when the call begins.
type DiscoverState struct {
	// Settings are the settings in force.
	Settings workspace.Settings
	// Watch says how sources are watched; nil leaves the watch of each
	// source out of discover sources (no watcher to ask).
	Watch *sources.WatchView
}

// DiscoverPage is one page of items.
type DiscoverPage struct {
	Items      []any
	NextCursor *string
}

const (
	defaultDiscoverLimit = 50
	maxDiscoverLimit     = 200
)

type offsetCursor struct {
	Offset int `json:"o"`
}

// runsCursor continues discover runs before a run number.
type runsCursor struct {
	Before int64 `json:"b"`
}

// SettingItem is one item of discover settings.
type SettingItem struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// SourceItem is one item of discover sources: the source and where it
// stands.
type SourceItem struct {
	sources.Source
	// Watch is how the source is watched (absent where the discoverer
	// has no watcher to ask).
	Watch *sources.WatchState `json:"watch,omitempty"`
}

// Discover lists subject for p, as the workspace stands in now.
func (d *Discoverer) Discover(ctx context.Context, p workspace.Principal, now DiscoverState, subject, cursor string, limit int) (DiscoverPage, error) {
	if limit == 0 {
		limit = defaultDiscoverLimit
	}
	if limit < 0 || limit > maxDiscoverLimit {
		return DiscoverPage{}, workspace.Errorf(workspace.CodeInvalidArgument, "limit must be between 1 and %d", maxDiscoverLimit)
	}
	scope := workspace.ScopeKey(p) + "|" + subject
	if subject == SubjectRuns && d.Runs != nil {
		return d.runs(ctx, p, scope, cursor, limit)
	}
	var cur offsetCursor
	if cursor != "" {
		if err := d.Cursors.Open("discover", scope, cursor, &cur); err != nil {
			return DiscoverPage{}, err
		}
	}
	items, err := d.items(ctx, p, now, subject)
	if err != nil {
		return DiscoverPage{}, err
	}
	page := DiscoverPage{Items: []any{}}
	if cur.Offset < len(items) {
		end := min(len(items), cur.Offset+limit)
		page.Items = items[cur.Offset:end]
		if end < len(items) {
			c, err := d.Cursors.Seal("discover", scope, offsetCursor{Offset: end})
			if err != nil {
				return DiscoverPage{}, err
			}
			page.NextCursor = &c
		}
	}
	return page, nil
}

// runs pages discover runs by run number (Discoverer.Runs).
func (d *Discoverer) runs(ctx context.Context, p workspace.Principal, scope, cursor string, limit int) (DiscoverPage, error) {
	var cur runsCursor
	if cursor != "" {
		if err := d.Cursors.Open("discover", scope, cursor, &cur); err != nil {
			return DiscoverPage{}, err
		}
		if cur.Before <= 0 {
			return DiscoverPage{}, workspace.Errorf(workspace.CodeInvalidArgument, "invalid cursor: pass next_cursor from the previous page of the same request")
		}
	}
	runs, next, err := d.Runs.ListRuns(ctx, p, cur.Before, limit)
	if err != nil {
		return DiscoverPage{}, err
	}
	page := DiscoverPage{Items: make([]any, 0, len(runs))}
	for _, r := range runs {
		page.Items = append(page.Items, r)
	}
	if next > 0 {
		c, err := d.Cursors.Seal("discover", scope, runsCursor{Before: next})
		if err != nil {
			return DiscoverPage{}, err
		}
		page.NextCursor = &c
	}
	return page, nil
}

func (d *Discoverer) items(ctx context.Context, p workspace.Principal, now DiscoverState, subject string) ([]any, error) {
	cs := visible(p, now.Settings.Collections) // the caller's collections
	switch subject {
	case SubjectKinds:
		var out []any
		for _, k := range sources.Kinds() {
			out = append(out, k)
		}
		return out, nil
	case SubjectSources:
		srcs, err := sources.ListSources(ctx, d.DB, cs)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(srcs))
		for _, s := range srcs {
			item := SourceItem{Source: s}
			if now.Watch != nil {
				st := now.Watch.Of(s)
				item.Watch = &st
			}
			out = append(out, item)
		}
		return out, nil
	case SubjectSettings:
		s := now.Settings
		excludes := s.DefaultExcludes
		if excludes == nil { // settings that were never filled: the built-in list applies
			excludes = workspace.DefaultExcludes()
		}
		return []any{
			SettingItem{"ingest_roots", s.IngestRoots},
			SettingItem{"collections", cs},
			SettingItem{"max_file_bytes", s.MaxFileBytes},
			SettingItem{"max_request_bytes", s.MaxRequestBytes},
			SettingItem{"workers", s.Workers},
			SettingItem{"token_counter", s.TokenCounter},
			SettingItem{"default_max_tokens", s.DefaultMaxTokens},
			SettingItem{"query_history", s.QueryHistory},
			SettingItem{"listen", s.Listen},
			SettingItem{"default_excludes", excludes},
			SettingItem{"watch", s.Watching()},
		}, nil
	case SubjectLanguages:
		return d.counted(ctx, cs, `SELECT language, count(*), COALESCE(SUM(units), 0) FROM files f JOIN sources s ON s.id = f.source_id
			WHERE f.status = 'indexed' AND COALESCE(f.language, '') <> '' AND s.collection_id IN (%s)
			GROUP BY language ORDER BY count(*) DESC, language`, func(k string, files, units int) any {
			return LanguageItem{Language: k, Files: files, Units: units}
		})
	case SubjectFacets:
		return d.facets(ctx, cs)
	case SubjectRelations:
		return d.relations(ctx, cs)
	case SubjectProfiles:
		var out []any
		for _, pr := range Profiles() {
			out = append(out, pr)
		}
		return out, nil
	case SubjectModels:
		return d.Models, nil
	}
	return nil, workspace.Errorf(workspace.CodeInvalidArgument, "subject %q: use kinds, facets, relations, profiles, languages, sources, settings, runs or models", subject)
}

// LanguageItem is one item of discover languages.
type LanguageItem struct {
	Language string `json:"language"`
	Files    int    `json:"files"`
	Units    int    `json:"units"`
}

// FacetItem is one item of discover facets: a facet of a kind with the
// values it takes in the caller's collections and how many files have
// each.
type FacetItem struct {
	Kind        string       `json:"kind"`
	Facet       string       `json:"facet"`
	Description string       `json:"description"`
	Values      []FacetValue `json:"values"`
}

// FacetValue is one value of a facet and its file count.
type FacetValue struct {
	Value string `json:"value"`
	Files int    `json:"files"`
}

// RelationItem is one item of discover relations: a relation type and how
// often it occurs in the caller's collections.
type RelationItem struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Count       int    `json:"count"`
}

var relationDescriptions = map[string]string{
	"parent": "the unit that contains this one (document → section → chunk)",
	"child":  "a unit this one contains",
	"link":   "a document link to another file, resolved to its evidence when indexed",
	// Text seen in an image (kind vision) describes the image's evidence.
	sources.RelationDescribes: "text seen in an image (kind vision) describes the image's evidence; its target is the selection id",
}

// inList renders the caller's collections cs as SQL placeholders and
// arguments; ok is false when the caller sees none.
func inList(cs []string) (string, []any, bool) {
	if len(cs) == 0 {
		return "", nil, false
	}
	args := make([]any, len(cs))
	for i, c := range cs {
		args[i] = c
	}
	return strings.TrimSuffix(strings.Repeat("?,", len(cs)), ","), args, true
}

func (d *Discoverer) counted(ctx context.Context, cs []string, q string, item func(string, int, int) any) ([]any, error) {
	in, args, ok := inList(cs)
	if !ok {
		return []any{}, nil
	}
	rows, err := d.DB.R.QueryContext(ctx, fmt.Sprintf(q, in), args...)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	defer rows.Close()
	out := []any{}
	for rows.Next() {
		var k string
		var a, b int
		if err := rows.Scan(&k, &a, &b); err != nil {
			return nil, fmt.Errorf("discover: %w", err)
		}
		out = append(out, item(k, a, b))
	}
	return out, rows.Err()
}

// facets lists every facet of every registered kind with the values found
// in the caller's collections.
func (d *Discoverer) facets(ctx context.Context, cs []string) ([]any, error) {
	counts := map[[3]string]int{}
	if in, args, ok := inList(cs); ok {
		rows, err := d.DB.R.QueryContext(ctx, fmt.Sprintf(`SELECT f.kind, j.key, CAST(j.value AS TEXT), count(*)
			FROM files f JOIN sources s ON s.id = f.source_id, json_each(f.facets) j
			WHERE f.status IN ('indexed', 'asset') AND json_valid(f.facets) AND s.collection_id IN (%s)
			GROUP BY f.kind, j.key, j.value`, in), args...)
		if err != nil {
			return nil, fmt.Errorf("discover facets: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var kind, key, val sql.NullString
			var n int
			if err := rows.Scan(&kind, &key, &val, &n); err != nil {
				return nil, fmt.Errorf("discover facets: %w", err)
			}
			counts[[3]string{kind.String, key.String, val.String}] += n
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	out := []any{}
	for _, k := range sources.Kinds() {
		for _, f := range k.Facets {
			item := FacetItem{Kind: k.ID, Facet: f.Name, Description: f.Description, Values: []FacetValue{}}
			for key, n := range counts {
				if key[0] == k.ID && key[1] == f.Name {
					item.Values = append(item.Values, FacetValue{Value: key[2], Files: n})
				}
			}
			slices.SortFunc(item.Values, func(a, b FacetValue) int {
				if a.Files != b.Files {
					return b.Files - a.Files
				}
				return strings.Compare(a.Value, b.Value)
			})
			out = append(out, item)
		}
	}
	return out, nil
}

// relations lists the relation types with their counts.
func (d *Discoverer) relations(ctx context.Context, cs []string) ([]any, error) {
	n := map[string]int{"parent": 0, "child": 0, "link": 0, sources.RelationDescribes: 0}
	if in, args, ok := inList(cs); ok {
		var tree int
		if err := d.DB.R.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM evidence WHERE parent_id IS NOT NULL AND collection_id IN (%s)`, in), args...).Scan(&tree); err != nil {
			return nil, fmt.Errorf("discover relations: %w", err)
		}
		n["parent"], n["child"] = tree, tree
		rows, err := d.DB.R.QueryContext(ctx, fmt.Sprintf(`SELECT r.type, count(*) FROM relations r JOIN sources s ON s.id = r.source_id
			WHERE s.collection_id IN (%s) GROUP BY r.type`, in), args...)
		if err != nil {
			return nil, fmt.Errorf("discover relations: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var t string
			var c int
			if err := rows.Scan(&t, &c); err != nil {
				return nil, err
			}
			n[t] += c
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	types := make([]string, 0, len(n))
	for t := range n {
		types = append(types, t)
	}
	slices.Sort(types)
	out := make([]any, 0, len(types))
	for _, t := range types {
		out = append(out, RelationItem{Type: t, Description: relationDescriptions[t], Count: n[t]})
	}
	return out, nil
}

// visible is the collections p may see among the configured ones.
func visible(p workspace.Principal, configured []string) []string {
	return p.VisibleCollections(configured)
}
