-- 0011 daily bars with their indicators (SQLite twin of sql/postgres/0011): the read model
-- behind /api/market/history, /api/market/symbol and GraphQL's bars, written when prices
-- change (views/bars.py), never per request.

-- key: symbol, trading_date
CREATE TABLE daily_bars (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol               TEXT NOT NULL,
    trading_date         TEXT NOT NULL,
    price_id             INTEGER NOT NULL,
    open                 REAL,
    high                 REAL,
    low                  REAL,
    close                REAL NOT NULL CHECK (close > 0),
    volume               INTEGER NOT NULL DEFAULT 0 CHECK (volume >= 0),
    bid                  REAL,
    ask                  REAL,
    rsi_14               REAL,
    bollinger_pct_b      REAL,
    bollinger_bandwidth  REAL,
    momentum_5           REAL,
    momentum_20          REAL,
    volatility_20        REAL,
    volume_ratio_20      REAL,
    spread_pct           REAL,
    recorded_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_daily_bars_key ON daily_bars (symbol, trading_date, recorded_at);
CREATE INDEX ix_daily_bars_price ON daily_bars (price_id);
CREATE TRIGGER daily_bars_no_update BEFORE UPDATE ON daily_bars
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "daily_bars" is not allowed; record a new row instead'); END;
CREATE TRIGGER daily_bars_no_delete BEFORE DELETE ON daily_bars
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "daily_bars" is not allowed; record a new row instead'); END;
-- REPLACE would delete a colliding row without firing the DELETE trigger: refuse any
-- insert that collides with a stored row (the same guard every history table gets).
CREATE TRIGGER daily_bars_no_replace BEFORE INSERT ON daily_bars
WHEN EXISTS (SELECT 1 FROM daily_bars WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "daily_bars" (REPLACE) is not allowed; record a new row instead'); END;
