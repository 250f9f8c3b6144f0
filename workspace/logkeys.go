package workspace

// The attribute keys of tychora's log records, defined once so that a key
// means the same thing in every package that logs (docs/architecture.md,
// "Logs"). An identifier is named by the word the API uses for it
// (source_id, job_id); a count by what it counts.
const (
	// What went wrong.
	LogErr   = "err"   // the error, or its words
	LogPanic = "panic" // the value a recovered panic carried
	LogStack = "stack" // the goroutine's stack at a recovered panic

	// What a record is about.
	LogWorkspace  = "workspace"   // the workspace directory
	LogIngestRoot = "ingest_root" // an ingest root of the settings
	LogSourceID   = "source_id"
	LogJobID      = "job_id"
	LogRevisionID = "revision_id"
	LogPath       = "path"     // a request's URL path, or a source's path
	LogURL        = "url"      // the owner's base URL
	LogPID        = "pid"      // a process id
	LogTool       = "tool"     // an MCP tool's name
	LogResource   = "resource" // an MCP resource's kind (schema, kind, evidence, asset)
	LogSession    = "session"  // an MCP session's id
	LogMethod     = "method"   // an HTTP or JSON-RPC method
	LogDrift      = "drift"    // how a tape's answer differs from the recorded one

	// Settings.
	LogRestartNeeded = "restart_needed" // settings keys that apply only after a restart

	// Amounts.
	LogEvery     = "every"    // a period (a duration)
	LogWait      = "wait"     // a bound that was reached (a duration)
	LogRetryIn   = "retry_in" // the wait before a failed step is tried again (a duration)
	LogFailures  = "failures" // how many times in a row a step failed
	LogMS        = "ms"       // how long a step took, in milliseconds
	LogFiles     = "files"    // a count of files
	LogSources   = "sources"  // a count of sources
	LogIndexed   = "indexed"  // a sync's counts, as its job's progress has them
	LogUnchanged = "unchanged"
	LogDeleted   = "deleted"
	LogWalkMS    = "walk_ms" // a sync's steps, in milliseconds
	LogExtractMS = "extract_ms"
	LogApplyMS   = "apply_ms"
)
