package sources

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/extract")

// goldenUnit is the golden-file form of a Unit.
type goldenUnit struct {
	Level       string   `json:"level"`
	Parent      int      `json:"parent"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	Span        [2]int   `json:"span"`
	Channel     string   `json:"channel"`
	Text        string   `json:"text,omitempty"`
}

type goldenExtraction struct {
	Extractor string            `json:"extractor"`
	Kind      string            `json:"kind"`
	Language  string            `json:"language"`
	Title     string            `json:"title"`
	Facets    map[string]string `json:"facets"`
	Units     []goldenUnit      `json:"units"`
}

func goldenOf(x Extractor, ex Extracted) goldenExtraction {
	g := goldenExtraction{
		Extractor: x.Name() + "@" + x.Version(),
		Kind:      ex.Kind, Language: ex.Language, Title: ex.Title, Facets: ex.Facets,
	}
	for _, u := range ex.Units {
		g.Units = append(g.Units, goldenUnit{
			Level: u.Level, Parent: u.Parent, Title: u.Title, HeadingPath: u.HeadingPath,
			Span: [2]int{u.StartLine, u.EndLine}, Channel: u.Channel, Text: u.Text,
		})
	}
	return g
}

// goldenInputs lists the inputs under testdata/extract.
func goldenInputs(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "extract", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".golden.json") {
			inputs = append(inputs, n)
		}
	}
	if len(inputs) < 10 {
		t.Fatalf("found %d golden inputs, want at least 10", len(inputs))
	}
	return inputs
}

func extractFile(t *testing.T, name string) (Extractor, string, Extracted) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	x := ExtractorFor(name, DetectLanguage(name, data))
	if x == nil {
		t.Fatalf("%s: no extractor", name)
	}
	ex, err := x.Extract(name, string(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return x, string(data), ex
}

func TestExtractGolden(t *testing.T) {
	for _, name := range goldenInputs(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			x, _, ex := extractFile(t, name)
			got, err := json.MarshalIndent(goldenOf(x, ex), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := name + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./sources -run TestExtractGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s; rerun with -update and review the diff\n%s", name, golden, got)
			}
		})
	}
}

// TestExtractGoldenInvariants checks, for every golden input, that the
// leaves cover every non-blank line exactly once and that each leaf's text
// is the file's lines at its span (HTML: that spans are ordered and
// within the file).
func TestExtractGoldenInvariants(t *testing.T) {
	for _, name := range goldenInputs(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			_, text, ex := extractFile(t, name)
			def, ok := KindByID(ex.Kind)
			if !ok {
				t.Fatalf("unregistered kind %q", ex.Kind)
			}
			if err := checkUnits(text, ex, def.VerbatimText); err != nil {
				t.Fatal(err)
			}
			if len(ex.Units) < 2 {
				t.Fatalf("only %d units", len(ex.Units))
			}
			for name, value := range ex.Facets {
				var decl *FacetDef
				for i := range def.Facets {
					if def.Facets[i].Name == name {
						decl = &def.Facets[i]
					}
				}
				if decl == nil {
					t.Errorf("facet %q not declared by kind %q", name, def.ID)
				} else if len(decl.Values) > 0 && !slices.Contains(decl.Values, value) {
					t.Errorf("facet %s=%q not among %q", name, value, decl.Values)
				}
			}
		})
	}
}

// checkUnits verifies the contract every extraction keeps:
//   - Units[0] is the document, parent -1, spanning 1..lines;
//   - parents come before children, and a child's span lies in its parent's;
//   - spans are within the file and start <= end;
//   - leaves (units without children) carry text, other units none;
//   - no line of a leaf's text is over MaxLineBytes or MaxLineTokens;
//   - leaves are in line order and do not overlap, but for the windows of
//     one long line (verbatim) or the pieces of a long item (HTML);
//   - verbatim: a leaf's text is exactly its lines, or a window of its one
//     long line (the windows of a line, in order, are the line but for
//     white space between them); its first and last line are not blank,
//     and every non-blank line is in exactly one leaf or in its windows.
func checkUnits(text string, ex Extracted, verbatim bool) error {
	lines := splitLines(text)
	n := len(lines)
	if len(ex.Units) == 0 {
		return fmt.Errorf("no units")
	}
	d := ex.Units[0]
	if d.Level != LevelDocument || d.Parent != -1 || d.StartLine != 1 || d.EndLine != n || d.Text != "" {
		return fmt.Errorf("bad document unit %+v (lines %d)", d, n)
	}
	children := make([]int, len(ex.Units))
	for i, u := range ex.Units[1:] {
		i++
		if u.Parent < 0 || u.Parent >= i {
			return fmt.Errorf("unit %d: parent %d not before it", i, u.Parent)
		}
		if u.Level != LevelSection && u.Level != LevelChunk {
			return fmt.Errorf("unit %d: level %q", i, u.Level)
		}
		if u.Level == LevelSection && ex.Units[u.Parent].Level == LevelChunk {
			return fmt.Errorf("unit %d: section under a chunk", i)
		}
		if u.StartLine < 1 || u.EndLine > n || u.StartLine > u.EndLine {
			return fmt.Errorf("unit %d: span %d..%d outside 1..%d", i, u.StartLine, u.EndLine, n)
		}
		p := ex.Units[u.Parent]
		if u.Parent > 0 && (u.StartLine < p.StartLine || u.EndLine > p.EndLine) {
			return fmt.Errorf("unit %d: span %d..%d outside its parent's %d..%d", i, u.StartLine, u.EndLine, p.StartLine, p.EndLine)
		}
		if u.Channel == "" {
			return fmt.Errorf("unit %d: no channel", i)
		}
		children[u.Parent]++
	}
	covered := make([]int, n+1)
	prevStart, prevEnd, prevWindow := 0, 0, false
	winOff := 0              // in the line prevEnd, where the last window ended
	longAt, long := 0, false // whether line longAt is long
	for i, u := range ex.Units[1:] {
		i++
		if children[i] > 0 {
			if u.Text != "" {
				return fmt.Errorf("unit %d has children and text", i)
			}
			continue
		}
		if u.Text == "" {
			return fmt.Errorf("leaf %d (%d..%d) has no text", i, u.StartLine, u.EndLine)
		}
		for _, l := range strings.Split(u.Text, "\n") {
			if len(l) > MaxLineBytes || EstimateTokens(l) > MaxLineTokens {
				return fmt.Errorf("leaf %d (%d..%d): a line of %d bytes, %d tokens", i, u.StartLine, u.EndLine, len(l), EstimateTokens(l))
			}
		}
		window := false
		if verbatim && u.StartLine == u.EndLine {
			line := lines[u.StartLine-1]
			window = u.Text != line
			if window {
				if longAt != u.StartLine {
					longAt, long = u.StartLine, isLongLine(line, EstimateTokens(line))
				}
				if !long {
					return fmt.Errorf("leaf %d (line %d): text %q, line %q", i, u.StartLine, clipMsg(u.Text), clipMsg(line))
				}
				if !prevWindow || prevEnd != u.StartLine {
					if err := windowsDone(lines, prevWindow, prevEnd, winOff); err != nil {
						return err
					}
					winOff = 0
				}
				rest := line[winOff:]
				trimmed := strings.TrimLeft(rest, " \t\r\f\v")
				core := strings.TrimLeft(u.Text, " \t\r\f\v")
				if !strings.HasPrefix(trimmed, core) || len(u.Text)-len(core) > len(rest)-len(trimmed) {
					return fmt.Errorf("leaf %d (line %d): window %q does not follow at byte %d of the line", i, u.StartLine, clipMsg(u.Text), winOff)
				}
				winOff = len(line) - len(trimmed) + len(core)
			}
		}
		switch {
		case u.StartLine > prevEnd:
		case window && prevWindow && u.StartLine == prevEnd:
		case !verbatim && u.StartLine >= prevStart && u.EndLine >= prevEnd:
		default:
			return fmt.Errorf("leaf %d (%d..%d) overlaps or precedes the leaf before (%d..%d)", i, u.StartLine, u.EndLine, prevStart, prevEnd)
		}
		sameLine := window && prevWindow && u.StartLine == prevEnd
		if !window {
			if err := windowsDone(lines, prevWindow, prevEnd, winOff); err != nil {
				return err
			}
		}
		prevStart, prevEnd, prevWindow = u.StartLine, u.EndLine, window
		if !verbatim || sameLine {
			continue
		}
		if !window {
			if want := strings.Join(lines[u.StartLine-1:u.EndLine], "\n"); u.Text != want {
				return fmt.Errorf("leaf %d (%d..%d): text %q, lines %q", i, u.StartLine, u.EndLine, clipMsg(u.Text), clipMsg(want))
			}
		}
		if isBlank(lines[u.StartLine-1]) || isBlank(lines[u.EndLine-1]) {
			return fmt.Errorf("leaf %d (%d..%d) starts or ends with a blank line", i, u.StartLine, u.EndLine)
		}
		for l := u.StartLine; l <= u.EndLine; l++ {
			covered[l]++
		}
	}
	if err := windowsDone(lines, prevWindow, prevEnd, winOff); err != nil {
		return err
	}
	if verbatim {
		for l := 1; l <= n; l++ {
			if !isBlank(lines[l-1]) && covered[l] != 1 {
				return fmt.Errorf("line %d %q is in %d leaves", l, clipMsg(lines[l-1]), covered[l])
			}
		}
	}
	return nil
}

func TestTextTitle(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"Title of a note\n\nThe body of the note.\n", "Title of a note"},
		{"\n\n  Padded   title \n\nbody\n", "Padded title"},
		{"A first line\nthat wraps on\n\nbody\n", ""},    // no blank line after it
		{"Only a title\n", ""},                           // nothing follows
		{"Only a title\n\n\n", ""},                       // only blank lines follow
		{strings.Repeat("long ", 70) + "\n\nbody\n", ""}, // a paragraph, not a title
		{"Dexamethasone decreases inflammation.\n\nAbstract text.\n", "Dexamethasone decreases inflammation."},
	} {
		b := newBuilder(tt.text)
		if got := textTitle(b.lines); got != tt.want {
			t.Errorf("textTitle(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestMarkupTitle(t *testing.T) {
	rst := "restructuredtext"
	for _, tt := range []struct{ language, text, want string }{
		{rst, ".. currentmodule:: flask\n\nCommand Line Interface\n======================\n\nInstalling Flask installs the script.\n", "Command Line Interface"},
		{rst, ".. _target:\n.. note::\n   An indented note\n   on two lines.\n\nApplication Setup\n-----------------\n\nText.\n", "Application Setup"},
		{rst, "=============\n  Changelog\n=============\n\nVersion 3.1\n", "Changelog"},
		{rst, "Title\n===\n\nshort underline\n", ""},             // an underline shorter than the title is no adornment
		{rst, "Some text\nthat wraps.\n\nMore.\n", ""},           // no title
		{rst, "====\nLonger than its overline\n====\n\nx\n", ""}, // overline shorter than the title
		{"", "Plain notes\n===========\n\nbody\n", "Plain notes"},
		{"", ".. not a directive in plain text\n\nbody\n", ""},
		{"asciidoc", "= The Guide\nAuthor Name\n\nText.\n", "The Guide"},
		{"org", "#+TITLE: Plans for 2027\n#+AUTHOR: x\n\n* Q1\n", "Plans for 2027"},
	} {
		b := newBuilder(tt.text)
		if got := markupTitle(b.lines, tt.language); got != tt.want {
			t.Errorf("markupTitle(%q, %q) = %q, want %q", tt.language, tt.text, got, tt.want)
		}
	}
	// Through the extractor: the document's title, and the lines kept.
	text := ".. currentmodule:: flask\n\nCommand Line Interface\n======================\n\nInstalling Flask installs the script.\n"
	ex, err := (textExtractor{language: rst}).Extract("docs/cli.rst", text)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Title != "Command Line Interface" || ex.Units[0].Title != "Command Line Interface" {
		t.Fatalf("title %q, document unit %q", ex.Title, ex.Units[0].Title)
	}
	if err := checkUnits(text, ex, true); err != nil {
		t.Fatal(err)
	}
}

// windowsDone fails when the windows of a line (when the leaf before was
// one) ended before its last non-blank byte.
func windowsDone(lines []string, wasWindow bool, line, off int) error {
	if wasWindow && !isBlank(lines[line-1][off:]) {
		return fmt.Errorf("line %d: its windows end at byte %d of %d", line, off, len(lines[line-1]))
	}
	return nil
}

// clipMsg shortens s for an error message.
func clipMsg(s string) string {
	if len(s) > 80 {
		return s[:60] + "..." + s[len(s)-17:]
	}
	return s
}
