package render

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// longHits are units of 40–120 lines, each with the matching line
// somewhere in the middle (Focus) between two lines that show nothing, as
// whole-file evidence is.
func longHits(r *rand.Rand, n int) []query.Hit {
	hits := make([]query.Hit, n)
	for i := range hits {
		lines := 40 + r.IntN(80)
		focus := 5 + r.IntN(lines-10)
		var b strings.Builder
		for l := range lines {
			if l == focus {
				fmt.Fprintf(&b, "\tneedle%d := match(question) // the line that matches\n", i)
				continue
			}
			if l == focus-1 || l == focus+1 {
				b.WriteString([]string{"\t})\n", "\t//\n"}[l%2]) // lines that show nothing
				continue
			}
			fmt.Fprintf(&b, "\tvalue%d := compute(%d, \"filler <%d>\") & other\n", l, l*i, l)
		}
		text := b.String()
		start := 1 + r.IntN(300)
		hits[i] = query.Hit{
			EvidenceID: fmt.Sprintf("ev_%04d", i), SourceID: "src_1", RevisionID: "rev_1", Kind: "code", Language: "go",
			Path: fmt.Sprintf("pkg/file%d.go", i), File: fmt.Sprintf("/home/u/repo/pkg/file%d.go", i),
			Span: query.Span{StartLine: start, EndLine: start + lines - 1}, Score: float64(100 - i),
			Snippet: "needle", Hash: fmt.Sprintf("sha256:%064x", i), Text: &text,
			Focus: &query.Span{StartLine: start + focus, EndLine: start + focus},
		}
	}
	return hits
}

// checkPacked checks a packed answer against its input: exact and within
// budget, in rank order, and every hit shown whole or as whole lines of
// its unit whose span Excerpt names.
func checkPacked(t *testing.T, in FitInput, out *FitOutput) {
	t.Helper()
	counter := in.Counter
	if counter == "" {
		counter = DefaultCounter
	}
	s, r := refCount(t, counter, string(out.Structured)), refCount(t, counter, out.Rendered)
	if b := out.Result.Budget; b.UsedTokens != s+r || b.UsedTokens > in.MaxTokens {
		t.Fatalf("used %d, recount %d + %d, max %d", b.UsedTokens, s, r, in.MaxTokens)
	}
	from := 0 // where the next hit's header is looked for
	for i, h := range out.Result.Hits {
		orig := in.Result.Hits[i]
		if h.EvidenceID != orig.EvidenceID || h.Span != orig.Span {
			t.Fatalf("hit %d is %s %+v, want %s %+v", i, h.EvidenceID, h.Span, orig.EvidenceID, orig.Span)
		}
		if in.Format != FormatNone {
			from = checkShownLines(t, in.Format, out.Rendered, from, i, orig, h.Truncated)
			continue
		}
		if h.Excerpt == nil {
			continue
		}
		e := *h.Excerpt
		if e.StartLine < h.Span.StartLine || e.EndLine > h.Span.EndLine || e.EndLine < e.StartLine {
			t.Fatalf("hit %d: excerpt %+v outside span %+v", i, e, h.Span)
		}
		lines := strings.SplitAfter(*orig.Text, "\n")
		want := strings.Join(lines[e.StartLine-h.Span.StartLine:e.EndLine-h.Span.StartLine+1], "")
		shown := want
		if h.Text != nil {
			shown = *h.Text
		}
		if !strings.HasPrefix(want, shown) || (!h.Truncated && shown != want) {
			t.Fatalf("hit %d: text %q is not the excerpt's lines %q", i, shown, want)
		}
	}
}

