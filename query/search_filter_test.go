package query

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tychora/tychora/workspace"
)

// filterEnv indexes the same word ("walrus") in files of several kinds,
// languages, paths and collections.
func filterEnv(t *testing.T) (env *searchEnv, srcA, srcB string) {
	env = newSearchEnv(t)
	srcA = env.folder("a", "a", map[string]string{
		"main.go":          "package main\n\n// walrus counts the herd.\nfunc walrus() int { return 1 }\n",
		"main_test.go":     "package main\n\nimport \"testing\"\n\n// TestWalrus checks the walrus.\nfunc TestWalrus(t *testing.T) {}\n",
		"docs/guide.md":    "# Guide\n\nThe walrus lives in the Arctic.\n",
		"docs/deep/faq.md": "# FAQ\n\nIs the walrus friendly?\n",
		"tool.py":          "def walrus():\n    return 'walrus'\n",
	})
	srcB = env.folder("b", "b", map[string]string{
		"notes.txt": "walrus notes from collection b\n",
		"b.go":      "package b\n\n// walrus in b.\nfunc walrus() {}\n",
	})
	return env, srcA, srcB
}

func TestSearchFilters(t *testing.T) {
	env, srcA, srcB := filterEnv(t)
	cases := []struct {
		name    string
		filters *Filters
		want    []string
	}{
		{"none", nil, []string{"main.go", "main_test.go", "docs/guide.md", "docs/deep/faq.md", "tool.py", "notes.txt", "b.go"}},
		{"collections", &Filters{Collections: []string{"b"}}, []string{"notes.txt", "b.go"}},
		{"sources", &Filters{Sources: []string{srcA}}, []string{"main.go", "main_test.go", "docs/guide.md", "docs/deep/faq.md", "tool.py"}},
		{"two sources", &Filters{Sources: []string{srcA, srcB}}, []string{"main.go", "main_test.go", "docs/guide.md", "docs/deep/faq.md", "tool.py", "notes.txt", "b.go"}},
		{"kinds", &Filters{Kinds: []string{"markdown"}}, []string{"docs/guide.md", "docs/deep/faq.md"}},
		{"kinds code+text", &Filters{Kinds: []string{"code", "text"}}, []string{"main.go", "main_test.go", "tool.py", "notes.txt", "b.go"}},
		{"languages", &Filters{Languages: []string{"python"}}, []string{"tool.py"}},
		{"paths **", &Filters{Paths: []string{"docs/**"}}, []string{"docs/guide.md", "docs/deep/faq.md"}},
		{"paths *", &Filters{Paths: []string{"docs/*.md"}}, []string{"docs/guide.md"}},
		{"paths top level", &Filters{Paths: []string{"*.go"}}, []string{"main.go", "main_test.go", "b.go"}},
		{"paths alternatives", &Filters{Paths: []string{"**/*.{py,txt}"}}, []string{"tool.py", "notes.txt"}},
		{"paths none", &Filters{Paths: []string{"nothing/**"}}, nil},
		{"facets", &Filters{Facets: map[string]string{"is_test": "true"}}, []string{"main_test.go"}},
		{"facets language", &Filters{Facets: map[string]string{"language": "go", "is_test": "false"}}, []string{"main.go", "b.go"}},
		{"combined", &Filters{Collections: []string{"a"}, Kinds: []string{"code"}, Languages: []string{"go"}}, []string{"main.go", "main_test.go"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := env.search(env.all, QueryRequest{Question: "walrus", Filters: c.filters, Limit: 100})
			got := paths(res.Hits)
			if !sameSet(got, c.want) || len(got) != len(c.want) {
				t.Errorf("hits %v, want %v", got, c.want)
			}
			if res.TotalMatches != len(c.want) {
				t.Errorf("total_matches %d, want %d", res.TotalMatches, len(c.want))
			}
		})
	}
}

