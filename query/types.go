package query

// QueryRequest is the search request of DESIGN §4: the body of POST
// /v1/search and the "request" argument of the MCP search tool.
type QueryRequest struct {
	// Question is the query text (required): keywords, identifiers,
	// "quoted phrases", or a natural-language question.
	Question string `json:"question"`
	// Modalities to search; default ["lexical"].
	Modalities []string `json:"modalities,omitempty"`
	// Profile names a ranking profile; default "balanced".
	Profile string `json:"profile,omitempty"`
	// Filters narrow what may match.
	Filters *Filters `json:"filters,omitempty"`
	// Limit is the most hits to return (default 10, at most 100).
	Limit int `json:"limit,omitempty"`
	// Cursor continues a previous result (its next_cursor).
	Cursor string `json:"cursor,omitempty"`
	// Budget bounds the size of the answer in tokens.
	Budget *Budget `json:"budget,omitempty"`
}

// Filters narrow a search. Every list is an any-of; lists combine with AND.
type Filters struct {
	Collections []string `json:"collections,omitempty"`
	Sources     []string `json:"sources,omitempty"`
	Kinds       []string `json:"kinds,omitempty"`
	Languages   []string `json:"languages,omitempty"`
	// Paths are globs over source-relative paths ("**" crosses folders).
	Paths []string `json:"paths,omitempty"`
	// Facets match kind facets exactly: {"language":"go"}.
	Facets map[string]string `json:"facets,omitempty"`
	// Roles keep only evidence of files with these roles (source, test,
	// example, testdata, vendored, generated, minified, documentation);
	// ExcludeRoles drop evidence of files with these.
	Roles        []string `json:"roles,omitempty"`
	ExcludeRoles []string `json:"exclude_roles,omitempty"`
}

// Budget bounds an answer: MaxTokens counted with Counter
// ("o200k_base" or "cl100k_base"; default the workspace's token_counter).
type Budget struct {
	MaxTokens int    `json:"max_tokens,omitempty"`
	Counter   string `json:"counter,omitempty"`
}

// Span is a 1-based inclusive line range.
type Span struct {
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
}

