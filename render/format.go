package render

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/workspace"
)

// Format names a render format: the text block (MCP) or the "rendered"
// field (/v1) that carries the hits' text when a render is asked for.
type Format string

// The render formats. FormatNone (the zero value) means no render: the
// hits' text travels in the structured JSON.
const (
	FormatNone         Format = ""
	FormatMarkdown     Format = "markdown@1"
	FormatAgent        Format = "agent@1"
	FormatHierarchical Format = "hierarchical-evidence@1"
)

// Formats lists the render format names, in the order docs present them.
func Formats() []string {
	return []string{string(FormatMarkdown), string(FormatAgent), string(FormatHierarchical)}
}

// ParseFormat parses a render argument. "" is FormatNone; an unknown name
// is an INVALID_ARGUMENT error that lists the known ones.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatNone, FormatMarkdown, FormatAgent, FormatHierarchical:
		return f, nil
	}
	return FormatNone, workspace.Errorf(workspace.CodeInvalidArgument,
		"unknown render %q: use %s", s, strings.Join(Formats(), ", "))
}

// Target is the value of budget.render_target: the format name, or nil for
// FormatNone.
func (f Format) Target() *string {
	if f == FormatNone {
		return nil
	}
	s := string(f)
	return &s
}

// item is one hit as a renderer shows it.
type item struct {
	h     *query.Hit
	text  string // valid UTF-8, ends in "\n" unless empty
	cut   bool   // text is a prefix of what the hit shows
	start int    // first line shown
	shown int    // last line shown
}

// newItem prepares h with its own Text (nil and "" show no text). A hit
// with an Excerpt shows those lines.
func newItem(h *query.Hit, cut bool) item {
	it := item{h: h, cut: cut, start: h.Span.StartLine, shown: h.Span.EndLine}
	if h.Excerpt != nil {
		it.start, it.shown = h.Excerpt.StartLine, h.Excerpt.EndLine
	}
	if h.Text != nil && *h.Text != "" {
		it.text = validUTF8(*h.Text)
		if !strings.HasSuffix(it.text, "\n") {
			it.text += "\n"
		}
		if cut {
			it.shown = it.start + strings.Count(it.text, "\n") - 1
		}
	}
	return it
}

// renderSegments renders items as a list of segments whose concatenation is
// the rendered text. blocks, when not nil, holds prebuilt whole-hit blocks
// (blockFor) by item index ("" to build). With final false the segments are
// for an estimate: the last markdown block keeps its blank line, so that
// every block is one whose count is known.
func renderSegments(f Format, items []item, blocks []string, final bool) []string {
	if len(items) == 0 {
		return []string{emptyText(f)}
	}
	block := func(i int) string {
		if blocks != nil && i < len(blocks) && blocks[i] != "" {
			return blocks[i]
		}
		return blockFor(f, items[i])
	}
	if f == FormatHierarchical {
		return hierarchical(items, block)
	}
	segs := make([]string, len(items))
	for i := range items {
		segs[i] = block(i)
	}
	if f == FormatMarkdown && final {
		// Blocks end in a blank line; the text does not.
		last := segs[len(segs)-1]
		segs[len(segs)-1] = last[:len(last)-1]
	}
	return segs
}

func emptyText(f Format) string {
	if f == FormatMarkdown {
		return "_No hits._\n"
	}
	return "no hits\n"
}

// droppedText is the text of an answer whose budget left out all of the
// available hits: a model that reads only the text must not take it for
// an answer with no match.
func droppedText(f Format, available int) string {
	if f == FormatMarkdown {
		return fmt.Sprintf("_No hit fits the token budget: %d left out; raise `budget.max_tokens` to see them._\n", available)
	}
	return fmt.Sprintf("no hit fits the token budget: %d left out; raise budget.max_tokens to see them\n", available)
}

// blockFor renders the block of one item: a markdown or agent block, or a
// hierarchical chunk element. Every block ends in "\n" and starts with a
// printable ASCII character other than '/', so blocks always split (rule B
// of segments.go) and count independently.
func blockFor(f Format, it item) string {
	head, tail := blockParts(f, it)
	return head + it.text + tail
}

// blockParts returns what goes before and after the item's text.
func blockParts(f Format, it item) (head, tail string) {
	switch f {
	case FormatMarkdown:
		return markdownParts(it)
	case FormatAgent:
		return agentHead(it), ""
	case FormatHierarchical:
		return chunkHead(it), "</chunk>\n"
	}
	return "", ""
}

// citation is "file:start-end" for the lines shown ("file:start" for one
// line): the file's absolute path when the hit has one (so that it opens
// as it is, and two sources never share a header), else its path.
func citation(it item) string {
	c := oneLine(hitFile(it.h)) + ":" + strconv.Itoa(it.start)
	if it.shown != it.start {
		c += "-" + strconv.Itoa(it.shown)
	}
	return c
}

// hitFile is where a hit's file is: File, else Path.
func hitFile(h *query.Hit) string {
	if h.File != "" {
		return h.File
	}
	return h.Path
}

