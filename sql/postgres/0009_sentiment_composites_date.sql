-- 0009 the day's sentiment composites by date.
-- T1 step 3 reads and appends one day's composites (WHERE trading_date = ?); the key index
-- starts with symbol, so without this the read scanned the whole table and a long
-- backfill slowed day after day.
CREATE INDEX ix_sentiment_composites_date ON sentiment_composites (trading_date);
