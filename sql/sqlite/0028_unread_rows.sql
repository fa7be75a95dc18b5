-- 0028 the rows of a name and day an import could not read (SQLite twin of
-- sql/postgres/0028): no import gives such a name a no-trade row that day.

-- key: symbol, trading_date
CREATE TABLE unread_rows (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol        TEXT NOT NULL,
    trading_date  TEXT NOT NULL,
    source        TEXT NOT NULL,
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_unread_rows_key ON unread_rows (symbol, trading_date, recorded_at);
CREATE TRIGGER unread_rows_no_update BEFORE UPDATE ON unread_rows
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "unread_rows" is not allowed; record a new row instead'); END;
CREATE TRIGGER unread_rows_no_delete BEFORE DELETE ON unread_rows
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "unread_rows" is not allowed; record a new row instead'); END;
-- REPLACE would delete a colliding row without firing the DELETE trigger: refuse any
-- insert that collides with a stored row (the same guard every history table gets).
CREATE TRIGGER unread_rows_no_replace BEFORE INSERT ON unread_rows
WHEN EXISTS (SELECT 1 FROM unread_rows WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "unread_rows" (REPLACE) is not allowed; record a new row instead'); END;
