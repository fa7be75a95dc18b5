-- 0017 the market's own index levels (SQLite twin of sql/postgres/0017): one row per index
-- and trading day, as the exchange's daily page (or a replayed file) publishes them; the
-- track record's market benchmark reads them (views/track_record.py).

-- key: symbol, trading_date
CREATE TABLE index_levels (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol        TEXT NOT NULL,
    trading_date  TEXT NOT NULL,
    level         REAL NOT NULL,
    source        TEXT NOT NULL,
    delivery_id   BIGINT REFERENCES deliveries (id),
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_index_levels_key ON index_levels (symbol, trading_date, recorded_at);
CREATE INDEX ix_index_levels_date ON index_levels (trading_date);
CREATE TRIGGER index_levels_no_update BEFORE UPDATE ON index_levels
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "index_levels" is not allowed; record a new row instead'); END;
CREATE TRIGGER index_levels_no_delete BEFORE DELETE ON index_levels
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "index_levels" is not allowed; record a new row instead'); END;
-- REPLACE would delete a colliding row without firing the DELETE trigger: refuse any
-- insert that collides with a stored row (the same guard every history table gets).
CREATE TRIGGER index_levels_no_replace BEFORE INSERT ON index_levels
WHEN EXISTS (SELECT 1 FROM index_levels WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "index_levels" (REPLACE) is not allowed; record a new row instead'); END;