func TestSearchFilterErrors(t *testing.T) {
	env, srcA, _ := filterEnv(t)
	onlyA := workspace.Principal{ID: "a-reader", Grant: workspace.GrantRead, Collections: []string{"a"}}
	ctx := context.Background()
	cases := []struct {
		name string
		p    workspace.Principal
		f    *Filters
		code workspace.Code
	}{
		{"unknown collection", env.all, &Filters{Collections: []string{"zzz"}}, workspace.CodeNotFound},
		{"collection outside the grant", onlyA, &Filters{Collections: []string{"b"}}, workspace.CodePermissionDenied},
		{"unknown source", env.all, &Filters{Sources: []string{"src_0000"}}, workspace.CodeNotFound},
		{"unknown kind", env.all, &Filters{Kinds: []string{"spreadsheet"}}, workspace.CodeInvalidArgument},
		{"bad glob", env.all, &Filters{Paths: []string{"docs/[a"}}, workspace.CodeInvalidArgument},
		{"absolute glob", env.all, &Filters{Paths: []string{"/etc/**"}}, workspace.CodeInvalidArgument},
		{"bad facet name", env.all, &Filters{Facets: map[string]string{`a"b`: "x"}}, workspace.CodeInvalidArgument},
		{"bad collection name", env.all, &Filters{Collections: []string{"A B"}}, workspace.CodeInvalidArgument},
		{"unknown role", env.all, &Filters{Roles: []string{"tests"}}, workspace.CodeInvalidArgument},
		{"role in capitals", env.all, &Filters{Roles: []string{"Test"}}, workspace.CodeInvalidArgument},
		{"unknown excluded role", env.all, &Filters{ExcludeRoles: []string{"vendor"}}, workspace.CodeInvalidArgument},
		{"role kept and excluded", env.all, &Filters{Roles: []string{"test", "source"}, ExcludeRoles: []string{"test"}}, workspace.CodeInvalidArgument},
		{"unknown role facet value", env.all, &Filters{Facets: map[string]string{"role": "fixture"}}, workspace.CodeInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := env.engine.Search(ctx, c.p, QueryRequest{Question: "walrus", Filters: c.f})
			wantCode(t, err, c.code)
		})
	}
	// A source of another collection is not found for a principal limited
	// to b: the same answer as a source that does not exist.
	onlyB := workspace.Principal{ID: "b-reader", Grant: workspace.GrantRead, Collections: []string{"b"}}
	_, err := env.engine.Search(ctx, onlyB, QueryRequest{Question: "walrus", Filters: &Filters{Sources: []string{srcA}}})
	wantCode(t, err, workspace.CodeNotFound)
}

