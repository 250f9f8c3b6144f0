-- The lexical index becomes contentless with deletes (SQLite 3.43+): it
-- keeps no copy of the text and no link to a content table, and deleting a
-- row no longer needs its old values. An external-content FTS5 table
-- deletes by tokenizing the old text again to find its entries, which made
-- the delete of a changed file cost as much as indexing it (and a full
-- re-sync twice an ingest); a contentless_delete table records a
-- tombstone and drops the entries at the next merge. Searches read only
-- rowids and bm25() from the index (the text comes from evidence), so
-- nothing else changes. Term statistics (evidence_vocab) and the
-- per-column averages follow deletes at once.
DROP TRIGGER evidence_fts_delete;
DROP TRIGGER evidence_fts_update;
DROP TABLE evidence_vocab;
DROP TABLE evidence_fts;

CREATE VIRTUAL TABLE evidence_fts USING fts5(
	title, heading_path, path, text, code_terms,
	content = '',
	contentless_delete = 1,
	tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'"
);
-- As before (0002): flush pending terms every 32 MiB.
INSERT INTO evidence_fts(evidence_fts, rank) VALUES ('hashsize', 33554432);

-- The index of an existing workspace is built again from its evidence.
INSERT INTO evidence_fts(rowid, title, heading_path, path, text, code_terms)
	SELECT seq, title, heading_path, path, text, code_terms FROM evidence_leaves;

CREATE VIRTUAL TABLE evidence_vocab USING fts5vocab(evidence_fts, row);

-- Deleting or updating evidence keeps the index in step; inserting does not
-- (the writer indexes new leaves itself, one INSERT ... SELECT per
-- revision: see 0002).
CREATE TRIGGER evidence_fts_delete AFTER DELETE ON evidence WHEN old.leaf = 1 BEGIN
	DELETE FROM evidence_fts WHERE rowid = old.seq;
END;

CREATE TRIGGER evidence_fts_update AFTER UPDATE OF title, heading_path, path, text, code_terms, leaf ON evidence BEGIN
	DELETE FROM evidence_fts WHERE rowid = old.seq AND old.leaf = 1;
	INSERT INTO evidence_fts(rowid, title, heading_path, path, text, code_terms)
	SELECT new.seq, new.title, new.heading_path, new.path, new.text, new.code_terms WHERE new.leaf = 1;
END;
