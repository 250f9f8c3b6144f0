-- A source can opt out of watching (SourceInput.watch false): the owner
-- then leaves it to explicit syncs (docs/ingest.md, "Watching").
ALTER TABLE sources ADD COLUMN watch INTEGER NOT NULL DEFAULT 1;
