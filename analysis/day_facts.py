"""What T1 step 5 writes about and alerts on: the day's facts, read from the store.

- market breadth and the capitalisation-weighted index (views/breadth.py);
- the top signals by Score and the AVOIDs with the lowest Scores (the served predictions),
  each with the date of the HALT notice it is under, if any;
- notable news: the day's items naming a listed instrument (published after the previous
  session's close and by this one's), strongest sentiment first;
- the AI portfolio: its latest executed day before this one (orders, equity) and its
  holdings before this day's execution valued at this day's close. Step 6 executes after
  step 5, so a re-run of step 5 after step 6 sees the same facts (and writes nothing new);
- the model: the one that scored the day, whether it was trained for it (a registered model
  whose first scored day is this one), and its live record as of the day (the metrics
  `t1_predict` computed by it, views/performance.py `performance(as_of=)`), so a re-run of
  an old day after later days writes nothing new;
- alerts: positions newly TRAPPED at this close (no volume, so no exit possible) and a
  retrained model.

Every value is plain JSON (dates as ISO text), so the facts can be hashed and stored.
"""

from __future__ import annotations

from datetime import date
from typing import NotRequired, Required, TypedDict

from sqlalchemy import Connection, func, select

from market.clock import TradingCalendar, session_close_utc
from market.contract import JsonOf
from market.money import Money
from market.plain import JsonValue, to_plain
from market.settings import get_settings
from portfolio import ledger
from portfolio.ai import DayFill, ExecutedDay
from portfolio.delisting import book_view, stored_absences, stored_rule
from portfolio.market import market_days
from portfolio.rails import TRAPPED, exit_state
from store import tables
from store.history import current_rows
from store.splits import stored_splits
from views.breadth import Breadth, breadth_of
from views.instrument import news
from views.market import latest_market, signal_order
from views.performance import Metric, performance

TOP_SIGNALS = 5
NOTABLE_NEWS = 5


class Signal(TypedDict):
    symbol: str
    close: float
    change_pct: float | None
    score: float
    action: str | None
    tercile: str | None
    predicted_return: float | None
    held_edge: NotRequired[float | None]  # the expected excess over the universe (since the analysis quoted it)
    # the date of the HALT notice it is under (its quote's, portfolio.market's rule), None while
    # it trades (since the analysis marked halts)
    halted_since: NotRequired[str | None]


class NotableNews(TypedDict):
    kind: str
    title: str
    sentiment: float | None
    symbols: list[str]


class LastExecuted(TypedDict):
    """The AI portfolio's latest executed day before this one: its equity, cash and fills
    (portfolio/ai.py `DayFill.to_json`)."""

    trading_date: str
    equity: Money
    cash: Money  # decimal text
    orders: list[JsonOf[DayFill]]


class PortfolioFacts(TypedDict):
    last_executed: LastExecuted | None
    positions: int  # held into the day
    trapped: list[str]
    newly_trapped: list[str]


class ModelFacts(TypedDict, total=False):
    """The model that scored the day (None: none did), whether it was trained for it, and
    the metrics of its two records that have a value (the validation record's with its
    period)."""

    model_id: Required[str | None]
    retrained: Required[bool]
    warm_start: bool
    training_rows: int | None
    trained_through: str | None
    layer1_backend: Required[str | None]
    live: Required[dict[str, Metric]]
    validation: Required[dict[str, JsonValue]]


class DayFacts(TypedDict):
    """What the day's analysis is written from and alerts on, as plain JSON (dates as ISO
    text, the breadth's included)."""

    trading_date: str
    breadth: Breadth
    top_signals: list[Signal]
    avoid: list[Signal]
    scored: int
    news: list[NotableNews]
    ai_portfolio: PortfolioFacts
    model: ModelFacts


def day_facts(conn: Connection, calendar: TradingCalendar, day: date) -> DayFacts:
    quotes = latest_market(conn, calendar, day, day)
    scored = sorted(
        ({"symbol": s, **q} for s, q in quotes.items() if q["score"] is not None),
        key=signal_order,
    )
    signal = (
        *("symbol", "close", "change_pct", "score", "action", "tercile"),
        *("predicted_return", "held_edge", "halted_since"),
    )
    return to_plain(
        {
            "trading_date": day,
            "breadth": breadth_of(conn, quotes),
            "top_signals": [{k: q[k] for k in signal} for q in scored[:TOP_SIGNALS]],
            "avoid": [{k: q[k] for k in signal} for q in reversed(scored) if q["action"] == "AVOID"][:TOP_SIGNALS],
            "scored": len(scored),
            "news": _notable_news(conn, calendar, day, sorted(quotes)),
            "ai_portfolio": _ai_portfolio(conn, calendar, day),
            "model": _model(conn, day, scored[0]["model_id"] if scored else None),
        }
    )


