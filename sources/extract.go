package sources

// Levels of the evidence hierarchy: a document holds sections (a heading,
// a top-level declaration or block), a section holds chunks.
const (
	LevelDocument = "document"
	LevelSection  = "section"
	LevelChunk    = "chunk"
)

// Channels are the streams an extraction produces.
const (
	ChannelText     = "text"
	ChannelCode     = "code"
	ChannelMetadata = "metadata"
	ChannelImage    = "image"
)

// Unit is one piece of evidence an extractor produced, before it is stored.
// Units form a tree through Parent (an index into Extracted.Units, -1 for
// the document root); a parent always comes before its children.
type Unit struct {
	Level       string   // LevelDocument, LevelSection or LevelChunk
	Parent      int      // index of the parent unit, -1 for the root
	Title       string   // heading text, declaration name, or file name
	HeadingPath []string // headings (or enclosing declarations) from the root down
	StartLine   int      // 1-based, inclusive
	EndLine     int      // 1-based, inclusive
	Channel     string   // ChannelText, ChannelCode or ChannelMetadata (front matter)
	// Text is empty for units with children (leaves carry text). For most
	// kinds it is exactly the lines StartLine..EndLine, or for a window of a
	// long line (StartLine == EndLine) a part of it; for HTML it is the
	// visible text of those lines (KindDef.VerbatimText says which). No
	// line of it is longer than MaxLineBytes or ChunkMaxTokens.
	Text string
}

// Extracted is what an extractor made of one file.
type Extracted struct {
	Kind     string            // registered kind id ("markdown", "code", "text", "html", ...)
	Language string            // e.g. "go", "python", "markdown"; "" when none applies
	Title    string            // document title (first heading, or file name)
	Facets   map[string]string // kind facets (see the kind registry)
	Units    []Unit            // Units[0] is the document
}

// Extractor turns a file's decoded text into evidence units. Extract must
// be deterministic, never panic, and never cut a line that is not long
// (see MaxLineBytes).
type Extractor interface {
	// Name and Version identify the extractor; an extraction records both.
	Name() string
	Version() string
	Extract(path string, text string) (Extracted, error)
}
