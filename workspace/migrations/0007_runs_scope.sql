-- The collections a run searched: the request's collections filter, or
-- else the caller's collections; NULL for all. A caller sees a run only
-- when every one of them is in its own reach (docs/search.md, "Query
-- runs"), so a token narrowed to one collection, or a manager of one
-- collection, never sees the questions and hits of another. Runs recorded
-- before this column count as searching all collections.
ALTER TABLE runs ADD COLUMN collections TEXT;
