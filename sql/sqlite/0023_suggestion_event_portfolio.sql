-- 0023 the portfolio of a suggestion's event (SQLite twin of
-- sql/postgres/0023_suggestion_event_portfolio.sql, which says why).
ALTER TABLE suggestion_events ADD COLUMN portfolio_id TEXT;
CREATE INDEX ix_suggestion_events_portfolio ON suggestion_events (portfolio_id, id);
