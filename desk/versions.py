"""What each cached read depends on, by name: the newest ids of the append-only rows a
body is built from (`store.history.newest_ids`). The API keeps rendered bodies per
(key, version) (api/services.py `Services.cached`); a transport names the read it caches
here instead of reaching into the store, and a read that comes to depend on another table
changes here once for REST and GraphQL alike."""

from __future__ import annotations

from sqlalchemy import Connection

from portfolio.ledger import AI_PORTFOLIO
from store import tables
from store.history import newest_ids
from views.book_record import book_parts
from views.null_record import NULL_PARTS

_AI_DAYS = (tables.portfolio_days, "portfolio_id", AI_PORTFOLIO)
_AI_TRADES = (tables.trades, "portfolio_id", AI_PORTFOLIO)
_PERFORMANCE = (
    tables.model_metrics,
    tables.model_runs,
    tables.predictions,
    tables.validation_predictions,
    tables.monitor_checks,
)


def trades(conn: Connection, portfolio_id: str) -> tuple:
    """A portfolio's trade list."""
    return newest_ids(conn, (tables.trades, "portfolio_id", portfolio_id))


def cash(conn: Connection, portfolio_id: str) -> tuple:
    """A portfolio's cash movements."""
    return newest_ids(conn, (tables.cash_entries, "portfolio_id", portfolio_id))


def track_record(conn: Connection, portfolio_id: str) -> tuple:
    """A client's or the house portfolio's track record: its ledger, every close and the
    corporate actions (a split changes its holdings), as its read model names them."""
    return newest_ids(conn, *book_parts(portfolio_id))


def suggestions(conn: Connection, portfolio_id: str) -> tuple:
    """A portfolio's suggestions and their confirmations, rejections and expiries."""
    return newest_ids(conn, (tables.suggestions, "portfolio_id", portfolio_id), tables.suggestion_events)


def ai_record(conn: Connection) -> tuple:
    """The AI portfolio's executed days and trades (its history and track record)."""
    return newest_ids(conn, _AI_DAYS, _AI_TRADES)


def ai_track_record(conn: Connection) -> tuple:
    """The AI portfolio's track record: its trades, and what its statistics, benchmarks and
    null books are read from (its executed days, the closes, both records' predictions,
    the corporate actions and instruments: views/null_record.py NULL_PARTS; the index
    levels and the fundamentals of the index benchmark)."""
    return newest_ids(conn, _AI_TRADES, *NULL_PARTS, tables.index_levels, tables.fundamentals)


def ai_days() -> tuple:
    """The part naming the AI portfolio's executed days, for `Services.valuation_version`."""
    return _AI_DAYS


def performance(conn: Connection) -> tuple:
    """The model's records, runs, predictions and monitor checks."""
    return newest_ids(conn, *_PERFORMANCE)


def latest_market(conn: Connection) -> tuple:
    """The latest market: closes and both records' predictions (a day before the first
    live day is answered from the validation record)."""
    return newest_ids(conn, tables.eod_prices, tables.predictions, tables.validation_predictions)


def predictions(conn: Connection) -> tuple:
    """The live predictions (their reasons move with them)."""
    return newest_ids(conn, tables.predictions)


def macro(conn: Connection) -> tuple:
    """The macro observations."""
    return newest_ids(conn, tables.macro_observations)
