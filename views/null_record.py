"""The AI portfolio's null books over its own span, as a read model: the days it executed
replayed by the backtest's engine (portfolio/backtest.py), the model's book and every null
book of portfolio/nulls.py (`against_nulls`), kept per store, fee schedule, starting cash
and data version.

What a replay reads, each part once for all the days (not one query per day):

- the executed days (`portfolio_days`) and, per day, the record its decisions read (the
  validation record on the days bootstrapping replayed, else the live predictions);
- each day's served predictions from that record (`models.scoring.served_predictions`:
  the model that scored the day last), their model outputs (P(up), expected excess, raw
  score, predicted return and class) re-decided by `models.decisions.decide` on the day's
  market at the fee schedule in force, as the backtest decides
  (`portfolio.backtest.decided_frame`);
- each day's market as the AI executor reads it (`portfolio.market.market_days_over`:
  ADV_20, the spread estimate, the quotes, the volatility);
- the signal's persistence known on each day (`portfolio.market.persistence_known_over`),
  which the book weighs a trade's hold with (portfolio/book.py `Outlook`);
- which symbols are ordinary shares (the instruments' types);
- the store's sessions (`portfolio.delisting.stored_sessions`: its dates with prices), in
  which the delisting rule counts a held name's gap, as the live book's does: the executed
  days skip the sessions the AI book did not run (`stored_replay`);
- the splits with an ex-date over the days (`store.splits.stored_splits`): each day's
  market is on its own share count, so every book's holdings and pending orders go onto
  the new count from the ex-date on, as the live book's do (`portfolio.backtest.PreparedDay`'s
  `splits`);
- the equal-weighted liquid universe's daily returns over the days (the caller's, from
  views/track_record.py `Benchmarks`).

The replay is the same `Mandate()`, fee schedule and starting cash as the AI book, with
no dividends (the backtest credits none); the replayed model book's return is set beside
the AI portfolio's as executed, its replayed and live days alike (`beside_live`).

**What a read costs.** A state is stamped with the newest ids of the parts above. The same
stamp: the kept answer. Otherwise the rows stored since are dated: a close, a prediction or
a split dated after the last executed day touches no replayed day (T0's closes and T1's
predictions of the next day, a dividend notice), and a client's trade or deposit is not
read at all, so the answer stands. A row dated on or before it drops the days' reads from
that date on; a new executed day adds its read. Only the days without a read are read
again (one query per part for all of them), and then every book is replayed (the replays
are path-dependent: a changed day changes every later one). As with the API's cached
bodies, a Postgres transaction that took a lower id and commits after a higher one is
found at the next change.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypedDict

import pandas as pd
from sqlalchemy import Connection, func, select

from market.costs import FeeSchedule
from market.instruments import is_ordinary
from market.settings import get_settings
from models.decisions import HORIZON
from models.scoring import served_predictions
from portfolio.backtest import PreparedDay, carried_forward, decided_frame, signals_of
from portfolio.book import Mandate
from portfolio.delisting import DelistingRule, stored_rule, stored_sessions
from portfolio.ledger import AI_PORTFOLIO
from portfolio.market import market_days_over, persistence_known_over
from portfolio.nulls import AgainstNulls, NullBand, NullPlan, Replay, against_nulls, no_books
from portfolio.rails import MarketDay
from portfolio.rows import StoredPortfolioDay
from portfolio.track_record import NullRecord
from store import tables
from store.history import current_rows, newest_ids
from store.instruments import instrument_types
from store.splits import Split, stored_splits

NULL_PARTS = (
    (tables.portfolio_days, "portfolio_id", AI_PORTFOLIO),
    tables.predictions,
    tables.validation_predictions,
    tables.eod_prices,
    tables.corporate_actions,
    tables.instruments,
)
STATES_KEPT = 8  # stores (or fee schedules) whose answer a process keeps
MODEL_OUTPUTS = ("p_up", "expected_return", "raw_score", "predicted_return", "predicted_class")
RECORD_TABLES = {"validation": tables.validation_predictions, "live": tables.predictions}


class ModelOutputs(TypedDict):
    """A served prediction's model outputs, what the replay decides on again (`MODEL_OUTPUTS`)."""

    symbol: str
    p_up: float
    expected_return: float | None
    raw_score: float | None
    predicted_return: float | None
    predicted_class: int | None


class MarketColumns(TypedDict):
    """A MarketDay as the backtest's frame has it (`_MARKET_COLUMNS`)."""

    close: float
    volume: int
    adv_20: float | None
    bid: float | None
    ask: float | None
    high: float | None
    low: float | None
    volatility_20: float | None
    spread_estimate: float | None
    spread_estimate_source: str


