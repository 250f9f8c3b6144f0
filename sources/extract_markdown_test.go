package sources

import (
	"reflect"
	"strings"
	"testing"
)

// sectionSummary lists "title@start-end" for each section.
type sectionInfo struct {
	Title string
	Path  string
	Start int
	End   int
}

func sectionsOf(ex Extracted) []sectionInfo {
	var out []sectionInfo
	for _, u := range ex.Units {
		if u.Level == LevelSection {
			out = append(out, sectionInfo{u.Title, strings.Join(u.HeadingPath, " > "), u.StartLine, u.EndLine})
		}
	}
	return out
}

func TestMarkdownSections(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		title  string
		want   []sectionInfo
		facets map[string]string
	}{
		{
			name:  "atx and path",
			in:    "# Guide\n\nintro\n\n## Install\n\n### From source\n\nrun it\n\n## Use ##\n",
			title: "Guide",
			want: []sectionInfo{
				{"Guide", "Guide", 1, 3}, {"Install", "Guide > Install", 5, 5},
				{"From source", "Guide > Install > From source", 7, 9}, {"Use", "Guide > Use", 11, 11},
			},
			facets: map[string]string{"has_front_matter": "false", "has_code_blocks": "false", "max_heading_depth": "3"},
		},
		{
			name:  "fence hides headings",
			in:    "## A\n```sh\n# comment\n## also\n```\n~~~~\n# x\n~~~\n# y\n~~~~\n",
			title: "doc.md",
			want:  []sectionInfo{{"A", "A", 1, 10}},
		},
		{
			name:  "unclosed fence runs to the end",
			in:    "# A\n```\n# B\n",
			title: "A",
			want:  []sectionInfo{{"A", "A", 1, 3}},
		},
		{
			name:  "setext",
			in:    "Title\n=====\n\ntext\n\nSub part\nline two\n--------\nmore\n",
			title: "Title",
			want:  []sectionInfo{{"Title", "Title", 1, 4}, {"Sub part line two", "Title > Sub part line two", 6, 9}},
		},
		{
			name:  "thematic break and list are not setext",
			in:    "# A\n\n---\n\n- item\n---\n",
			title: "A",
			want:  []sectionInfo{{"A", "A", 1, 6}},
		},
		{
			name:  "front matter title",
			in:    "---\ntitle: 'From FM'\n---\n# Heading\n",
			title: "From FM",
			want:  []sectionInfo{{"front matter", "", 1, 3}, {"Heading", "Heading", 4, 4}},
		},
		{
			name:  "toml front matter without title",
			in:    "+++\ndraft = true\n+++\n\ntext\n",
			title: "doc.md",
			want:  []sectionInfo{{"front matter", "", 1, 3}, {"doc.md", "", 5, 5}},
		},
		{
			name:  "not front matter when unclosed",
			in:    "---\ntitle: x\n",
			title: "doc.md",
			want:  []sectionInfo{{"doc.md", "", 1, 2}},
		},
		{
			name:  "html comment hides headings",
			in:    "<!--\n# no\n-->\n# yes\n",
			title: "yes",
			want:  []sectionInfo{{"yes", "", 1, 3}, {"yes", "yes", 4, 4}},
		},
		{
			name:  "indented code is not a heading",
			in:    "text\n\n    # not a heading\n",
			title: "doc.md",
			want:  []sectionInfo{{"doc.md", "", 1, 3}},
		},
		{
			name:  "list fence with heading-like line",
			in:    "# A\n- item\n    ```\n# inside\n    ```\n",
			title: "A",
			want:  []sectionInfo{{"A", "A", 1, 5}},
		},
		{
			name:  "crlf and bom",
			in:    "\ufeff---\r\ntitle: T\r\n---\r\n# A\r\n```\r\n# no\r\n```\r\nB\r\n-\r\n",
			title: "T",
			want:  []sectionInfo{{"front matter", "", 1, 3}, {"A", "A", 4, 7}, {"B", "A > B", 8, 9}},
		},
		{name: "empty", in: "", title: "doc.md"},
		{name: "blank", in: "\n\n  \n", title: "doc.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := markdownExtractor{}.Extract("dir/doc.md", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkUnits(tt.in, ex, true); err != nil {
				t.Fatal(err)
			}
			if ex.Title != tt.title {
				t.Errorf("title %q, want %q", ex.Title, tt.title)
			}
			if got := sectionsOf(ex); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sections\n got %+v\nwant %+v", got, tt.want)
			}
			for k, v := range tt.facets {
				if ex.Facets[k] != v {
					t.Errorf("facet %s = %q, want %q", k, ex.Facets[k], v)
				}
			}
		})
	}
}

func TestMarkdownChannels(t *testing.T) {
	in := "---\ntitle: t\n---\n# Code only\n\n```go\nfunc f() {}\n```\n\n# Mixed\n\ntext\n\n```\nx\n```\n"
	ex, _ := markdownExtractor{}.Extract("a.md", in)
	got := map[string]string{}
	for _, u := range ex.Units[1:] {
		got[u.Title] = u.Channel
	}
	want := map[string]string{"front matter": ChannelMetadata, "Code only": ChannelText, "Mixed": ChannelText}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("channels %v, want %v", got, want)
	}
}

// TestMarkdownChunksKeepFences checks that a long section is cut between
// blocks, not inside a fence that fits in a chunk.
func TestMarkdownChunksKeepFences(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("# Long\n\n")
	for i := 0; i < 8; i++ {
		sb.WriteString(strings.Repeat("Some words to fill up the paragraph nicely. ", 6) + "\n\n")
		sb.WriteString("```go\n" + strings.Repeat("x := compute(a, b)\n", 12) + "```\n\n")
	}
	in := sb.String()
	ex, _ := markdownExtractor{}.Extract("a.md", in)
	if err := checkUnits(in, ex, true); err != nil {
		t.Fatal(err)
	}
	lines := splitLines(in)
	chunks := 0
	for _, u := range ex.Units {
		if u.Level != LevelChunk {
			continue
		}
		chunks++
		first := lines[u.StartLine-1]
		if strings.HasPrefix(first, "x := ") {
			t.Errorf("chunk %d..%d starts inside a fence", u.StartLine, u.EndLine)
		}
		if u.Channel == ChannelCode && !strings.HasPrefix(first, "```") {
			t.Errorf("code chunk %d..%d does not start with its fence", u.StartLine, u.EndLine)
		}
	}
	if chunks < 2 {
		t.Fatalf("got %d chunks", chunks)
	}
}

func TestStripAttributes(t *testing.T) {
	for in, want := range map[string]string{
		"Introduction {#intro}":          "Introduction",
		"Setup {#setup .unnumbered}":     "Setup",
		"Styled {.big data-x=1}":         "Styled",
		"Use {braces} in templates":      "Use {braces} in templates",
		"Map {key}":                      "Map {key}",
		"Empty {}":                       "Empty {}",
		"{#only}":                        "{#only}",
		"Hash {#}":                       "Hash {#}",
		"No space{#x}":                   "No space{#x}",
		"Plain":                          "Plain",
		"Go's map[string]struct{}":       "Go's map[string]struct{}",
		"Anchor and words {#a} trailing": "Anchor and words {#a} trailing",
	} {
		if got := stripAttributes(in); got != want {
			t.Errorf("stripAttributes(%q) = %q, want %q", in, got, want)
		}
	}
}
