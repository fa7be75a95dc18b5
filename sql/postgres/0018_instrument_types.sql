-- 0018 each instrument's kind of security (issue 55): ORDINARY, PREFERENCE, FUND, DEBT,
-- RIGHTS, LOCKED_IN, INDEX or UNKNOWN (market/instruments.py). The AI portfolio is a
-- long-only mandate of ordinary shares; its book, the client suggestions and the
-- equal-weighted liquid benchmark leave every other type out (store/instruments.py
-- ordinary_symbols). NULL: the version was recorded before 0018, or by a writer whose
-- source does not say and with no earlier version to keep the type of
-- (store/history.py keeps a stored type a writer does not give); readers then infer it.
--
-- History is append-only, so the existing instruments are filled with new versions, not
-- updated: the current version of each, copied, with the type that market/instruments.py
-- infer_instrument_type gives its code and name (tests/store/test_instrument_types.py
-- holds this SQL to that function on every NSE code and name):
--   a '^' prefix: INDEX; a '-P<digits>' suffix: PREFERENCE (KPLC-P4, KPLC-P7);
--   the word ETF or REIT in the name, or the code GLD or FAHR: FUND; otherwise ORDINARY.
ALTER TABLE instruments ADD COLUMN instrument_type TEXT CHECK (
    instrument_type IN ('ORDINARY', 'PREFERENCE', 'FUND', 'DEBT', 'RIGHTS', 'LOCKED_IN', 'INDEX', 'UNKNOWN')
);

INSERT INTO instruments (symbol, name, board, sector, currency, listed_on, delisted_on, source, instrument_type)
SELECT symbol, name, board, sector, currency, listed_on, delisted_on, source,
       CASE
           WHEN symbol LIKE '^%' THEN 'INDEX'
           WHEN upper(symbol) ~ '-P[0-9]+$' THEN 'PREFERENCE'
           WHEN upper(name) ~ '(^|[^A-Z0-9_])(ETF|REIT)([^A-Z0-9_]|$)' THEN 'FUND'
           WHEN upper(symbol) IN ('GLD', 'FAHR') THEN 'FUND'
           ELSE 'ORDINARY'
       END
FROM (
    SELECT i.*, row_number() OVER (PARTITION BY symbol ORDER BY recorded_at DESC, id DESC) AS version_rank
    FROM instruments i
) AS latest
WHERE version_rank = 1
ORDER BY symbol;