@dataclass(frozen=True)
class DayRead:
    """One executed day as the replay reads it: its record, its market (symbol ->
    MarketDay), its served predictions' model outputs, the persistence known on it."""

    record: str
    market: dict[str, MarketDay]
    predictions: list[ModelOutputs]
    persistence: dict[str, float | None] | None


def executed_days(conn: Connection) -> dict[date, str]:
    """The AI portfolio's executed days, in order, each with the record its decisions read."""
    c = tables.portfolio_days.c
    rows = current_rows(conn, tables.portfolio_days, where=[c.portfolio_id == AI_PORTFOLIO])
    return {r["trading_date"]: (r["summary"] or {}).get("record", "live") for r in sorted(rows, key=_trading_date)}


def _trading_date(row: StoredPortfolioDay) -> date:
    return row["trading_date"]


def read_days(conn: Connection, days: dict[date, str]) -> dict[date, DayRead]:
    """The reads of `days` (day -> its record), each part once for all of them."""
    if not days:
        return {}
    listed = sorted(days)
    markets = market_days_over(conn, listed)
    known = persistence_known_over(conn, listed)
    served: dict[date, dict[str, dict[str, Any]]] = {}  # models.scoring.served_predictions' rows
    for record, table in RECORD_TABLES.items():
        wanted = [d for d in listed if days[d] == record]
        if wanted:
            c = table.c
            rows = current_rows(conn, table, where=[c.trading_date >= wanted[0], c.trading_date <= wanted[-1]])
            found = served_predictions(r for r in rows if r["trading_date"] in set(wanted))
            served.update({d: found.get(d, {}) for d in wanted})
    return {
        d: DayRead(
            days[d],
            markets[d],
            [{k: row[k] for k in ("symbol", *MODEL_OUTPUTS)} for row in served[d].values() if row["p_up"] is not None],
            known[d],
        )
        for d in listed
    }


def replay_of(
    reads: dict[date, DayRead],
    ordinary: dict[str, bool],
    fees: FeeSchedule,
    cash: float,
    delisting: DelistingRule | None = None,
    splits: tuple[Split, ...] = (),
    sessions: tuple[date, ...] = (),
) -> Replay:
    """The replay of the executed days' reads (in date order): each day's served
    predictions on its market, decided at the fee schedule's rate; a name priced on an
    earlier day and not on this one carries its last close with no trades and the date of
    its last row, as the backtest's days do (`carried_forward`), so `delisting` delists a
    held name whose rows end on the session the live book does: counted in `sessions`, the
    store's (`delisting.stored_sessions`; empty: the days are every session), not in the
    days the AI book executed, which skip the sessions it did not run. `splits`: the stored splits
    over the days, each given to the day of its ex-date or the first after it (and to the
    carry), so every book's holdings and orders are on each day's share count."""
    mandate = Mandate()
    rows = [
        {**p, "date": day, **_market_columns(read.market[p["symbol"]]), "ordinary": ordinary.get(p["symbol"], True)}
        for day, read in reads.items()
        for p in read.predictions
        if p["symbol"] in read.market
    ]
    frame = pd.DataFrame(rows, columns=["symbol", "date", *MODEL_OUTPUTS, *_MARKET_COLUMNS, "ordinary"])
    for column in MODEL_OUTPUTS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    decided = decided_frame(frame, float(fees.rate), HORIZON, mandate.names) if rows else frame
    by_day = dict(iter(decided.groupby("date", sort=True)))
    carried = carried_forward(((day, read.market) for day, read in reads.items()), splits)
    days: list[PreparedDay] = []
    for (day, read), (market, last_rows) in zip(reads.items(), carried, strict=True):
        rows_of_day = by_day.get(day)
        signals = signals_of(rows_of_day) if rows_of_day is not None else {}
        since = days[-1].day if days else day  # the first day: nothing held yet
        split = tuple(s for s in splits if since < s.ex_date <= day)
        between = sessions[bisect_right(sessions, days[-1].day) if days else 0 : bisect_right(sessions, day)]
        days.append(PreparedDay(day, market, signals, read.persistence, last_rows, split, between))
    return Replay(days, decided, fees, mandate, "costed", float(cash), HORIZON, delisting)


def stored_replay(conn: Connection, reads: dict[date, DayRead], fees: FeeSchedule, cash: float) -> Replay:
    """`replay_of` the executed days' `reads` (some) with what the store says of them: which
    names are ordinary shares, the live book's delisting rule with its settlements and notices
    (portfolio/delisting.py `stored_rule`), counted in the store's sessions (`stored_sessions`,
    not the days the AI book executed), and the splits over the days."""
    ordinary = {symbol: is_ordinary(kind) for symbol, kind in instrument_types(conn).items()}
    symbols = {s for r in reads.values() for s in r.market}
    rule = stored_rule(conn, get_settings(), max(reads), symbols)
    splits = tuple(stored_splits(conn, max(reads), symbols, after=min(reads)))
    sessions = tuple(stored_sessions(conn, date.min, max(reads)))
    return replay_of(reads, ordinary, fees, cash, rule, splits, sessions)


