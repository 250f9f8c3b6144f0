package interfaces

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tychora/tychora/jobs"
	"github.com/tychora/tychora/query"
	"github.com/tychora/tychora/sources"
	"github.com/tychora/tychora/workspace"
)

// SchemaDialect is the JSON Schema draft of every schema here.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// Schema names of the tools' arguments and results, as served under
// tychora://schemas/{name}.
var (
	toolInputName = map[string]string{
		ToolDiscover:   "DiscoverArgs",
		ToolSearch:     "SearchArgs",
		ToolInspect:    "InspectArgs",
		ToolAddSources: "AddSourcesRequest",
		ToolManageJob:  "ManageJobRequest",
	}
	toolOutputName = map[string]string{
		ToolDiscover:   "DiscoverResult",
		ToolSearch:     "QueryResult",
		ToolInspect:    "InspectResult",
		ToolAddSources: "JobResult",
		ToolManageJob:  "ManageJobResult",
	}
)

// schemaSet is every schema, built once from the Go types.
type schemaSet struct {
	named    map[string]*jsonschema.Schema   // public type name → schema
	resolved map[string]*jsonschema.Resolved // tool (or OpCreateToken) → resolved input schema
}

var loadSchemas = sync.OnceValue(func() *schemaSet {
	s, err := buildSchemas()
	if err != nil {
		// The types are fixed at compile time and a test builds them: this
		// cannot happen in a build that passed its tests.
		panic(fmt.Sprintf("interfaces: building schemas: %v", err))
	}
	return s
})

// InputSchema returns a copy of the input schema of tool (one of
// ToolNames), or nil for an unknown tool. It is the schema of the matching
// /v1 request body: every object sets additionalProperties false.
func InputSchema(tool string) *jsonschema.Schema {
	name, ok := toolInputName[tool]
	if !ok {
		return nil
	}
	return loadSchemas().named[name].CloneSchemas()
}

// OutputSchema returns a copy of the output schema of tool (the schema of
// its structuredContent and of the matching /v1 response body), or nil for
// an unknown tool. Every output schema has type object at its root.
func OutputSchema(tool string) *jsonschema.Schema {
	name, ok := toolOutputName[tool]
	if !ok {
		return nil
	}
	return loadSchemas().named[name].CloneSchemas()
}

// Schemas returns a copy of the schema of every public type, by name: the
// documents served as tychora://schemas/{name}. The tools' input and output
// schemas are among them (SearchArgs, QueryResult, ...).
func Schemas() map[string]*jsonschema.Schema {
	out := make(map[string]*jsonschema.Schema, len(loadSchemas().named))
	for k, v := range loadSchemas().named {
		out[k] = v.CloneSchemas()
	}
	return out
}

// SchemaNames returns the names of Schemas, sorted.
func SchemaNames() []string {
	names := slices.Collect(maps.Keys(loadSchemas().named))
	sort.Strings(names)
	return names
}

// Schema returns a copy of the schema called name (one of SchemaNames),
// or nil.
func Schema(name string) *jsonschema.Schema {
	s, ok := loadSchemas().named[name]
	if !ok {
		return nil
	}
	return s.CloneSchemas()
}

func forType[T any](input bool) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	if input {
		dropNull(s)
	}
	return s, nil
}

func buildSchemas() (*schemaSet, error) {
	b := &schemaBuilder{set: &schemaSet{named: map[string]*jsonschema.Schema{}, resolved: map[string]*jsonschema.Resolved{}}}
	b.addArguments()
	b.addResults()
	if b.firstErr != nil {
		return nil, b.firstErr
	}
	set := b.set
	// An empty schema marshals as the boolean true, which some clients'
	// validators refuse inside properties: spell it as an object.
	for _, s := range set.named {
		noBooleanSchemas(s)
	}
	if s := set.named["ErrorBody"]; s != nil {
		setEnum(prop(s, "error", "code"), codeStrings()...)
	}
	if err := set.resolveInputs(); err != nil {
		return nil, err
	}
	return set, nil
}

// schemaBuilder collects the named schemas and the first error met.
type schemaBuilder struct {
	set      *schemaSet
	firstErr error
}

