package query

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/tychora/tychora/sources"
)

func TestParseQuestion(t *testing.T) {
	type want struct {
		clauses []string // free terms, identifier groups (whole|parts) and quoted phrases
		stop    []string
	}
	describe := func(pq parsedQuery) want {
		var w want
		for i, tm := range pq.terms {
			if pq.clause(i) {
				w.clauses = append(w.clauses, tm.token)
			}
			if tm.stop {
				w.stop = append(w.stop, tm.token)
			}
		}
		for _, g := range pq.groups {
			var whole, parts []string
			for _, i := range g.whole {
				whole = append(whole, pq.terms[i].token)
			}
			for _, i := range g.parts {
				parts = append(parts, pq.terms[i].token)
			}
			w.clauses = append(w.clauses, strings.Join(whole, " ")+"|"+strings.Join(parts, " "))
		}
		for _, ph := range pq.phrases {
			if ph.quoted {
				w.clauses = append(w.clauses, `"`+strings.Join(ph.tokens, " ")+`"`)
			}
		}
		return w
	}
	cases := []struct {
		q    string
		want want
	}{
		{"parse http request", want{clauses: []string{"parse", "http", "request"}}},
		{"parseHTTPRequest", want{clauses: []string{"parsehttprequest|parse http request"}}},
		{"parse_http_request()", want{clauses: []string{"parse_http_request|parse http request"}}},
		{"os.ReadFile", want{clauses: []string{"os readfile|os read file"}}},
		{"errors.Is", want{clauses: []string{"errors is|errors is"}}},
		{"how does the scheduler work?", want{clauses: []string{"scheduler", "work"}, stop: []string{"how", "does", "the"}}},
		{`"read the deadline" now`, want{clauses: []string{"now", `"read the deadline"`}, stop: []string{"the"}}},
		{`unclosed "quote here`, want{clauses: []string{"unclosed", "quote"}, stop: []string{"here"}}}, // an unclosed quote is ignored
		{"the and of", want{clauses: []string{"the", "and", "of"}}},
		{`IL-10 and p53/MDM2`, want{clauses: []string{"il10", "p53", "mdm2", "il 10|il 10"}, stop: []string{"and"}}}, // il10: IL-10 joined
		{"Crème brûlée", want{clauses: []string{"creme", "brulee"}}},
		{`AND OR NOT NEAR * ^ : ( ) {a} -x +y`, want{clauses: []string{"not", "near", "x", "y"}, stop: []string{"and", "or", "a"}}},
		{"", want{}},
		{`"" " "`, want{}},
	}
	for _, c := range cases {
		got := describe(parseQuestion(c.q))
		if !slices.Equal(got.clauses, c.want.clauses) || !slices.Equal(got.stop, c.want.stop) {
			t.Errorf("%q: clauses %q stop %q, want %q %q", c.q, got.clauses, got.stop, c.want.clauses, c.want.stop)
		}
	}
}

func TestCompounds(t *testing.T) {
	got := sources.Compounds("call os.ReadFile(path), std::vector x86_64 - a-b. end.")
	want := []string{"call", "os.ReadFile", "path", "std::vector", "x86_64", "a-b", "end"}
	if !slices.Equal(got, want) {
		t.Errorf("compounds %q, want %q", got, want)
	}
}

func TestFTSString(t *testing.T) {
	if got := ftsString("a", `b"c`); got != `"a b""c"` {
		t.Errorf("ftsString %s", got)
	}
}

// TestTokenizerMatchesFTS5 checks forEachToken + porterStem against the
// terms FTS5 itself makes of the same text (the tokenizer of
// evidence_fts), over a word list and this repository's Go sources.
func TestTokenizerMatchesFTS5(t *testing.T) {
	var text strings.Builder
	text.WriteString(porterSamples)
	files, _ := filepath.Glob(filepath.Join("..", "*", "*.go"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			text.Write(b)
			text.WriteByte('\n')
		}
	}
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "tok.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE VIRTUAL TABLE f USING fts5(x, tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'")`,
		`CREATE VIRTUAL TABLE v USING fts5vocab(f, row)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO f(x) VALUES(?)`, text.String()); err != nil {
		t.Fatal(err)
	}
	fts := map[string]bool{}
	rows, err := db.QueryContext(ctx, `SELECT term FROM v`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		fts[s] = true
	}
	rows.Close()
	ours := map[string]bool{}
	sources.ForEachToken(text.String(), nil, func(tok []byte, _, _ int) bool {
		ours[string(sources.PorterStem(append(make([]byte, 0, len(tok)+1), tok...)))] = true
		return true
	})
	var missing, extra []string
	for s := range ours {
		if !fts[s] {
			extra = append(extra, s)
		}
	}
	for s := range fts {
		if !ours[s] {
			missing = append(missing, s)
		}
	}
	if len(missing)+len(extra) > 0 {
		slices.Sort(missing)
		slices.Sort(extra)
		t.Errorf("%d terms; FTS5 only: %q; ours only: %q", len(fts), missing, extra)
	}
	if len(fts) < 1000 {
		t.Errorf("only %d terms compared", len(fts))
	}
}

// porterSamples are words that exercise every porter rule, and text
// outside ASCII.
const porterSamples = `caresses ponies ties caress cats feed agreed plastered bled motoring sing
conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky
relational conditional rational valenci hesitanci digitizer conformabli radicalli
differentli vileli analogousli vietnamization predication operator feudalism
decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate
formative formalize electriciti electrical hopeful goodness revival allowance inference
airliner gyroscopic adjustable defensible irritant replacement adjustment dependent
adoption homologou communism activate angulariti homologous effective bowdlerize probate
rate cease controll roll generalizations oscillators aed ied ying yes is as us ss ses
abatement abilities absolutely sky skies dying lying agreement multidimensional
naïve café Ångström Übermaß ÉCOLE façade µm ϵ déjà-vu niño Łódź İstanbul ﬁnance
日本語のテキスト 中文 한국어 Ελληνικά Русский текст عربي עברית हिन्दी
x86_64 __init__ snake_case_name CamelCaseName HTTP2Server utf8Decode 3.14 1,000 C++ p53/MDM2 IL-10 5'-UTR`

