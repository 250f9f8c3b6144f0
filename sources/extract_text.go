package sources

import (
	"path"
	"strings"
)

const (
	textExtractorName    = "text"
	textExtractorVersion = "5" // 2: long lines are cut into windows; a first line standing alone titles the file; 3: a markup's title (an underlined line, "= Title", "#+TITLE:") titles it; 4: Greek letters named, and hyphens between letters and digits dropped, in the units' code terms; 5: the same, whatever stands around the letter, as the index folds it
)

// maxTextTitleBytes bounds the first line that titles a plain-text file.
// Titles of papers and notes run long (SciFact's longest is 300 bytes);
// a longer first paragraph is text, not a title.
const maxTextTitleBytes = 320

// textExtractor splits plain text (and, as kind "data", structured data and
// configuration files) into blank-line separated paragraphs grouped into
// chunks of ChunkMinTokens..ChunkMaxTokens. There are no sections: the
// chunks hang directly under the document. Data files use ChannelCode.
type textExtractor struct {
	kind     string // KindText or KindData
	language string
}

func (textExtractor) Name() string    { return textExtractorName }
func (textExtractor) Version() string { return textExtractorVersion }

// Extract implements Extractor.
func (x textExtractor) Extract(p string, text string) (Extracted, error) {
	kind := x.kind
	if kind == "" {
		kind = KindText
	}
	channel := ChannelText
	if kind == KindData {
		channel = ChannelCode
	}
	b := newBuilder(text)
	title := fileTitle(p)
	if kind == KindText {
		if t := markupTitle(b.lines, x.language); t != "" {
			title = t
		} else if t := textTitle(b.lines); t != "" {
			title = t
		}
	}
	b.document(title)
	b.units[0].Channel = channel
	var score func(int) int // paragraphs
	if kind == KindData {
		score = b.dataScore
	}
	b.chunks(title, 0, len(b.lines), score, func(int, int) string { return channel })
	facets := map[string]string{}
	if x.language != "" {
		facets["language"] = x.language
	}
	return Extracted{
		Kind:     kind,
		Language: x.language,
		Title:    title,
		Facets:   facets,
		Units:    b.units,
	}, nil
}

// textTitle is the title a plain-text file gives itself, as markdown's
// "# Title" does: its first line when that line stands alone (a blank line
// or nothing follows it), is at most maxTextTitleBytes long, and more text
// follows; "" otherwise. The line stays in the text.
func textTitle(lines []string) string {
	i := 0
	for i < len(lines) && isBlank(lines[i]) {
		i++
	}
	if i+2 >= len(lines) || !isBlank(lines[i+1]) {
		return ""
	}
	t := collapseSpace(strings.TrimSpace(strings.TrimPrefix(lines[i], bom)))
	if t == "" || len(t) > maxTextTitleBytes {
		return ""
	}
	for _, l := range lines[i+2:] {
		if !isBlank(l) {
			return t
		}
	}
	return ""
}

// markupTitle is the title a prose markup gives a file before its text
// begins: a line underlined (or over- and underlined) by one repeated
// punctuation character at least as long, as reStructuredText writes a
// section title and plain text often does, after reStructuredText's
// explicit markup (".. " directives, comments and targets, with their
// indented lines); AsciiDoc's "= Title"; Org's "#+TITLE:". "" when the
// file begins otherwise. The lines stay in the text.
func markupTitle(lines []string, language string) string {
	i := 0
	for i < len(lines) {
		l := strings.TrimPrefix(lines[i], bom)
		switch {
		case isBlank(l):
			i++
			continue
		case language == "restructuredtext" && strings.HasPrefix(l, ".."):
			// Explicit markup: the line and the indented lines after it.
			for i++; i < len(lines) && (isBlank(lines[i]) || indentWidth(lines[i]) > 0); i++ {
			}
			continue
		}
		break
	}
	if i >= len(lines) {
		return ""
	}
	first := strings.TrimSpace(strings.TrimPrefix(lines[i], bom))
	var t string
	switch {
	case language == "asciidoc" && strings.HasPrefix(first, "= "):
		t = first[2:]
	case language == "org" && len(first) > 8 && strings.EqualFold(first[:8], "#+title:"):
		t = first[8:]
	case adornment(first) > 0 && i+2 < len(lines) && adornment(strings.TrimSpace(lines[i+2])) > 0:
		t = strings.TrimSpace(lines[i+1]) // overline, title, underline
		if adornment(t) > 0 || len(t) > adornment(first) {
			t = ""
		}
	case i+1 < len(lines) && adornment(first) == 0:
		if n := adornment(strings.TrimSpace(lines[i+1])); n > 0 && n >= len(first) {
			t = first
		}
	}
	t = collapseSpace(strings.TrimSpace(t))
	if len(t) > maxTextTitleBytes {
		return ""
	}
	return t
}

// adornment is the length of line when it is one ASCII punctuation
// character repeated at least three times (a title's under- or
// overline), else 0.
func adornment(line string) int {
	if len(line) < 3 {
		return 0
	}
	c := line[0]
	if c > '~' || c <= ' ' || ('0' <= c && c <= '9') || ('a' <= c|0x20 && c|0x20 <= 'z') {
		return 0
	}
	for i := 1; i < len(line); i++ {
		if line[i] != c {
			return 0
		}
	}
	return len(line)
}

// fileTitle returns the base name of a path, either slash; "" for none.
func fileTitle(p string) string {
	p = strings.TrimRight(strings.ReplaceAll(p, "\\", "/"), "/")
	if p == "" {
		return ""
	}
	return path.Base(p)
}

// dataScore prefers cutting structured data before a blank line or a
// top-level entry (a YAML key, a JSON member, a CSV row).
func (b *builder) dataScore(i int) int {
	switch n := indentWidth(b.lines[i]); {
	case isBlank(b.lines[i]):
		return breakOK
	case i > 0 && isBlank(b.lines[i-1]) || n == 0:
		return breakBest
	case n <= 4:
		return breakGood
	}
	return breakOK
}