// add(name)(forType[T](input)) records the schema of T as name, and
// answers it (nil after an error).
func (b *schemaBuilder) add(name string) func(*jsonschema.Schema, error) *jsonschema.Schema {
	return func(s *jsonschema.Schema, err error) *jsonschema.Schema {
		if err != nil {
			if b.firstErr == nil {
				b.firstErr = fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}
		b.set.named[name] = s
		return s
	}
}

// addArguments adds the tools' arguments and their parts (inputs: no null
// alternatives, closed sets as enums).
func (b *schemaBuilder) addArguments() {
	add := b.add
	if s := add("DiscoverArgs")(forType[DiscoverArgs](true)); s != nil {
		s.Description = "Arguments of discover: what to list."
		describeDiscoverRequest(prop(s, "request"))
		setRange(prop(s, "request", "limit"), 1, maxDiscoverLimit)
	}
	if s := add("SearchArgs")(forType[SearchArgs](true)); s != nil {
		s.Description = `Arguments of search: a request ({"request":{"question":"..."}} is enough) or the id of a retained run to replay, never both; and an optional render.`
		describeQueryRequest(prop(s, "request"))
		setEnum(prop(s, "render"), RenderAgent, RenderMarkdown, RenderHierarchical)
	}
	if s := add("InspectArgs")(forType[InspectArgs](true)); s != nil {
		s.Description = "Arguments of inspect: the subject and the source it is about."
		setEnum(prop(s, "request", "subject"), InspectSubjects...)
		setRange(prop(s, "request", "limit"), 1, maxInspectLimit)
		setRange(prop(s, "request", "start_line"), 1, query.MaxContentLine)
		setRange(prop(s, "request", "end_line"), 1, query.MaxContentLine)
		setRange(prop(s, "request", "budget", "max_tokens"), 1, query.MaxBudgetTokens)
	}
	if s := add("AddSourcesRequest")(forType[AddSourcesRequest](true)); s != nil {
		s.Description = `Arguments of add_sources: {"action":"add","source":{...}} or {"action":"sync","source_id":"..."}.`
		setEnum(prop(s, "action"), SourceActionAdd, SourceActionSync)
		describeSourceInput(prop(s, "source"))
	}
	if s := add("ManageJobRequest")(forType[ManageJobRequest](true)); s != nil {
		s.Description = "Arguments of manage_job: list takes state, cursor and limit; get, cancel and retry take job_id."
		setEnum(prop(s, "action"), JobActionList, JobActionGet, JobActionCancel, JobActionRetry)
		setEnum(prop(s, "state"), jobStates...)
		setRange(prop(s, "limit"), 1, maxJobLimit)
	}
	// Parts of the arguments, for reference.
	if s := add("QueryRequest")(forType[query.QueryRequest](true)); s != nil {
		describeQueryRequest(s)
	}
	if s := add("SourceInput")(forType[SourceInput](true)); s != nil {
		describeSourceInput(s)
	}
	add("CreateTokenRequest")(forType[CreateTokenRequest](true))
}

// addResults adds the results (outputs: nullable fields stay nullable).
func (b *schemaBuilder) addResults() {
	add := b.add
	if s := add("DiscoverResult")(forType[DiscoverResult](false)); s != nil {
		s.Description = "One page of items of the subject; next_cursor is null on the last page."
		if items := prop(s, "items"); items != nil {
			items.Items = &jsonschema.Schema{Type: "object", Description: "one item; its fields depend on the subject"}
		}
	}
	if s := add("QueryResult")(forType[query.QueryResult](false)); s != nil {
		s.Description = "A search answer fitted to the token budget: hits best first; truncated is true when not everything that matched fits; next_cursor continues the result."
		describeCitations(prop(s, "hits"))
	}
	if s := add("InspectResult")(forType[InspectResult](false)); s != nil {
		s.Description = "The answer about the subject, under result."
		if s.Properties != nil {
			s.Properties["result"] = &jsonschema.Schema{Type: "object", Description: "the subject's answer; its fields depend on the subject"}
		}
	}
	if s := add("JobResult")(forType[JobResult](false)); s != nil {
		s.Description = "A source job (JobHandle)."
	}
	if s := add("ManageJobResult")(forType[ManageJobResult](false)); s != nil {
		s.Description = `{"job":JobHandle} for get, cancel and retry; {"jobs":[JobHandle...],"next_cursor":...} for list.`
	}
	add("JobHandle")(forType[jobs.Job](false))
	add("Evidence")(forType[query.Evidence](false))
	add("EvidenceResult")(forType[EvidenceResult](false))
	add("KindDefinition")(forType[sources.KindDef](false))
	add("ErrorBody")(forType[ErrorBody](false))
	add("HealthResult")(forType[HealthResult](false))
	add("StatusResult")(forType[StatusResult](false))
	add("TokenList")(forType[TokenList](false))
	add("TokenRecord")(forType[workspace.TokenRecord](false))
	add("CreatedToken")(forType[CreatedToken](false))
	add("RevokedToken")(forType[RevokedToken](false))
	add("RemovedSource")(forType[RemovedSource](false))
}

// describeCitations lets a hit be a compact citation, as hits travel under
// a render (query.Hit.MarshalJSON): evidence_id, file (or source_id and
// path when the file is not known), span, truncated, stale and, when
// stale, stale_reason. Whole hits carry every field as before.
func describeCitations(hits *jsonschema.Schema) {
	if hits == nil || hits.Items == nil {
		return
	}
	it := hits.Items
	it.Description = "One hit, best first. Under a render a hit is a compact citation: evidence_id, file (source_id and path instead when the file's place on disk is not known), span, truncated, stale, and stale_reason when stale; the rendered text shows its lines, and inspect or tychora://evidence/{id} give the rest."
	keep := it.Required[:0]
	for _, r := range it.Required {
		switch r {
		case "source_id", "path", "score", "stale_reason":
		default:
			keep = append(keep, r)
		}
	}
	it.Required = keep
}

// resolveInputs resolves each tool's input schema and the body of
// OpCreateToken, and checks that each tool's output is an object.
func (set *schemaSet) resolveInputs() error {
	for _, tool := range ToolNames() {
		rs, err := set.named[toolInputName[tool]].Resolve(nil)
		if err != nil {
			return fmt.Errorf("resolve %s input: %w", tool, err)
		}
		set.resolved[tool] = rs
		if out := set.named[toolOutputName[tool]]; out.Type != "object" {
			return fmt.Errorf("%s output schema has type %q, want object", tool, out.Type)
		}
	}
	rs, err := set.named[bodySchemaName(OpCreateToken)].Resolve(nil)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", OpCreateToken, err)
	}
	set.resolved[OpCreateToken] = rs
	return nil
}

