// Package tape records MCP sessions, replays them offline and compares two
// recordings (DESIGN §10, docs/tapes.md).
//
// A tape is a directory under WORKSPACE/tapes: meta.json (Meta) and
// trace.jsonl, one Event a line: each JSON-RPC message with its direction,
// kind, id and payload, and on every response an echo of the request it
// answers. A Recorder works on the byte streams of a stdio session
// (Reader and Writer tee them line by line, forwarding every byte
// unchanged), so it records tychora's own stdio server and, through Proxy,
// any stdio MCP server. Secrets are redacted before a line is written.
//
// A Player answers a client from a tape alone: initialize with the
// recorded answer, ping itself, and every other call with the earliest
// unconsumed recorded exchange of the same method and JSON-equal
// arguments (Matcher). Diff pairs the calls of two tapes and reports the
// first structural or output drift, after Normalize has replaced the
// volatile values (ids, times, durations, cursors).
package tape
