-- 0023 the portfolio of a suggestion's event, so a portfolio's newest event is one index
-- lookup (desk/versions.py `suggestions`: every kept suggestions read names it). Every
-- writer of a portfolio's events holds the portfolio's lock, so these ids commit in order;
-- the newest id of the whole table, written under different portfolios' locks, did not.
-- NULL on the events stored before this column: they never change, and a version only has
-- to move when an event is appended.
ALTER TABLE suggestion_events ADD COLUMN portfolio_id TEXT;
CREATE INDEX ix_suggestion_events_portfolio ON suggestion_events (portfolio_id, id);
