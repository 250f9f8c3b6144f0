package query

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// Request limits. A request outside them is INVALID_ARGUMENT; docs/search.md
// lists them.
const (
	// DefaultLimit and MaxLimit bound QueryRequest.Limit.
	DefaultLimit = 10
	MaxLimit     = 100
	// BudgetPageLimit is the largest page of a request that names a
	// budget and no limit: as many places as the budget can show, up to
	// this many (the fitter decides how many fit).
	BudgetPageLimit = 50
	// BudgetPlaceTokens sizes that page: one place per this many tokens of
	// the budget (at least DefaultLimit, at most BudgetPageLimit). The
	// smallest place an answer shows (a compact citation, its header and
	// one line of text, the last two twice under a render) costs about
	// this much with a short path and a one-word line, and the answer's
	// envelope (100-160 tokens) takes its room too, so the page never
	// holds fewer places than the budget can show.
	BudgetPlaceTokens = 60
	// MaxQuestionBytes bounds the question's UTF-8 size, MaxQuestionTerms
	// the number of words (tokens) in it.
	MaxQuestionBytes = 8 << 10
	MaxQuestionTerms = 1000
	// MaxFilterValues bounds each filter list (and the facet map);
	// MaxFilterValueBytes each value in it.
	MaxFilterValues     = 64
	MaxFilterValueBytes = 1024
	// MaxBudgetTokens bounds budget.max_tokens.
	MaxBudgetTokens = 1 << 20
)

// A normalized request is heavy (Heavy) past one of these: the owner lets
// heavy searches take only some of its ranking slots (docs/search.md).
const (
	HeavyQuestionTerms = 32
	HeavyGlobPatterns  = 16
)

// Heavy reports whether a normalized request is of the kind whose cost
// grows toward the request limits: a question of more than
// HeavyQuestionTerms words, or path globs that expand to more than
// HeavyGlobPatterns brace-free patterns.
func Heavy(req QueryRequest) bool {
	if countTokens(req.Question, HeavyQuestionTerms+1) > HeavyQuestionTerms {
		return true
	}
	if f := req.Filters; f != nil && len(f.Paths) > 0 {
		set, err := sources.CompileGlobs(f.Paths)
		return err != nil || set.Len() > HeavyGlobPatterns
	}
	return false
}

// ModalityLexical is the one modality of this build.
const ModalityLexical = "lexical"

// Token counters a budget may name.
var budgetCounters = []string{"o200k_base", "cl100k_base"}

// Normalize validates req and fills in its defaults: modalities
// ["lexical"], profile "balanced", limit 10. Lists in the filters are
// trimmed of duplicates and sorted (their order never matters), empty lists
// and an empty filter object are dropped. The question is kept as given
// (invalid UTF-8 is replaced). Every problem is an INVALID_ARGUMENT
// *workspace.Error naming the field. Normalize does not check the caller's
// grant or whether named collections and sources exist: Search does.
func Normalize(req QueryRequest) (QueryRequest, error) {
	out := QueryRequest{Cursor: req.Cursor}
	q := req.Question
	if !utf8.ValidString(q) {
		q = strings.ToValidUTF8(q, "\uFFFD")
	}
	if strings.TrimSpace(q) == "" {
		return QueryRequest{}, invalid("question is required")
	}
	if len(q) > MaxQuestionBytes {
		return QueryRequest{}, invalid("question is %d bytes; the limit is %d", len(q), MaxQuestionBytes)
	}
	if n := countTokens(q, MaxQuestionTerms+1); n > MaxQuestionTerms {
		return QueryRequest{}, invalid("question has more than %d words (counting each part between punctuation: a.b.c is three)", MaxQuestionTerms)
	}
	out.Question = q

	out.Modalities = []string{ModalityLexical}
	if req.Modalities != nil {
		if len(req.Modalities) == 0 {
			return QueryRequest{}, invalid("modalities must name at least one modality (lexical)")
		}
		for _, m := range req.Modalities {
			if m != ModalityLexical {
				return QueryRequest{}, invalid("modality %q is not available: this build searches %q only", workspace.Clip(m, 64), ModalityLexical)
			}
		}
	}

	out.Profile = DefaultProfile
	if req.Profile != "" {
		if _, ok := profileByName(req.Profile); !ok {
			return QueryRequest{}, invalid("profile %q: use %s", workspace.Clip(req.Profile, 64), strings.Join(profileNames(), ", "))
		}
		out.Profile = req.Profile
	}

	switch {
	case req.Limit == 0 && req.Budget != nil && req.Budget.MaxTokens > 0:
		out.Limit = BudgetPage(req.Budget.MaxTokens)
	case req.Limit == 0:
		out.Limit = DefaultLimit
	case req.Limit < 0 || req.Limit > MaxLimit:
		return QueryRequest{}, invalid("limit must be between 1 and %d", MaxLimit)
	default:
		out.Limit = req.Limit
	}

	f, err := normalizeFilters(req.Filters)
	if err != nil {
		return QueryRequest{}, err
	}
	out.Filters = f

	if b := req.Budget; b != nil {
		if b.MaxTokens < 0 || b.MaxTokens > MaxBudgetTokens {
			return QueryRequest{}, invalid("budget.max_tokens must be between 1 and %d", MaxBudgetTokens)
		}
		if b.Counter != "" && !slices.Contains(budgetCounters, b.Counter) {
			return QueryRequest{}, invalid("budget.counter %q: use %s", workspace.Clip(b.Counter, 64), strings.Join(budgetCounters, " or "))
		}
		if b.MaxTokens != 0 || b.Counter != "" {
			bb := *b
			out.Budget = &bb
		}
	}
	return out, nil
}

