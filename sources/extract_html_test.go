package sources

import (
	"reflect"
	"strings"
	"testing"
)

func TestHTMLExtract(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		title  string
		want   []sectionInfo
		texts  []string
		facets map[string]string
	}{
		{
			name:   "title, headings, script dropped",
			in:     "<html lang=\"EN\"><head><title> My  Page </title></head>\n<body>\n<h1>Top</h1>\n<p>one\ntwo</p>\n<script>var s = '<h2>x</h2>';</script>\n<h2>Sub</h2>\n<p>three &lt;3</p>\n</body></html>\n",
			title:  "My Page",
			want:   []sectionInfo{{"Top", "Top", 3, 5}, {"Sub", "Top > Sub", 7, 8}},
			texts:  []string{"Top\none two", "Sub\nthree <3"},
			facets: map[string]string{"lang": "en", "has_code_blocks": "false"},
		},
		{
			name:  "title from first h1",
			in:    "<p>before</p>\n<h1>Heading <em>One</em></h1>\n<p>after</p>\n",
			title: "Heading One",
			want:  []sectionInfo{{"Heading One", "", 1, 1}, {"Heading One", "Heading One", 2, 3}},
			texts: []string{"before", "Heading One\nafter"},
		},
		{
			name:  "heading sharing a line with text is no section",
			in:    "<p>a</p><h2>B</h2><p>c</p>\n",
			title: "page.html",
			want:  []sectionInfo{{"page.html", "", 1, 1}},
			texts: []string{"a\nB\nc"},
		},
		{
			name:   "pre keeps lines",
			in:     "<h2>Code</h2>\n<pre>\nfunc f() {\n  x()\n}\n</pre>\n",
			title:  "page.html",
			want:   []sectionInfo{{"Code", "Code", 1, 5}},
			texts:  []string{"Code\nfunc f() {\n  x()\n}"},
			facets: map[string]string{"has_code_blocks": "true"},
		},
		{
			name:  "table cells",
			in:    "<table><tr><td>a</td><td>b</td></tr><tr><th>c</th></tr></table>",
			title: "page.html",
			want:  []sectionInfo{{"page.html", "", 1, 1}},
			texts: []string{"a b\nc"},
		},
		{name: "empty", in: "", title: "page.html"},
		{name: "markup only", in: "<html><head><style>p{}</style></head><body>\n</body></html>", title: "page.html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := htmlExtractor{}.Extract("site/page.html", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkUnits(tt.in, ex, false); err != nil {
				t.Fatal(err)
			}
			if ex.Title != tt.title {
				t.Errorf("title %q, want %q", ex.Title, tt.title)
			}
			if got := sectionsOf(ex); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sections\n got %+v\nwant %+v", got, tt.want)
			}
			var texts []string
			for _, u := range ex.Units[1:] {
				if u.Text != "" {
					texts = append(texts, u.Text)
				}
			}
			if !reflect.DeepEqual(texts, tt.texts) {
				t.Errorf("texts\n got %q\nwant %q", texts, tt.texts)
			}
			for k, v := range tt.facets {
				if ex.Facets[k] != v {
					t.Errorf("facet %s = %q, want %q", k, ex.Facets[k], v)
				}
			}
		})
	}
}

func TestHTMLChunks(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("<h1>Long</h1>\n")
	for i := 0; i < 200; i++ {
		sb.WriteString("<p>A paragraph of visible words that the page holds.</p>\n<script>ignored()</script>\n")
	}
	in := sb.String()
	ex, _ := htmlExtractor{}.Extract("a.html", in)
	if err := checkUnits(in, ex, false); err != nil {
		t.Fatal(err)
	}
	chunks := 0
	for _, u := range ex.Units {
		if u.Level == LevelChunk {
			chunks++
			if strings.Contains(u.Text, "ignored") {
				t.Errorf("script text in chunk %d..%d", u.StartLine, u.EndLine)
			}
			if n := EstimateTokens(u.Text); n > ChunkMaxTokens {
				t.Errorf("chunk %d..%d has %d tokens", u.StartLine, u.EndLine, n)
			}
		}
	}
	if chunks < 3 {
		t.Errorf("got %d chunks", chunks)
	}
}
