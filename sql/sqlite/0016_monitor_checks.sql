-- 0016 the model monitor's checks (SQLite twin of sql/postgres/0016): one row per trading
-- day and check (pipeline/monitor_stage.py, models/monitor.py): the day's own level, the
-- state after persistence (OK / WATCH / ALERT), the figure and its thresholds, the first
-- day of the current breach and the figures behind it.

-- key: trading_date, check_name
CREATE TABLE monitor_checks (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    trading_date  TEXT NOT NULL,
    check_name    TEXT NOT NULL,
    kind          TEXT NOT NULL,
    level         TEXT NOT NULL,
    state         TEXT NOT NULL,
    figure        REAL,
    watch_threshold      REAL,
    alert_threshold      REAL,
    since         TEXT,
    figures       TEXT NOT NULL DEFAULT '{}',
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_monitor_checks_key ON monitor_checks (trading_date, check_name, recorded_at);
CREATE TRIGGER monitor_checks_no_update BEFORE UPDATE ON monitor_checks
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "monitor_checks" is not allowed; record a new row instead'); END;
CREATE TRIGGER monitor_checks_no_delete BEFORE DELETE ON monitor_checks
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "monitor_checks" is not allowed; record a new row instead'); END;
-- REPLACE would delete a colliding row without firing the DELETE trigger: refuse any
-- insert that collides with a stored row (the same guard every history table gets).
CREATE TRIGGER monitor_checks_no_replace BEFORE INSERT ON monitor_checks
WHEN EXISTS (SELECT 1 FROM monitor_checks WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only history: an INSERT colliding with a stored row of table "monitor_checks" (REPLACE) is not allowed; record a new row instead'); END;
