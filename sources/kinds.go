package sources

import (
	"path"
	"slices"
	"sort"
	"strings"
)

// Registered kind ids.
const (
	KindMarkdown = "markdown"
	KindCode     = "code"
	KindHTML     = "html"
	KindText     = "text"
	KindData     = "data"
	KindImage    = "image"
)

// Facet values for yes/no facets.
const (
	facetTrue  = "true"
	facetFalse = "false"
)

// FacetDef describes one facet a kind records in Extracted.Facets. Facet
// values are plain strings, so a search filter (filters.facets) matches
// them exactly: {"language":"go"}, {"has_code_blocks":"true"}.
type FacetDef struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Values      []string `json:"values,omitempty"` // the closed set of values, when there is one
}

// KindDef is a registered kind definition: what files it covers, how they
// are extracted and which facets their extractions carry. It is served as
// the tychora://kinds/{id} resource and by discover kinds.
type KindDef struct {
	ID               string     `json:"id"`
	Description      string     `json:"description"`
	Extensions       []string   `json:"extensions"`           // lower-case, with the dot
	FileNames        []string   `json:"file_names,omitempty"` // base names known without an extension
	Languages        []string   `json:"languages"`            // DetectLanguage identifiers it handles
	Extractor        string     `json:"extractor,omitempty"`  // "" when the kind has no text extractor
	ExtractorVersion string     `json:"extractor_version,omitempty"`
	Levels           []string   `json:"levels"`        // the unit levels its extractions use
	Channels         []string   `json:"channels"`      // the channels its units use
	VerbatimText     bool       `json:"verbatim_text"` // a leaf's text is exactly its lines of the file
	Facets           []FacetDef `json:"facets"`
}

// dataLanguages are structured data and configuration formats.
var dataLanguages = map[string]bool{
	"json": true, "yaml": true, "toml": true, "xml": true, "ini": true,
	"properties": true, "csv": true, "tsv": true,
}

// proseLanguages are text formats extracted as plain text.
var proseLanguages = map[string]bool{
	"": true, "restructuredtext": true, "asciidoc": true, "org": true, "latex": true,
}

// imageExtensions are the file types of the image kind.
var imageExtensions = []string{
	".avif", ".bmp", ".gif", ".heic", ".ico", ".jpeg", ".jpg", ".png", ".svg", ".tif", ".tiff", ".webp",
}

// knownLanguages holds every identifier DetectLanguage can return.
var knownLanguages = func() map[string]bool {
	m := map[string]bool{}
	for _, table := range []map[string]string{languageByExt, languageByName, languageByExactName, languageByInterpreter} {
		for _, l := range table {
			m[l] = true
		}
	}
	return m
}()

// kindOfLanguage maps a DetectLanguage identifier to a kind id; an
// identifier DetectLanguage never returns is text.
func kindOfLanguage(lang string) string {
	switch {
	case lang == LangMarkdown:
		return KindMarkdown
	case lang == LangHTML:
		return KindHTML
	case dataLanguages[lang]:
		return KindData
	case proseLanguages[lang] || !knownLanguages[lang]:
		return KindText
	}
	return KindCode
}

var boolValues = []string{facetTrue, facetFalse}

// FacetRole is the facet every kind records: the file's role (DetectRole).
const FacetRole = "role"

// roleFacet is the role facet's definition, shared by every kind.
var roleFacet = FacetDef{
	Name:        FacetRole,
	Description: "What the file is to its project: source, test, example, testdata (fixtures), vendored (third-party), generated, minified or documentation (docs/ingest.md says how each is detected). filters.roles and filters.exclude_roles select by it.",
	Values:      Roles(),
}

// kindRegistry holds the definitions in id order; see buildKinds.
var kindRegistry = buildKinds()

func buildKinds() []KindDef {
	defs := append(textKinds(), mediaKinds()...)
	slices.SortFunc(defs, func(a, b KindDef) int { return strings.Compare(a.ID, b.ID) })
	for i := range defs {
		defs[i].Facets = append(defs[i].Facets, roleFacet)
	}
	addFileTypes(defs)
	return defs
}