// checkShownLines checks what a rendered answer shows of hit i, whose
// header is the first citing its file at or after from, and returns where
// the next one is looked for: the header cites lines of its unit, and, unless the budget left them out
// or cut them, the text after the header is those lines, whole, and
// (unless the fitter cut it) no line at either end of an excerpt shows
// nothing.
func checkShownLines(t *testing.T, f Format, rendered string, from, i int, orig query.Hit, cut bool) int {
	t.Helper()
	pat := regexp.QuoteMeta(hitFile(&orig)) + `:(\d+)(?:-(\d+))?`
	if f == FormatHierarchical {
		// Chunks group by document, out of rank order; ids are unique.
		pat = `id="` + regexp.QuoteMeta(attr(orig.EvidenceID)) + `" lines="(\d+)-(\d+)"`
		from = 0
	}
	m := regexp.MustCompile(pat).FindStringSubmatchIndex(rendered[from:])
	if m == nil {
		t.Fatalf("hit %d: the rendered text does not cite %s:\n%s", i, orig.EvidenceID, rendered)
	}
	for j := range m {
		if m[j] >= 0 {
			m[j] += from
		}
	}
	a, _ := strconv.Atoi(rendered[m[2]:m[3]])
	b := a
	if m[4] >= 0 {
		b, _ = strconv.Atoi(rendered[m[4]:m[5]])
	}
	if a < orig.Span.StartLine || b > orig.Span.EndLine || b < a {
		t.Fatalf("hit %d: lines %d-%d outside span %+v", i, a, b, orig.Span)
	}
	head := rendered[m[0]:]
	nl := strings.IndexByte(head, '\n')
	if orig.Text == nil || nl < 0 || strings.Contains(head[:nl], "left out") || strings.Contains(head[:nl], "truncated") {
		return m[1]
	}
	lines := strings.SplitAfter(*orig.Text, "\n")
	want := strings.Join(lines[a-orig.Span.StartLine:b-orig.Span.StartLine+1], "")
	if !strings.Contains(head[nl+1:], want) {
		t.Fatalf("hit %d: the rendered text after %q is not lines %d-%d %q", i, head[:nl], a, b, want)
	}
	if whole := a == orig.Span.StartLine && b == orig.Span.EndLine; !whole && !cut && b > a &&
		(showsNothing(lines[a-orig.Span.StartLine]) || showsNothing(lines[b-orig.Span.StartLine])) {
		t.Fatalf("hit %d: excerpt %d-%d starts or ends with a line that shows nothing: %q", i, a, b, want)
	}
	return m[1]
}

// TestPackProperties packs generated answers at many budgets, in every
// format and both counters, and checks every answer.
func TestPackProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	cases := 12
	if testing.Short() || raceEnabled {
		cases = 4
	}
	for c := range cases {
		res := genResult(r)
		res.Hits = append(res.Hits, longHits(r, 1+r.IntN(12))...)
		r.Shuffle(len(res.Hits), func(i, j int) { res.Hits[i], res.Hits[j] = res.Hits[j], res.Hits[i] })
		for fi, f := range formats {
			in := FitInput{Result: res, Counter: []string{"o200k_base", "cl100k_base"}[(c+fi)%2], Format: f, Pack: true}
			least := minimum(t, in)
			for _, m := range []int{least, least + 40, 600, 1000, 2500, 4000, 12000} {
				if m < least {
					continue
				}
				in.MaxTokens = m
				out, err := Fit(ctx, in)
				if err != nil {
					t.Fatalf("case %d %s budget %d: %v", c, f, m, err)
				}
				checkPacked(t, in, out)
			}
		}
	}
}

