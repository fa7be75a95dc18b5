-- 0021 the fees a suggestion shows (issue 64): the fee schedule's fee on the limit price
-- times the quantity, as the morning's plan computed it. A confirmation charges exactly
-- the limit price times the quantity plus these fees, so what the client was shown is what
-- the client pays even if the schedule changes before the confirmation. NULL on the
-- suggestions made before this column: their confirmation charges the schedule's fee.
ALTER TABLE suggestions ADD COLUMN fees NUMERIC(20, 6) CHECK (fees >= 0);