def _notable_news(conn: Connection, calendar: TradingCalendar, day: date, symbols: list[str]) -> list[NotableNews]:
    """The day's texts naming `symbols`, strongest sentiment first: those published after
    the previous session's close and by this one's, the composite's rule (a text after the
    close counts from the next day, and a re-run after it came changes nothing)."""
    start, close = session_close_utc(calendar.previous_trading_day(day)), session_close_utc(day)
    items: dict[tuple[str, int], NotableNews] = {}
    for symbol, documents in news(conn, symbols).items():
        for doc in documents:
            if not start < doc["published_at"] <= close:
                continue
            entry = items.setdefault(
                (doc["kind"], doc["id"]),
                {"kind": doc["kind"], "title": doc["title"], "sentiment": doc["sentiment"], "symbols": []},
            )
            entry["symbols"].append(symbol)
    ranked = sorted(items.values(), key=lambda d: (-abs(d["sentiment"] or 0.0), d["title"]))
    return [{**d, "symbols": sorted(d["symbols"])} for d in ranked[:NOTABLE_NEWS]]


def _ai_portfolio(conn: Connection, calendar: TradingCalendar, day: date) -> PortfolioFacts:
    c = tables.portfolio_days.c
    before = conn.execute(
        select(func.max(c.trading_date)).where(c.portfolio_id == ledger.AI_PORTFOLIO, c.trading_date < day)
    ).scalar()
    last = None
    if before is not None:
        (row,) = current_rows(
            conn, tables.portfolio_days, where=[c.portfolio_id == ledger.AI_PORTFOLIO, c.trading_date == before]
        )
        executed = ExecutedDay.from_summary(row["summary"])
        orders = [o.to_json() for o in executed.orders]
        last: LastExecuted = {
            "trading_date": before.isoformat(),
            "equity": executed.equity,
            "cash": executed.cash,
            "orders": orders,
        }
    trades = [t for t in ledger.trade_rows(conn, ledger.AI_PORTFOLIO) if t["trading_date"] < day]
    # held into `day`, on its count
    book = ledger.replay(trades, stored_splits(conn, day, {t["symbol"] for t in trades}))
    positions = {s: p.quantity for s, p in book.items() if p.quantity > 0}
    trapped_now = _trapped(conn, day, positions)
    trapped_before = _trapped(conn, calendar.previous_trading_day(day), positions)
    return {
        "last_executed": last,
        "positions": len(positions),
        "trapped": sorted(trapped_now),
        "newly_trapped": sorted(trapped_now - trapped_before),
    }


def _trapped(conn: Connection, day: date, positions: dict[str, int]) -> set[str]:
    """The `positions` TRAPPED at `day`'s close under the delisting rule, as the AI book and
    its positions read them (portfolio/delisting.py): a name without a row is carried at its
    last close until the rule delists it (the market days drop it after 60 calendar days),
    and a delisted one is DELISTED, not TRAPPED."""
    rule = stored_rule(conn, get_settings(), day, positions)
    view = book_view(positions, stored_absences(conn, day, positions, rule), rule, day)
    market = view.with_carried(market_days(conn, day, list(view.names)))
    return {s for s, q in view.names.items() if s in market and TRAPPED in exit_state(market[s], q).flags}


def _model(conn: Connection, day: date, model_id: str | None) -> ModelFacts:
    record = performance(conn, as_of=day)  # as of the day: a re-run after later days quotes the same record
    live = {name: m for name, m in record["live"]["metrics"].items() if m is not None}
    validation: dict[str, JsonValue] = {
        "period_start": record["validation"]["period_start"],
        "period_end": record["validation"]["period_end"],
        **{name: m for name, m in record["validation"]["metrics"].items() if m is not None},
    }
    if model_id is None:
        return {
            "model_id": None,
            "retrained": False,
            "live": live,
            "validation": validation,
            "layer1_backend": record["layer1_backend"],
        }
    p = tables.predictions.c
    first = conn.execute(select(func.min(p.trading_date)).where(p.model_id == model_id)).scalar()
    runs = current_rows(conn, tables.model_runs, where=[tables.model_runs.c.model_id == model_id])
    run = runs[0] if runs else {}
    return {
        "model_id": model_id,
        "retrained": bool(runs) and first == day,
        "warm_start": bool(run.get("warm_start")),
        "training_rows": run.get("training_rows"),
        "trained_through": run.get("train_end"),
        "layer1_backend": record["layer1_backend"],
        "live": live,
        "validation": validation,
    }
