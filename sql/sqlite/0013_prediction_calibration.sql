-- 0013 raw score, expected return, calibrated 3-class prediction and calibration window size on every
-- prediction (SQLite twin of sql/postgres/0013).
ALTER TABLE predictions ADD COLUMN raw_score REAL;
ALTER TABLE predictions ADD COLUMN expected_return REAL;
ALTER TABLE predictions ADD COLUMN predicted_class INTEGER CHECK (predicted_class IN (-1, 0, 1));
ALTER TABLE predictions ADD COLUMN calibration_rows INTEGER CHECK (calibration_rows >= 0);
ALTER TABLE validation_predictions ADD COLUMN raw_score REAL;
ALTER TABLE validation_predictions ADD COLUMN expected_return REAL;
ALTER TABLE validation_predictions ADD COLUMN predicted_class INTEGER CHECK (predicted_class IN (-1, 0, 1));
ALTER TABLE validation_predictions ADD COLUMN calibration_rows INTEGER CHECK (calibration_rows >= 0);
