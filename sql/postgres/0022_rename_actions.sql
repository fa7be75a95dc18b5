-- 0022 a ticker change on a running store (docs/pipeline.md, "A rename on a running store"):
-- a RENAME corporate action of the old symbol, dated its ex-date (the first session under
-- the new symbol), its detail's new_symbol the new one. The stored rows stay under the old
-- symbol (append-only); the ledger carries a holding of it on under the new symbol from the
-- ex-date (store/splits.py).
ALTER TABLE corporate_actions DROP CONSTRAINT corporate_actions_kind_check;
ALTER TABLE corporate_actions ADD CONSTRAINT corporate_actions_kind_check
    CHECK (kind IN ('DIVIDEND', 'SPLIT', 'HALT', 'RESUME', 'LISTING', 'DELISTING', 'RENAME'));
