-- 0005 the executor's day records (SQLite twin of sql/postgres/0005).

-- key: portfolio_id, trading_date
CREATE TABLE portfolio_days (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    portfolio_id    TEXT NOT NULL,
    trading_date    TEXT NOT NULL,
    model_id        TEXT,
    cash            TEXT NOT NULL,
    market_value    TEXT NOT NULL,
    liquid_equity   TEXT NOT NULL,
    summary         TEXT NOT NULL DEFAULT '{}',
    recorded_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_portfolio_days_key ON portfolio_days (portfolio_id, trading_date, recorded_at);
CREATE TRIGGER portfolio_days_no_update BEFORE UPDATE ON portfolio_days
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "portfolio_days" is not allowed; record a new row instead'); END;
CREATE TRIGGER portfolio_days_no_delete BEFORE DELETE ON portfolio_days
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "portfolio_days" is not allowed; record a new row instead'); END;
