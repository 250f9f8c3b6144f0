-- Whole files in the index (docs/search.md, "Files, roles and
-- definitions"): ranking scores a file by all it holds, not by the units
-- one search happens to pool, and finds the files about a question even
-- when none of their units is among the best on its own.
--
-- files.terms (sources/file_terms.go) holds each indexed file's term
-- counts in its units' titles, texts and code terms. It is NULL for a
-- skipped file, and for files indexed before this migration: the next
-- sync of each source reads those again and records their terms. Until
-- then ranking sums the units it holds of them, as before.
ALTER TABLE files ADD COLUMN terms BLOB;

-- file_fts is a lexical index of whole files: one row per file, its path
-- and the titles, texts and code terms of all its leaves, with the rowid
-- of the file's first unit (ordinal 0: the document). Contentless with
-- deletes, like evidence_fts (0006). The writer indexes new files itself
-- (sources.IndexFilesSQL, beside IndexLeavesSQL); deleting a file's
-- first unit deletes its row.
CREATE VIRTUAL TABLE file_fts USING fts5(
	path, text,
	content = '',
	contentless_delete = 1,
	tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'"
);
INSERT INTO file_fts(file_fts, rank) VALUES ('hashsize', 33554432);

INSERT INTO file_fts(rowid, path, text)
	SELECT d.seq, d.path, (SELECT group_concat(coalesce(l.title, '') || char(10) || coalesce(l.text, '') || char(10) ||
		coalesce(l.code_terms, ''), char(10)) FROM evidence l WHERE l.source_id = d.source_id AND l.path = d.path AND l.leaf = 1)
	FROM evidence d WHERE d.ordinal = 0;

CREATE TRIGGER file_fts_delete AFTER DELETE ON evidence WHEN old.ordinal = 0 BEGIN
	DELETE FROM file_fts WHERE rowid = old.seq;
END;
