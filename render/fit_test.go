package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

var propertyCases = flag.Int("render.cases", 0, "generated results in TestFitProperties (0: the default)")

// raceEnabled is set under -race (race_test.go), where the encoders run
// ten times slower: the property test then checks fewer results.
var raceEnabled bool

var formats = []Format{FormatNone, FormatMarkdown, FormatAgent, FormatHierarchical}

// lineKinds are the lines generated texts are made of.
var lineKinds = []func(r *rand.Rand) string{
	func(r *rand.Rand) string {
		return "\tif err := run(ctx); err != nil { return fmt.Errorf(\"run: %w\", err) }"
	},
	func(r *rand.Rand) string { return "if a < b && c > d { x = <T>(y) & z } // <b>bold</b> &amp;" },
	func(r *rand.Rand) string {
		return "Ünïcödé naïve café — 漢字かな交じり文 🎉🚀 ≤ ≥ ½"
	},
	func(r *rand.Rand) string { return "" },
	func(r *rand.Rand) string {
		return "    indented with spaces: \"quoted\" and \\backslash\\ and 'single'"
	},
	func(r *rand.Rand) string { return "```go" },
	func(r *rand.Rand) string { return "/// doc comment / path/to/file.go:12" },
	func(r *rand.Rand) string { return "line\u2028separator and tab\tand\rcarriage" },
	func(r *rand.Rand) string {
		return strconv.Itoa(r.IntN(1_000_000_000)) + "," + strconv.Itoa(r.IntN(1000))
	},
	func(r *rand.Rand) string { // a long line
		return strings.Repeat("word<&> ", 20+r.IntN(100))
	},
	func(r *rand.Rand) string { return randomString(r, 1+r.IntN(20)) },
}

func genText(r *rand.Rand) *string {
	switch r.IntN(20) {
	case 0:
		return nil
	case 1:
		s := ""
		return &s
	}
	var b strings.Builder
	n := 1 + r.IntN(16)
	for i := range n {
		b.WriteString(lineKinds[r.IntN(len(lineKinds))](r))
		if i < n-1 || r.IntN(2) == 0 {
			b.WriteString("\n")
		}
	}
	s := b.String()
	return &s
}

var paths = []string{"src/server/handler.go", "docs/guide.md", "README.md", "weird <&> \"q\".txt",
	"naïve/ファイル.py", "`tick`.md", "notes/plan", "a/b/c/d/e/f/g.rs"}

func genHits(r *rand.Rand) []query.Hit {
	hits := make([]query.Hit, r.IntN(13))
	for i := range hits {
		h := query.Hit{
			EvidenceID: fmt.Sprintf("ev_%04d", r.IntN(10000)), SourceID: fmt.Sprintf("src_%d", r.IntN(3)),
			RevisionID: fmt.Sprintf("rev_%d", r.IntN(5)), Kind: []string{"code", "markdown", "text"}[r.IntN(3)],
			Path: paths[r.IntN(len(paths))], Score: r.Float64() * 30, Snippet: randomString(r, r.IntN(8)),
			Text: genText(r), Hash: fmt.Sprintf("sha256:%016x", r.Uint64()), Stale: r.IntN(8) == 0,
		}
		if r.IntN(3) == 0 {
			h.Title = "Title <" + strconv.Itoa(i) + ">"
		}
		for range r.IntN(4) {
			h.HeadingPath = append(h.HeadingPath, []string{"Intro", "Install & run", "API <v2>", "Ünïcode"}[r.IntN(4)])
		}
		h.Span.StartLine = 1 + r.IntN(5000)
		lines := 1
		if h.Text != nil {
			lines = max(1, strings.Count(*h.Text, "\n")+1)
		}
		h.Span.EndLine = h.Span.StartLine + lines - 1
		if r.IntN(10) == 0 {
			h.Score = 1e-9 * r.Float64()
		}
		hits[i] = h
	}
	return hits
}