// headingSep joins an agent@1 header's heading path: "›" travels in the
// JSON as it is, where ">" would be "\u003e" (three more tokens).
const headingSep = " › "

// headingContext is the heading path (joined by sep), or the title when there is none
// and it is not the file's name, which the citation shows.
func headingContext(h *query.Hit, sep string) string {
	if len(h.HeadingPath) > 0 {
		return oneLine(strings.Join(h.HeadingPath, sep))
	}
	if h.Title != "" && h.Title != h.Path && h.Title != h.File && h.Title != baseName(hitFile(h)) {
		return oneLine(h.Title)
	}
	return ""
}

// baseName is the last element of a path, either slash.
func baseName(p string) string {
	return p[strings.LastIndexAny(p, `/\`)+1:]
}

// contextOf is the header's context of an item: its heading context,
// unless the first line shown already holds it (a declaration's title on
// its own first line, a document's title as its heading), where it would
// only say the same twice.
func contextOf(it item, sep string) string {
	c := headingContext(it.h, sep)
	if c == "" {
		return ""
	}
	first, _, _ := strings.Cut(it.text, "\n")
	if holdsWords(first, c) {
		return ""
	}
	return c
}

// holdsWords reports whether line holds s where words begin and end, so
// that a title "Go" is not taken as said by a line about "Google".
func holdsWords(line, s string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], s)
		if j < 0 {
			return false
		}
		a, b := i+j, i+j+len(s)
		before, _ := utf8.DecodeLastRuneInString(line[:a])
		after, _ := utf8.DecodeRuneInString(line[b:])
		if (a == 0 || !isWordRune(before)) && (b == len(line) || !isWordRune(after)) {
			return true
		}
		i = a + 1
	}
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// flags says what a header's lines are of their unit, and whether the
// file changed since. agent@1 leaves out the span an excerpt is of: its
// header's lines are the lines shown, the citation's span is the unit's,
// and the note would cost its tokens twice in every place; it says when
// the budget cut a place short.
func flags(f Format, it item) string {
	var b strings.Builder
	switch {
	case it.h.Excerpt != nil && f == FormatAgent && !it.cut:
	case it.h.Excerpt != nil && f != FormatAgent:
		b.WriteString(" (excerpt of " + strconv.Itoa(it.h.Span.StartLine) + "-" + strconv.Itoa(it.h.Span.EndLine) + ")")
	case it.cut && it.text == "":
		b.WriteString(" (lines left out by the budget)")
	case it.cut:
		b.WriteString(" (truncated; evidence spans " + strconv.Itoa(it.h.Span.StartLine) + "-" + strconv.Itoa(it.h.Span.EndLine) + ")")
	}
	switch {
	case it.h.StaleReason != nil && *it.h.StaleReason == query.StaleDeleted:
		b.WriteString(" (stale: the file was deleted since it was indexed)")
	case it.h.Stale:
		b.WriteString(" (stale: the file changed since it was indexed)")
	}
	return b.String()
}

// markdownParts: "## `path:start-end` — context (flags)", a blank line,
// then the text in a fence tagged with its language, then a blank line.
func markdownParts(it item) (head, tail string) {
	var b strings.Builder
	b.WriteString("## ")
	b.WriteString(inlineCode(citation(it)))
	if c := contextOf(it, " > "); c != "" {
		b.WriteString(" — ")
		b.WriteString(c)
	}
	b.WriteString(flags(FormatMarkdown, it))
	b.WriteString("\n\n")
	if it.text == "" {
		return b.String(), ""
	}
	fence := strings.Repeat("`", max(3, longestRun(it.text, '`')+1))
	b.WriteString(fence)
	b.WriteString(language(it.h))
	b.WriteString("\n")
	return b.String(), fence + "\n\n"
}

// agentHead: "-- path:start-end context (flags)"; the text follows as
// is. The header adds no '<', '>' or '&' of its own (headings join with
// headingSep), which the copy in the JSON's "rendered" would spell as six
// characters each; a heading or title that holds one keeps it.
func agentHead(it item) string {
	var b strings.Builder
	b.WriteString("-- ")
	b.WriteString(citation(it))
	if c := contextOf(it, headingSep); c != "" {
		b.WriteString(" ")
		b.WriteString(c)
	}
	b.WriteString(flags(FormatAgent, it))
	b.WriteString("\n")
	return b.String()
}

// chunkHead: <chunk id lines hash [truncated span] [stale]>; the text and
// </chunk> follow.
func chunkHead(it item) string {
	var b strings.Builder
	b.WriteString(`<chunk id="`)
	b.WriteString(attr(it.h.EvidenceID))
	b.WriteString(`" lines="`)
	b.WriteString(strconv.Itoa(it.start) + "-" + strconv.Itoa(it.shown))
	b.WriteString(`" hash="`)
	b.WriteString(attr(it.h.Hash))
	b.WriteString(`"`)
	switch {
	case it.h.Excerpt != nil:
		b.WriteString(` excerpt="true" span="` + strconv.Itoa(it.h.Span.StartLine) + "-" + strconv.Itoa(it.h.Span.EndLine) + `"`)
	case it.cut:
		b.WriteString(` truncated="true" span="` + strconv.Itoa(it.h.Span.StartLine) + "-" + strconv.Itoa(it.h.Span.EndLine) + `"`)
	}
	if it.h.Stale {
		b.WriteString(` stale="true"`)
		if it.h.StaleReason != nil {
			b.WriteString(` stale_reason="` + attr(*it.h.StaleReason) + `"`)
		}
	}
	b.WriteString(">\n")
	return b.String()
}

// hierarchical groups items into document → section → chunk: documents in
// the order of their best hit, sections within a document likewise, chunks
// in rank order. Chunks without a heading path sit directly in their
// document.
func hierarchical(items []item, block func(int) string) []string {
	type section struct {
		key    string
		chunks []int
	}
	type document struct {
		key      string
		first    int
		sections []*section
	}
	var docs []*document
	docOf := map[string]*document{}
	for i, it := range items {
		dk := documentKey(it.h)
		d := docOf[dk]
		if d == nil {
			d = &document{key: dk, first: i}
			docOf[dk] = d
			docs = append(docs, d)
		}
		sk := sectionKey(it.h)
		var s *section
		for _, x := range d.sections {
			if x.key == sk {
				s = x
				break
			}
		}
		if s == nil {
			s = &section{key: sk}
			d.sections = append(d.sections, s)
		}
		s.chunks = append(s.chunks, i)
	}
	segs := make([]string, 0, 2*len(items)+4*len(docs))
	for _, d := range docs {
		segs = append(segs, documentOpen(items[d.first].h))
		for _, s := range d.sections {
			if s.key != "" {
				segs = append(segs, sectionOpen(items[s.chunks[0]].h))
			}
			for _, i := range s.chunks {
				segs = append(segs, block(i))
			}
			if s.key != "" {
				segs = append(segs, sectionClose)
			}
		}
		segs = append(segs, documentClose)
	}
	return segs
}

// The elements of hierarchical-evidence@1 around chunks.
const (
	sectionClose  = "</section>\n"
	documentClose = "</document>\n"
)

func documentKey(h *query.Hit) string { return h.SourceID + "\x00" + h.Path }
func sectionKey(h *query.Hit) string  { return strings.Join(h.HeadingPath, "\x00") }

func documentOpen(h *query.Hit) string {
	open := `<document path="` + attr(hitFile(h)) + `" kind="` + attr(h.Kind) + `" source="` + attr(h.SourceID) + `" revision="` + attr(h.RevisionID) + `"`
	if h.Title != "" {
		open += ` title="` + attr(h.Title) + `"`
	}
	return open + ">\n"
}

func sectionOpen(h *query.Hit) string {
	return `<section heading="` + attr(strings.Join(h.HeadingPath, " > ")) + "\">\n"
}

// attr escapes an XML attribute value (and keeps it on one line).
var attrEscaper = strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", "\n", "&#10;", "\r", "&#13;", "\t", "&#9;")

func attr(s string) string { return attrEscaper.Replace(validUTF8(s)) }

var lineEscaper = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")

// oneLine keeps a field on one line.
func oneLine(s string) string { return lineEscaper.Replace(validUTF8(s)) }

// inlineCode wraps s in a code span that s cannot close.
func inlineCode(s string) string {
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// validUTF8 replaces each byte of an invalid sequence with U+FFFD, as
// encoding/json does, so that the rendered text counted here is the text a
// client decodes from the JSON that carries it.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// languages maps file extensions to fence info strings.
var languages = map[string]string{
	".go": "go", ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".jsx": "jsx", ".ts": "typescript", ".tsx": "tsx", ".rs": "rust", ".java": "java", ".kt": "kotlin",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby",
	".php": "php", ".swift": "swift", ".scala": "scala", ".sh": "sh", ".bash": "bash", ".zsh": "zsh",
	".sql": "sql", ".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".json": "json",
	".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".xml": "xml", ".md": "markdown",
	".markdown": "markdown", ".proto": "protobuf", ".lua": "lua", ".pl": "perl", ".r": "r",
	".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml",
	".clj": "clojure", ".dart": "dart", ".zig": "zig", ".tf": "hcl", ".ini": "ini", ".txt": "text",
}

// language is the fence info string for h: the language the index
// recorded, else from its extension, else its kind when that names a
// language, else none.
func language(h *query.Hit) string {
	if h.Language != "" {
		return h.Language
	}
	ext := strings.ToLower(path.Ext(h.Path))
	if l, ok := languages[ext]; ok {
		return l
	}
	if base := strings.ToLower(path.Base(h.Path)); base == "dockerfile" || base == "makefile" {
		return base
	}
	switch h.Kind {
	case "markdown", "html", "json", "yaml", "toml", "xml", "text":
		return h.Kind
	}
	return ""
}
