-- Each indexed file's kept term counts (0012, sources/file_terms.go) move
-- from files.terms to a table of their own. Held inline, they made the
-- files table 27 MB over Go's 7,417 files, a row of up to 450 kB in a
-- WITHOUT ROWID B-tree, so that every lookup of a file by its key (the
-- stale check of each answer, a sync's comparison of every file) walked
-- a deep tree of wide pages. The counts are read whole, by the file
-- index and the whole-file score, never beside the other columns.
CREATE TABLE file_terms (
	source_id TEXT NOT NULL,
	path      TEXT NOT NULL,
	terms     BLOB NOT NULL,
	UNIQUE (source_id, path),
	FOREIGN KEY (source_id, path) REFERENCES files(source_id, path) ON DELETE CASCADE
) STRICT;

INSERT INTO file_terms(source_id, path, terms) SELECT source_id, path, terms FROM files WHERE terms IS NOT NULL;

ALTER TABLE files DROP COLUMN terms;
