-- Workspace identity and access tokens.
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;

CREATE TABLE tokens (
	id           TEXT PRIMARY KEY,
	name         TEXT UNIQUE,
	grant_level  TEXT NOT NULL CHECK (grant_level IN ('read', 'write', 'manage')),
	collections  TEXT NOT NULL DEFAULT '[]', -- JSON array; empty means all
	secret_hash  BLOB NOT NULL,
	created_at   TEXT NOT NULL,
	last_used_at TEXT
) STRICT;
