package query

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tychora/tychora/workspace"
)

// FuzzSearchQuery runs arbitrary questions through the whole search path
// over a small real index: the answer is a result or INVALID_ARGUMENT,
// never an FTS5 or SQL error, never a panic.
func FuzzSearchQuery(f *testing.F) {
	for _, s := range []string{
		"parse http request", "ParseHTTPRequest", `"read deadline"`, `"`, `""`, `"""`, `a"b"c"`,
		"IL-10", "p53/MDM2", "5'-UTR", "C++", "a AND b OR NOT c", "NEAR(a b, 2)", "col:term", "{title}: x",
		"^start", "pre*", "-neg +pos", "(a OR b", "a)", "\x00", "\xff\xfe", "日本語", "Crème brûlée",
		"ǅ ǈ ǋ", "\u200b\u200d", "a\u0301", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", strings.Repeat("x", 300), strings.Repeat("a b ", 600),
		"how does the scheduler work?", "errors.Is", "x86_64::std::vec", "...", "::", "-", "_", "__init__",
		"a fake clock for unit tests", "read parse http request x86_64 body", "snake case name", "docker build",
		"start a test HTTP server", "test ParseIP", "testing -", "TEST", "test É", "where is ParseIP used in tests",
	} {
		f.Add(s)
	}
	env := newFuzzEnv(f)
	ctx := context.Background()
	p := workspace.Principal{ID: "fuzz", Grant: workspace.GrantRead}
	f.Fuzz(func(t *testing.T, q string) {
		for _, prof := range []string{"", "recall"} {
			res, err := env.Search(ctx, p, QueryRequest{Question: q, Profile: prof, Limit: 5})
			if err != nil {
				var we *workspace.Error
				if !errors.As(err, &we) || we.Code != workspace.CodeInvalidArgument {
					t.Fatalf("%q: %v", q, err)
				}
				continue
			}
			if res.Hits == nil || res.TotalMatches < len(res.Hits) {
				t.Fatalf("%q: %+v", q, res)
			}
			for _, h := range res.Hits {
				if !utf8.ValidString(h.Snippet) || h.Text == nil {
					t.Fatalf("%q: bad hit %+v", q, h)
				}
			}
		}
	})
}

// newFuzzEnv indexes a few files of assorted content once for the fuzz
// target.
func newFuzzEnv(f *testing.F) *Engine {
	env := newSearchEnv(f)
	env.folder("docs", "default", map[string]string{
		"a.md":    "# Notes\n\nThe read deadline passes; parse the HTTP request. IL-10 and p53/MDM2 in 5'-UTR.\n",
		"b.go":    "package b\n\n// parseHTTPRequest reads.\nfunc parseHTTPRequest() {}\n\nfunc x86_64() { errors.Is(err, io.EOF) }\n",
		"c.txt":   "Crème brûlée, 日本語のテキスト, naïve café, C++ and C#.\n",
		"d.py":    "def __init__(self):\n    self.snake_case_name = None\n",
		"e.md":    "# " + strings.Repeat("long line of words ", 200) + "\n",
		"f.html":  "<html><head><title>Page</title></head><body><h1>Head</h1><p>NEAR AND OR NOT</p></body></html>\n",
		"g/h.txt": "\"quoted\" text with ''' odd ' quotes \" and :: colons\n",
	})
	return env.engine
}
