-- 0027 the addresses a stored disclosure was also found at (SQLite twin of
-- sql/postgres/0027_disclosure_addresses.sql, which says why).

-- key: url
CREATE TABLE disclosure_addresses (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    url           TEXT NOT NULL,
    file_sha256   TEXT NOT NULL,
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_disclosure_addresses_key ON disclosure_addresses (url, recorded_at);
CREATE TRIGGER disclosure_addresses_no_update BEFORE UPDATE ON disclosure_addresses
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "disclosure_addresses" is not allowed; record a new row instead'); END;
CREATE TRIGGER disclosure_addresses_no_delete BEFORE DELETE ON disclosure_addresses
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "disclosure_addresses" is not allowed; record a new row instead'); END;
-- REPLACE would delete a colliding row without firing the DELETE trigger: refuse any
-- insert that collides with a stored row (the same guard every history table gets).
CREATE TRIGGER disclosure_addresses_no_replace BEFORE INSERT ON disclosure_addresses
WHEN EXISTS (SELECT 1 FROM disclosure_addresses WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "disclosure_addresses" (REPLACE) is not allowed; record a new row instead'); END;