_MARKET_COLUMNS = (
    "close",
    "volume",
    "adv_20",
    "bid",
    "ask",
    "high",
    "low",
    "volatility_20",
    "spread_estimate",
    "spread_estimate_source",
)


def _market_columns(day: MarketDay) -> MarketColumns:
    """A MarketDay as the backtest's frame columns (portfolio/backtest.py `_market_day`)."""
    return {
        "close": day.close,
        "volume": day.volume,
        "adv_20": day.adv_20,
        "bid": day.bid,
        "ask": day.ask,
        "high": day.high,
        "low": day.low,
        "volatility_20": day.volatility,
        "spread_estimate": day.spread_estimate,
        "spread_estimate_source": day.spread_estimate_source,
    }


def first_touched(conn: Connection, before: tuple, now: tuple) -> date | None:
    """The earliest date the rows stored between two stamps of NULL_PARTS touch (a close's
    or a prediction's trading date, a split's ex-date); date.min when an instrument changed
    (its type says whether it is an ordinary share, on every day); None when none did (a
    dividend notice, a halt)."""
    moved = dict(zip(_PART_NAMES, zip(before, now, strict=True), strict=True))
    if moved["instruments"][0] != moved["instruments"][1]:
        return date.min
    dated = {
        "predictions": (tables.predictions.c.trading_date, ()),
        "validation_predictions": (tables.validation_predictions.c.trading_date, ()),
        "eod_prices": (tables.eod_prices.c.trading_date, ()),
        "corporate_actions": (tables.corporate_actions.c.action_date, (tables.corporate_actions.c.kind == "SPLIT",)),
    }
    found = []
    for name, (column, where) in dated.items():
        old, new = moved[name]
        if old != new:
            ids = column.table.c.id
            found.append(conn.execute(select(func.min(column)).where(ids > (old or 0), ids <= new, *where)).scalar())
    return min((d for d in found if d is not None), default=None)


_PART_NAMES = (
    "portfolio_days",
    "predictions",
    "validation_predictions",
    "eod_prices",
    "corporate_actions",
    "instruments",
)


@dataclass
class _State:
    """One store's kept answer: its stamp, the days' reads and the answer built from them."""

    version: tuple | None = None
    reads: dict[date, DayRead] = field(default_factory=dict)
    answer: AgainstNulls | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class NullRecords:
    """The null books' read model (module docstring): the STATES_KEPT most recently read
    (store, fee schedule, starting cash) states of this process."""

    def __init__(self, plan: NullPlan | None = None) -> None:
        self.plan = plan or NullPlan()
        self._states: OrderedDict[tuple, _State] = OrderedDict()
        self._lock = threading.Lock()

    def over(self, conn: Connection, fees: FeeSchedule, cash: float, benchmark: pd.Series | None) -> AgainstNulls:
        """The AI portfolio's executed days against their null books, caught up with the store."""
        state = self._state((str(conn.engine.url), fees, float(cash)))
        with state.lock:
            version = newest_ids(conn, *NULL_PARTS)
            if version == state.version and state.answer is not None:
                return state.answer
            days = executed_days(conn)
            stale = date.min if state.version is None else first_touched(conn, state.version, version)
            kept = {d: r for d, r in state.reads.items() if days.get(d) == r.record and (stale is None or d < stale)}
            if kept.keys() != days.keys() or state.answer is None:
                kept.update(read_days(conn, {d: days[d] for d in days if d not in kept}))
                state.reads = {d: kept[d] for d in days}
                state.answer = self._answer(conn, state.reads, fees, cash, benchmark)
            state.version = version
            return state.answer

    def _answer(
        self, conn: Connection, reads: dict[date, DayRead], fees: FeeSchedule, cash: float, benchmark: pd.Series | None
    ) -> AgainstNulls:
        if benchmark is None or benchmark.empty:
            why = "no equal-weighted liquid universe over these days: the null books are measured against it"
            families = {family: no_books(family, why) for family in self.plan.families}
            return AgainstNulls(
                NullRecord(len(reads), families=families, note=why), NullBand([], [], [], [], [], [], [])
            )
        return against_nulls(stored_replay(conn, reads, fees, cash), self.plan, benchmark)

    def _state(self, key: tuple) -> _State:
        with self._lock:
            state = self._states.pop(key, None) or _State()
            self._states[key] = state
            while len(self._states) > STATES_KEPT:
                self._states.popitem(last=False)
            return state


KEPT = NullRecords()  # the process's, for readers without a read model of their own (the reports)
