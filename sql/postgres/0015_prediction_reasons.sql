-- 0015 the reasons behind each prediction (models/reasons.py): the three inputs with the
-- largest absolute contribution to the risk model's raw score (LightGBM's pred_contrib, in
-- raw-score units: log-odds before calibration), largest first with their signs, and the
-- base value: {"base_value": b, "top": [{"feature": f, "contribution": c}, ...]}.
-- Rows stored before 0015 have nulls here. The append-only triggers (0002) are per table
-- and the service role's grants (0003) per table, so both cover the new column as they are.
ALTER TABLE predictions ADD COLUMN reasons JSONB;
ALTER TABLE validation_predictions ADD COLUMN reasons JSONB;
