-- 0006 per-key request counters shared by every API worker (MARKETINTEL_RATE_LIMIT_STORE=database).
-- Not history: a counter is operational state that means nothing after two minutes, so this
-- one table is exempt from the append-only rule (store/tables.py OPERATIONAL_TABLES) and the
-- service role may update and delete it, and nothing else.

CREATE TABLE rate_limit_counters (
    key_id        TEXT NOT NULL,
    window_start  BIGINT NOT NULL,
    hits          INTEGER NOT NULL,
    PRIMARY KEY (key_id, window_start)
);

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'marketintel_app') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON rate_limit_counters TO marketintel_app;
    END IF;
END
$$;
