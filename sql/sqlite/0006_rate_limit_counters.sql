-- 0006 per-key request counters (SQLite twin of sql/postgres/0006; exempt from append-only).

CREATE TABLE rate_limit_counters (
    key_id        TEXT NOT NULL,
    window_start  BIGINT NOT NULL,
    hits          INTEGER NOT NULL,
    PRIMARY KEY (key_id, window_start)
);
