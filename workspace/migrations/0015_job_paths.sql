-- A sync that watching asked for may name the paths that changed: it then
-- looks at those paths only instead of walking the whole source
-- (docs/ingest.md, "Path-limited syncs"). NULL is a sync of everything.
ALTER TABLE jobs ADD COLUMN paths TEXT;
