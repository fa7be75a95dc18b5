-- 0020 an index for the track record's read model (views/book_record.py): a book catching
-- up from one of its checkpoints reads only the trades dated after it, which
-- (portfolio_id, executed_at) cannot find without walking the whole book; with
-- (portfolio_id, trading_date) the read costs what it returns however long the book grows.
CREATE INDEX ix_trades_portfolio_date ON trades (portfolio_id, trading_date);