func genResult(r *rand.Rand) query.QueryResult {
	res := query.QueryResult{
		RunID: fmt.Sprintf("run_%08x", r.Uint32()),
		Request: query.RequestEcho{Question: "how does <Fit> handle \"budgets\" & naïve 漢字?",
			Modalities: []string{"lexical"}, Profile: "balanced", Limit: 10},
		Hits: genHits(r), TotalMatches: r.IntN(500), Truncated: r.IntN(6) == 0,
	}
	if r.IntN(2) == 0 {
		c := "c1." + randomString(r, 4)
		res.NextCursor = &c
	}
	if r.IntN(3) == 0 {
		res.Request.Filters = &query.Filters{Paths: []string{"src/**"}, Facets: map[string]string{"evidence_id": "x", "language": "go"}}
	}
	return res
}

var minRE = regexp.MustCompile(`at least (\d+) tokens`)

// minimum returns the smallest budget Fit accepts for in, read from the
// refusal of a budget of one token.
func minimum(t *testing.T, in FitInput) int {
	t.Helper()
	in.MaxTokens = 1
	_, err := Fit(context.Background(), in)
	if workspace.ErrorCode(err) != workspace.CodeOutputBudgetExceeded {
		t.Fatalf("budget 1: got %v, want OUTPUT_BUDGET_EXCEEDED", err)
	}
	m := minRE.FindStringSubmatch(workspace.ErrorMessage(err))
	if m == nil {
		t.Fatalf("refusal does not name the minimum: %q", workspace.ErrorMessage(err))
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// checkFit asserts every promise of Fit on one output.
func checkFit(t *testing.T, in FitInput, out *FitOutput) {
	t.Helper()
	res := out.Result
	counter := in.Counter
	if counter == "" {
		counter = DefaultCounter
	}
	s, r := refCount(t, counter, string(out.Structured)), refCount(t, counter, out.Rendered)
	if res.Budget.UsedTokens != s+r || res.ContentTotals.StructuredTokens != s || res.ContentTotals.RenderedTokens != r {
		t.Fatalf("used %d (structured %d + rendered %d), recount %d + %d", res.Budget.UsedTokens,
			res.ContentTotals.StructuredTokens, res.ContentTotals.RenderedTokens, s, r)
	}
	if res.Budget.UsedTokens > in.MaxTokens {
		t.Fatalf("used %d > max %d", res.Budget.UsedTokens, in.MaxTokens)
	}
	if b, _ := json.Marshal(res); !bytes.Equal(b, out.Structured) {
		t.Fatalf("Structured is not json.Marshal(Result):\n%s\n%s", out.Structured, b)
	}
	b := res.Budget
	if b.MaxTokens != in.MaxTokens || b.Counter != counter || b.Target != Target ||
		(in.Format == FormatNone) != (b.RenderTarget == nil) || (b.RenderTarget != nil && *b.RenderTarget != string(in.Format)) {
		t.Fatalf("budget = %+v", b)
	}
	hits := in.Result.Hits
	if res.ContentTotals.HitsAvailable != len(hits) || res.ContentTotals.HitsReturned != len(res.Hits) || len(res.Hits) > len(hits) {
		t.Fatalf("content_totals = %+v with %d of %d hits", res.ContentTotals, len(res.Hits), len(hits))
	}
	shown := make([]query.Hit, len(res.Hits)) // the hits with the text the render shows
	for i, h := range res.Hits {
		orig := hits[i]
		if h.EvidenceID != orig.EvidenceID {
			t.Fatalf("hit %d is %s, want %s: rank order broken", i, h.EvidenceID, orig.EvidenceID)
		}
		if h.Truncated && i != len(res.Hits)-1 {
			t.Fatalf("hit %d of %d is truncated: only the last may be", i, len(res.Hits))
		}
		want := orig
		want.Truncated = h.Truncated
		if in.Format != FormatNone {
			if h.Text != nil {
				t.Fatalf("hit %d carries text under a render", i)
			}
			// A compact citation: the id, the file (source and path when
			// the file is not known), the unit's lines and the flags.
			want = query.Hit{EvidenceID: orig.EvidenceID, File: orig.File, Span: orig.Span,
				Truncated: h.Truncated, Stale: orig.Stale, StaleReason: orig.StaleReason, Cited: true}
			if orig.File == "" {
				want.SourceID, want.Path = orig.SourceID, orig.Path
			}
			checkCitationJSON(t, h)
		} else if h.Truncated {
			if h.Text == nil || orig.Text == nil || !strings.HasPrefix(*orig.Text, *h.Text) ||
				len(*h.Text) >= len(*orig.Text) || !strings.HasSuffix(*h.Text, "\n") {
				t.Fatalf("cut hit %d: %q is not a line-boundary prefix of %q", i, deref(h.Text), deref(orig.Text))
			}
			want.Text = h.Text
		}
		if !equalJSON(h, want) {
			t.Fatalf("hit %d changed:\n%+v\n%+v", i, h, want)
		}
		shown[i] = orig
	}
	if in.Format != FormatNone {
		checkRendered(t, in.Format, shown, out.Rendered)
		v1 := out.Structured
		var body struct {
			Rendered *string `json:"rendered"`
		}
		if err := json.Unmarshal(v1, &body); err != nil || body.Rendered == nil || *body.Rendered != out.Rendered {
			t.Fatalf("the /v1 body (the structured bytes) does not carry the rendered text: %v", err)
		}
		// structuredContent carries it too, for clients that show a model
		// nothing else.
		body.Rendered = nil
		if err := json.Unmarshal(out.Structured, &body); err != nil || body.Rendered == nil || *body.Rendered != out.Rendered {
			t.Fatalf("the structured bytes do not carry the rendered text: %v", err)
		}
	} else if out.Rendered != "" {
		t.Fatalf("rendered text without a render")
	}
	cut := len(res.Hits) > 0 && res.Hits[len(res.Hits)-1].Truncated
	if want := in.Result.Truncated || cut || len(res.Hits) < len(hits); res.Truncated != want {
		t.Fatalf("truncated = %v, want %v", res.Truncated, want)
	}
	want := in.Result.NextCursor
	if in.NextCursor != nil && len(res.Hits) < len(hits) {
		want = in.NextCursor(len(res.Hits))
	}
	if deref(res.NextCursor) != deref(want) {
		t.Fatalf("next_cursor %s after %d of %d hits, want %s", deref(res.NextCursor), len(res.Hits), len(hits), deref(want))
	}
}

// checkCitationJSON asserts what a citation spells on the wire: no text,
// snippet, hash or score, and source_id and path only when file is empty.
func checkCitationJSON(t *testing.T, h query.Hit) {
	t.Helper()
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"text", "snippet", "hash", "score", "excerpt", "title", "kind"} {
		if _, ok := m[k]; ok {
			t.Fatalf("a citation spells %q: %s", k, b)
		}
	}
	_, hasFile := m["file"]
	_, hasPath := m["path"]
	_, hasSource := m["source_id"]
	if hasFile == (hasPath || hasSource) || !hasPath && !hasFile {
		t.Fatalf("a citation names its file by file, or else by source_id and path: %s", b)
	}
	if _, ok := m["evidence_id"]; !ok {
		t.Fatalf("a citation without evidence_id: %s", b)
	}
	var back query.Hit
	if err := json.Unmarshal(b, &back); err != nil || !back.Cited {
		t.Fatalf("a citation decodes as a whole hit: %s", b)
	}
}

// cursorsFor stands for a search's page cursors: a cursor of its own
// length and content for every count of hits returned, as sealed cursors
// are.
func cursorsFor(seed uint64) func(int) *string {
	return func(n int) *string {
		r := rand.New(rand.NewPCG(seed, uint64(n)))
		c := fmt.Sprintf("c%d.", n) + randomString(r, 2+r.IntN(30))
		return &c
	}
}

// checkRendered finds the text: the hits as shown, the last one whole or
// cut at one of its line boundaries.
func checkRendered(t *testing.T, f Format, shown []query.Hit, rendered string) {
	t.Helper()
	if renderHits(f, shown) == rendered {
		return
	}
	if len(shown) == 0 && (strings.Contains(rendered, "no hit fits the token budget") || strings.Contains(rendered, "No hit fits the token budget")) {
		return
	}
	if n := len(shown); n > 0 && shown[n-1].Text != nil {
		last := shown[n-1]
		for _, m := range lineCuts(*last.Text) {
			text := (*last.Text)[:m]
			shown[n-1].Text, shown[n-1].Truncated = &text, true
			if renderHits(f, shown) == rendered {
				return
			}
		}
		shown[n-1] = last
	}
	t.Fatalf("rendered text is not the render of the hits:\n%s\nwant\n%s", rendered, renderHits(f, shown))
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestFitProperties fits generated results into budgets from the minimum
// up to 20,000 tokens, with both counters and every format, and checks
// every promise against an independent recount of the returned bytes.
func TestFitProperties(t *testing.T) {
	cases := 24
	if testing.Short() || raceEnabled {
		cases = 8
	}
	if *propertyCases > 0 {
		cases = *propertyCases
	}
	r := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	fits := 0
	for c := range cases {
		res := genResult(r)
		for fi, f := range formats {
			counter := []string{"o200k_base", "cl100k_base"}[(c+fi)%2]
			in := FitInput{Result: res, Counter: counter, Format: f}
			if r.IntN(2) == 0 {
				in.NextCursor = cursorsFor(r.Uint64())
			}
			least := minimum(t, in)
			in.MaxTokens = 1 << 30
			all, err := Fit(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if len(all.Result.Hits) != len(res.Hits) || all.Result.Truncated != res.Truncated {
				t.Fatalf("case %d %s: an unlimited budget kept %d of %d hits", c, f, len(all.Result.Hits), len(res.Hits))
			}
			full := all.Result.Budget.UsedTokens
			budgets := []int{least, least + 1, full, full + 1, full - 1, least + r.IntN(max(1, 20000-least)), least + r.IntN(max(1, min(full, 20000)-least+1))}
			for _, m := range budgets {
				if m < least || m > 20000 {
					continue
				}
				in.MaxTokens = m
				if r.IntN(4) == 0 {
					in.Costs = all.Costs // cached costs (computed under another budget)
				} else {
					in.Costs = nil
				}
				t.Run(fmt.Sprintf("case%d/%s/%s/%d", c, counter, f, m), func(t *testing.T) {
					out, err := Fit(ctx, in)
					if err != nil {
						t.Fatalf("budget %d (minimum %d): %v", m, least, err)
					}
					checkFit(t, in, out)
					if m >= full && (len(out.Result.Hits) != len(res.Hits) || out.Result.Truncated != res.Truncated) {
						t.Fatalf("budget %d ≥ %d: kept %d of %d hits, truncated %v", m, full, len(out.Result.Hits), len(res.Hits), out.Result.Truncated)
					}
				})
				fits++
			}
			if least > 1 {
				in.MaxTokens = least - 1
				if _, err := Fit(ctx, in); workspace.ErrorCode(err) != workspace.CodeOutputBudgetExceeded {
					t.Fatalf("case %d %s: budget %d below the minimum %d: %v", c, f, least-1, least, err)
				}
			}
		}
	}
	t.Logf("%d fits checked", fits)
}

// TestFitStaleCosts hands Fit costs that lie: they must cost time only.
func TestFitStaleCosts(t *testing.T) {
	hits := realisticHits(6)
	for _, f := range formats {
		costs := make([]HitCost, len(hits))
		for i, h := range hits {
			c, err := hitCostOf("", f, h)
			if err != nil {
				t.Fatal(err)
			}
			c.JSONTokens, c.RenderedTokens = 1, 1
			if i%2 == 0 {
				c.JSONSum++ // stale fingerprint: recounted
			}
			costs[i] = c
		}
		in := FitInput{Result: benchResult(hits), MaxTokens: 1500, Format: f}
		honest, err := Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		// A matching fingerprint with a wrong count is trusted (it is the
		// caller's own cache); Verify catches it.
		in.Costs, in.Verify = costs, true
		out, err := Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		checkFit(t, in, out)
		if !bytes.Equal(out.Structured, honest.Structured) || out.Rendered != honest.Rendered {
			t.Errorf("%s: Verify did not recover from wrong costs", f)
		}
		for i, c := range honest.Costs[:len(honest.Result.Hits)] {
			if c == (HitCost{}) && i == len(honest.Result.Hits)-1 && honest.Result.Hits[i].Truncated {
				continue // a cut hit need not have been counted whole
			}
			want, _ := hitCostOf("", f, hits[i])
			if c != want {
				t.Errorf("%s: cost %d = %+v, want %+v", f, i, c, want)
			}
		}
	}
}

func TestFitErrors(t *testing.T) {
	ctx := context.Background()
	res := benchResult(realisticHits(2))
	for _, tc := range []struct {
		in   FitInput
		code workspace.Code
	}{
		{FitInput{Result: res, MaxTokens: 0}, workspace.CodeInvalidArgument},
		{FitInput{Result: res, MaxTokens: 100, Counter: "gpt2"}, workspace.CodeInvalidArgument},
		{FitInput{Result: res, MaxTokens: 100, Format: "html@1"}, workspace.CodeInvalidArgument},
		{FitInput{Result: res, MaxTokens: 10}, workspace.CodeOutputBudgetExceeded},
	} {
		if _, err := Fit(ctx, tc.in); workspace.ErrorCode(err) != tc.code {
			t.Errorf("Fit(%+v): %v, want %s", tc.in.MaxTokens, err, tc.code)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Fit(cancelled, FitInput{Result: res, MaxTokens: 4000}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestFitMinimumMessage: the refusal names a budget that works, and one
// token less does not.
func TestFitMinimumMessage(t *testing.T) {
	in := FitInput{Result: benchResult(realisticHits(3)), Format: FormatAgent}
	least := minimum(t, in)
	in.MaxTokens = least
	out, err := Fit(context.Background(), in)
	if err != nil {
		t.Fatalf("the named minimum %d is refused: %v", least, err)
	}
	if len(out.Result.Hits) != 0 || !out.Result.Truncated {
		t.Errorf("at the minimum: %d hits, truncated %v", len(out.Result.Hits), out.Result.Truncated)
	}
	in.MaxTokens = least - 1
	if _, err := Fit(context.Background(), in); !strings.Contains(workspace.ErrorMessage(err), strconv.Itoa(least)) {
		t.Errorf("refusal %q does not name %d", workspace.ErrorMessage(err), least)
	}
}

// TestFitDroppedText: an answer whose budget left out every hit says so in
// its text, with the number left out; an answer with no hit to leave out
// says there are none.
func TestFitDroppedText(t *testing.T) {
	for _, f := range []Format{FormatMarkdown, FormatAgent, FormatHierarchical} {
		in := FitInput{Result: benchResult(realisticHits(3)), Format: f}
		in.MaxTokens = minimum(t, in)
		out, err := Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Result.Hits) != 0 || out.Rendered != droppedText(f, 3) || !strings.Contains(out.Rendered, "3 left out") {
			t.Errorf("%s: %d hits, text %q", f, len(out.Result.Hits), out.Rendered)
		}
		checkFit(t, in, out)
		in = FitInput{Result: benchResult(nil), Format: f, MaxTokens: 4000}
		if out, err = Fit(context.Background(), in); err != nil || out.Rendered != emptyText(f) {
			t.Errorf("%s without hits: %v, text %q", f, err, out.Rendered)
		}
	}
}

// TestFitCutsAtLines: with room for part of the next hit, Fit keeps the
// longest line prefix that fits rather than dropping it.
func TestFitCutsAtLines(t *testing.T) {
	hits := realisticHits(3)
	for _, f := range formats {
		in := FitInput{Result: benchResult(hits), Format: f, MaxTokens: 1 << 20}
		all, err := Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		in.MaxTokens = all.Result.Budget.UsedTokens - 60
		out, err := Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		checkFit(t, in, out)
		if len(out.Result.Hits) != 3 || !out.Result.Hits[2].Truncated {
			t.Fatalf("%s: want the third hit cut, got %d hits", f, len(out.Result.Hits))
		}
		// One more line would not fit: the cut is the longest.
		if slack := in.MaxTokens - out.Result.Budget.UsedTokens; slack > 60 {
			t.Errorf("%s: %d tokens left unused after a cut", f, slack)
		}
	}
}

// Structured is the /v1 body as it is: the result, with "rendered" when a
// render was asked for.
func TestStructuredIsTheResult(t *testing.T) {
	for _, f := range formats {
		out, err := Fit(context.Background(), FitInput{Result: benchResult(realisticHits(2)), MaxTokens: 4000, Format: f})
		if err != nil {
			t.Fatal(err)
		}
		got := out.Structured
		want := out.Result
		if f != FormatNone {
			want.Rendered = &out.Rendered
		}
		if b, _ := json.Marshal(want); !bytes.Equal(got, b) {
			t.Errorf("%s: Structured = %s, want %s", f, got, b)
		}
	}
}

func TestCheckResultSize(t *testing.T) {
	if err := CheckResultSize(MaxResultBytes); err != nil {
		t.Errorf("at the cap: %v", err)
	}
	err := CheckResultSize(MaxResultBytes + 1)
	if workspace.ErrorCode(err) != workspace.CodeOutputBudgetExceeded || len(workspace.ErrorMessage(err)) > 300 {
		t.Errorf("over the cap: %v", err)
	}
}

// TestFitLongLastHit fits answers whose next hit is much longer than the
// room left, which Fit stops counting early: the answer must be the one
// a fit counting whole strings makes, byte for byte, and only hits
// counted whole may leave a cost behind.
func TestFitLongLastHit(t *testing.T) {
	hits := realisticHits(4)
	var b strings.Builder
	for i := range 120 {
		fmt.Fprintf(&b, "\tx%d := compute(ctx, \"value <%d>\", []int{%d, %d}) // naïve & <b>\n", i, i, i, i*7)
	}
	long := b.String()
	hits[2].Text = &long
	hits[2].Span.EndLine = hits[2].Span.StartLine + 119
	cut := 0
	for _, f := range formats {
		for _, counter := range []string{"o200k_base", "cl100k_base"} {
			two, err := Fit(context.Background(), FitInput{Result: benchResult(hits[:2]), MaxTokens: 1 << 20, Format: f, Counter: counter})
			if err != nil {
				t.Fatal(err)
			}
			for _, extra := range []int{300, 600, 1200} {
				m := two.Result.Budget.UsedTokens + extra
				in := FitInput{Result: benchResult(hits), MaxTokens: m, Format: f, Counter: counter}
				out, err := Fit(context.Background(), in)
				if err != nil {
					t.Fatal(err)
				}
				checkFit(t, in, out)
				c, _ := CounterFor(counter)
				whole, err := newFitter(context.Background(), c, in, true).fit()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Structured, whole.Structured) || out.Rendered != whole.Rendered {
					t.Fatalf("%s %s %d: the answer differs from the fit counting whole strings", f, counter, m)
				}
				if len(out.Result.Hits) < 2 || len(out.Result.Hits) > 3 || out.Result.Hits[1].Truncated {
					t.Fatalf("%s %s %d: want two whole hits, got %d", f, counter, m, len(out.Result.Hits))
				}
				if len(out.Result.Hits) == 3 {
					cut++
				}
				if out.Costs[2] != (HitCost{}) {
					t.Errorf("%s %s %d: the long hit was counted whole", f, counter, m)
				}
				for i := range 2 {
					want, _ := hitCostOf(counter, f, hits[i])
					if out.Costs[i] != want {
						t.Errorf("%s %s %d: cost %d = %+v, want %+v", f, counter, m, i, out.Costs[i], want)
					}
				}
			}
		}
	}
	if cut < 12 {
		t.Errorf("the long hit was cut in %d of 24 answers, want most", cut)
	}
}

// TestFitHugeBudget: a budget of the largest int (default_max_tokens has
// no upper bound) keeps every hit whole.
func TestFitHugeBudget(t *testing.T) {
	hits := realisticHits(4)
	long := strings.Repeat("\tx := compute(ctx, \"value\") // naïve\n", 200)
	hits[3].Text = &long
	for _, f := range formats {
		in := FitInput{Result: benchResult(hits), MaxTokens: math.MaxInt, Format: f}
		out, err := Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		checkFit(t, in, out)
		if len(out.Result.Hits) != len(hits) || out.Result.Truncated {
			t.Fatalf("%s: kept %d of %d hits, truncated %v", f, len(out.Result.Hits), len(hits), out.Result.Truncated)
		}
	}
}

// TestRunIDTokens: every run id costs the same tokens in every counter, in
// the place it travels, so that the smallest answer to a request does not
// change from one asking to the next.
func TestRunIDTokens(t *testing.T) {
	for _, info := range Counters() {
		c, err := CounterFor(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[int]int{}
		for range 3000 {
			counts[c.Count(`{"run_id":"`+query.NewRunID()+`","request":{"question":"x"}}`)]++
		}
		if len(counts) != 1 {
			t.Errorf("%s: run ids cost %v tokens (count: ids)", info.Name, counts)
		}
	}
}
