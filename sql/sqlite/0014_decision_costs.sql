-- 0014 what each decision weighed (models/decisions.py): the held edge (the mean return over
-- the horizon held of earlier predictions in the same Score band, from the session after the
-- decision), the name's round-trip cost (spread and two fees, market/costs.py) and the
-- decision's reason in words. Rows stored before 0014 have nulls here.
ALTER TABLE predictions ADD COLUMN held_edge REAL;
ALTER TABLE predictions ADD COLUMN round_trip_cost REAL;
ALTER TABLE predictions ADD COLUMN decision_reason TEXT;
ALTER TABLE validation_predictions ADD COLUMN held_edge REAL;
ALTER TABLE validation_predictions ADD COLUMN round_trip_cost REAL;
ALTER TABLE validation_predictions ADD COLUMN decision_reason TEXT;