// The largest page sizes the Service takes (query's discover and inspect
// pages, runtime's job list). The input schemas bound every integer, so
// that an explicit 0 (which Go cannot tell from an absent field, and the
// Service would replace with its default) or a value out of range is
// refused before decoding; TestSchemaBoundsMatchService holds these equal
// to the Service's.
const (
	maxDiscoverLimit = 200
	maxInspectLimit  = 200
	maxJobLimit      = 100
)

var jobStates = []string{jobs.StateQueued, jobs.StateRunning, jobs.StateSucceeded, jobs.StateFailed, jobs.StateCancelled}

func codeStrings() []string {
	var out []string
	for _, c := range workspace.Codes() {
		out = append(out, string(c))
	}
	return out
}

// prop walks down properties; it returns nil when a step is missing.
func prop(s *jsonschema.Schema, path ...string) *jsonschema.Schema {
	for _, p := range path {
		if s == nil {
			return nil
		}
		s = s.Properties[p]
	}
	return s
}

// setEnum restricts a string property to values.
func setEnum(s *jsonschema.Schema, values ...string) {
	if s == nil {
		return
	}
	s.Enum = nil
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
}

// setRange bounds an integer property to [lo, hi].
func setRange(s *jsonschema.Schema, lo, hi int) {
	if s == nil {
		return
	}
	l, h := float64(lo), float64(hi)
	s.Minimum, s.Maximum = &l, &h
}

// describe sets the description of the property at path unless it has one.
func describe(s *jsonschema.Schema, text string, path ...string) {
	if p := prop(s, path...); p != nil && p.Description == "" {
		p.Description = text
	}
}

// dropNull turns every ["null", T] type into T: an argument is either
// absent or of its type, which is simpler for models to follow.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, c := range s.Properties {
		dropNull(c)
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
}

