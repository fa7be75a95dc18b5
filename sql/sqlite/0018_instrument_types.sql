-- 0018 each instrument's kind of security (issue 55; SQLite twin of
-- sql/postgres/0018_instrument_types.sql, which says what the types mean). The existing
-- instruments get new versions (history is append-only), the current version of each
-- copied with the type market/instruments.py infer_instrument_type gives its code and
-- name: a '^' prefix: INDEX; a '-P<digits>' suffix: PREFERENCE (rtrim takes the trailing
-- digits off, GLOB then wants '-P' at the end); the word ETF or REIT in the name, or the
-- code GLD or FAHR: FUND; otherwise ORDINARY. The append-only triggers of 0002 and 0010
-- are per table, so they cover the new column as they are.
ALTER TABLE instruments ADD COLUMN instrument_type TEXT CHECK (
    instrument_type IN ('ORDINARY', 'PREFERENCE', 'FUND', 'DEBT', 'RIGHTS', 'LOCKED_IN', 'INDEX', 'UNKNOWN')
);

INSERT INTO instruments (symbol, name, board, sector, currency, listed_on, delisted_on, source, instrument_type)
SELECT symbol, name, board, sector, currency, listed_on, delisted_on, source,
       CASE
           WHEN substr(symbol, 1, 1) = '^' THEN 'INDEX'
           WHEN rtrim(upper(symbol), '0123456789') <> upper(symbol)
                AND rtrim(upper(symbol), '0123456789') GLOB '*-P' THEN 'PREFERENCE'
           WHEN ' ' || upper(name) || ' ' GLOB '*[^A-Z0-9_]ETF[^A-Z0-9_]*'
                OR ' ' || upper(name) || ' ' GLOB '*[^A-Z0-9_]REIT[^A-Z0-9_]*' THEN 'FUND'
           WHEN upper(symbol) IN ('GLD', 'FAHR') THEN 'FUND'
           ELSE 'ORDINARY'
       END
FROM (
    SELECT i.*, row_number() OVER (PARTITION BY symbol ORDER BY recorded_at DESC, id DESC) AS version_rank
    FROM instruments i
) AS latest
WHERE version_rank = 1
ORDER BY symbol;
