-- A finished sync says how many files left the index, so that a summary
-- of "2 indexed, 413 unchanged" never hides a deletion.
ALTER TABLE jobs ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
