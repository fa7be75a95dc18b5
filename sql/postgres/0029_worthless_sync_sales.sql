-- 0029 a statement sync's sale at nothing (portfolio/statements.py `_drop_price`): a holding
-- the exchange delisted with nothing paid to its holders (a DELISTING notice with no positive
-- amount after the name's last row) leaves the book when the broker's statement no longer
-- lists it at a price of 0, its whole cost basis a realised loss, moving no cash. Every
-- other trade is still priced above 0: only a STATEMENT_SYNC sale may be at 0.
ALTER TABLE trades DROP CONSTRAINT trades_price_check;
ALTER TABLE trades ADD CONSTRAINT trades_price_check
    CHECK (price > 0 OR (price = 0 AND side = 'SELL' AND origin = 'STATEMENT_SYNC'));