// textKinds are the kinds whose files are extracted to text.
func textKinds() []KindDef {
	return []KindDef{
		{
			ID:               KindCode,
			Description:      "Source code, split into top-level declarations (functions, types, classes, blocks) with the imports and package header as a section of their own; large classes are split into their members.",
			Extractor:        codeExtractorName,
			ExtractorVersion: codeExtractorVersion,
			Levels:           []string{LevelDocument, LevelSection, LevelChunk},
			Channels:         []string{ChannelCode},
			VerbatimText:     true,
			Facets: []FacetDef{
				{Name: "language", Description: "The programming language, as DetectLanguage names it (go, python, typescript, ...)."},
				{Name: "is_test", Description: "Whether the path looks like a test file (foo_test.go, test_foo.py, foo.spec.ts, src/test/...).", Values: boolValues},
				{Name: "generated", Description: "Whether the file says it is generated (\"Code generated ... DO NOT EDIT\", \"@generated\", \"auto-generated\") near its top.", Values: boolValues},
			},
		},
		{
			ID:               KindData,
			Description:      "Structured data and configuration (JSON, YAML, TOML, XML, INI, CSV), split into blank-line separated blocks grouped into chunks.",
			Extractor:        textExtractorName,
			ExtractorVersion: textExtractorVersion,
			Levels:           []string{LevelDocument, LevelChunk},
			Channels:         []string{ChannelCode},
			VerbatimText:     true,
			Facets: []FacetDef{
				{Name: "language", Description: "The format: json, yaml, toml, xml, ini, properties, csv or tsv."},
			},
		},
		{
			ID:               KindHTML,
			Description:      "HTML pages reduced to their visible text (script, style and the head other than its title dropped), split into sections by h1..h6; spans are lines of the original file.",
			Extractor:        htmlExtractorName,
			ExtractorVersion: htmlExtractorVersion,
			Levels:           []string{LevelDocument, LevelSection, LevelChunk},
			Channels:         []string{ChannelText, ChannelCode},
			VerbatimText:     false,
			Facets: []FacetDef{
				{Name: "lang", Description: "The page's lang attribute, lower-cased (\"en\", \"de-ch\"); absent when the page has none."},
				{Name: "has_code_blocks", Description: "Whether the page has <pre> blocks.", Values: boolValues},
			},
		},
		{
			ID:               KindMarkdown,
			Description:      "Markdown documents split by headings (ATX and setext) into sections that keep their heading path; fenced code blocks are never split by a heading-like line inside them; YAML or TOML front matter is its own section and may give the title.",
			Extractor:        markdownExtractorName,
			ExtractorVersion: markdownExtractorVersion,
			Levels:           []string{LevelDocument, LevelSection, LevelChunk},
			Channels:         []string{ChannelText, ChannelCode, ChannelMetadata},
			VerbatimText:     true,
			Facets: []FacetDef{
				{Name: "has_front_matter", Description: "Whether the document starts with YAML (---) or TOML (+++) front matter.", Values: boolValues},
				{Name: "has_code_blocks", Description: "Whether the document has fenced code blocks.", Values: boolValues},
				{Name: "max_heading_depth", Description: "The deepest heading level used, \"0\" (no headings) to \"6\".", Values: []string{"0", "1", "2", "3", "4", "5", "6"}},
			},
		},
		{
			ID:               KindText,
			Description:      "Plain text and prose markup without a dedicated extractor (txt, reStructuredText, AsciiDoc, Org, LaTeX), split into paragraphs grouped into chunks.",
			Extractor:        textExtractorName,
			ExtractorVersion: textExtractorVersion,
			Levels:           []string{LevelDocument, LevelChunk},
			Channels:         []string{ChannelText},
			VerbatimText:     true,
			Facets: []FacetDef{
				{Name: "language", Description: "The markup, when one is recognised (restructuredtext, asciidoc, org, latex); absent for plain text."},
			},
		},
	}
}

// mediaKinds are images and the text seen in them.
func mediaKinds() []KindDef {
	return []KindDef{
		{
			ID:          KindImage,
			Description: "Images, stored as content-addressed assets (up to 16 MiB) rather than extracted to text.",
			Levels:      []string{LevelDocument},
			Channels:    []string{ChannelImage},
			Facets: []FacetDef{
				{Name: "format", Description: "The image format: avif, bmp, gif, heic, ico, jpeg, png, svg, tiff or webp."},
				{Name: "mime", Description: "The MIME type the asset is served with (image/png, image/svg+xml, ...)."},
				{Name: "asset_id", Description: "The asset's id: the SHA-256 of its bytes, in hex."},
			},
		},
		{
			ID: KindVision,
			Description: "Text seen in an image: a transcription or description submitted for an image selection through add_sources " +
				"(no model for vision runs in tychora). One unit per image, in the image's file, related to the image's evidence " +
				"(relation describes); it leaves when the image changes, is deleted or its source is removed. Its facets are " +
				"reported by inspect source_selections; filters.facets matches the image file's facets.",
			Extractor:        visionExtractorName,
			ExtractorVersion: visionExtractorVersion,
			Levels:           []string{LevelChunk},
			Channels:         []string{ChannelText},
			VerbatimText:     false,
			Facets: []FacetDef{
				{Name: "model", Description: "What produced the text, as the submission's optional model label named it; absent when none was named."},
				{Name: "asset_id", Description: "The image's asset id: the SHA-256 of its bytes, in hex."},
			},
		},
	}
}

