"""Table definitions for Python code, mirroring the DDL in `sql/` (the DDL is the truth;
tests/store/test_schema.py fails when the two disagree on any table or column).

Every table is a history table: `id` and `recorded_at` are added to each, and
`table.info["key"]` names the natural key whose latest row is the current state (see
store/history.py).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, Date, Double, Integer, MetaData, Table, Text

from store.types import JSONDocument, Money, UTCDateTime

metadata = MetaData()


# Where a row came from, not what it says (store/history.py `append_history`): a row's
# source and the delivery that carried it. The same values delivered again by another
# source or delivery (the scraper after a backfill of the same day, an import of what T0
# stored) are the same content, and the version that holds them keeps the source and the
# delivery that carried them first.
PROVENANCE = {"provenance": True}


def history_table(name: str, key: tuple[str, ...], *columns: Column) -> Table:
    table = Table(
        name,
        metadata,
        Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
        *columns,
        Column("recorded_at", UTCDateTime(), nullable=False),
        info={"key": key},
    )
    missing = [k for k in key if k not in table.c]
    if missing:
        raise ValueError(f"natural key of {name} names unknown columns {missing}")
    return table


instruments = history_table(
    "instruments",
    ("symbol",),
    Column("symbol", Text(), nullable=False),
    Column("name", Text(), nullable=False),
    Column("board", Text(), nullable=False),
    Column("sector", Text()),
    Column("currency", Text(), nullable=False, default="JMD"),
    Column("listed_on", Date()),
    Column("delisted_on", Date()),
    Column("source", Text(), nullable=False, info=PROVENANCE),
    # Since 0018: the kind of security (market/instruments.py InstrumentType). A writer that
    # does not give it keeps the current version's (store/history.py, "kept_when_absent"):
    # the securities page carries no type, and T0 must not erase what an import stated.
    Column("instrument_type", Text(), info={"kept_when_absent": True}),
)

deliveries = history_table(
    "deliveries",
    ("trading_date",),
    Column("trading_date", Date(), nullable=False),
    Column("status", Text(), nullable=False),
    Column("source", Text(), nullable=False),
    Column("checksum", Text(), nullable=False),
    Column("row_count", Integer(), nullable=False),
    Column("warning_count", Integer(), nullable=False, default=0),
    Column("snapshot_path", Text()),
    Column("manifest", JSONDocument, nullable=False),
)

eod_prices = history_table(
    "eod_prices",
    ("symbol", "trading_date"),
    Column("symbol", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("open", Double()),
    Column("high", Double()),
    Column("low", Double()),
    Column("close", Double(), nullable=False),
    Column("prev_close", Double()),
    Column("volume", BigInteger(), nullable=False, default=0),
    Column("trades", Integer()),
    Column("value_traded", Double()),
    Column("bid", Double()),
    Column("ask", Double()),
    Column("halted", Boolean(), nullable=False, default=False),
    Column("delivery_id", BigInteger(), info=PROVENANCE),
    Column("source", Text(), nullable=False, info=PROVENANCE),
)

# The read model of daily bars with their indicators (sql/*/0011, views/bars.py): built
# when prices change, read by the market endpoints and GraphQL instead of per request.
daily_bars = history_table(
    "daily_bars",
    ("symbol", "trading_date"),
    Column("symbol", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("price_id", BigInteger(), nullable=False),
    Column("open", Double()),
    Column("high", Double()),
    Column("low", Double()),
    Column("close", Double(), nullable=False),
    Column("volume", BigInteger(), nullable=False, default=0),
    Column("bid", Double()),
    Column("ask", Double()),
    *[
        Column(name, Double())
        for name in (
            "rsi_14",
            "bollinger_pct_b",
            "bollinger_bandwidth",
            "momentum_5",
            "momentum_20",
            "volatility_20",
            "volume_ratio_20",
            "spread_pct",
        )
    ],
)

fundamentals = history_table(
    "fundamentals",
    ("symbol", "report_date"),
    Column("symbol", Text(), nullable=False),
    Column("report_date", Date(), nullable=False),
    Column("period_end", Date()),
    Column("eps", Double()),
    Column("book_value_per_share", Double()),
    Column("dividend_yield", Double()),  # percent, as the exchange's "Dividend Yield %" column reports it
    Column("shares_outstanding", BigInteger()),
    Column("market_cap", Double()),
    Column("source", Text(), nullable=False, info=PROVENANCE),
)

corporate_actions = history_table(
    "corporate_actions",
    ("symbol", "action_date", "kind"),
    Column("symbol", Text(), nullable=False),
    Column("action_date", Date(), nullable=False),
    Column("kind", Text(), nullable=False),
    Column("amount", Double()),
    Column("detail", JSONDocument, nullable=False, default=dict),
    Column("source", Text(), nullable=False, info=PROVENANCE),
)

news_items = history_table(
    "news_items",
    ("content_hash",),
    Column("content_hash", Text(), nullable=False),
    Column("link", Text()),
    Column("title", Text(), nullable=False),
    Column("summary", Text()),
    Column("feed_url", Text(), nullable=False),
    Column("published_at", UTCDateTime()),
    Column("guid", Text()),  # the feed's id of the item (RSS guid, Atom id), where it gives one
)

disclosures = history_table(
    "disclosures",
    ("url",),
    Column("url", Text(), nullable=False),
    Column("title", Text()),
    Column("kind", Text()),
    Column("published_at", UTCDateTime()),
    Column("file_path", Text()),
    Column("file_sha256", Text()),
    Column("page_count", Integer()),
    Column("body", Text()),
    Column("status", Text(), nullable=False),
    Column("failure_reason", Text()),
)

# the addresses a stored disclosure was also found at (the same file: its `file_sha256`), so
# a later run does not download it again (ingest/text_sources.py)
disclosure_addresses = history_table(
    "disclosure_addresses",
    ("url",),
    Column("url", Text(), nullable=False),
    Column("file_sha256", Text(), nullable=False),
)

research_notes = history_table(  # one note per client and content (issue 18: notes never cross clients)
    "research_notes",
    ("client_id", "content_sha256"),
    Column("content_sha256", Text(), nullable=False),
    Column("client_id", Text()),
    Column("filename", Text()),
    Column("media_type", Text(), nullable=False),
    Column("body", Text(), nullable=False),
    Column("summary", JSONDocument, nullable=False, default=dict),
)

document_mentions = history_table(
    "document_mentions",
    ("doc_kind", "doc_id", "symbol"),
    Column("doc_kind", Text(), nullable=False),
    Column("doc_id", BigInteger(), nullable=False),
    Column("symbol", Text(), nullable=False),
    Column("matched_by", Text(), nullable=False),
)

sentiment_scores = history_table(
    "sentiment_scores",
    ("doc_kind", "doc_id", "scorer"),
    Column("doc_kind", Text(), nullable=False),
    Column("doc_id", BigInteger(), nullable=False),
    Column("scorer", Text(), nullable=False),
    Column("score", Double(), nullable=False),
    Column("detail", JSONDocument, nullable=False, default=dict),
)

sentiment_composites = history_table(
    "sentiment_composites",
    ("symbol", "trading_date", "method"),
    Column("symbol", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("method", Text(), nullable=False),
    Column("score", Double(), nullable=False),
    Column("item_count", Integer(), nullable=False),
    Column("inputs", JSONDocument, nullable=False, default=list),
)

features = history_table(
    "features",
    ("symbol", "trading_date", "feature_set"),
    Column("symbol", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("feature_set", Text(), nullable=False),
    Column("feature_values", JSONDocument, nullable=False),
)

layer1_forecasts = history_table(
    "layer1_forecasts",
    ("symbol", "trading_date", "model_id", "horizon_days"),
    Column("symbol", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("model_id", Text(), nullable=False),
    Column("horizon_days", Integer(), nullable=False),
    Column("backend", Text(), nullable=False),
    Column("p_up", Double(), nullable=False),
    Column("quantiles", JSONDocument, nullable=False, default=dict),
)

model_runs = history_table(
    "model_runs",
    ("model_id",),
    Column("model_id", Text(), nullable=False),
    Column("kind", Text(), nullable=False),
    Column("parent_model_id", Text()),
    Column("train_start", Date()),
    Column("train_end", Date()),
    Column("horizon_days", Integer(), nullable=False, default=1),
    Column("layer1_backend", Text()),
    Column("warm_start", Boolean(), nullable=False, default=False),
    Column("training_rows", Integer()),
    Column("feature_names", JSONDocument, nullable=False, default=list),
    Column("params", JSONDocument, nullable=False, default=dict),
    Column("artifact_path", Text()),
)

model_metrics = history_table(
    "model_metrics",
    ("model_id", "scope", "metric"),
    Column("model_id", Text(), nullable=False),
    Column("scope", Text(), nullable=False),
    Column("metric", Text(), nullable=False),
    Column("value", Double()),
    Column("base_rate", Double()),
    Column("sample_size", Integer()),
    Column("detail", JSONDocument, nullable=False, default=dict),
)


def _prediction_columns() -> list[Column]:
    return [
        Column("symbol", Text(), nullable=False),
        Column("trading_date", Date(), nullable=False),
        Column("model_id", Text(), nullable=False),
        Column("horizon_days", Integer(), nullable=False),
        Column("predicted_return", Double()),
        Column("p_up", Double()),
        Column("score", Double()),
        Column("action", Text()),
        Column("weight", Double()),
        Column("tercile", Text()),
        Column("layer1_p_up", Double()),
        Column("layer1_backend", Text()),
        # Since 0013: the classifier's raw score (what later calibrations are fitted on), the
        # expected return (what the Action was decided on), the calibrated 3-class prediction
        # and the calibration window's size (0: uncalibrated).
        Column("raw_score", Double()),
        Column("expected_return", Double()),
        Column("predicted_class", Integer()),
        Column("calibration_rows", Integer()),
        # Since 0014: what the decision weighed (models/decisions.py).
        Column("held_edge", Double()),
        Column("round_trip_cost", Double()),
        Column("decision_reason", Text()),
        # Since 0015: the three largest contributions to the raw score and the base value
        # (models/reasons.py).
        Column("reasons", JSONDocument),
    ]


# The live record: what T1 predicts each day.
predictions = history_table("predictions", ("symbol", "trading_date", "model_id"), *_prediction_columns())

# The validation record: the walk-forward's out-of-sample predictions over the history
# before the first live day (models/validation.py), never mixed with the live record.
validation_predictions = history_table(
    "validation_predictions", ("symbol", "trading_date", "model_id"), *_prediction_columns()
)

clients = history_table(
    "clients",
    ("client_id",),
    Column("client_id", Text(), nullable=False),
    Column("name", Text(), nullable=False),
    Column("tier", Text(), nullable=False),
)

api_keys = history_table(
    "api_keys",
    ("key_id",),
    Column("key_id", Text(), nullable=False, unique=True),
    Column("client_id", Text(), nullable=False),
    Column("key_hash", Text(), nullable=False, unique=True),
    Column("tier", Text(), nullable=False),
    # Since 0024: the fingerprint of the pepper the key was hashed under (desk/keys.py
    # `pepper_fingerprint`); NULL on keys issued before it.
    Column("pepper_fingerprint", Text()),
)

# Since 0025: the pepper a key issued before 0024 was seen to verify under (desk/keys.py
# `confirm_pepper`), so the start-up check counts it too.
api_key_peppers = history_table(
    "api_key_peppers",
    ("key_id",),
    Column("key_id", Text(), nullable=False),
    Column("pepper_fingerprint", Text(), nullable=False),
)

api_key_events = history_table(
    "api_key_events",
    ("key_id", "event", "effective_at"),
    Column("key_id", Text(), nullable=False),
    Column("event", Text(), nullable=False),
    Column("detail", JSONDocument, nullable=False, default=dict),
    Column("effective_at", UTCDateTime(), nullable=False),
)

portfolios = history_table(
    "portfolios",
    ("portfolio_id",),
    Column("portfolio_id", Text(), nullable=False),
    Column("kind", Text(), nullable=False),
    Column("client_id", Text()),
    Column("base_currency", Text(), nullable=False, default="JMD"),
)

trades = history_table(
    "trades",
    ("trade_id",),
    Column("trade_id", Text(), nullable=False, unique=True),
    Column("portfolio_id", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("executed_at", UTCDateTime(), nullable=False),
    Column("symbol", Text(), nullable=False),
    Column("side", Text(), nullable=False),
    Column("quantity", BigInteger(), nullable=False),
    Column("price", Money(), nullable=False),
    Column("fees", Money(), nullable=False, default=0),
    Column("origin", Text(), nullable=False),
    Column("rationale", JSONDocument, nullable=False, default=dict),
    Column("idempotency_key", Text()),
    # Since 0019: what the fill paid to the spread and to the impact, in money, beside `fees`
    # (market/costs.py CostBreakdown); 0 for a trade the cost model did not fill.
    Column("spread_cost", Money(), nullable=False, default=0),
    Column("impact_cost", Money(), nullable=False, default=0),
)

cash_entries = history_table(
    "cash_entries",
    ("entry_id",),
    Column("entry_id", Text(), nullable=False, unique=True),
    Column("portfolio_id", Text(), nullable=False),
    Column("amount", Money(), nullable=False),
    Column("kind", Text(), nullable=False),
    Column("trade_id", Text()),
    Column("note", Text()),
    Column("effective_at", UTCDateTime(), nullable=False),
)

suggestions = history_table(
    "suggestions",
    ("suggestion_id",),
    Column("suggestion_id", Text(), nullable=False, unique=True),
    Column("portfolio_id", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("symbol", Text(), nullable=False),
    Column("side", Text(), nullable=False),
    Column("quantity", BigInteger(), nullable=False),
    Column("limit_price", Money(), nullable=False),
    Column("reason", JSONDocument, nullable=False, default=dict),
    Column("expires_at", UTCDateTime(), nullable=False),
    Column("fees", Money()),  # 0021: what the suggestion shows and its confirmation charges
)

suggestion_events = history_table(
    "suggestion_events",
    ("suggestion_id", "state"),
    Column("suggestion_id", Text(), nullable=False),
    Column("state", Text(), nullable=False),
    Column("trade_id", Text()),
    Column("detail", JSONDocument, nullable=False, default=dict),
    Column("portfolio_id", Text()),  # 0023: the suggestion's, so a portfolio's newest event is one lookup
)

statement_imports = history_table(
    "statement_imports",
    ("portfolio_id", "file_sha256"),
    Column("portfolio_id", Text(), nullable=False),
    Column("file_sha256", Text(), nullable=False),
    Column("layout", Text()),
    Column("status", Text(), nullable=False),
    Column("reason", Text()),
    Column("parsed", JSONDocument, nullable=False, default=dict),
    Column("changes", JSONDocument, nullable=False, default=list),
)

idempotency_records = history_table(
    "idempotency_records",
    ("scope", "idempotency_key"),
    Column("scope", Text(), nullable=False),
    Column("idempotency_key", Text(), nullable=False),
    Column("request_hash", Text(), nullable=False),
    Column("status_code", Integer(), nullable=False),
    Column("response", JSONDocument, nullable=False),
)

macro_observations = history_table(
    "macro_observations",
    ("source", "indicator_code", "period", "release_date"),
    Column("source", Text(), nullable=False),
    Column("category", Text(), nullable=False),
    Column("indicator_code", Text(), nullable=False),
    Column("period", Text(), nullable=False),
    Column("frequency", Text(), nullable=False),
    Column("value", Double(), nullable=False),
    Column("unit", Text(), nullable=False),
    Column("currency", Text()),
    Column("release_date", Date(), nullable=False),
)

macro_parameters = history_table(
    "macro_parameters",
    ("week_start", "parameter"),
    Column("week_start", Date(), nullable=False),
    Column("parameter", Text(), nullable=False),
    Column("value", Double(), nullable=False),
    Column("reading", Text(), nullable=False),
    Column("inputs", JSONDocument, nullable=False, default=dict),
    Column("model_version", Text(), nullable=False),
)

analyses = history_table(
    "analyses",
    ("trading_date", "writer"),
    Column("trading_date", Date(), nullable=False),
    Column("writer", Text(), nullable=False),
    Column("body", Text(), nullable=False),
    Column("facts", JSONDocument, nullable=False, default=dict),
    Column("fallback_reason", Text()),
)

notifications = history_table(
    "notifications",
    ("notification_id",),
    Column("notification_id", Text(), nullable=False, unique=True),
    Column("trading_date", Date()),
    Column("kind", Text(), nullable=False),
    Column("severity", Text(), nullable=False),
    Column("payload", JSONDocument, nullable=False),
)

notification_attempts = history_table(
    "notification_attempts",
    ("notification_id", "attempt"),
    Column("notification_id", Text(), nullable=False),
    Column("attempt", Integer(), nullable=False),
    Column("channel", Text(), nullable=False),
    Column("status", Text(), nullable=False),
    Column("response_code", Integer()),
    Column("error", Text()),
)

stage_runs = history_table(
    "stage_runs",
    ("run_id", "event"),
    Column("run_id", Text(), nullable=False),
    Column("stage", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("event", Text(), nullable=False),
    Column("trigger", Text(), nullable=False),
    Column("detail", JSONDocument, nullable=False, default=dict),
)

health_checks = history_table(
    "health_checks",
    ("trading_date", "check_name"),
    Column("trading_date", Date(), nullable=False),
    Column("check_name", Text(), nullable=False),
    Column("ok", Boolean(), nullable=False),
    Column("detail", JSONDocument, nullable=False, default=dict),
)

# The model monitor (sql/*/0016, models/monitor.py): one row per trading day and check.
monitor_checks = history_table(
    "monitor_checks",
    ("trading_date", "check_name"),
    Column("trading_date", Date(), nullable=False),
    Column("check_name", Text(), nullable=False),
    Column("kind", Text(), nullable=False),
    Column("level", Text(), nullable=False),
    Column("state", Text(), nullable=False),
    Column("figure", Double()),
    Column("watch_threshold", Double()),
    Column("alert_threshold", Double()),
    Column("since", Date()),
    Column("figures", JSONDocument, nullable=False, default=dict),
)

# The market's own indices (sql/*/0017): the levels the exchange's page or a replayed
# file publishes, the track record's market benchmark (views/track_record.py).
index_levels = history_table(
    "index_levels",
    ("symbol", "trading_date"),
    Column("symbol", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("level", Double(), nullable=False),
    Column("source", Text(), nullable=False, info=PROVENANCE),
    Column("delivery_id", BigInteger(), info=PROVENANCE),
)

# The names and days an import could not read a row of (sql/*/0028): no import gives the
# name a no-trade row that day (ingest/importers/untraded.py `unread_rows`).
unread_rows = history_table(
    "unread_rows",
    ("symbol", "trading_date"),
    Column("symbol", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("source", Text(), nullable=False, info=PROVENANCE),
)

ingest_failures = history_table(
    "ingest_failures",
    ("source_kind", "source_url", "trading_date", "reason"),
    Column("source_kind", Text(), nullable=False),
    Column("source_url", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("reason", Text(), nullable=False),
)

portfolio_days = history_table(
    "portfolio_days",
    ("portfolio_id", "trading_date"),
    Column("portfolio_id", Text(), nullable=False),
    Column("trading_date", Date(), nullable=False),
    Column("model_id", Text()),
    Column("cash", Money(), nullable=False),
    Column("market_value", Money(), nullable=False),
    Column("liquid_equity", Money(), nullable=False),
    Column("summary", JSONDocument, nullable=False, default=dict),
)


schema_migrations = Table(
    "schema_migrations",
    metadata,
    Column("version", Integer(), primary_key=True, autoincrement=False),
    Column("name", Text(), nullable=False),
    Column("checksum", Text(), nullable=False),
    Column("recorded_at", UTCDateTime(), nullable=False),
    info={"key": ("version",)},
)

# Operational state, not history: exempt from the append-only rule (see sql/*/0006).
rate_limit_counters = Table(
    "rate_limit_counters",
    metadata,
    Column("key_id", Text(), primary_key=True),
    Column("window_start", BigInteger(), primary_key=True, autoincrement=False),
    Column("hits", Integer(), nullable=False),
    info={"operational": True},
)

OPERATIONAL_TABLES: dict[str, Table] = {n: t for n, t in metadata.tables.items() if t.info.get("operational")}
HISTORY_TABLES: dict[str, Table] = {n: t for n, t in metadata.tables.items() if not t.info.get("operational")}
