-- 0029 a statement sync's sale at nothing (SQLite twin of
-- sql/postgres/0029_worthless_sync_sales.sql, which says why). SQLite cannot change a
-- column's CHECK, so the table is built again with it, its rows copied as they are (ids
-- kept, so AUTOINCREMENT carries on after them), and its indexes and triggers created
-- again word for word, in the one transaction the migration runs in (store/migrations.py),
-- so no other connection sees the table without them.
CREATE TABLE trades_0029 (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    trade_id         TEXT NOT NULL UNIQUE,
    portfolio_id     TEXT NOT NULL,
    trading_date     TEXT NOT NULL,
    executed_at      TEXT NOT NULL,
    symbol           TEXT NOT NULL,
    side             TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
    quantity         BIGINT NOT NULL CHECK (quantity > 0),
    price            TEXT NOT NULL CHECK (
        CAST(price AS REAL) > 0
        OR (CAST(price AS REAL) = 0 AND side = 'SELL' AND origin = 'STATEMENT_SYNC')
    ),
    fees             TEXT NOT NULL DEFAULT '0' CHECK (CAST(fees AS REAL) >= 0),
    origin           TEXT NOT NULL CHECK (origin IN ('MANUAL', 'SUGGESTION', 'AI', 'STATEMENT_SYNC')),
    rationale        TEXT NOT NULL DEFAULT '{}',
    idempotency_key  TEXT,
    recorded_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    spread_cost      TEXT NOT NULL DEFAULT '0' CHECK (CAST(spread_cost AS REAL) >= 0),
    impact_cost      TEXT NOT NULL DEFAULT '0' CHECK (CAST(impact_cost AS REAL) >= 0),
    UNIQUE (portfolio_id, idempotency_key)
);
INSERT INTO trades_0029 (
    id, trade_id, portfolio_id, trading_date, executed_at, symbol, side, quantity, price, fees, origin,
    rationale, idempotency_key, recorded_at, spread_cost, impact_cost
)
SELECT
    id, trade_id, portfolio_id, trading_date, executed_at, symbol, side, quantity, price, fees, origin,
    rationale, idempotency_key, recorded_at, spread_cost, impact_cost
FROM trades;
DROP TABLE trades;
ALTER TABLE trades_0029 RENAME TO trades;

CREATE INDEX ix_trades_portfolio ON trades (portfolio_id, executed_at);
CREATE INDEX ix_trades_portfolio_id ON trades (portfolio_id, id);
CREATE INDEX ix_trades_portfolio_date ON trades (portfolio_id, trading_date);
CREATE TRIGGER trades_no_update BEFORE UPDATE ON trades
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "trades" is not allowed; record a new row instead'); END;
CREATE TRIGGER trades_no_delete BEFORE DELETE ON trades
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "trades" is not allowed; record a new row instead'); END;
CREATE TRIGGER trades_no_replace BEFORE INSERT ON trades
WHEN EXISTS (SELECT 1 FROM trades WHERE id = NEW.id)
    OR EXISTS (SELECT 1 FROM trades WHERE portfolio_id = NEW.portfolio_id AND idempotency_key = NEW.idempotency_key)
    OR EXISTS (SELECT 1 FROM trades WHERE trade_id = NEW.trade_id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "trades" (REPLACE) is not allowed; record a new row instead'); END;
