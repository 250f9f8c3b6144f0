// Package query owns QueryRequest and QueryResult, the lexical index reader
// and ranking, filters and facets, discover, inspect, and query runs with
// replay.
package query