// TestSearchGlobLimits: the nested-brace glob that cost seconds of CPU per
// search, and 64 copies of it, are refused before any file is matched,
// with a message naming the limit.
func TestSearchGlobLimits(t *testing.T) {
	env, _, _ := filterEnv(t)
	nested := strings.Repeat("{", 250) + "a" + strings.Repeat(",b}", 250)
	many := make([]string, MaxFilterValues)
	for i := range many {
		many[i] = strings.Repeat("{", 250) + fmt.Sprintf("%02d", i) + strings.Repeat(",b}", 250)
	}
	wide := make([]string, 3)
	for i := range wide {
		wide[i] = strings.Repeat("z", i) + "{a,b}{c,d}{e,f}{g,h}{i,j}"
	}
	for _, c := range []struct {
		name  string
		globs []string
		want  string
	}{
		{"nested", []string{nested}, "braces nest 250 deep; the limit is 4"},
		{"64 nested", many, "braces nest 250 deep; the limit is 4"},
		{"alternatives in all", wide, "the limit is 64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := env.engine.Search(context.Background(), env.all, QueryRequest{Question: "walrus", Filters: &Filters{Paths: c.globs}})
			wantCode(t, err, workspace.CodeInvalidArgument)
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
	// Within the limits, braces still match.
	res := env.search(env.all, QueryRequest{Question: "walrus", Filters: &Filters{Paths: []string{"{docs/{deep/,},}*.{md,go}"}}, Limit: 100})
	if got, want := paths(res.Hits), []string{"docs/guide.md", "docs/deep/faq.md", "main.go", "main_test.go", "b.go"}; !sameSet(got, want) || len(got) != len(want) {
		t.Fatalf("hits %v, want %v", got, want)
	}
}

// TestSearchCancelled: a search whose caller has gone stops with the
// context's error instead of running to its end.
func TestSearchCancelled(t *testing.T) {
	env, _, _ := filterEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, f := range []*Filters{nil, {Paths: []string{"**/*.go"}}} {
		_, err := env.engine.Search(ctx, env.all, QueryRequest{Question: "walrus", Filters: f})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("filters %v: err = %v, want context.Canceled", f, err)
		}
	}
}

func TestSearchGrantIsolation(t *testing.T) {
	env, _, _ := filterEnv(t)
	ctx := context.Background()
	onlyA := workspace.Principal{ID: "a-reader", Grant: workspace.GrantRead, Collections: []string{"a"}}
	onlyB := workspace.Principal{ID: "b-reader", Grant: workspace.GrantRead, Collections: []string{"b"}}
	none := workspace.Principal{ID: "nobody", Grant: workspace.GrantRead, Collections: []string{}}

	resA := env.search(onlyA, QueryRequest{Question: "walrus", Limit: 2})
	if resA.TotalMatches != 5 {
		t.Errorf("a: total_matches %d, want 5 (collection a only)", resA.TotalMatches)
	}
	all := env.search(onlyA, QueryRequest{Question: "walrus", Limit: 100})
	for _, h := range all.Hits {
		if h.Path == "notes.txt" || h.Path == "b.go" {
			t.Errorf("a-reader sees %s of collection b", h.Path)
		}
	}
	resB := env.search(onlyB, QueryRequest{Question: "walrus collection notes"})
	if !sameSet(paths(resB.Hits), []string{"notes.txt", "b.go"}) || resB.TotalMatches != 2 {
		t.Errorf("b: %v total %d", paths(resB.Hits), resB.TotalMatches)
	}
	// Words only collection b holds match nothing for a, counts included.
	if res := env.search(onlyA, QueryRequest{Question: "notes collection"}); len(res.Hits) != 0 || res.TotalMatches != 0 {
		t.Errorf("a sees b through %v / total %d", paths(res.Hits), res.TotalMatches)
	}
	if res := env.search(none, QueryRequest{Question: "walrus"}); len(res.Hits) != 0 || res.TotalMatches != 0 {
		t.Errorf("no collections: %v", paths(res.Hits))
	}

	// Cursors are bound to the scope and to the request.
	if resA.NextCursor == nil {
		t.Fatal("no next cursor")
	}
	cur := *resA.NextCursor
	_, err := env.engine.Search(ctx, onlyB, QueryRequest{Question: "walrus", Limit: 2, Cursor: cur})
	wantCode(t, err, workspace.CodeInvalidArgument)
	_, err = env.engine.Search(ctx, env.all, QueryRequest{Question: "walrus", Limit: 2, Cursor: cur})
	wantCode(t, err, workspace.CodeInvalidArgument)
	_, err = env.engine.Search(ctx, onlyA, QueryRequest{Question: "walrus herd", Limit: 2, Cursor: cur})
	wantCode(t, err, workspace.CodeInvalidArgument)
	_, err = env.engine.Search(ctx, onlyA, QueryRequest{Question: "walrus", Limit: 3, Cursor: cur})
	wantCode(t, err, workspace.CodeInvalidArgument)
	_, err = env.engine.Search(ctx, onlyA, QueryRequest{Question: "walrus", Limit: 2, Cursor: cur, Filters: &Filters{Kinds: []string{"code"}}})
	wantCode(t, err, workspace.CodeInvalidArgument)
	_, err = env.engine.Search(ctx, onlyA, QueryRequest{Question: "walrus", Limit: 2, Cursor: cur + "x"})
	wantCode(t, err, workspace.CodeInvalidArgument)
	// The same scope and request continue.
	next, err := env.engine.Search(ctx, onlyA, QueryRequest{Question: "walrus", Limit: 2, Cursor: cur})
	if err != nil || next.Offset != 2 || len(next.Hits) != 2 {
		t.Fatalf("next page: %v offset %d hits %v", err, next.Offset, paths(next.Hits))
	}
	if slices.Contains(paths(next.Hits), resA.Hits[0].Path) && resA.Hits[0].EvidenceID == next.Hits[0].EvidenceID {
		t.Errorf("page 2 repeats page 1")
	}
	// PageCursor issues the same kind of cursor at any rank.
	pc, err := env.engine.PageCursor(onlyA, next.Request, 1)
	if err != nil {
		t.Fatal(err)
	}
	again, err := env.engine.Search(ctx, onlyA, QueryRequest{Question: "walrus", Limit: 2, Cursor: pc})
	if err != nil || again.Offset != 1 || again.Hits[0].EvidenceID != resA.Hits[1].EvidenceID {
		t.Errorf("PageCursor: %v %+v", err, again.Offset)
	}
}

// TestSearchRoleFilters: filters.roles keeps the evidence of files with
// those roles, filters.exclude_roles drops it, through a real index; each
// hit names its file's role, and the role facet selects the same files.
func TestSearchRoleFilters(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("r", "default", map[string]string{
		"net/ip.go":           "package net\n\n// walrus parses.\nfunc Walrus() {}\n",
		"net/ip_test.go":      "package net\n\nimport \"testing\"\n\n// walrus test.\nfunc TestWalrus(t *testing.T) {}\n",
		"net/example_test.go": "package net_test\n\n// walrus example.\nfunc ExampleWalrus() {}\n",
		"net/testdata/w.txt":  "walrus fixture\n",
		"vendor/x/x.go":       "package x\n\n// walrus vendored.\nfunc W() {}\n",
		"api/api.pb.go":       "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage api\n\n// walrus message.\ntype Walrus struct{}\n",
		"web/app.min.js":      "function walrus(){}\n",
		"docs/guide.md":       "# Guide\n\nThe walrus lives in the Arctic.\n",
	})
	roleOf := map[string]string{
		"net/ip.go": "source", "net/ip_test.go": "test", "net/example_test.go": "example", "net/testdata/w.txt": "testdata",
		"vendor/x/x.go": "vendored", "api/api.pb.go": "generated", "web/app.min.js": "minified", "docs/guide.md": "documentation",
	}
	every := make([]string, 0, len(roleOf))
	for p := range roleOf {
		every = append(every, p)
	}
	cases := []struct {
		name    string
		filters *Filters
		want    []string
	}{
		{"none", nil, every},
		{"source", &Filters{Roles: []string{"source"}}, []string{"net/ip.go"}},
		{"test and example", &Filters{Roles: []string{"example", "test"}}, []string{"net/ip_test.go", "net/example_test.go"}},
		{"exclude", &Filters{ExcludeRoles: []string{"test", "example", "testdata", "vendored", "generated", "minified"}},
			[]string{"net/ip.go", "docs/guide.md"}},
		{"roles and paths", &Filters{Roles: []string{"test"}, Paths: []string{"net/**"}}, []string{"net/ip_test.go"}},
		{"roles with another filter", &Filters{Roles: []string{"source", "documentation", "test"}, Kinds: []string{"code"}},
			[]string{"net/ip.go", "net/ip_test.go"}},
		{"role facet", &Filters{Facets: map[string]string{"role": "vendored"}}, []string{"vendor/x/x.go"}},
		{"excluded role facet", &Filters{Facets: map[string]string{"role": "generated"}, ExcludeRoles: []string{"generated"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := env.search(env.all, QueryRequest{Question: "walrus", Filters: c.filters, Limit: 100})
			got := paths(res.Hits)
			if !sameSet(got, c.want) || len(got) != len(c.want) {
				t.Errorf("hits %v, want %v", got, c.want)
			}
			if res.TotalMatches != len(c.want) {
				t.Errorf("total_matches %d, want %d", res.TotalMatches, len(c.want))
			}
			for _, h := range res.Hits {
				if h.Role != roleOf[h.Path] {
					t.Errorf("%s: hit role %q, want %q", h.Path, h.Role, roleOf[h.Path])
				}
			}
		})
	}
	// The echo holds the normalized lists: sorted, once each.
	res := env.search(env.all, QueryRequest{Question: "walrus", Filters: &Filters{Roles: []string{"test", "example", "test"}, ExcludeRoles: []string{"vendored"}}})
	if f := res.Echo.Filters; f == nil || !slices.Equal(f.Roles, []string{"example", "test"}) || !slices.Equal(f.ExcludeRoles, []string{"vendored"}) {
		t.Errorf("echo %+v", res.Echo.Filters)
	}
}
