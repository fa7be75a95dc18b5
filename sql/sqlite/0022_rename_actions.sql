-- 0022 a RENAME corporate action (SQLite twin of sql/postgres/0022_rename_actions.sql, which
-- says what it means). SQLite cannot change a CHECK, so the table is built anew with the
-- wider one, its rows copied as they are (ids and recorded_at kept), and its index and
-- append-only triggers (0002, 0010) made again.
CREATE TABLE corporate_actions_0022 (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol       TEXT NOT NULL,
    action_date  TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('DIVIDEND', 'SPLIT', 'HALT', 'RESUME', 'LISTING', 'DELISTING', 'RENAME')),
    amount       REAL,
    detail       TEXT NOT NULL DEFAULT '{}',
    source       TEXT NOT NULL,
    recorded_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
INSERT INTO corporate_actions_0022 (id, symbol, action_date, kind, amount, detail, source, recorded_at)
    SELECT id, symbol, action_date, kind, amount, detail, source, recorded_at FROM corporate_actions;
DROP TABLE corporate_actions;
ALTER TABLE corporate_actions_0022 RENAME TO corporate_actions;
CREATE INDEX ix_corporate_actions_key ON corporate_actions (symbol, action_date, kind, recorded_at);
CREATE TRIGGER corporate_actions_no_update BEFORE UPDATE ON corporate_actions
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "corporate_actions" is not allowed; record a new row instead'); END;
CREATE TRIGGER corporate_actions_no_delete BEFORE DELETE ON corporate_actions
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "corporate_actions" is not allowed; record a new row instead'); END;
CREATE TRIGGER corporate_actions_no_replace BEFORE INSERT ON corporate_actions
WHEN EXISTS (SELECT 1 FROM corporate_actions WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "corporate_actions" (REPLACE) is not allowed; record a new row instead'); END;
