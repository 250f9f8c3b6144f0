package query

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tychora/tychora/workspace"
)

func TestNormalizeDefaults(t *testing.T) {
	n, err := Normalize(QueryRequest{Question: "hello", Filters: &Filters{}})
	if err != nil {
		t.Fatal(err)
	}
	if n.Limit != DefaultLimit || n.Profile != DefaultProfile || !slices.Equal(n.Modalities, []string{"lexical"}) || n.Filters != nil {
		t.Errorf("normalized %+v", n)
	}
	n, err = Normalize(QueryRequest{Question: "x", Limit: 100, Profile: "precise", Modalities: []string{"lexical"},
		Filters: &Filters{Kinds: []string{"markdown", "code", "code"}, Paths: []string{"b/**", "a/*"}},
		Budget:  &Budget{MaxTokens: 500, Counter: "cl100k_base"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(n.Filters.Kinds, []string{"code", "markdown"}) || !slices.Equal(n.Filters.Paths, []string{"a/*", "b/**"}) ||
		n.Budget.MaxTokens != 500 || n.Limit != 100 {
		t.Errorf("normalized %+v %+v", n, n.Filters)
	}
	// A budget and no limit: a page sized by the budget; a limit wins.
	for _, c := range []struct {
		req  QueryRequest
		want int
	}{
		{QueryRequest{Question: "x", Budget: &Budget{MaxTokens: 1000}}, 1000 / BudgetPlaceTokens},
		{QueryRequest{Question: "x", Budget: &Budget{MaxTokens: 200}}, DefaultLimit},
		{QueryRequest{Question: "x", Budget: &Budget{MaxTokens: 4000}}, BudgetPageLimit},
		{QueryRequest{Question: "x", Budget: &Budget{MaxTokens: MaxBudgetTokens}}, BudgetPageLimit},
		{QueryRequest{Question: "x", Budget: &Budget{Counter: "cl100k_base"}}, DefaultLimit},
		{QueryRequest{Question: "x", Limit: 7, Budget: &Budget{MaxTokens: 1000}}, 7},
	} {
		if n, err := Normalize(c.req); err != nil || n.Limit != c.want {
			t.Errorf("%+v: limit %d (%v), want %d", c.req.Budget, n.Limit, err, c.want)
		}
	}
	// Equivalent requests have the same page key; a different one not.
	a, _ := Normalize(QueryRequest{Question: "x", Filters: &Filters{Kinds: []string{"code", "markdown"}}})
	b, _ := Normalize(QueryRequest{Question: "x", Filters: &Filters{Kinds: []string{"markdown", "code"}}, Limit: DefaultLimit, Budget: &Budget{MaxTokens: 9}})
	c, _ := Normalize(QueryRequest{Question: "x", Filters: &Filters{Kinds: []string{"code"}}})
	if pageKey(a) != pageKey(b) || pageKey(a) == pageKey(c) {
		t.Errorf("page keys: %s %s %s", pageKey(a), pageKey(b), pageKey(c))
	}
}

func TestNormalizeInvalid(t *testing.T) {
	many := make([]string, MaxFilterValues+1)
	for i := range many {
		many[i] = "code"
	}
	cases := []struct {
		name string
		req  QueryRequest
	}{
		{"no question", QueryRequest{}},
		{"blank question", QueryRequest{Question: " \t\n"}},
		{"question too long", QueryRequest{Question: strings.Repeat("a", MaxQuestionBytes+1)}},
		{"too many words", QueryRequest{Question: strings.Repeat("a ", MaxQuestionTerms+1)}},
		{"negative limit", QueryRequest{Question: "x", Limit: -1}},
		{"limit too large", QueryRequest{Question: "x", Limit: MaxLimit + 1}},
		{"unknown profile", QueryRequest{Question: "x", Profile: "fast"}},
		{"other modality", QueryRequest{Question: "x", Modalities: []string{"semantic"}}},
		{"empty modalities", QueryRequest{Question: "x", Modalities: []string{}}},
		{"too many filter values", QueryRequest{Question: "x", Filters: &Filters{Kinds: many}}},
		{"empty filter value", QueryRequest{Question: "x", Filters: &Filters{Languages: []string{""}}}},
		{"bad language", QueryRequest{Question: "x", Filters: &Filters{Languages: []string{"go lang"}}}},
		{"bad source id", QueryRequest{Question: "x", Filters: &Filters{Sources: []string{"../x"}}}},
		{"bad facet value", QueryRequest{Question: "x", Filters: &Filters{Facets: map[string]string{"a": strings.Repeat("v", MaxFilterValueBytes+1)}}}},
		{"negative budget", QueryRequest{Question: "x", Budget: &Budget{MaxTokens: -5}}},
		{"unknown counter", QueryRequest{Question: "x", Budget: &Budget{Counter: "gpt2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Normalize(c.req)
			wantCode(t, err, workspace.CodeInvalidArgument)
		})
	}
	// At the limits is fine.
	if _, err := Normalize(QueryRequest{Question: strings.Repeat("a ", MaxQuestionTerms)}); err != nil {
		t.Errorf("%d words: %v", MaxQuestionTerms, err)
	}
	// Invalid UTF-8 is replaced, not refused.
	n, err := Normalize(QueryRequest{Question: "caf\xe9"})
	if err != nil || n.Question != "caf\uFFFD" {
		t.Errorf("invalid UTF-8: %q %v", n.Question, err)
	}
}

// TestNormalizeFilterCase: language names and facet values are matched
// lower-case, as tychora records them; a facet no kind has, or a value
// outside a closed set, is INVALID_ARGUMENT rather than an empty answer.
func TestNormalizeFilterCase(t *testing.T) {
	n, err := Normalize(QueryRequest{Question: "x", Filters: &Filters{Languages: []string{"Go", "PYTHON", "go"},
		Facets: map[string]string{"lang": "en-US", "is_test": "TRUE"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(n.Filters.Languages, []string{"go", "python"}) || n.Filters.Facets["lang"] != "en-us" || n.Filters.Facets["is_test"] != "true" {
		t.Errorf("normalized %+v", n.Filters)
	}
	// Every facet an extractor records is one a filter may name: the
	// images' too.
	for _, f := range []map[string]string{{"mime": "image/PNG"}, {"format": "png"}, {"asset_id": "ab12"}, {"lang": "de-ch"}} {
		if _, err := Normalize(QueryRequest{Question: "x", Filters: &Filters{Facets: f}}); err != nil {
			t.Errorf("facets %v: %v", f, err)
		}
	}
	for _, f := range []map[string]string{{"bogusfacet": "x"}, {"is_test": "maybe"}, {"max_heading_depth": "7"}} {
		_, err := Normalize(QueryRequest{Question: "x", Filters: &Filters{Facets: f}})
		if workspace.ErrorCode(err) != workspace.CodeInvalidArgument {
			t.Errorf("facets %v: %v", f, err)
		}
	}
}

func TestHeavy(t *testing.T) {
	many := make([]string, HeavyGlobPatterns+1)
	for i := range many {
		many[i] = fmt.Sprintf("d%d/**", i)
	}
	for _, c := range []struct {
		name string
		req  QueryRequest
		want bool
	}{
		{"short", QueryRequest{Question: "goroutine scheduler"}, false},
		{"words at the bound", QueryRequest{Question: strings.Repeat("w ", HeavyQuestionTerms)}, false},
		{"long question", QueryRequest{Question: strings.Repeat("w ", HeavyQuestionTerms+1)}, true},
		{"a few globs", QueryRequest{Question: "x", Filters: &Filters{Paths: []string{"{a,b}/**/*.go"}}}, false},
		{"many glob patterns", QueryRequest{Question: "x", Filters: &Filters{Paths: many}}, true},
		{"braces count", QueryRequest{Question: "x", Filters: &Filters{Paths: []string{"{a,b}{c,d}{e,f}{g,h}{i,j}"}}}, true},
	} {
		if got := Heavy(c.req); got != c.want {
			t.Errorf("%s: Heavy = %v", c.name, got)
		}
	}
}
