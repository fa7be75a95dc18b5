-- 0012 indexes for the data versions read on every cached API request (api/services.py,
-- store/history.py newest_ids): the newest id of a portfolio's trades, cash entries, days
-- and suggestions. With (portfolio_id, date) alone, max(id) for one portfolio walked all of
-- that portfolio's rows; with (portfolio_id, id) it is one index lookup however long the
-- history grows (SQLite, 25,000 trades of one portfolio: 3.2 ms -> 5 us).
CREATE INDEX ix_trades_portfolio_id ON trades (portfolio_id, id);
CREATE INDEX ix_cash_entries_portfolio_id ON cash_entries (portfolio_id, id);
CREATE INDEX ix_portfolio_days_portfolio_id ON portfolio_days (portfolio_id, id);
CREATE INDEX ix_suggestions_portfolio_id ON suggestions (portfolio_id, id);
