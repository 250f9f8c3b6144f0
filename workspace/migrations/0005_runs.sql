-- Query runs: every search, for history, replay and diff.
CREATE TABLE runs (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	id            TEXT NOT NULL UNIQUE,
	created_at    TEXT NOT NULL,
	principal     TEXT NOT NULL,
	request_hash  TEXT NOT NULL,                     -- sha256 of the normalized request
	request       TEXT,                              -- the request JSON, kept when query_history = full
	render        TEXT NOT NULL DEFAULT '',
	hits          TEXT NOT NULL DEFAULT '[]',        -- JSON [{evidence_id, hash, score}] in rank order
	total_matches INTEGER NOT NULL,
	used_tokens   INTEGER NOT NULL DEFAULT 0,
	truncated     INTEGER NOT NULL DEFAULT 0,
	duration_us   INTEGER NOT NULL DEFAULT 0,
	replay_of     TEXT
) STRICT;
CREATE INDEX runs_principal ON runs(principal, seq);
