-- 0015 the reasons behind each prediction (models/reasons.py): the three inputs with the
-- largest absolute contribution to the risk model's raw score (LightGBM's pred_contrib, in
-- raw-score units: log-odds before calibration), largest first with their signs, and the
-- base value, as JSON text: {"base_value": b, "top": [{"feature": f, "contribution": c}, ...]}.
-- Rows stored before 0015 have nulls here. The append-only triggers of 0002 and 0010 are
-- per table, so they cover the new column as they are. SQLite twin of sql/postgres/0015.
ALTER TABLE predictions ADD COLUMN reasons TEXT;
ALTER TABLE validation_predictions ADD COLUMN reasons TEXT;
