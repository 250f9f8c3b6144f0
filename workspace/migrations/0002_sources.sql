-- Sources and what they became: revisions, files, extractions, evidence
-- and its full-text index, relations, source selections, assets and
-- coverage. docs/ingest.md explains every table and column.

CREATE TABLE sources (
	id                  TEXT PRIMARY KEY,
	kind                TEXT NOT NULL CHECK (kind IN ('file', 'folder', 'repository')),
	path                TEXT NOT NULL,               -- real absolute path (symlinks resolved)
	collection_id       TEXT NOT NULL,
	name                TEXT NOT NULL,
	include_globs       TEXT NOT NULL DEFAULT '[]',  -- JSON array of doublestar globs
	exclude_globs       TEXT NOT NULL DEFAULT '[]',
	created_at          TEXT NOT NULL,
	updated_at          TEXT NOT NULL,
	current_revision_id TEXT,                        -- NULL until the first sync is applied
	last_synced_at      TEXT,
	UNIQUE (collection_id, path)
) STRICT;

CREATE TABLE revisions (
	id          TEXT PRIMARY KEY,
	source_id   TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	number      INTEGER NOT NULL,                    -- 1, 2, ... per source
	git_commit  TEXT,                                -- HEAD commit of a repository
	git_ref     TEXT,                                -- the branch HEAD names; NULL when detached
	created_at  TEXT NOT NULL,
	stats       TEXT NOT NULL DEFAULT '{}',          -- JSON: counts, skips by reason, coverage digest
	UNIQUE (source_id, number)
) STRICT;

-- One row per file present in the current revision, including files
-- skipped for their content (so an unchanged skipped file is not re-read).
CREATE TABLE files (
	source_id     TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	path          TEXT NOT NULL,                     -- relative to the source root, '/'-separated
	size          INTEGER NOT NULL,
	mtime_ns      INTEGER NOT NULL,
	sha256        TEXT,                              -- hex, of the raw bytes; NULL when not read whole
	revision_id   TEXT NOT NULL,                     -- revision of the last content change
	status        TEXT NOT NULL CHECK (status IN ('indexed', 'asset', 'skipped')),
	skip_reason   TEXT,
	skip_detail   TEXT,
	kind          TEXT,
	language      TEXT,
	title         TEXT,
	facets        TEXT,                              -- JSON object
	extraction_id TEXT,
	asset_id      TEXT,
	units         INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (source_id, path)
) STRICT, WITHOUT ROWID;

-- One run of an extractor version over (the changed files of) a revision.
CREATE TABLE extractions (
	id          TEXT PRIMARY KEY,
	source_id   TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	revision_id TEXT NOT NULL REFERENCES revisions(id) ON DELETE CASCADE,
	extractor   TEXT NOT NULL,
	version     TEXT NOT NULL,
	channels    TEXT NOT NULL DEFAULT '[]',          -- JSON array: text, code, metadata, image
	files       INTEGER NOT NULL DEFAULT 0,
	units       INTEGER NOT NULL DEFAULT 0,
	created_at  TEXT NOT NULL,
	UNIQUE (revision_id, extractor, version)
) STRICT;
CREATE INDEX extractions_source ON extractions(source_id);

-- Evidence units of the current revision of every source. seq is the
-- stable integer key the external-content FTS index needs; evidence_id is
-- the public id. source_id has no FOREIGN KEY clause on purpose: an
-- immediate foreign key makes every multi-row INSERT keep a statement
-- journal, which cost a fifth of a large sync; the writer is the only one
-- to insert evidence, and sources.RemoveSource deletes a source's evidence
-- before the source.
CREATE TABLE evidence (
	seq           INTEGER PRIMARY KEY,
	evidence_id   TEXT NOT NULL UNIQUE,
	source_id     TEXT NOT NULL,
	revision_id   TEXT NOT NULL,                     -- revision that produced it
	extraction_id TEXT NOT NULL,
	collection_id TEXT NOT NULL,
	path          TEXT NOT NULL,
	ordinal       INTEGER NOT NULL,                  -- index among the file's units (document = 0)
	level         TEXT NOT NULL CHECK (level IN ('document', 'section', 'chunk')),
	parent_id     TEXT,                              -- evidence_id of the parent unit
	leaf          INTEGER NOT NULL CHECK (leaf IN (0, 1)),
	kind          TEXT NOT NULL,
	language      TEXT NOT NULL DEFAULT '',
	title         TEXT NOT NULL DEFAULT '',
	heading_path  TEXT NOT NULL DEFAULT '[]',        -- JSON array of strings
	start_line    INTEGER NOT NULL,
	end_line      INTEGER NOT NULL,
	channel       TEXT NOT NULL,
	sha256        TEXT NOT NULL,                     -- hex, of text
	text          TEXT NOT NULL,
	code_terms    TEXT NOT NULL DEFAULT '',          -- CodeTerms(title, text, path) of a leaf
	tokens        INTEGER NOT NULL                   -- estimate: ceil(bytes / 4)
) STRICT;
CREATE INDEX evidence_file ON evidence(source_id, path, ordinal);

