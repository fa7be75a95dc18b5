-- 0019 the cost parts of each trade as columns (issue 56): what a fill paid to the spread
-- (|touch - close| x quantity) and to the square-root impact past the touch, in money,
-- beside the `fees` the trade already stored (market/costs.py CostBreakdown; their total
-- is the three's sum, so it has no column). Until now these parts lived only in the
-- rationale's JSON (fill.costs), as decimal text the track record dug out as floats.
-- A trade the cost model did not fill (a client's manual trade at the client's own price,
-- a confirmed suggestion, a statement sync) paid no attributed spread or impact: 0.
--
-- Filling the stored trades: a trade has one row (trade_id is UNIQUE, and the ledger,
-- its cash entries and the idempotency records name it), so no new version can be
-- appended for it. The stored rows are filled in place, here only, from their own
-- rationale (the same row's fill.costs text, unchanged): the append-only trigger of 0002
-- is disabled for this one UPDATE and enabled again in the same transaction, so no other
-- statement ever sees it off. Nothing a row stated changes; the columns state it again.
ALTER TABLE trades ADD COLUMN spread_cost NUMERIC(20, 6) NOT NULL DEFAULT 0 CHECK (spread_cost >= 0);
ALTER TABLE trades ADD COLUMN impact_cost NUMERIC(20, 6) NOT NULL DEFAULT 0 CHECK (impact_cost >= 0);

ALTER TABLE trades DISABLE TRIGGER append_only_rows;
UPDATE trades
SET spread_cost = COALESCE((rationale #>> '{fill,costs,spread}')::numeric, 0),
    impact_cost = COALESCE((rationale #>> '{fill,costs,impact}')::numeric, 0)
WHERE rationale #> '{fill,costs}' IS NOT NULL;
ALTER TABLE trades ENABLE TRIGGER append_only_rows;