// noBooleanSchemas replaces every empty sub-schema (true when marshalled)
// with an equivalent object schema that says so.
func noBooleanSchemas(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	fix := func(c **jsonschema.Schema) {
		if *c != nil && reflect.ValueOf(**c).IsZero() {
			*c = &jsonschema.Schema{Description: "any JSON value"}
		}
		noBooleanSchemas(*c)
	}
	for k := range s.Properties {
		c := s.Properties[k]
		fix(&c)
		s.Properties[k] = c
	}
	fix(&s.Items)
	for i := range s.AnyOf {
		fix(&s.AnyOf[i])
	}
	for i := range s.OneOf {
		fix(&s.OneOf[i])
	}
}

func describeDiscoverRequest(s *jsonschema.Schema) {
	setEnum(prop(s, "subject"), DiscoverSubjects...)
}

// describeQueryRequest documents QueryRequest, whose Go type carries doc
// comments rather than jsonschema tags.
func describeQueryRequest(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Description == "" {
		s.Description = "The search request."
	}
	describe(s, `What to look for: keywords, identifiers, "quoted phrases" or a natural-language question.`, "question")
	describe(s, `Which indexes to search (default ["lexical"]).`, "modalities")
	describe(s, `A ranking profile (default "balanced"; discover profiles lists them).`, "profile")
	describe(s, "Narrow what may match. Each list is any-of; lists combine with AND.", "filters")
	describe(s, "Collection ids.", "filters", "collections")
	describe(s, "Source ids (discover sources lists them).", "filters", "sources")
	describe(s, "Evidence kinds: markdown, code, html, text, data, image (discover kinds).", "filters", "kinds")
	describe(s, `Languages, such as "go" or "python" (discover languages).`, "filters", "languages")
	describe(s, `Globs over source-relative paths; "**" crosses folders, e.g. "docs/**/*.md".`, "filters", "paths")
	describe(s, `Kind facets matched exactly, e.g. {"language":"go"} (discover facets).`, "filters", "facets")
	roles := strings.Join(sources.Roles(), ", ")
	describe(s, "Keep only evidence of files with these roles: "+roles+" (discover facets counts them).", "filters", "roles")
	describe(s, `Leave out evidence of files with these roles, e.g. ["test","vendored","generated"].`, "filters", "exclude_roles")
	for _, f := range []string{"roles", "exclude_roles"} {
		if p := prop(s, "filters", f); p != nil {
			setEnum(p.Items, sources.Roles()...)
		}
	}
	describe(s, fmt.Sprintf("Most hits to return, 1 to %d (default %d; with a budget and no limit, as many as the budget holds, up to %d).", query.MaxLimit, query.DefaultLimit, query.BudgetPageLimit), "limit")
	setRange(prop(s, "limit"), 1, query.MaxLimit)
	describe(s, "next_cursor of a previous result, to continue it.", "cursor")
	describe(s, "Bounds the size of the answer in tokens.", "budget")
	describe(s, fmt.Sprintf("Most tokens the answer may use, 1 to %d (default: the workspace's default_max_tokens, 4000).", query.MaxBudgetTokens), "budget", "max_tokens")
	setRange(prop(s, "budget", "max_tokens"), 1, query.MaxBudgetTokens)
	describe(s, `Token counter: "o200k_base" or "cl100k_base" (default: the workspace's token_counter).`, "budget", "counter")
}

// describeSourceInput documents SourceInput (whose descriptions may be lost
// when it becomes an alias of sources.SourceInput) and closes its kinds.
func describeSourceInput(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Description == "" {
		s.Description = "The source to add (action add)."
	}
	setEnum(prop(s, "kind"), string(sources.KindFile), string(sources.KindFolder), string(sources.KindRepository))
	describe(s, "file, folder or repository (detected when absent: a directory with .git is a repository).", "kind")
	describe(s, "A path inside an ingest root; a relative path resolves against the first ingest root.", "path")
	describe(s, "The collection (default: default).", "collection_id")
	describe(s, "Globs of files to include, relative to the source.", "include")
	describe(s, "Globs of files to exclude, relative to the source.", "exclude")
	describe(s, "A display name.", "name")
	describeSelectionForm(s)
}