func normalizeFilters(f *Filters) (*Filters, error) {
	if f == nil {
		return nil, nil
	}
	var out Filters
	var err error
	if out.Collections, err = normalizeList("filters.collections", f.Collections, func(s string) bool {
		return workspace.ValidCollectionName(s)
	}); err != nil {
		return nil, err
	}
	if out.Sources, err = normalizeList("filters.sources", f.Sources, validID); err != nil {
		return nil, err
	}
	if out.Kinds, err = normalizeList("filters.kinds", f.Kinds, func(s string) bool {
		_, ok := sources.KindByID(s)
		return ok
	}); err != nil {
		return nil, err
	}
	// Language names and facet values are lower-case wherever tychora
	// records them (sources.DetectLanguage, the kind registry): "Go" means
	// go.
	if out.Languages, err = normalizeList("filters.languages", lowerAll(f.Languages), validWord); err != nil {
		return nil, err
	}
	if out.Paths, err = normalizeList("filters.paths", f.Paths, func(s string) bool {
		return !strings.HasPrefix(s, "/") && doublestar.ValidatePattern(s)
	}); err != nil {
		return nil, err
	}
	if len(f.Paths) > 0 {
		if _, err := sources.CompileGlobs(f.Paths); err != nil {
			return nil, invalid("filters.paths%v", err)
		}
	}
	if len(f.Facets) > MaxFilterValues {
		return nil, invalid("filters.facets has %d entries; the limit is %d", len(f.Facets), MaxFilterValues)
	}
	known := facetValues()
	for k, v := range f.Facets {
		if !validWord(k) {
			return nil, invalid("filters.facets: facet name %q: use letters, digits and '_'", workspace.Clip(k, 64))
		}
		if len(v) > MaxFilterValueBytes || !utf8.ValidString(v) {
			return nil, invalid("filters.facets.%s: the value is too long or not UTF-8", k)
		}
		values, ok := known[k]
		if !ok {
			return nil, invalid("filters.facets: no kind has a facet %q (discover facets lists them)", workspace.Clip(k, 64))
		}
		if values != nil && !slices.Contains(values, strings.ToLower(v)) {
			return nil, invalid("filters.facets.%s: %q is not one of its values: %s", k, workspace.Clip(v, 64), strings.Join(values, ", "))
		}
	}
	if out.Roles, err = normalizeList("filters.roles", f.Roles, sources.ValidRole); err != nil {
		return nil, rolesHint(err)
	}
	if out.ExcludeRoles, err = normalizeList("filters.exclude_roles", f.ExcludeRoles, sources.ValidRole); err != nil {
		return nil, rolesHint(err)
	}
	for _, r := range out.Roles {
		if slices.Contains(out.ExcludeRoles, r) {
			return nil, invalid("filters: role %q is both in roles and in exclude_roles", r)
		}
	}
	if len(f.Facets) > 0 {
		out.Facets = make(map[string]string, len(f.Facets))
		for k, v := range f.Facets {
			out.Facets[k] = strings.ToLower(v)
		}
	}
	if out.Collections == nil && out.Sources == nil && out.Kinds == nil && out.Languages == nil &&
		out.Paths == nil && out.Facets == nil && out.Roles == nil && out.ExcludeRoles == nil {
		return nil, nil
	}
	return &out, nil
}