// TestPackMorePlaces: long units at a small budget show more distinct
// places when packed, each at its matching line.
func TestPackMorePlaces(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	hits := longHits(r, 30)
	ctx := context.Background()
	for _, f := range []Format{FormatAgent, FormatMarkdown, FormatNone} {
		for _, m := range []int{1000, 4000} {
			base := FitInput{Result: query.QueryResult{RunID: "run_1", Hits: hits}, MaxTokens: m, Format: f}
			plain, err := Fit(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			base.Pack = true
			packed, err := Fit(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			checkPacked(t, base, packed)
			np, nq := len(plain.Result.Hits), len(packed.Result.Hits)
			if nq < 5 || nq <= np {
				t.Errorf("%s at %d: %d places packed, %d plain", f, m, nq, np)
			}
			for i, h := range packed.Result.Hits {
				needle := fmt.Sprintf("needle%d := match", i)
				if f != FormatNone && !strings.Contains(packed.Rendered, needle) ||
					f == FormatNone && (h.Text == nil || !strings.Contains(*h.Text, needle)) {
					t.Errorf("%s at %d: place %d does not show its matching line", f, m, i)
				}
			}
			if used := packed.Result.Budget.UsedTokens; used*10 < m*8 {
				t.Errorf("%s at %d: packed answer uses only %d tokens", f, m, used)
			}
		}
	}
}

// TestPackFillsSmallBudgets: a small budget is filled as a large one is.
// The plan is made in the room an answer with hits leaves (an answer left
// empty holds a note in their place, which an answer with hits does not
// pay for), and planned again between a room that came back whole and one
// that did not. (The plan made in the empty answer's room filled 0.929
// of these budgets under agent@1 and 0.926 under markdown@1.)
func TestPackFillsSmallBudgets(t *testing.T) {
	ctx := context.Background()
	for _, f := range []Format{FormatAgent, FormatMarkdown} {
		used, budget := 0, 0
		for seed := range uint64(6) {
			r := rand.New(rand.NewPCG(9, seed))
			res := genResult(r)
			res.Hits = append(longHits(r, 4+int(seed)), res.Hits...)
			r.Shuffle(len(res.Hits), func(i, j int) { res.Hits[i], res.Hits[j] = res.Hits[j], res.Hits[i] })
			for m := 350; m <= 800; m += 50 {
				in := FitInput{Result: res, MaxTokens: m, Format: f, Pack: true}
				out, err := Fit(ctx, in)
				if workspace.ErrorCode(err) == workspace.CodeOutputBudgetExceeded {
					continue // below this page's least answer
				}
				if err != nil {
					t.Fatal(err)
				}
				checkPacked(t, in, out)
				u := out.Result.Budget.UsedTokens
				if u*4 < m*3 {
					t.Errorf("%s at %d: %d places in %d tokens", f, m, len(out.Result.Hits), u)
				}
				used += u
				budget += m
			}
		}
		if used*100 < budget*94 {
			t.Errorf("%s: %d of %d tokens used", f, used, budget)
		}
	}
}

// TestPackHoldsWhatFitsAtFocus: a packed answer holds at least as many
// places as the fit finds room for with every place at its focus line,
// where a place's estimate runs high by a few tokens or not at all
// (agent@1, JSON): a plan whose next place missed by that is planned once
// more at the places' focus, and the fit takes in what fits. (markdown@1's
// and hierarchical-evidence@1's estimates run low, and their plans are
// corrected by re-planning in a smaller room instead.)
func TestPackHoldsWhatFitsAtFocus(t *testing.T) {
	ctx := context.Background()
	c, _ := CounterFor("")
	for _, f := range []Format{FormatAgent, FormatNone} {
		for seed := range uint64(2) {
			hits := longHits(rand.New(rand.NewPCG(21, seed)), 10)
			focus := make([]query.Hit, len(hits))
			for i := range hits {
				p := newPackHit(c, &hits[i], f, true)
				p.whole = false
				p.trimBlank()
				focus[i] = *p.focused(&hits[i])
			}
			for m := 300; m <= 2000; m += 13 {
				k := 0 // the most hits at their focus that fit whole
				for ; k < len(focus); k++ {
					in := FitInput{Result: query.QueryResult{RunID: "run_1", Hits: focus[:k+1]}, MaxTokens: m, Format: f}
					out, err := Fit(ctx, in)
					if err != nil || out.Result.ContentTotals.HitsReturned <= k || out.Result.Hits[k].Truncated {
						break
					}
				}
				in := FitInput{Result: query.QueryResult{RunID: "run_1", Hits: hits}, MaxTokens: m, Format: f, Pack: true}
				out, err := Fit(ctx, in)
				if err != nil {
					continue
				}
				checkPacked(t, in, out)
				if len(out.Result.Hits) < k {
					t.Errorf("%s at %d: %d places packed, %d fit at their focus", f, m, len(out.Result.Hits), k)
				}
			}
		}
	}
}

// TestPackNamesTheNextPlaceBare: under a render, the first place that does
// not fit at its focus is named by its citation alone when that fits, as
// the last place. (These units' focus lines are short, so no place is bare
// for its length; hierarchical-evidence@1's places are dear enough that
// its small budgets made bare places before, by their share of the room.)
func TestPackNamesTheNextPlaceBare(t *testing.T) {
	ctx := context.Background()
	for _, f := range []Format{FormatAgent, FormatMarkdown} {
		bare := 0
		for seed := range uint64(4) {
			hits := longHits(rand.New(rand.NewPCG(11, seed)), 12)
			for m := 300; m <= 1500; m += 20 {
				in := FitInput{Result: query.QueryResult{RunID: "run_1", Hits: hits}, MaxTokens: m, Format: f, Pack: true}
				out, err := Fit(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				checkPacked(t, in, out)
				for i, h := range out.Result.Hits {
					if !IsBare(&h) {
						continue
					}
					if i != len(out.Result.Hits)-1 {
						t.Fatalf("%s at %d: place %d of %d is bare", f, m, i, len(out.Result.Hits))
					}
					bare++
				}
			}
		}
		if bare == 0 {
			t.Errorf("%s: no answer named its next place bare", f)
		}
	}
}

// paragraphHits are units of one long line, a paragraph: the shape of
// prose written one paragraph to a line.
func paragraphHits(r *rand.Rand, n int) []query.Hit {
	hits := make([]query.Hit, n)
	for i := range hits {
		var b strings.Builder
		for w := range 250 + r.IntN(150) {
			fmt.Fprintf(&b, "word%d ", (w*7+i)%97)
		}
		text := fmt.Sprintf("needle%d %s\n", i, b.String())
		hits[i] = query.Hit{
			EvidenceID: fmt.Sprintf("ev_%04d", i), SourceID: "src_1", RevisionID: "rev_1", Kind: "markdown",
			Path: fmt.Sprintf("docs/%d.md", i), File: fmt.Sprintf("/home/u/notes/docs/%d.md", i),
			Span: query.Span{StartLine: 1, EndLine: 1}, Score: float64(100 - i),
			Hash: fmt.Sprintf("sha256:%064x", i), Text: &text,
			Focus: &query.Span{StartLine: 1, EndLine: 1},
		}
	}
	return hits
}

// TestPackBarePlaces: when a place's least showing is a paragraph that
// would take over a quarter of the budget, the place is named by its
// citation alone (truncated, no text, a header that says so), the places
// after it still come, and a budget with room shows the paragraphs.
func TestPackBarePlaces(t *testing.T) {
	hits := paragraphHits(rand.New(rand.NewPCG(7, 8)), 12)
	ctx := context.Background()
	for _, f := range []Format{FormatAgent, FormatMarkdown, FormatHierarchical} {
		in := FitInput{Result: query.QueryResult{RunID: "run_1", Hits: hits}, MaxTokens: 1000, Format: f, Pack: true}
		out, err := Fit(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		checkPacked(t, in, out)
		bare := 0
		for _, h := range out.Result.Hits {
			if h.Truncated && h.Excerpt == nil {
				bare++
			}
		}
		if bare == 0 || len(out.Result.Hits) < 3 {
			t.Fatalf("%s at 1000: %d places, %d bare; want several, named bare:\n%s", f, len(out.Result.Hits), bare, out.Rendered)
		}
		if f == FormatAgent && !strings.Contains(out.Rendered, "(lines left out by the budget)") {
			t.Errorf("agent@1: a bare place's header does not say its lines were left out:\n%s", out.Rendered)
		}
		in.MaxTokens = 20000
		if out, err = Fit(ctx, in); err != nil {
			t.Fatal(err)
		}
		for i, h := range out.Result.Hits {
			if h.Truncated {
				t.Errorf("%s at 20000: place %d is cut or bare", f, i)
			}
		}
	}
}

// TestPackReclaimsWholePlaces: a unit taken whole goes back to its focus
// when that makes room for one more place.
func TestPackReclaimsWholePlaces(t *testing.T) {
	c, err := CounterFor(DefaultCounter)
	if err != nil {
		t.Fatal(err)
	}
	small := "\tneedle := match(question) // the line that matches\n\treturn needle\n"
	hits := []query.Hit{
		{EvidenceID: "ev_small", SourceID: "src_1", Kind: "code", Path: "a.go", File: "/w/a.go",
			Span: query.Span{StartLine: 10, EndLine: 11}, Score: 2, Text: &small, Focus: &query.Span{StartLine: 10, EndLine: 10}},
		longHits(rand.New(rand.NewPCG(7, 8)), 1)[0],
	}
	focus := func(i int) int {
		p := newPackHit(c, &hits[i], FormatAgent, true)
		p.whole = false
		return p.shownCost()
	}
	whole := newPackHit(c, &hits[0], FormatAgent, true)
	if whole.wholeCost() <= focus(0) {
		t.Fatalf("the small unit costs %d whole and %d at its focus", whole.wholeCost(), focus(0))
	}
	if planned, _, _, _ := packPlan(c, FormatAgent, hits[:1], 10000, false); planned[0].Excerpt != nil {
		t.Fatalf("the small unit alone is shown as %+v, want whole", planned[0].Excerpt)
	}
	room := focus(0) + focus(1)
	planned, places, _, _ := packPlan(c, FormatAgent, hits, room, false)
	if places != 2 {
		t.Fatalf("%d places in %d tokens, want 2 (each at its focus)", places, room)
	}
	if planned[0].Excerpt == nil || planned[0].Excerpt.StartLine != 10 || planned[0].Excerpt.EndLine != 10 {
		t.Fatalf("the first place is %+v, want its focus line", planned[0].Excerpt)
	}
	// With room for both whole and the second at its focus, the first
	// stays whole.
	if planned, places, _, _ = packPlan(c, FormatAgent, hits, whole.wholeCost()+focus(1), false); places != 2 || planned[0].Excerpt != nil {
		t.Fatalf("%d places, first %+v: want 2, the first whole", places, planned[0].Excerpt)
	}
}

// Without a render a place shown in part carries its excerpt's span in
// the JSON: the planner counts it, so a place planned at its focus costs
// what its fragment counts (within the few tokens where the text's
// quotes meet the JSON around them), not that less the span.
func TestPackCountsExcerptSpan(t *testing.T) {
	c, err := CounterFor("")
	if err != nil {
		t.Fatal(err)
	}
	hits := longHits(rand.New(rand.NewPCG(9, 10)), 20)
	for i := range hits {
		h := &hits[i]
		p := newPackHit(c, h, FormatNone, true)
		p.whole = false
		fh := p.focused(h)
		if fh.Excerpt == nil {
			t.Fatalf("hit %d: its focus is the whole unit", i)
		}
		core, err := coreOf(fh)
		if err != nil {
			t.Fatal(err)
		}
		exact := c.Count(core)
		if planned := p.shownCost(); planned < exact-4 || planned > exact+8 {
			t.Errorf("hit %d at its focus: planned %d tokens, its fragment counts %d", i, planned, exact)
		}
	}
}

// countingCodec is a codec that adds up the bytes it tokenizes.
type countingCodec struct {
	tokenizer.Codec
	bytes *int
}

func (c countingCodec) Count(s string) (int, error) {
	*c.bytes += len(s)
	return c.Codec.Count(s)
}

func (c countingCodec) Encode(s string) ([]uint, []string, error) {
	*c.bytes += len(s)
	return c.Codec.Encode(s)
}

// TestPackedFitTokenizesOnce checks that a packed fit tokenizes about
// what it answers, not each hit once to plan it and again to fit it: the
// fit counts a hit by the pieces packing counted (countPieces, upTo), so
// it finds their counts in the counter's memo. The answer is the same as
// with the shared counter.
func TestPackedFitTokenizesOnce(t *testing.T) {
	// A verified fit (race builds, TYCHORA_VERIFY_FIT) recounts its
	// answer whole: what is measured here is the fit's own counting.
	defer func(v bool) { verifyFits = v }(verifyFits)
	verifyFits = false
	for _, f := range []Format{FormatNone, FormatAgent} {
		for _, budget := range []int{1000, 4000} {
			codec, err := tokenizer.Get(tokenizer.O200kBase)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			c := &Counter{name: DefaultCounter, codec: countingCodec{codec, &n}}
			in := FitInput{Result: benchResult(focused(realisticHits(20))), MaxTokens: budget, Format: f, Pack: true}
			out, err := packFit(context.Background(), c, in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Fit(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if string(out.Structured) != string(want.Structured) {
				t.Fatalf("%s %d: the answer differs with a counter of its own", f, budget)
			}
			answer := len(out.Structured) + len(out.Rendered)
			t.Logf("%s %d: tokenized %d bytes for an answer of %d", f, budget, n, answer)
			// What a packed fit cannot avoid beside the answer: the
			// empty answer it starts from, the lines a place may start
			// with that it does not show, a header and the line after it
			// counted again where they do not split. Before the fit
			// counted by packing's pieces, every case here took more.
			if n > answer*3/2+2048 {
				t.Errorf("%s %d: tokenized %d bytes for an answer of %d", f, budget, n, answer)
			}
		}
	}
}
