-- Folders named bench, benchmark or benchmarks hold tests now
-- (docs/ingest.md, "File roles"): their files lose the role they were
-- given, so that the next sync detects it again (and re-extracts them,
-- since each unit carries its file's role).
UPDATE files SET role = NULL
WHERE '/' || lower(path) LIKE '%/bench/%'
   OR '/' || lower(path) LIKE '%/benchmark/%'
   OR '/' || lower(path) LIKE '%/benchmarks/%';
