-- 0008 the model's validation record (SQLite twin of sql/postgres/0008).

-- key: symbol, trading_date, model_id
CREATE TABLE validation_predictions (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol            TEXT NOT NULL,
    trading_date      TEXT NOT NULL,
    model_id          TEXT NOT NULL,
    horizon_days      INTEGER NOT NULL CHECK (horizon_days >= 1),
    predicted_return  REAL,
    p_up              REAL CHECK (p_up BETWEEN 0 AND 1),
    score             REAL CHECK (score BETWEEN 0 AND 100),
    action            TEXT CHECK (action IN ('LONG', 'HOLD', 'AVOID')),
    weight            REAL CHECK (weight BETWEEN 0 AND 1),
    tercile           TEXT CHECK (tercile IN ('TOP', 'MIDDLE', 'BOTTOM', 'ILLIQUID')),
    layer1_p_up       REAL CHECK (layer1_p_up BETWEEN 0 AND 1),
    layer1_backend    TEXT,
    recorded_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_validation_predictions_key ON validation_predictions (symbol, trading_date, model_id, recorded_at);
CREATE INDEX ix_validation_predictions_date ON validation_predictions (trading_date);
CREATE TRIGGER validation_predictions_no_update BEFORE UPDATE ON validation_predictions
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "validation_predictions" is not allowed; record a new row instead'); END;
CREATE TRIGGER validation_predictions_no_delete BEFORE DELETE ON validation_predictions
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "validation_predictions" is not allowed; record a new row instead'); END;
-- REPLACE would delete a colliding row without firing the DELETE trigger: refuse any
-- insert that collides with a stored row (the same guard every history table gets).
CREATE TRIGGER validation_predictions_no_replace BEFORE INSERT ON validation_predictions
WHEN EXISTS (SELECT 1 FROM validation_predictions WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "validation_predictions" (REPLACE) is not allowed; record a new row instead'); END;
