-- Token names are no longer unique across the workspace: a name is
-- rotated among the tokens its creator can manage, so that a manager of
-- one collection who picks a name taken by a token of another collection
-- gets a token of its own instead of learning that the other exists
-- (docs/security.md). SQLite drops a UNIQUE constraint by rebuilding the
-- table.
CREATE TABLE tokens_new (
	id           TEXT PRIMARY KEY,
	name         TEXT,
	grant_level  TEXT NOT NULL CHECK (grant_level IN ('read', 'write', 'manage')),
	collections  TEXT NOT NULL DEFAULT '[]', -- JSON array; empty means all
	secret_hash  BLOB NOT NULL,
	created_at   TEXT NOT NULL,
	last_used_at TEXT
) STRICT;
INSERT INTO tokens_new(id, name, grant_level, collections, secret_hash, created_at, last_used_at)
	SELECT id, name, grant_level, collections, secret_hash, created_at, last_used_at FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_new RENAME TO tokens;
CREATE INDEX tokens_name ON tokens(name);
