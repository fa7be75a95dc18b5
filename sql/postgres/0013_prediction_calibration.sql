-- 0013 the rolling calibration in the live stage (models/scoring.py, docs/model.md): each
-- prediction keeps the classifier's raw score (later days' calibrations are fitted on the
-- stored out-of-sample raw scores), the expected return (the conditional mean its Action
-- was decided on, models/decisions.py, beside the median served as predicted_return), the
-- 3-class prediction of the calibrated class probabilities (-1 down, 0 flat, 1 up; null
-- when the day was scored uncalibrated) and how many out-of-sample rows its calibration
-- was fitted on (0: uncalibrated). The validation
-- record gets the same columns, since its raw scores calibrate the first live days.
-- Rows stored before 0013 have nulls here; their days are simply not used to calibrate.
ALTER TABLE predictions ADD COLUMN raw_score DOUBLE PRECISION;
ALTER TABLE predictions ADD COLUMN expected_return DOUBLE PRECISION;
ALTER TABLE predictions ADD COLUMN predicted_class INTEGER CHECK (predicted_class IN (-1, 0, 1));
ALTER TABLE predictions ADD COLUMN calibration_rows INTEGER CHECK (calibration_rows >= 0);
ALTER TABLE validation_predictions ADD COLUMN raw_score DOUBLE PRECISION;
ALTER TABLE validation_predictions ADD COLUMN expected_return DOUBLE PRECISION;
ALTER TABLE validation_predictions ADD COLUMN predicted_class INTEGER CHECK (predicted_class IN (-1, 0, 1));
ALTER TABLE validation_predictions ADD COLUMN calibration_rows INTEGER CHECK (calibration_rows >= 0);