// The parts of an identifier the index holds as written weigh half: its
// whole form finds it. Those of one it lacks, and a part that is also a
// plain word of the question, weigh fully.
func TestFoundParts(t *testing.T) {
	weights := func(q string, df map[string]int64) map[string]float64 {
		pq := parseQuestion(q)
		out := map[string]float64{}
		for _, st := range scoringTerms(&pq, corpusStats{n: 1000}, df) {
			out[st.stem] = st.weight
		}
		return out
	}
	for _, tt := range []struct {
		q    string
		df   map[string]int64
		want map[string]float64
	}{
		{"clpC sporulation", map[string]int64{"clpc": 3, "clp": 10, "c": 400, "sporul": 5},
			map[string]float64{"clpc": 1, "clp": 0.5, "c": 0.5, "sporul": 1}},
		{"parseHttpRequest", map[string]int64{"parse": 50, "http": 80, "request": 90},
			map[string]float64{"parsehttprequest": 1, "pars": 1, "http": 1, "request": 1}},
		{"parse ParseIP", map[string]int64{"parseip": 2, "pars": 50, "ip": 30},
			map[string]float64{"pars": 2, "parseip": 1, "ip": 0.5}},
		{"ParseIP parseHTTP", map[string]int64{"parseip": 2, "pars": 50, "ip": 30, "http": 80},
			map[string]float64{"pars": 2, "parseip": 1, "ip": 0.5, "parsehttp": 1, "http": 1}},
	} {
		got := weights(tt.q, tt.df)
		for stem, w := range tt.want {
			if got[stem] != w {
				t.Errorf("%q: %s weighs %v, want %v (all: %v)", tt.q, stem, got[stem], w, got)
			}
		}
	}
}

