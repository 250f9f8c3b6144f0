package query

import (
	"context"
	"slices"

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
type Discoverer struct {
	DB       *workspace.DB
	Settings workspace.Settings
	Cursors  *workspace.Cursors
	// Extra answers subjects this package does not know yet (models, from
	// the token counters); nil for none.
	Extra func(ctx context.Context, p workspace.Principal, subject string) ([]any, bool, error)
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

// SettingItem is one item of discover settings.
type SettingItem struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// SourceItem is one item of discover sources: the source and where it
// stands.
type SourceItem struct {
	sources.Source
}

// Discover lists subject for p.
func (d *Discoverer) Discover(ctx context.Context, p workspace.Principal, subject, cursor string, limit int) (DiscoverPage, error) {
	if err := p.Require(workspace.GrantRead); err != nil {
		return DiscoverPage{}, err
	}
	if limit == 0 {
		limit = defaultDiscoverLimit
	}
	if limit < 0 || limit > maxDiscoverLimit {
		return DiscoverPage{}, workspace.Errorf(workspace.CodeInvalidArgument, "limit must be between 1 and %d", maxDiscoverLimit)
	}
	scope := workspace.ScopeKey(p) + "|" + subject
	var cur offsetCursor
	if cursor != "" {
		if err := d.Cursors.Open("discover", scope, cursor, &cur); err != nil {
			return DiscoverPage{}, err
		}
	}
	items, err := d.items(ctx, p, subject)
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

func (d *Discoverer) items(ctx context.Context, p workspace.Principal, subject string) ([]any, error) {
	switch subject {
	case SubjectKinds:
		var out []any
		for _, k := range sources.Kinds() {
			out = append(out, k)
		}
		return out, nil
	case SubjectSources:
		srcs, err := sources.ListSources(ctx, d.DB, visible(p, d.Settings.Collections))
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(srcs))
		for _, s := range srcs {
			out = append(out, SourceItem{Source: s})
		}
		return out, nil
	case SubjectSettings:
		s := d.Settings
		return []any{
			SettingItem{"ingest_roots", s.IngestRoots},
			SettingItem{"collections", visible(p, s.Collections)},
			SettingItem{"max_file_bytes", s.MaxFileBytes},
			SettingItem{"max_request_bytes", s.MaxRequestBytes},
			SettingItem{"workers", s.Workers},
			SettingItem{"token_counter", s.TokenCounter},
			SettingItem{"default_max_tokens", s.DefaultMaxTokens},
			SettingItem{"query_history", s.QueryHistory},
			SettingItem{"listen", s.Listen},
		}, nil
	}
	if d.Extra != nil {
		items, ok, err := d.Extra(ctx, p, subject)
		if ok || err != nil {
			return items, err
		}
	}
	if slices.Contains([]string{SubjectFacets, SubjectRelations, SubjectProfiles, SubjectLanguages, SubjectRuns, SubjectModels}, subject) {
		return nil, workspace.Errorf(workspace.CodeUnavailable, "discover %s is not available in this build yet", subject)
	}
	return nil, workspace.Errorf(workspace.CodeInvalidArgument, "subject %q: use kinds, facets, relations, profiles, languages, sources, settings, runs or models", subject)
}

// visible is the collections p may see among the configured ones.
func visible(p workspace.Principal, configured []string) []string {
	return p.VisibleCollections(configured)
}
