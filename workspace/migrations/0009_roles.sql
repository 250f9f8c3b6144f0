-- File roles (docs/ingest.md, "File roles"): what each file is to its
-- project (source, test, example, testdata, vendored, generated, minified,
-- documentation), detected at ingest by sources.DetectRole from the path
-- and the first bytes of the file, and recorded on the file and on each
-- of its evidence units so that a search filters by it without a join.
--
-- files.role is NULL for a skipped file. An index built before this
-- migration has NULL roles on its indexed files too: the next sync of each
-- source reads those files again (as after an extractor upgrade) and
-- records their roles, their facets and their evidence anew. Roles are
-- not guessed here in SQL: two rules (generated headers, minified lines)
-- need the file's content, and one detector keeps them from drifting.
-- Until that sync, their evidence counts as source.
ALTER TABLE files ADD COLUMN role TEXT;
ALTER TABLE evidence ADD COLUMN role TEXT NOT NULL DEFAULT 'source';
