package sources

import (
	"path"
	"strings"
)

const (
	textExtractorName    = "text"
	textExtractorVersion = "2" // 2: long lines are cut into windows; a first line standing alone titles the file
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
		if t := textTitle(b.lines); t != "" {
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
