-- Term statistics for the search ranker (query/rank_stats.go): one row per
-- term of the lexical index with the number of leaf evidence units that
-- hold it (doc) and its number of occurrences (cnt). fts5vocab reads the
-- FTS index itself, so nothing is stored twice and nothing can drift.
CREATE VIRTUAL TABLE evidence_vocab USING fts5vocab(evidence_fts, row);
