"""What each kept read depends on, by name: the newest ids of the append-only rows a read
model is built from (`store.history.newest_ids`). The desk's reads carry these versions
(desk/cache.py `Versioned`), so a transport keeps what it renders per (read, version)
without naming a table, and a read that comes to depend on another table changes here
once for REST, GraphQL and the CLI alike."""

from __future__ import annotations

from sqlalchemy import Connection

from portfolio.ledger import AI_PORTFOLIO
from store import tables
from store.history import Part, newest_ids
from views.book_record import book_parts
from views.breadth import data_version as breadth_version
from views.null_record import NULL_PARTS

# The predictions served: the live record, and before its first day the validation record
# (views/instrument.py `scoring_record`, views/market.py `day_scores`). Every read that serves
# a prediction is kept for as long as neither moves.
SERVED_PREDICTIONS = (tables.predictions, tables.validation_predictions)
AI_DAYS = (tables.portfolio_days, "portfolio_id", AI_PORTFOLIO)  # the AI summary reads its executed days too
_AI_TRADES = (tables.trades, "portfolio_id", AI_PORTFOLIO)
_AI_CASH = (tables.cash_entries, "portfolio_id", AI_PORTFOLIO)
_PERFORMANCE = (
    tables.model_metrics,
    tables.model_runs,
    *SERVED_PREDICTIONS,
    tables.monitor_checks,
)


def trades(conn: Connection, portfolio_id: str) -> tuple:
    """A portfolio's trade list."""
    return newest_ids(conn, (tables.trades, "portfolio_id", portfolio_id))


def cash(conn: Connection, portfolio_id: str) -> tuple:
    """A portfolio's cash movements."""
    return newest_ids(conn, (tables.cash_entries, "portfolio_id", portfolio_id))


def track_record(conn: Connection, portfolio_id: str) -> tuple:
    """A client's or the house portfolio's track record: its ledger, every close, the
    corporate actions (a split changes its holdings) and its benchmarks' index levels and
    fundamentals, as its read model names them."""
    return newest_ids(conn, *book_parts(portfolio_id))


def suggestions(conn: Connection, portfolio_id: str) -> tuple:
    """A portfolio's suggestions and their confirmations, rejections and expiries: its own
    events (their `portfolio_id`, migration 0023), whose writers all hold its lock, so they
    commit their ids in order (every portfolio's events, written under different locks, did
    not: a decision committing after another portfolio's later id was missed)."""
    return newest_ids(
        conn,
        (tables.suggestions, "portfolio_id", portfolio_id),
        (tables.suggestion_events, "portfolio_id", portfolio_id),
    )


def ai_record(conn: Connection) -> tuple:
    """The AI portfolio's executed days and trades (its history and track record)."""
    return newest_ids(conn, AI_DAYS, _AI_TRADES)


def ai_track_record(conn: Connection) -> tuple:
    """The AI portfolio's track record: its trades, its cash entries (its opening deposit is
    what its return is measured from: portfolio/ai.py `starting_cash`, never the setting,
    which no version could name), and what its statistics, benchmarks and null books are
    read from (its executed days, the closes, both records' predictions, the corporate
    actions and instruments: views/null_record.py NULL_PARTS; the index levels and the
    fundamentals of the index benchmark)."""
    return newest_ids(conn, _AI_TRADES, _AI_CASH, *NULL_PARTS, tables.index_levels, tables.fundamentals)


def performance(conn: Connection) -> tuple:
    """The model's records, runs, predictions and monitor checks."""
    return newest_ids(conn, *_PERFORMANCE)


def latest_market(conn: Connection) -> tuple:
    """The latest market: closes, the split notices (the change and RSI read the bars on the
    day's share count), the listings (only the names listed on the day are quoted) and both
    records' predictions (a day before the first live day is answered from the validation
    record)."""
    return newest_ids(conn, tables.eod_prices, tables.corporate_actions, tables.instruments, *SERVED_PREDICTIONS)


def predictions(conn: Connection) -> tuple:
    """The served predictions, both records' (their reasons move with them)."""
    return newest_ids(conn, *SERVED_PREDICTIONS)


def macro(conn: Connection) -> tuple:
    """The macro observations."""
    return newest_ids(conn, tables.macro_observations)


def valuation(conn: Connection, portfolio_id: str, *more: Part) -> tuple:
    """What a portfolio's valuation is built from, beside the valuation day and session the
    desk adds (desk/portfolio_reads.py): the newest price id, the portfolio's newest trade
    and cash entry ids (its writers hold its lock, so its ids commit in order) and the
    newest corporate action id (a split changes its holdings), plus any `more` parts."""
    return newest_ids(
        conn,
        tables.eod_prices,
        (tables.trades, "portfolio_id", portfolio_id),
        (tables.cash_entries, "portfolio_id", portfolio_id),
        tables.corporate_actions,
        *more,
    )


def breadth(conn: Connection) -> tuple:
    """A day's breadth: the closes, the listings and the fundamentals (views/breadth.py
    `data_version`)."""
    return breadth_version(conn)


_BARS = (tables.eod_prices, tables.daily_bars, tables.instruments, tables.corporate_actions)


def bars(conn: Connection) -> tuple:
    """The stored daily bars: the newest price, bar, listing and corporate action (a new
    price or split notice moves it, and so does the refresh that builds bars from them; the
    bars' read finds what they were built from itself, views/bars.py `watermarks`). One
    statement on the driver, which a key check rides (`newest_ids`)."""
    return newest_ids(conn, *_BARS)


def symbol_statistics(conn: Connection) -> tuple:
    """A symbol's statistics: the stored bars (`bars`) and the live predictions (its
    reasons), in one statement."""
    return newest_ids(conn, *_BARS, tables.predictions)


# What a market query's fields read (GraphQL's `instruments` and `instrument`: listings,
# quotes, predictions, fundamentals, news, sentiment, liquidity and the stored daily bars).
INSTRUMENT_READS = (
    tables.instruments,
    tables.eod_prices,
    *SERVED_PREDICTIONS,
    tables.daily_bars,
    tables.corporate_actions,
    tables.fundamentals,
    tables.news_items,
    tables.disclosures,
    tables.document_mentions,
    tables.sentiment_scores,
    tables.sentiment_composites,
)


def instrument_reads(conn: Connection) -> tuple:
    """Everything an instrument's fields read (INSTRUMENT_READS): what GraphQL keeps a whole
    market query's result for (api/graphql/cache.py)."""
    return newest_ids(conn, *INSTRUMENT_READS)
