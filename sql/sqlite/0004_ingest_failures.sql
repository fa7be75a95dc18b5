-- 0004 failures of outside text sources (SQLite twin of sql/postgres/0004).

-- key: source_kind, source_url, trading_date, reason
CREATE TABLE ingest_failures (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    source_kind   TEXT NOT NULL CHECK (source_kind IN ('FEED', 'DISCLOSURE', 'RESEARCH')),
    source_url    TEXT NOT NULL,
    trading_date  TEXT NOT NULL,
    reason        TEXT NOT NULL,
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_ingest_failures_key ON ingest_failures (source_kind, source_url, trading_date, recorded_at);
CREATE TRIGGER ingest_failures_no_update BEFORE UPDATE ON ingest_failures
BEGIN SELECT RAISE(ABORT, 'append-only history: UPDATE on table "ingest_failures" is not allowed; record a new row instead'); END;
CREATE TRIGGER ingest_failures_no_delete BEFORE DELETE ON ingest_failures
BEGIN SELECT RAISE(ABORT, 'append-only history: DELETE on table "ingest_failures" is not allowed; record a new row instead'); END;