// addFileTypes fills in each kind's extensions, file names and languages
// from the language tables.
func addFileTypes(defs []KindDef) {
	exts := map[string][]string{KindImage: imageExtensions, KindText: {".txt", ".text", ".log"}}
	langs := map[string]map[string]bool{}
	for ext, lang := range languageByExt {
		k := kindOfLanguage(lang)
		exts[k] = append(exts[k], ext)
		if langs[k] == nil {
			langs[k] = map[string]bool{}
		}
		langs[k][lang] = true
	}
	names := map[string][]string{}
	for _, table := range []map[string]string{languageByName, languageByExactName} {
		for name, lang := range table {
			k := kindOfLanguage(lang)
			names[k] = append(names[k], name)
			if langs[k] == nil {
				langs[k] = map[string]bool{}
			}
			langs[k][lang] = true
		}
	}
	for i := range defs {
		d := &defs[i]
		d.Extensions = sortedCopy(exts[d.ID])
		d.FileNames = sortedCopy(names[d.ID])
		d.Languages = []string{}
		for l := range langs[d.ID] {
			if l != "" {
				d.Languages = append(d.Languages, l)
			}
		}
		sort.Strings(d.Languages)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// clone returns a deep copy of d, so callers cannot change the registry.
func (d KindDef) clone() KindDef {
	d.Extensions = append([]string{}, d.Extensions...)
	d.FileNames = append([]string(nil), d.FileNames...)
	d.Languages = append([]string{}, d.Languages...)
	d.Levels = append([]string{}, d.Levels...)
	d.Channels = append([]string{}, d.Channels...)
	facets := make([]FacetDef, len(d.Facets))
	for i, f := range d.Facets {
		f.Values = append([]string(nil), f.Values...)
		facets[i] = f
	}
	d.Facets = facets
	return d
}

// Kinds returns every registered kind definition, ordered by id. The
// result is a copy the caller may keep or change.
func Kinds() []KindDef {
	out := make([]KindDef, len(kindRegistry))
	for i, d := range kindRegistry {
		out[i] = d.clone()
	}
	return out
}

// KindByID returns the kind definition with the given id.
func KindByID(id string) (KindDef, bool) {
	for _, d := range kindRegistry {
		if d.ID == id {
			return d.clone(), true
		}
	}
	return KindDef{}, false
}

// isImagePath reports whether p has an image extension.
func isImagePath(p string) bool {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(p, "\\", "/")))
	for _, e := range imageExtensions {
		if e == ext {
			return true
		}
	}
	return false
}

// KindFor returns the id of the kind that covers a file, given its path and
// its language as DetectLanguage named it ("" to detect it from the path
// alone): "image" for images, then by language, "text" when nothing else
// applies.
func KindFor(p, language string) string {
	if isImagePath(p) {
		return KindImage
	}
	if language == "" {
		language = DetectLanguage(p, nil)
	}
	return kindOfLanguage(language)
}

// ExtractorFor returns the extractor for a file, given its path and its
// language as DetectLanguage named it ("" to detect it from the path
// alone). It returns nil for images, which are stored as assets and have no
// text extractor. Files of no known language (and languages DetectLanguage
// does not name) get the plain-text extractor.
func ExtractorFor(p, language string) Extractor {
	if language == "" {
		language = DetectLanguage(p, nil)
	}
	switch KindFor(p, language) {
	case KindImage:
		return nil
	case KindMarkdown:
		return markdownExtractor{}
	case KindHTML:
		return htmlExtractor{}
	case KindData:
		return textExtractor{kind: KindData, language: language}
	case KindText:
		return textExtractor{kind: KindText, language: language}
	}
	return newCodeExtractor(language)
}
