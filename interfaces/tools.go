package interfaces

import (
	"encoding/json"

	"github.com/tychora/tychora/query"
)

// Discover subjects.
var DiscoverSubjects = []string{"kinds", "facets", "relations", "profiles", "languages", "sources", "settings", "runs", "models"}

// DiscoverArgs is the argument object of discover and the body of POST
// /v1/discover.
type DiscoverArgs struct {
	Request DiscoverRequest `json:"request"`
}

// DiscoverRequest names what to list.
type DiscoverRequest struct {
	Subject string `json:"subject" jsonschema:"what to list: kinds, facets, relations, profiles, languages, sources, settings, runs or models"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit   int    `json:"limit,omitempty" jsonschema:"page size, 1 to 200 (default 50)"`
}

// DiscoverResult lists items of one subject. Each item is its JSON (a
// source, a kind, a run, ... as the subject's query type encodes it), the
// same bytes from either implementation of the Service.
type DiscoverResult struct {
	Subject    string            `json:"subject"`
	Items      []json.RawMessage `json:"items"`
	NextCursor *string           `json:"next_cursor"`
}

// Render formats.
const (
	RenderMarkdown     = "markdown@1"
	RenderAgent        = "agent@1"
	RenderHierarchical = "hierarchical-evidence@1"
)

// SearchArgs is the argument object of search and the body of POST
// /v1/search: a request, or the id of a retained run to replay, and an
// optional render.
type SearchArgs struct {
	Request     *query.QueryRequest `json:"request,omitempty" jsonschema:"the query; {\"question\":\"...\"} is enough"`
	ReplayRunID string              `json:"replay_run_id,omitempty" jsonschema:"re-run a retained request against today's index"`
	Render      string              `json:"render,omitempty" jsonschema:"add one rendered text block: markdown@1, agent@1 or hierarchical-evidence@1"`
}

// SearchOutput is a search answer as it must travel: the result, the
// exact structuredContent bytes the budget counted, and the rendered text
// (nil without a render). Edges send Structured as it is.
type SearchOutput struct {
	Result     query.QueryResult
	Structured json.RawMessage
	Rendered   *string
}

// InspectArgs is the argument object of inspect and the body of POST
// /v1/inspect.
type InspectArgs struct {
	Request InspectRequest `json:"request"`
}

// Inspect subjects.
var InspectSubjects = []string{"source", "revisions", "extractions", "channels", "coverage", "source_selections", "content"}

// InspectRequest asks about one source.
type InspectRequest struct {
	Subject        string `json:"subject" jsonschema:"source, revisions, extractions, channels, coverage, source_selections or content"`
	SourceID       string `json:"source_id,omitempty" jsonschema:"the source (required, but with subject content when file names the file)"`
	RevisionID     string `json:"revision_id,omitempty" jsonschema:"a revision (default: the current one)"`
	ExtractionID   string `json:"extraction_id,omitempty" jsonschema:"an extraction, for channels"`
	IncludeContent bool   `json:"include_content,omitempty" jsonschema:"with subject revisions: include the revision's original bytes"`
	Cursor         string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit          int    `json:"limit,omitempty" jsonschema:"page size, 1 to 200 (default 50)"`
	// Path, StartLine, EndLine and Budget go with subject content: the
	// indexed lines of one file, fitted to the budget.
	Path      string        `json:"path,omitempty" jsonschema:"with subject content: the file, relative to the source root, as a hit's path names it"`
	File      string        `json:"file,omitempty" jsonschema:"with subject content, instead of source_id and path: the file's absolute path, as a hit's file names it"`
	StartLine int           `json:"start_line,omitempty" jsonschema:"with subject content: the first line (default 1)"`
	EndLine   int           `json:"end_line,omitempty" jsonschema:"with subject content: the last line (default the file's last)"`
	Budget    *query.Budget `json:"budget,omitempty" jsonschema:"with subject content: the token budget of the answer (default the workspace's default_max_tokens)"`
}

// InspectResult wraps the subject's answer, as its JSON: for subject
// content the exact bytes whose tokens the budget counted.
type InspectResult struct {
	Result json.RawMessage `json:"result"`
}

// EvidenceResult is the body of GET /v1/evidence/{id} and the content of
// tychora://evidence/{id}.
type EvidenceResult struct {
	Evidence query.Evidence `json:"evidence"`
}

// Asset is a registered payload: tychora://assets/{id}, GET /v1/assets/{id}.
type Asset struct {
	ID    string
	MIME  string
	Bytes []byte
}