// rolesHint adds the roles to a role list's error.
func rolesHint(err error) error {
	var we *workspace.Error
	if errors.As(err, &we) {
		return invalid("%s; the roles are %s", we.Message, strings.Join(sources.Roles(), ", "))
	}
	return err
}

func lowerAll(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}

// facetValues maps every facet name of the kind registry to its closed set
// of values, or to nil when its values are open.
var facetValues = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, k := range sources.Kinds() {
		for _, f := range k.Facets {
			vs, seen := m[f.Name]
			switch {
			case !seen:
				m[f.Name] = slices.Clone(f.Values)
			case vs != nil && f.Values != nil:
				for _, v := range f.Values {
					if !slices.Contains(vs, v) {
						vs = append(vs, v)
					}
				}
				m[f.Name] = vs
			default: // open in one kind: open
				m[f.Name] = nil
			}
		}
	}
	return m
})

// normalizeList validates, de-duplicates and sorts one filter list; nil
// when empty.
func normalizeList(field string, in []string, valid func(string) bool) ([]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxFilterValues {
		return nil, invalid("%s has %d values; the limit is %d", field, len(in), MaxFilterValues)
	}
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s == "" || len(s) > MaxFilterValueBytes || !utf8.ValidString(s) || !valid(s) {
			return nil, invalid("%s: %q is not valid", field, workspace.Clip(s, 64))
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// validID accepts the shape of tychora IDs (prefix_ and hex or a UUID).
func validID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return len(s) <= 128
}

// validWord accepts languages and facet names: ASCII letters, digits, '_',
// '-', '+', '#', '.' (c++, c#, objective-c, f#).
func validWord(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '#' || c == '.') {
			return false
		}
	}
	return true
}

// countTokens counts the question's tokens, stopping at limit.
func countTokens(s string, limit int) int {
	n := 0
	sources.ForEachToken(s, nil, func([]byte, int, int) bool {
		n++
		return n < limit
	})
	return n
}

// Echo is the compact echo of a normalized request.
func Echo(req QueryRequest) RequestEcho {
	return RequestEcho{
		Question:   req.Question,
		Modalities: slices.Clone(req.Modalities),
		Profile:    req.Profile,
		Filters:    req.Filters,
		Limit:      req.Limit,
	}
}

// pageKey is a stable hash of what decides a normalized request's ranking
// and pages: question, modalities, profile, filters and limit (not the
// cursor, not the budget). Search cursors are bound to it.
func pageKey(req QueryRequest) string {
	b, _ := json.Marshal(struct {
		Q string   `json:"q"`
		M []string `json:"m"`
		P string   `json:"p"`
		F *Filters `json:"f,omitempty"`
		L int      `json:"l"`
	}{req.Question, req.Modalities, req.Profile, req.Filters, req.Limit})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func invalid(format string, args ...any) *workspace.Error {
	return workspace.Errorf(workspace.CodeInvalidArgument, format, args...)
}

// BudgetPage is the page of a request with a budget of maxTokens and no
// limit: maxTokens / BudgetPlaceTokens, at least DefaultLimit and at most
// BudgetPageLimit. The pool grows with the page, so a small budget does
// not pay for ranking 50 places it cannot show.
func BudgetPage(maxTokens int) int {
	return min(BudgetPageLimit, max(DefaultLimit, maxTokens/BudgetPlaceTokens))
}
