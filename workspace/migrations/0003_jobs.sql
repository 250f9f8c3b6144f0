-- The durable source-job queue.
CREATE TABLE jobs (
	seq              INTEGER PRIMARY KEY AUTOINCREMENT,
	id               TEXT NOT NULL UNIQUE,
	kind             TEXT NOT NULL CHECK (kind IN ('add', 'sync')),
	state            TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
	source_id        TEXT NOT NULL,
	collection_id    TEXT NOT NULL,
	principal        TEXT NOT NULL,
	attempt          INTEGER NOT NULL DEFAULT 1,
	resumes          INTEGER NOT NULL DEFAULT 0,
	files_seen       INTEGER NOT NULL DEFAULT 0,
	indexed          INTEGER NOT NULL DEFAULT 0,
	unchanged        INTEGER NOT NULL DEFAULT 0,
	skipped          INTEGER NOT NULL DEFAULT 0,
	bytes            INTEGER NOT NULL DEFAULT 0,
	error_code       TEXT,
	error_message    TEXT,
	cancel_requested INTEGER NOT NULL DEFAULT 0,
	created_at       TEXT NOT NULL,
	started_at       TEXT,
	finished_at      TEXT
) STRICT;

CREATE INDEX jobs_state ON jobs(state, seq);
CREATE INDEX jobs_collection ON jobs(collection_id, seq);
-- At most one queued or running job per source.
CREATE UNIQUE INDEX jobs_one_active ON jobs(source_id) WHERE state IN ('queued', 'running');
