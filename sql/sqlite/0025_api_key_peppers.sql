-- 0025 the pepper a client key was seen to verify under (SQLite twin of
-- sql/postgres/0025_api_key_peppers.sql, which says why).

-- key: key_id
CREATE TABLE api_key_peppers (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    key_id              TEXT NOT NULL,
    pepper_fingerprint  TEXT NOT NULL,
    recorded_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_api_key_peppers_key ON api_key_peppers (key_id, recorded_at);
CREATE TRIGGER api_key_peppers_no_update BEFORE UPDATE ON api_key_peppers
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "api_key_peppers" is not allowed; record a new row instead'); END;
CREATE TRIGGER api_key_peppers_no_delete BEFORE DELETE ON api_key_peppers
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "api_key_peppers" is not allowed; record a new row instead'); END;
-- REPLACE would delete a colliding row without firing the DELETE trigger: refuse any
-- insert that collides with a stored row (the same guard every history table gets).
CREATE TRIGGER api_key_peppers_no_replace BEFORE INSERT ON api_key_peppers
WHEN EXISTS (SELECT 1 FROM api_key_peppers WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "api_key_peppers" (REPLACE) is not allowed; record a new row instead'); END;
