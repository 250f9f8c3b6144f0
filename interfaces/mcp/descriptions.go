package mcpapi

import "github.com/tychora/tychora/interfaces"

// The tool descriptions are written for the client's model: what the tool
// is for, the smallest useful call, the shape of the answer, how to go on
// from it, and one complete example call (interfaces.ToolExample, which
// TestToolExamplesDecode decodes).

// example is the description's line with the example call of tool.
func example(tool string) string {
	return "\nExample: " + interfaces.ToolExample(tool)
}

var discoverDescription = `List what this workspace holds and how it can be searched.
request.subject is one of:
- sources: the added files, folders and repositories, with their source_id (for inspect and search filters)
- kinds, facets, languages: values for search filters
- profiles: ranking profiles for search
- relations, models, settings
- runs: your past searches, with ids for search {"replay_run_id":...}
Answer: {"subject","items":[...],"next_cursor"}; pass next_cursor back as request.cursor for the next page (null on the last page). request.limit is the page size, 1 to 200 (default 50).` + example(interfaces.ToolDiscover)

var searchDescription = `Search the indexed files, folders and git repositories of this workspace. The answer is fitted to a token budget.
Smallest call: {"request":{"question":"how are tokens stored"}}. question takes keywords, identifiers, "quoted phrases" or a natural-language question.
Optional: request.filters (collections, sources, kinds, languages, paths globs such as "docs/**/*.md", facets such as {"language":"go"}, roles and exclude_roles such as ["test","vendored","generated"]), request.limit (hits, 1 to 100, default 10), request.budget.max_tokens (default 4000), request.cursor (next_cursor of a previous answer), request.profile.
render adds one text block with the hits rendered: "agent@1" (compact, citation first: best for reading), "markdown@1", "hierarchical-evidence@1"; the structured result then carries the same text in "rendered", and its hits are compact citations without their text. Every hit names its file on disk in "file", to open as it is.
Instead of a request, {"replay_run_id":ID} re-runs a past search (discover runs) against today's index.
Answer: hits best first (evidence_id, source_id, path, file, title, heading_path, span of lines, score, snippet, text, hash, stale = the file changed since it was indexed; under a render only evidence_id, file, span and the flags), total_matches, truncated (more matched than fits the budget: raise max_tokens, narrow the filters or page on), budget (max_tokens, used_tokens), next_cursor.
Read a hit's whole text with the resource tychora://evidence/{evidence_id}.` + example(interfaces.ToolSearch)

var inspectDescription = `Look inside one source: what was indexed from it, when, and what was skipped.
request.subject is one of: source (its record), revisions (the indexed versions; include_content adds each revision's original bytes, which can be large), extractions (the extractor runs over a revision), channels (the text, code, metadata and image streams of an extraction: give extraction_id), coverage (files indexed, unchanged and skipped, with reasons), source_selections (image assets and context spans with their hashes), content (the indexed lines of one file: give source_id and path as a hit names them, or file, the absolute path a hit's file names; optional start_line and end_line, and budget; next_cursor reads on).
request.source_id comes from discover sources or from a search hit; revision_id defaults to the current revision.
Answer: {"result":{...}}; pages continue with request.cursor = next_cursor, request.limit 1 to 200 (default 50).` + example(interfaces.ToolInspect)

var addSourcesDescription = `Add a file, folder or git repository to the index, or re-sync a source already added. Needs the write grant.
Add: {"action":"add","source":{"path":"docs"}}. path must lie inside the workspace's ingest roots (a relative path resolves against the first root; outside the roots is OUT_OF_ROOTS); kind (file, folder, repository) is detected when absent; include and exclude take globs; collection_id defaults to "default".
Sync: {"action":"sync","source_id":"..."}: unchanged files are not re-read, deleted ones leave the index.
Text seen in an image: after reading the image (tychora://assets/{asset_id}), {"action":"add","source":{"selection_id":"...","sha256":"...","text":"what the image shows or says","model":"optional label"}} with the id and sha256 that inspect source_selections listed makes the image searchable by that text (again for the same selection replaces it); CONFLICT means the image changed since it was listed.
The work runs as a durable background job: the answer comes at once as {"job":{"id","state":"queued",...}}. Follow it with manage_job {"action":"get","job_id":...} until state is succeeded, failed or cancelled.` + example(interfaces.ToolAddSources)

var manageJobDescription = `List, get, cancel or retry source jobs (the adds and syncs of add_sources).
List: {"action":"list"} or {"action":"list","state":"running"} (states: queued, running, succeeded, failed, cancelled) → {"jobs":[...],"next_cursor"}; limit 1 to 100 (default 20), cursor = next_cursor.
Get: {"action":"get","job_id":"..."} → {"job":{...}} with progress (files_seen, indexed, unchanged, skipped, bytes, deleted), attempt and error.
Cancel and retry (need the write grant): {"action":"cancel","job_id":"..."} stops a queued or running job; {"action":"retry","job_id":"..."} runs a failed or cancelled job again under the same id. Asking either of a job whose state does not allow it is CONFLICT.` + example(interfaces.ToolManageJob)
