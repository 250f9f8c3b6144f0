-- Explicit vision selections (docs/ingest.md, "Text seen in images"): a
-- caller submits the text it saw in an image selection that inspect
-- source_selections listed, and a job records it as evidence of kind
-- vision beside the image's own.
--
-- A submission is a job of kind add on the image's source that carries
-- its request. Such jobs never yield to the source's active job (the
-- text would be lost behind a running sync's handle): the one-active-job
-- rule now holds for the jobs that name no selection.
ALTER TABLE jobs ADD COLUMN selection_id TEXT;
DROP INDEX jobs_one_active;
CREATE UNIQUE INDEX jobs_one_active ON jobs(source_id) WHERE state IN ('queued', 'running') AND selection_id IS NULL;

-- The request of a submission until its job applies it (a failed or
-- cancelled job keeps it, for a retry).
CREATE TABLE vision_requests (
	job_id       TEXT PRIMARY KEY,
	source_id    TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	selection_id TEXT NOT NULL,
	revision_id  TEXT NOT NULL DEFAULT '',            -- as the caller named it; '' when not named
	sha256       TEXT NOT NULL,                       -- the image hash the caller saw
	text         TEXT NOT NULL,
	model        TEXT NOT NULL DEFAULT '',
	principal    TEXT NOT NULL,
	created_at   TEXT NOT NULL
) STRICT;

-- The text recorded for a selection now: at most one per selection. The
-- row leaves with its evidence (the trigger below), so whatever removes
-- the image's evidence (a changed or deleted image, a removed source)
-- removes the text seen in it as well.
CREATE TABLE vision_texts (
	selection_id      TEXT PRIMARY KEY,
	source_id         TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	path              TEXT NOT NULL,
	evidence_id       TEXT NOT NULL UNIQUE,           -- the vision evidence
	image_evidence_id TEXT NOT NULL,                  -- the image's evidence it describes
	asset_id          TEXT NOT NULL,
	image_sha256      TEXT NOT NULL,
	model             TEXT NOT NULL DEFAULT '',
	principal         TEXT NOT NULL,
	job_id            TEXT NOT NULL,
	created_at        TEXT NOT NULL
) STRICT;
CREATE INDEX vision_texts_file ON vision_texts(source_id, path);

CREATE TRIGGER vision_texts_leave AFTER DELETE ON evidence WHEN old.kind = 'vision' BEGIN
	DELETE FROM vision_texts WHERE evidence_id = old.evidence_id;
END;
