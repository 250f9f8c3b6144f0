-- A job's progress counts the files that left the index (DESIGN §3:
-- files_seen, indexed, unchanged, skipped, deleted, bytes). Jobs finished
-- before this migration count 0.
ALTER TABLE jobs ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
