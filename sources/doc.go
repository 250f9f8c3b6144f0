// Package sources turns files, folders and git repositories into indexed,
// hashed evidence: source kinds and the path policy, change detection,
// extractors, chunking, the index writer and content-addressed assets.
package sources
