-- The whole-file FTS5 index of migration 0012 leaves: a search without
-- the in-memory file index now finds the best files through the units'
-- index, scoring each unit that matches and summing by file
-- (docs/search.md, "Without it"), and keeping file_fts up to date cost a
-- quarter of every sync (bench/README.md, "Searches without the file
-- index").
DROP TRIGGER IF EXISTS file_fts_delete;
DROP TABLE IF EXISTS file_fts;
