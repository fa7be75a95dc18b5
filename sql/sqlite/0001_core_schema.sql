-- 0001 core schema (SQLite twin of sql/postgres/0001_core_schema.sql): same tables and
-- columns. Types: timestamps are TEXT in UTC ('YYYY-MM-DD HH:MM:SS.ffffff'), dates TEXT
-- ('YYYY-MM-DD'), JSON TEXT, money TEXT holding an exact decimal (the store's Money type).
-- tests/store/test_schema.py keeps the twins in step.
--
-- Every table is history: rows are only ever appended (0002 makes the database enforce
-- it). A change of state is a new row with a later recorded_at; "current" is the latest
-- row per natural key, and "as known at T" the latest row recorded at or before T. The
-- natural key of each table is written above it and declared again in store/tables.py.
-- Symbols are plain text keys: an instrument has many versions, so no single row to
-- reference.

-- key: symbol
CREATE TABLE instruments (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol      TEXT NOT NULL,
    name        TEXT NOT NULL,
    board       TEXT NOT NULL CHECK (board IN ('MAIN', 'JUNIOR', 'OTHER')),
    sector      TEXT,
    currency    TEXT NOT NULL DEFAULT 'JMD',
    listed_on   TEXT,
    delisted_on TEXT,
    source      TEXT NOT NULL,
    recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_instruments_key ON instruments (symbol, recorded_at);

-- key: trading_date (one manifest per delivered version of a day)
CREATE TABLE deliveries (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    trading_date   TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('COMPLETE', 'FAILED')),
    source         TEXT NOT NULL,
    checksum       TEXT NOT NULL,
    row_count      INTEGER NOT NULL CHECK (row_count >= 0),
    warning_count  INTEGER NOT NULL DEFAULT 0 CHECK (warning_count >= 0),
    snapshot_path  TEXT,
    manifest       TEXT NOT NULL,
    recorded_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_deliveries_key ON deliveries (trading_date, recorded_at);

-- key: symbol, trading_date
CREATE TABLE eod_prices (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol        TEXT NOT NULL,
    trading_date  TEXT NOT NULL,
    open          REAL,
    high          REAL,
    low           REAL,
    close         REAL NOT NULL CHECK (close > 0),
    prev_close    REAL,
    volume        BIGINT NOT NULL DEFAULT 0 CHECK (volume >= 0),
    trades        INTEGER CHECK (trades >= 0),
    value_traded  REAL CHECK (value_traded >= 0),
    bid           REAL CHECK (bid >= 0),
    ask           REAL CHECK (ask >= 0),
    halted        BOOLEAN NOT NULL DEFAULT FALSE,
    delivery_id   BIGINT REFERENCES deliveries (id),
    source        TEXT NOT NULL,
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    CHECK (bid IS NULL OR ask IS NULL OR bid <= ask)
);
CREATE INDEX ix_eod_prices_key ON eod_prices (symbol, trading_date, recorded_at);
CREATE INDEX ix_eod_prices_date ON eod_prices (trading_date);

-- key: symbol, report_date
CREATE TABLE fundamentals (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol               TEXT NOT NULL,
    report_date          TEXT NOT NULL,
    period_end           TEXT,
    eps                  REAL,
    book_value_per_share REAL,
    dividend_yield       REAL,
    shares_outstanding   BIGINT CHECK (shares_outstanding >= 0),
    market_cap           REAL,
    source               TEXT NOT NULL,
    recorded_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_fundamentals_key ON fundamentals (symbol, report_date, recorded_at);

-- key: symbol, action_date, kind
CREATE TABLE corporate_actions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol       TEXT NOT NULL,
    action_date  TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('DIVIDEND', 'SPLIT', 'HALT', 'RESUME', 'LISTING', 'DELISTING')),
    amount       REAL,
    detail       TEXT NOT NULL DEFAULT '{}',
    source       TEXT NOT NULL,
    recorded_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_corporate_actions_key ON corporate_actions (symbol, action_date, kind, recorded_at);

-- key: content_hash
CREATE TABLE news_items (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    content_hash  TEXT NOT NULL,
    link          TEXT,
    title         TEXT NOT NULL,
    summary       TEXT,
    feed_url      TEXT NOT NULL,
    published_at  TEXT,
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_news_items_key ON news_items (content_hash, recorded_at);
CREATE INDEX ix_news_items_link ON news_items (link);

-- key: url (a failed download or parse is a row too, with the reason)
CREATE TABLE disclosures (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    url             TEXT NOT NULL,
    title           TEXT,
    kind            TEXT CHECK (kind IN ('RESULTS', 'DIVIDEND', 'DIRECTOR_TRADING', 'AGM', 'OTHER')),
    published_at    TEXT,
    file_path       TEXT,
    file_sha256     TEXT,
    page_count      INTEGER CHECK (page_count >= 0),
    body            TEXT,
    status          TEXT NOT NULL CHECK (status IN ('OK', 'FAILED')),
    failure_reason  TEXT,
    recorded_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_disclosures_key ON disclosures (url, recorded_at);

-- key: content_sha256
CREATE TABLE research_notes (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    content_sha256  TEXT NOT NULL,
    client_id       TEXT,
    filename        TEXT,
    media_type      TEXT NOT NULL,
    body            TEXT NOT NULL,
    summary         TEXT NOT NULL DEFAULT '{}',
    recorded_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_research_notes_key ON research_notes (content_sha256, recorded_at);

-- key: doc_kind, doc_id, symbol  (which instruments a news item, disclosure or note names)
CREATE TABLE document_mentions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_kind     TEXT NOT NULL CHECK (doc_kind IN ('NEWS', 'DISCLOSURE', 'RESEARCH')),
    doc_id       BIGINT NOT NULL,
    symbol       TEXT NOT NULL,
    matched_by   TEXT NOT NULL,
    recorded_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_document_mentions_key ON document_mentions (doc_kind, doc_id, symbol, recorded_at);
CREATE INDEX ix_document_mentions_symbol ON document_mentions (symbol);

-- key: doc_kind, doc_id, scorer
CREATE TABLE sentiment_scores (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_kind     TEXT NOT NULL CHECK (doc_kind IN ('NEWS', 'DISCLOSURE', 'RESEARCH')),
    doc_id       BIGINT NOT NULL,
    scorer       TEXT NOT NULL,
    score        REAL NOT NULL CHECK (score BETWEEN -1 AND 1),
    detail       TEXT NOT NULL DEFAULT '{}',
    recorded_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_sentiment_scores_key ON sentiment_scores (doc_kind, doc_id, scorer, recorded_at);

-- key: symbol, trading_date, method  (symbol '^MARKET' holds the market-wide composite)
CREATE TABLE sentiment_composites (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol        TEXT NOT NULL,
    trading_date  TEXT NOT NULL,
    method        TEXT NOT NULL,
    score         REAL NOT NULL,
    item_count    INTEGER NOT NULL CHECK (item_count >= 0),
    inputs        TEXT NOT NULL DEFAULT '[]',
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_sentiment_composites_key ON sentiment_composites (symbol, trading_date, method, recorded_at);

-- key: symbol, trading_date, feature_set
CREATE TABLE features (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol        TEXT NOT NULL,
    trading_date  TEXT NOT NULL,
    feature_set   TEXT NOT NULL,
    feature_values TEXT NOT NULL,
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_features_key ON features (symbol, trading_date, feature_set, recorded_at);
CREATE INDEX ix_features_date ON features (trading_date);

-- key: symbol, trading_date, model_id, horizon_days  (the layer-1 cache)
CREATE TABLE layer1_forecasts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol        TEXT NOT NULL,
    trading_date  TEXT NOT NULL,
    model_id      TEXT NOT NULL,
    horizon_days  INTEGER NOT NULL CHECK (horizon_days >= 1),
    backend       TEXT NOT NULL,
    p_up          REAL NOT NULL CHECK (p_up BETWEEN 0 AND 1),
    quantiles     TEXT NOT NULL DEFAULT '{}',
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_layer1_forecasts_key ON layer1_forecasts (symbol, trading_date, model_id, horizon_days, recorded_at);

-- key: model_id
CREATE TABLE model_runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    model_id         TEXT NOT NULL,
    kind             TEXT NOT NULL,
    parent_model_id  TEXT,
    train_start      TEXT,
    train_end        TEXT,
    horizon_days     INTEGER NOT NULL DEFAULT 1 CHECK (horizon_days >= 1),
    layer1_backend   TEXT,
    warm_start       BOOLEAN NOT NULL DEFAULT FALSE,
    training_rows    INTEGER CHECK (training_rows >= 0),
    feature_names    TEXT NOT NULL DEFAULT '[]',
    params           TEXT NOT NULL DEFAULT '{}',
    artifact_path    TEXT,
    recorded_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_model_runs_key ON model_runs (model_id, recorded_at);

-- key: model_id, scope, metric  (scope: 'walk_forward', 'day:2026-11-20', ...)
CREATE TABLE model_metrics (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    model_id     TEXT NOT NULL,
    scope        TEXT NOT NULL,
    metric       TEXT NOT NULL,
    value        REAL,
    base_rate    REAL,
    sample_size  INTEGER CHECK (sample_size >= 0),
    detail       TEXT NOT NULL DEFAULT '{}',
    recorded_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_model_metrics_key ON model_metrics (model_id, scope, metric, recorded_at);

-- key: symbol, trading_date, model_id
CREATE TABLE predictions (
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
CREATE INDEX ix_predictions_key ON predictions (symbol, trading_date, model_id, recorded_at);
CREATE INDEX ix_predictions_date ON predictions (trading_date);

-- key: client_id
CREATE TABLE clients (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id    TEXT NOT NULL,
    name         TEXT NOT NULL,
    tier         TEXT NOT NULL CHECK (tier IN ('STANDARD', 'PRO', 'INSTITUTIONAL')),
    recorded_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_clients_key ON clients (client_id, recorded_at);

-- key: key_id  (the secret itself is never stored: key_hash is HMAC-SHA256 with a pepper)
CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    key_id       TEXT NOT NULL UNIQUE,
    client_id    TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,
    tier         TEXT NOT NULL CHECK (tier IN ('STANDARD', 'PRO', 'INSTITUTIONAL')),
    recorded_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

-- key: key_id, event, effective_at  (revocations, rotations, limit and access changes)
CREATE TABLE api_key_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    key_id        TEXT NOT NULL,
    event         TEXT NOT NULL CHECK (event IN ('REVOKED', 'ROTATED', 'RATE_LIMIT_SET', 'MACRO_ACCESS_SET', 'TIER_SET')),
    detail        TEXT NOT NULL DEFAULT '{}',
    effective_at  TEXT NOT NULL,
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_api_key_events_key ON api_key_events (key_id, recorded_at);

-- key: portfolio_id
CREATE TABLE portfolios (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    portfolio_id   TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('AI', 'CLIENT', 'HOUSE')),
    client_id      TEXT,
    base_currency  TEXT NOT NULL DEFAULT 'JMD',
    recorded_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_portfolios_key ON portfolios (portfolio_id, recorded_at);

-- key: trade_id
CREATE TABLE trades (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    trade_id         TEXT NOT NULL UNIQUE,
    portfolio_id     TEXT NOT NULL,
    trading_date     TEXT NOT NULL,
    executed_at      TEXT NOT NULL,
    symbol           TEXT NOT NULL,
    side             TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
    quantity         BIGINT NOT NULL CHECK (quantity > 0),
    price            TEXT NOT NULL CHECK (CAST(price AS REAL) > 0),
    fees             TEXT NOT NULL DEFAULT '0' CHECK (CAST(fees AS REAL) >= 0),
    origin           TEXT NOT NULL CHECK (origin IN ('MANUAL', 'SUGGESTION', 'AI', 'STATEMENT_SYNC')),
    rationale        TEXT NOT NULL DEFAULT '{}',
    idempotency_key  TEXT,
    recorded_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    UNIQUE (portfolio_id, idempotency_key)
);
CREATE INDEX ix_trades_portfolio ON trades (portfolio_id, executed_at);

-- key: entry_id  (cash movements; the balance is their sum)
CREATE TABLE cash_entries (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id      TEXT NOT NULL UNIQUE,
    portfolio_id  TEXT NOT NULL,
    amount        TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('DEPOSIT', 'WITHDRAWAL', 'TRADE', 'FEE', 'DIVIDEND', 'RECONCILIATION')),
    trade_id      TEXT,
    note          TEXT,
    effective_at  TEXT NOT NULL,
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_cash_entries_portfolio ON cash_entries (portfolio_id, effective_at);

-- key: suggestion_id
CREATE TABLE suggestions (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    suggestion_id  TEXT NOT NULL UNIQUE,
    portfolio_id   TEXT NOT NULL,
    trading_date   TEXT NOT NULL,
    symbol         TEXT NOT NULL,
    side           TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
    quantity       BIGINT NOT NULL CHECK (quantity > 0),
    limit_price    TEXT NOT NULL CHECK (CAST(limit_price AS REAL) > 0),
    reason         TEXT NOT NULL DEFAULT '{}',
    expires_at     TEXT NOT NULL,
    recorded_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_suggestions_portfolio ON suggestions (portfolio_id, trading_date);

-- key: suggestion_id, state  (a suggestion reaches each state at most once)
CREATE TABLE suggestion_events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    suggestion_id  TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('PENDING', 'CONFIRMED', 'REJECTED', 'EXPIRED')),
    trade_id       TEXT,
    detail         TEXT NOT NULL DEFAULT '{}',
    recorded_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    UNIQUE (suggestion_id, state)
);

-- key: portfolio_id, file_sha256
CREATE TABLE statement_imports (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    portfolio_id  TEXT NOT NULL,
    file_sha256   TEXT NOT NULL,
    layout        TEXT,
    status        TEXT NOT NULL CHECK (status IN ('SYNCED', 'REJECTED')),
    reason        TEXT,
    parsed        TEXT NOT NULL DEFAULT '{}',
    changes       TEXT NOT NULL DEFAULT '[]',
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_statement_imports_key ON statement_imports (portfolio_id, file_sha256, recorded_at);

-- key: scope, idempotency_key  (replayed responses for retried requests)
CREATE TABLE idempotency_records (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    scope            TEXT NOT NULL,
    idempotency_key  TEXT NOT NULL,
    request_hash     TEXT NOT NULL,
    status_code      INTEGER NOT NULL,
    response         TEXT NOT NULL,
    recorded_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    UNIQUE (scope, idempotency_key)
);

-- key: source, indicator_code, period, release_date  (a revision is a later release)
CREATE TABLE macro_observations (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    source          TEXT NOT NULL,
    category        TEXT NOT NULL,
    indicator_code  TEXT NOT NULL,
    period          TEXT NOT NULL,
    frequency       TEXT NOT NULL CHECK (frequency IN ('D', 'W', 'M', 'Q', 'A')),
    value           REAL NOT NULL,
    unit            TEXT NOT NULL,
    currency        TEXT,
    release_date    TEXT NOT NULL,
    recorded_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_macro_observations_key ON macro_observations (source, indicator_code, period, release_date, recorded_at);

-- key: week_start, parameter
CREATE TABLE macro_parameters (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    week_start     TEXT NOT NULL,
    parameter      TEXT NOT NULL,
    value          REAL NOT NULL,
    reading        TEXT NOT NULL,
    inputs         TEXT NOT NULL DEFAULT '{}',
    model_version  TEXT NOT NULL,
    recorded_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_macro_parameters_key ON macro_parameters (week_start, parameter, recorded_at);

-- key: trading_date, writer
CREATE TABLE analyses (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    trading_date  TEXT NOT NULL,
    writer        TEXT NOT NULL,
    body          TEXT NOT NULL,
    facts         TEXT NOT NULL DEFAULT '{}',
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_analyses_key ON analyses (trading_date, writer, recorded_at);

-- key: notification_id
CREATE TABLE notifications (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    notification_id  TEXT NOT NULL UNIQUE,
    trading_date     TEXT,
    kind             TEXT NOT NULL,
    severity         TEXT NOT NULL CHECK (severity IN ('INFO', 'WARNING', 'CRITICAL')),
    payload          TEXT NOT NULL,
    recorded_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

-- key: notification_id, attempt
CREATE TABLE notification_attempts (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    notification_id  TEXT NOT NULL,
    attempt          INTEGER NOT NULL CHECK (attempt >= 1),
    channel          TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('DELIVERED', 'FAILED')),
    response_code    INTEGER,
    error            TEXT,
    recorded_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    UNIQUE (notification_id, channel, attempt)
);

-- key: run_id, event  (every attempt of every stage: the operators' audit log)
CREATE TABLE stage_runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id         TEXT NOT NULL,
    stage          TEXT NOT NULL,
    trading_date   TEXT NOT NULL,
    event          TEXT NOT NULL CHECK (event IN ('STARTED', 'SUCCEEDED', 'FAILED', 'SKIPPED')),
    trigger        TEXT NOT NULL,
    detail         TEXT NOT NULL DEFAULT '{}',
    recorded_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    UNIQUE (run_id, event)
);
CREATE INDEX ix_stage_runs_stage ON stage_runs (stage, trading_date, recorded_at);

-- key: trading_date, check_name  (what the health stage found)
CREATE TABLE health_checks (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    trading_date  TEXT NOT NULL,
    check_name    TEXT NOT NULL,
    ok            BOOLEAN NOT NULL,
    detail        TEXT NOT NULL DEFAULT '{}',
    recorded_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX ix_health_checks_key ON health_checks (trading_date, check_name, recorded_at);
