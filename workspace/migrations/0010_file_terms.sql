-- File terms (sources/file_terms.go): each indexed file's term counts, in
-- its units' titles, texts and code terms, so that ranking scores a whole
-- file by what it holds and not by the units one search happens to pool
-- (docs/search.md, "Files, roles and definitions"). NULL for a skipped
-- file, and for files indexed before this migration: the next sync of
-- each source reads those again and records their terms. Until then
-- ranking sums the units it holds of them, as before.
ALTER TABLE files ADD COLUMN terms BLOB;