func TestTestPurpose(t *testing.T) {
	for q, want := range map[string]bool{
		"in-memory file system for tests":            true,
		"mock client that answers requests in tests": true,
		"a fake clock used in unit tests":            true,
		"retry helper for the integration tests":     true,
		"what runs during testing":                   true,
		"build a test connection for unit tests":     true,
		"tests for ParseIP":                          false,
		"ParseIP tests":                              false,
		"where is the parser tested":                 false,
		"test the retry loop":                        false,
		"examples for sort.Slice":                    false,
		"contest entries for tests?":                 true,
		"the latest tests of the parser":             false,
		"FOR TESTS":                                  true,
		"create a temporary directory for a test":    true,
		"start a test HTTP server":                   true,
		"testing utilities":                          true,
		"a test clock":                               true,
		"test cases for the parser":                  false,
		"test ParseIP":                               false,
		"test parse2":                                false,
		"test":                                       false,
		"test coverage of the parser":                false,
		"TEST Server":                                false,
		"tests server":                               false,
		"an in-memory test file system":              true,
		"a test case generator":                      true,
		"test files for the parser":                  false,
		"test cases":                                 false,
		"why do test cases pass on linux":            false,
		"test data ParseIP":                          false,
		"for":                                        false,
		"":                                           false,
	} {
		if got := testPurpose(q); got != want {
			t.Errorf("testPurpose(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestSpelledNames(t *testing.T) {
	names := func(q string) []string {
		pq := parseQuestion(q)
		var out []string
		for _, n := range pq.spelled {
			out = append(out, n.name)
		}
		return out
	}
	for q, want := range map[string][]string{
		"get the current context from inside a command": {"getcurrentcontext", "get_current_context",
			"getcurrentcontextinside", "get_current_context_inside", "currentcontextinside", "current_context_inside",
			"currentcontextinsidecommand", "current_context_inside_command", "contextinsidecommand", "context_inside_command"},
		"canonical MIME header key": {"canonicalmimeheader", "canonical_mime_header", "canonicalmimeheaderkey",
			"canonical_mime_header_key", "mimeheaderkey", "mime_header_key"},
		"read request body":         {"readrequestbody", "read_request_body"},
		"read request":              nil,
		"read ParseIP request body": nil,
		`read "request body" now`:   nil,
		"read request body, then close": {"readrequestbody", "read_request_body", "readrequestbodyclose",
			"read_request_body_close", "requestbodyclose", "request_body_close"},
	} {
		if got := names(q); !slices.Equal(got, want) {
			t.Errorf("%q: spelled %q, want %q", q, got, want)
		}
	}
}

// TestGreekLetterOrName: a question finds a text whether it writes a Greek
// letter (IFN-γ) or its name (IFN-gamma), either way round; Greek text is
// read as written.
func TestGreekLetterOrName(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{
		"letter.md": "# Signalling\n\nIFN-γ drives the response of macrophages in mice.\n",
		"name.md":   "# Signalling\n\nIFN-gamma drives the response of macrophages in mice.\n",
		"other.md":  "# Signalling\n\nInterleukins drive the response of macrophages in mice.\n",
		"greek.md":  "# Γάτα\n\nη γάτα κοιμάται\n",
	})
	for _, q := range []string{"IFN-γ", "IFN-gamma", "interferon γ", "gamma"} {
		res := env.search(env.all, QueryRequest{Question: q})
		got := paths(res.Hits)
		if !hasPath(res.Hits, "letter.md") || !hasPath(res.Hits, "name.md") || hasPath(res.Hits, "other.md") {
			t.Errorf("%q: hits %v, want letter.md and name.md, not other.md", q, got)
		}
	}
	res := env.search(env.all, QueryRequest{Question: "η γάτα"})
	if len(res.Hits) == 0 || res.Hits[0].Path != "greek.md" {
		t.Errorf("η γάτα: hits %v, want greek.md first", paths(res.Hits))
	}
	for q, want := range map[string]string{"IFN-γ": "gamma", "η γάτα": "η", `"IFN-γ"`: "γ"} {
		found := false
		for _, term := range parseQuestion(q).terms {
			found = found || term.token == want
		}
		if !found {
			t.Errorf("%q: terms %+v, want %q among them", q, parseQuestion(q).terms, want)
		}
	}
}

// TestLettersAndDigitsJoined: a question finds a text whether it joins
// letters and digits with a hyphen (IL-6) or not (IL6), either way round.
func TestLettersAndDigitsJoined(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{
		"hyphen.md": "# Cytokines\n\nIL-6 drives the response of macrophages in mice.\n",
		"joined.md": "# Cytokines\n\nIL6 drives the response of macrophages in mice.\n",
		"other.md":  "# Cytokines\n\nIL-10 drives the response of macrophages in mice.\n",
	})
	for _, q := range []string{"IL-6", "IL6", "il6 in mice"} {
		res := env.search(env.all, QueryRequest{Question: q})
		got := paths(res.Hits)
		if len(got) < 2 || !hasPath(res.Hits[:2], "hyphen.md") || !hasPath(res.Hits[:2], "joined.md") {
			t.Errorf("%q: hits %v, want hyphen.md and joined.md first", q, got)
		}
	}
}

// TestGreekLettersInEveryContext: whatever stands around a Greek letter in
// a text (another Greek letter after a slash, Greek prose, a second
// occurrence, a hyphen before digits), a question that writes it either
// way finds the text; and a name with a Greek letter is still a name.
func TestGreekLettersInEveryContext(t *testing.T) {
	env := newSearchEnv(t)
	env.folder("docs", "default", map[string]string{
		"slash.md":   "# Receptors\n\nThe type I IFN-α/β receptor binds both.\n",
		"prose.md":   "# Σημείωση\n\nη IFN-γ είναι κυτοκίνη\n",
		"twice.md":   "# Integrins\n\nαvβ8 και; later αvβ8 in mice.\n",
		"amyloid.md": "# Amyloid\n\nAβ-42 aggregates in plaques.\n",
		"other.md":   "# Other\n\nNothing of the kind in mice.\n",
	})
	for q, want := range map[string]string{
		"IFN-α": "slash.md", "IFN-alpha": "slash.md", "IFN-γ": "prose.md", "αvβ8": "twice.md",
		"alphavbeta8": "twice.md", "Aβ42": "amyloid.md", "Abeta42": "amyloid.md", "Aβ-42": "amyloid.md",
	} {
		res := env.search(env.all, QueryRequest{Question: q})
		if len(res.Hits) == 0 || res.Hits[0].Path != want {
			t.Errorf("%q: hits %v, want %s first", q, paths(res.Hits), want)
		}
	}
	env.folder("go", "default", map[string]string{
		"step.go": "package sim\n\n// Δt is the time step.\nfunc Δt() float64 { return 0.01 }\n",
		"use.go":  "package sim\n\n// Advance moves the clock by Δt, Δt and Δt again.\nfunc Advance(t float64) float64 { return t + Δt() + Δt() }\n",
	})
	for _, q := range []string{"Δt", "func Δt"} {
		wantFirstTitle(t, env, q, "func Δt")
		// The name a definition declares keeps its letter (the terms are
		// named: deltat).
		if names := parseQuestion(q).names; len(names) != 1 || names[0].name != "δt" {
			t.Errorf("%q: names %+v, want δt", q, names)
		}
	}
}