-- The lexical index over leaf evidence. External content: the text lives
-- once, in evidence, and the index reads it through evidence_leaves (so
-- that 'rebuild' and 'integrity-check' see exactly the indexed rows).
--
-- Deleting or updating evidence keeps the index in step through the
-- triggers below. Inserting does NOT: the writer indexes new leaves itself,
-- with one INSERT INTO evidence_fts ... SELECT ... FROM evidence_leaves per
-- revision. (A per-row insert trigger makes every insert a statement with
-- a savepoint, and FTS5 flushes its pending terms to a new segment at each
-- savepoint: thousands of tiny segments and endless merging.)
CREATE VIEW evidence_leaves AS
	SELECT seq, title, heading_path, path, text, code_terms FROM evidence WHERE leaf = 1;

CREATE VIRTUAL TABLE evidence_fts USING fts5(
	title, heading_path, path, text, code_terms,
	content = 'evidence_leaves',
	content_rowid = 'seq',
	tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'"
);

CREATE TRIGGER evidence_fts_delete AFTER DELETE ON evidence WHEN old.leaf = 1 BEGIN
	INSERT INTO evidence_fts(evidence_fts, rowid, title, heading_path, path, text, code_terms)
	VALUES ('delete', old.seq, old.title, old.heading_path, old.path, old.text, old.code_terms);
END;

CREATE TRIGGER evidence_fts_update AFTER UPDATE OF title, heading_path, path, text, code_terms, leaf ON evidence BEGIN
	INSERT INTO evidence_fts(evidence_fts, rowid, title, heading_path, path, text, code_terms)
	SELECT 'delete', old.seq, old.title, old.heading_path, old.path, old.text, old.code_terms WHERE old.leaf = 1;
	INSERT INTO evidence_fts(rowid, title, heading_path, path, text, code_terms)
	SELECT new.seq, new.title, new.heading_path, new.path, new.text, new.code_terms WHERE new.leaf = 1;
END;

-- Links between evidence other than the tree (document links, resolved to
-- a source's evidence when possible). Parent/child edges are not copied
-- here: evidence_relations derives them from evidence.parent_id.
CREATE TABLE relations (
	source_id    TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	path         TEXT NOT NULL,                      -- file of from_id
	from_id      TEXT NOT NULL,
	type         TEXT NOT NULL,
	target       TEXT NOT NULL DEFAULT '',           -- the link as written
	to_id        TEXT,                               -- evidence_id, when resolved
	to_source_id TEXT,
	PRIMARY KEY (from_id, type, target)
) STRICT, WITHOUT ROWID;
CREATE INDEX relations_file ON relations(source_id, path);

CREATE VIEW evidence_relations (source_id, from_id, type, to_id, target) AS
	SELECT source_id, parent_id, 'child', evidence_id, '' FROM evidence WHERE parent_id IS NOT NULL
	UNION ALL
	SELECT source_id, evidence_id, 'parent', parent_id, '' FROM evidence WHERE parent_id IS NOT NULL
	UNION ALL
	SELECT source_id, from_id, type, to_id, target FROM relations;

-- Content-addressed payloads under WORKSPACE/assets (id = hex SHA-256).
CREATE TABLE assets (
	id         TEXT PRIMARY KEY,
	mime       TEXT NOT NULL,
	size       INTEGER NOT NULL,
	created_at TEXT NOT NULL
) STRICT;

-- Selectors into a revision: image assets and context spans, with hashes.
CREATE TABLE source_selections (
	id          TEXT PRIMARY KEY,
	source_id   TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	revision_id TEXT NOT NULL,
	path        TEXT NOT NULL,
	selector    TEXT NOT NULL CHECK (selector IN ('asset', 'span')),
	asset_id    TEXT REFERENCES assets(id),
	evidence_id TEXT,
	start_line  INTEGER,
	end_line    INTEGER,
	mime        TEXT,
	sha256      TEXT NOT NULL,
	created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX source_selections_file ON source_selections(source_id, path);

-- Coverage: what the current revision left out and why. Counts per reason
-- are exact in revisions.stats; rows are listed up to a cap per reason.
CREATE TABLE skips (
	source_id   TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	path        TEXT NOT NULL,
	reason      TEXT NOT NULL,
	detail      TEXT NOT NULL DEFAULT '',
	revision_id TEXT NOT NULL,
	PRIMARY KEY (source_id, path)
) STRICT, WITHOUT ROWID;

-- Flush the FTS index's in-memory pending terms every 32 MiB instead of
-- 1 MiB: a large sync writes far fewer, larger segments and merges less.
INSERT INTO evidence_fts(evidence_fts, rank) VALUES ('hashsize', 33554432);
