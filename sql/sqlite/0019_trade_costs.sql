-- 0019 the cost parts of each trade as columns (issue 56; SQLite twin of
-- sql/postgres/0019_trade_costs.sql, which says what they mean and why the stored trades
-- are filled in place). Money is decimal text here, as every Money column of the twin;
-- the rationale's fill.costs parts are already that text (six places).
-- The append-only trigger of 0002 is dropped for the one UPDATE and created again, word
-- for word, in the same transaction (the migration runs as one script under BEGIN
-- IMMEDIATE, store/migrations.py), so no other connection sees the table without it.
ALTER TABLE trades ADD COLUMN spread_cost TEXT NOT NULL DEFAULT '0' CHECK (CAST(spread_cost AS REAL) >= 0);
ALTER TABLE trades ADD COLUMN impact_cost TEXT NOT NULL DEFAULT '0' CHECK (CAST(impact_cost AS REAL) >= 0);

DROP TRIGGER trades_no_update;
UPDATE trades
SET spread_cost = COALESCE(json_extract(rationale, '$.fill.costs.spread'), '0'),
    impact_cost = COALESCE(json_extract(rationale, '$.fill.costs.impact'), '0')
WHERE json_extract(rationale, '$.fill.costs') IS NOT NULL;
CREATE TRIGGER trades_no_update BEFORE UPDATE ON trades
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "trades" is not allowed; record a new row instead'); END;
