package sources

import (
	"path"
	"strings"
)

const (
	textExtractorName    = "text"
	textExtractorVersion = "2" // 2: long lines are cut into windows
)

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