// Hit is one piece of evidence in a result. With a render selected, the
// hit travels as a compact citation (Cited; see MarshalJSON): the rendered
// block carries its text and lines.
type Hit struct {
	EvidenceID string `json:"evidence_id"`
	SourceID   string `json:"source_id"`
	// RevisionID, Kind, Language, Role, Title and HeadingPath are left
	// out of a citation under a render, which shows what a reader needs of
	// them; inspect and tychora://evidence/{id} give them all.
	RevisionID string `json:"revision_id,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Language   string `json:"language,omitempty"`
	// Role is the role of the hit's file (source, test, example, ...;
	// discover facets lists them). Search sets it on every hit.
	Role string `json:"role,omitempty"`
	// Path is the file's path relative to its source's root, '/'-separated
	// (what filters.paths match).
	Path string `json:"path"`
	// File is the file's absolute path on disk, to open it with no further
	// call: the source root joined with Path, or the file a file source
	// names. Empty when the index has no record of the file.
	File        string   `json:"file,omitempty"`
	Title       string   `json:"title,omitempty"`
	HeadingPath []string `json:"heading_path,omitempty"`
	Span        Span     `json:"span"`
	Score       float64  `json:"score"`
	// Snippet is the window of the text that holds the most of the
	// question. A citation under a render has none (the rendered text
	// shows the lines).
	Snippet string  `json:"snippet,omitempty"`
	Text    *string `json:"text,omitempty"`
	// Truncated is true when Text was cut at a line boundary to fit the
	// budget; Span still names the whole evidence.
	Truncated bool `json:"truncated,omitempty"`
	// Excerpt, when set, is the span of the lines an answer shows of a
	// unit too large for its share of the budget: the lines that match the
	// question, whole. Span still names the whole evidence.
	Excerpt *Span `json:"excerpt,omitempty"`
	// Hash is the sha256 of the evidence text; a citation under a render
	// has none (inspect and tychora://evidence/{id} give it).
	Hash  string `json:"hash,omitempty"`
	Stale bool   `json:"stale"`
	// StaleReason says why a stale hit is stale: "changed" (other bytes
	// on disk, or unreadable) or "deleted" (the file is gone); null when
	// the hit is current.
	StaleReason *string `json:"stale_reason"`
	// Cited marks a hit that travels as a compact citation, as under a
	// render (MarshalJSON); render sets only the fields that travel.
	Cited bool `json:"-"`
	// Focus is the line, among the unit's lines that hold matches, that
	// holds the most of the question (its distinct terms by idf); for a
	// definition the question names, the line that declares it; nil when
	// no term matched a word of the text. It does not travel: the fitter
	// shows this line first when the unit does not fit whole.
	Focus *Span `json:"-"`
}

// BudgetInfo reports how the answer was sized. UsedTokens counts the exact
// bytes the client receives: the structured JSON as it travels plus the
// rendered text, if any.
type BudgetInfo struct {
	MaxTokens    int     `json:"max_tokens"`
	UsedTokens   int     `json:"used_tokens"`
	Counter      string  `json:"counter"`
	Target       string  `json:"target"`
	RenderTarget *string `json:"render_target"`
}

// ContentTotals say what the answer holds against what matched, per
// representation.
type ContentTotals struct {
	// HitsAvailable is how many hits the page had before fitting.
	HitsAvailable int `json:"hits_available"`
	// HitsReturned is how many the answer holds (whole or cut).
	HitsReturned int `json:"hits_returned"`
	// StructuredTokens counts the structuredContent JSON.
	StructuredTokens int `json:"structured_tokens"`
	// RenderedTokens counts the rendered text (0 without a render).
	RenderedTokens int `json:"rendered_tokens"`
}

// RequestEcho is the compact echo of the normalized request in a result.
type RequestEcho struct {
	Question   string   `json:"question"`
	Modalities []string `json:"modalities"`
	Profile    string   `json:"profile"`
	Filters    *Filters `json:"filters,omitempty"`
	Limit      int      `json:"limit"`
}

// QueryResult is the answer to a search.
type QueryResult struct {
	RunID        string      `json:"run_id"`
	Request      RequestEcho `json:"request"`
	Hits         []Hit       `json:"hits"`
	TotalMatches int         `json:"total_matches"`
	// PendingChanges counts the files changed on disk and not yet synced
	// in the searched sources: what the hits cannot show yet.
	PendingChanges int           `json:"pending_changes"`
	Truncated      bool          `json:"truncated"`
	Budget         BudgetInfo    `json:"budget"`
	ContentTotals  ContentTotals `json:"content_totals"`
	NextCursor     *string       `json:"next_cursor"`
	// Rendered carries the rendered text on /v1 when a render was asked
	// for; over MCP it travels as the one text block instead.
	Rendered *string `json:"rendered,omitempty"`
}

// Evidence is one stored evidence record with its text.
type Evidence struct {
	EvidenceID   string   `json:"evidence_id"`
	SourceID     string   `json:"source_id"`
	RevisionID   string   `json:"revision_id"`
	CollectionID string   `json:"collection_id"`
	Level        string   `json:"level"`
	ParentID     *string  `json:"parent_id"`
	Kind         string   `json:"kind"`
	Language     string   `json:"language"`
	Role         string   `json:"role"`
	Path         string   `json:"path"`
	Title        string   `json:"title"`
	HeadingPath  []string `json:"heading_path"`
	Span         Span     `json:"span"`
	Channel      string   `json:"channel"`
	Hash         string   `json:"hash"`
	Text         string   `json:"text"`
	Stale        bool     `json:"stale"`
	// StaleReason is null, "changed" or "deleted", as on a hit.
	StaleReason *string `json:"stale_reason"`
}
