-- 0021 the fees a suggestion shows (issue 64; SQLite twin of
-- sql/postgres/0021_suggestion_fees.sql, which says what they mean). Money is decimal text
-- here, as every Money column of the twin.
ALTER TABLE suggestions ADD COLUMN fees TEXT CHECK (fees IS NULL OR CAST(fees AS REAL) >= 0);
