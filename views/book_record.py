"""Track records as read models: per book, its valued days (portfolio/book_days.py) and its
trades' totals (views/track_record.py `LedgerTotals`), caught up on each read with the rows
stored since its last state, so a read after a write costs what changed, not the history.

A book's state is stamped with the newest ids it reflects (`BookVersion`: the book's
trades and cash entries, the closes, the corporate actions, and the index levels and
fundamentals its benchmarks read: a record kept past a new one of those would serve a
stale `index`). The history tables are
append-only and each part's ids commit in order (a book's writers hold its lock, the
stages theirs: store/history.py `newest_ids`), so the rows above a stamp are exactly the
ones the state has not seen. A read:

1. reads the version (one statement); the same version: the record kept is the answer;
2. adds the new trades to the totals (ids between the two stamps);
3. finds the earliest date the new rows touch (a trade's or cash entry's date, a close's
   trading date, a split's ex-date, a delisting notice's date) and revalues the days from the latest checkpoint before
   it (`BookDays.resume_before`): a trade or deposit of today touches no valued day until
   today's closes arrive; today's closes value one new day; a corrected close of last
   month revalues from there. A row dated before the book's first day starts it again.
4. computes the statistics over the valued days (O(days), not O(rows)) beside the
   benchmarks over the same days (`Benchmarks`, kept per span and market version).

Every read filters by the version's ids, so the days, the totals and the stamp describe
one state of the store even while writers append meanwhile. A fresh state catches up
from nothing, which is a valuation from scratch: one rule, whether the state is new or
old (tests/portfolio/test_book_days.py holds the two equal).

`TrackRecords` keeps the states of the BOOKS_KEPT most recently read books in the process
(the desk's, desk/desk.py; the API's one per process): memory is O(days) per book (a few
hundred KB for ten years), and a book read again after being dropped, or first read after
a restart, is caught up from nothing once. Each book's catch-up runs under its own lock;
REST and GraphQL share the state and the record.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pandas as pd
from sqlalchemy import Connection, Select, func, select
from sqlalchemy.sql.elements import ColumnElement

from market.clock import EXCHANGE_TZ, exchange_date
from market.costs import CostBreakdown
from market.fees import FeeSchedule
from market.settings import get_settings
from portfolio import dividends, ledger
from portfolio.book_days import SEED_DAYS, BookDays, CashRow, ExDividend, MarketDay, Resume
from portfolio.delisting import stored_rule
from portfolio.track_record import TrackRecord, daily_returns, statistics
from store import tables
from store.history import Part, newest_ids
from store.panels import stored_closes
from store.splits import RENAME, stored_splits
from views.null_record import NullRecords
from views.track_record import BENCHMARK_PARTS, NO_CLIENT_HISTORY, Benchmarks, LedgerTotals, ai_track_record

BOOKS_KEPT = 256


@dataclass(frozen=True)
class BookVersion:
    """The newest ids a book's record reflects: its trades, its cash entries, the closes
    and the corporate actions (its valued days), and the index levels and fundamentals its
    benchmarks are read from too (`BENCHMARK_PARTS`; 0: none yet)."""

    trades: int = 0
    cash: int = 0
    prices: int = 0
    actions: int = 0
    index_levels: int = 0
    fundamentals: int = 0


def book_parts(portfolio_id: str) -> tuple[Part, ...]:
    """What a book's track record is read from, as `newest_ids` parts (desk/versions.py
    keys the API's cached bodies by the same): the book's ledger and its benchmarks' tables."""
    return (
        (tables.trades, "portfolio_id", portfolio_id),
        (tables.cash_entries, "portfolio_id", portfolio_id),
        *BENCHMARK_PARTS,
    )


def book_version(conn: Connection, portfolio_id: str) -> BookVersion:
    return BookVersion(*(value or 0 for value in newest_ids(conn, *book_parts(portfolio_id))))


@dataclass
class BookState:
    """One book's read model: the version it reflects, its valued days, its totals and the
    record computed from them (None until the first read)."""

    version: BookVersion | None = None
    days: BookDays | None = None
    totals: LedgerTotals = field(default_factory=LedgerTotals)
    record: TrackRecord | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Postgres: how many closes and corporate actions had ids up to the version's when it
    # was caught up (`_market_rows`); None on SQLite, whose ids commit in order.
    market_rows: tuple[int, int] | None = None


class TrackRecords:
    """The process's track-record read models (module docstring)."""

    def __init__(self) -> None:
        self._books: OrderedDict[str, BookState] = OrderedDict()
        self._lock = threading.Lock()
        self.benchmarks = Benchmarks()
        self.nulls = NullRecords()
        self._ai_totals = LedgerTotals()
        self._ai_lock = threading.Lock()

    def client(self, conn: Connection, portfolio_id: str) -> TrackRecord:
        """A client's (or the house's) record, its state caught up with the store."""
        state = self._state(portfolio_id)
        with state.lock:
            version = book_version(conn, portfolio_id)
            if state.version != version or state.record is None:
                catch_up(conn, portfolio_id, state, version)
                state.record = book_record(conn, state, self.benchmarks)
            return state.record

    def ai(self, conn: Connection, opens_with: float, fees: FeeSchedule | None = None) -> TrackRecord:
        """The AI portfolio's record: its executed days as t1_trade stored them (one row a
        day), measured from its opening deposit (`opens_with`, the setting, only before it
        has one: views/track_record.py `ai_track_record`), its trades' totals kept here, its
        null books at `fees` (views/null_record.py) kept here too."""
        with self._ai_lock:
            return ai_track_record(conn, opens_with, self._ai_totals, self.benchmarks, self.nulls, fees)

    def _state(self, portfolio_id: str) -> BookState:
        with self._lock:
            state = self._books.pop(portfolio_id, None) or BookState()
            self._books[portfolio_id] = state
            while len(self._books) > BOOKS_KEPT:
                self._books.popitem(last=False)
            return state


def portfolio_track_record(conn: Connection, portfolio_id: str) -> TrackRecord:
    """A client's (or the house's) book valued at every market day's close from its first
    cash movement or trade (portfolio/book_days.py), read from nothing. Deposits,
    withdrawals, statement reconciliations and the shares a statement sync adds or removes
    are flows, not performance. Costs are the fees recorded: a manual trade's price is the
    client's own, so no spread or impact is attributed to it."""
    return TrackRecords().client(conn, portfolio_id)


def catch_up(conn: Connection, portfolio_id: str, state: BookState, version: BookVersion) -> None:
    """`state` brought to `version` (module docstring, steps 2 and 3)."""
    before = state.version or BookVersion()
    state.totals.catch_up(conn, portfolio_id, version.trades or None)
    start = _first_day(conn, portfolio_id, version)
    if start is None:
        state.version, state.days = version, None
        return
    moved = (version.prices, version.actions) != (before.prices, before.actions)
    late = moved and state.market_rows is not None and _market_rows(conn, before) != state.market_rows
    counted = state.market_rows  # the market's ids are the same: what was counted at them stands
    if conn.dialect.name == "postgresql" and (moved or counted is None):
        counted = _market_rows(conn, version)  # before the reads: a row committed later is found by the next count
    if state.days is None or state.days.start != start or late:
        state.days = BookDays(start)
        _revalue(conn, portfolio_id, state.days, state.days.resume_before(start, {}), version)
    else:
        changed = _first_changed(conn, portfolio_id, before, version)
        if changed is not None:
            _revalue(conn, portfolio_id, state.days, state.days.resume_before(changed, {}), version)
    state.version, state.market_rows = version, counted


def _market_rows(conn: Connection, version: BookVersion) -> tuple[int, int]:
    """How many closes and corporate actions have ids up to the version's.

    On Postgres two deliveries of different days (or an import beside T0) hold different
    locks, so a transaction that took lower ids can commit after one that took higher
    ones, and "the rows above the stamp" would miss its rows for good. So a state keeps
    this count at its market ids (taken when the market moved, once per book), and the
    next move compares it with the count at the same ids then: a book that finds more than
    it saw is valued again from nothing. (The API's cached bodies, keyed by the newest ids,
    have the same caveat and heal at the next change; this makes the read model heal then
    too.) SQLite has one writer at a time: its ids commit in order."""
    p, a = tables.eod_prices.c, tables.corporate_actions.c
    prices = select(func.count()).select_from(tables.eod_prices).where(p.id <= version.prices).scalar_subquery()
    actions = select(func.count()).select_from(tables.corporate_actions).where(a.id <= version.actions)
    return tuple(conn.execute(select(prices, actions.scalar_subquery())).one())


def _first_day(conn: Connection, portfolio_id: str, version: BookVersion) -> date | None:
    """The day of the book's first trade or cash movement (None: neither yet)."""
    t, e = tables.trades.c, tables.cash_entries.c
    traded = _earliest(conn, t.trading_date, t.portfolio_id == portfolio_id, t.id <= version.trades)
    moved = _earliest(conn, e.effective_at, e.portfolio_id == portfolio_id, e.id <= version.cash)
    days = [d for d in (traded, exchange_date(_aware(moved)) if moved is not None else None) if d is not None]
    return min(days, default=None)


def _earliest(conn: Connection, column: ColumnElement, *where: ColumnElement[bool]) -> Any:
    """The least `column` of the rows `where` selects. ORDER BY ... LIMIT 1 walks the
    (portfolio, date) index from the first day and stops at the first row the id bound
    admits; min() with that bound read the whole book."""
    return conn.execute(select(column).where(*where).order_by(column).limit(1)).scalar()


def _first_changed(conn: Connection, portfolio_id: str, before: BookVersion, now: BookVersion) -> date | None:
    """The earliest date the rows stored between the two versions touch; None: no dated row.

    Each part reads the new rows' dates by their id range and takes the least here: asked
    for `min(date)` with the id range, SQLite walks the (portfolio, date) or date index from
    the first day until it meets a new row, which is the whole history."""
    t, e, p, a = tables.trades.c, tables.cash_entries.c, tables.eod_prices.c, tables.corporate_actions.c
    reads = (
        select(t.trading_date).where(t.portfolio_id == portfolio_id, t.id > before.trades, t.id <= now.trades),
        select(p.trading_date).where(p.id > before.prices, p.id <= now.prices),
        select(a.action_date).where(
            a.kind.in_(("SPLIT", RENAME, "DIVIDEND", "DELISTING")), a.id > before.actions, a.id <= now.actions
        ),
        _renames_relisted(before, now),
    )
    dates = [d for read in reads for d in conn.execute(read).scalars()]
    moved = ledger.dated_cash(e.effective_at).where(
        e.portfolio_id == portfolio_id, e.id > before.cash, e.id <= now.cash
    )
    dates += [ledger.cash_day(r.trade_date, r.effective_at) for r in conn.execute(moved)]
    return min(dates, default=None)


def _renames_relisted(before: BookVersion, now: BookVersion) -> Select:
    """The ex-dates of the renames whose old ticker a new LISTING notice gives another
    company (`store.splits.Split.until`): the book is replayed from the rename on, where
    the holding carried on learns until when a trade under the old ticker is its."""
    a, b = tables.corporate_actions.c, tables.corporate_actions.alias("listed").c
    listed = select(b.symbol).where(b.kind == "LISTING", b.id > before.actions, b.id <= now.actions)
    return select(a.action_date).where(a.kind == RENAME, a.symbol.in_(listed), a.id <= now.actions)


def _revalue(conn: Connection, portfolio_id: str, days: BookDays, resume: Resume, version: BookVersion) -> None:
    """Value the market days after `resume.after` from the rows dated after it."""
    after, closed = resume.after, {}
    if after is None:
        seed_from = days.start - timedelta(days=SEED_DAYS)
        seed, closed = _seed(conn, seed_from, days.start, version)
        resume = Resume(None, resume.cash, resume.book, seed, dict(closed))
    market = _market_days(conn, after if after is not None else days.start - timedelta(days=1), version)
    if not market:
        return
    trades = ledger.ledger_rows(conn, portfolio_id, after=after, through_id=version.trades)
    splits = stored_splits(conn, after=after, through_id=version.actions)
    held = set(resume.book) | {t["symbol"] for t in trades} | {s.new_symbol for s in splits if s.new_symbol}
    since = {symbol: closed.get(symbol, after or days.start) for symbol in held}
    going_ex = _going_ex(conn, portfolio_id, since, version)
    rule = stored_rule(conn, get_settings(), market[-1].day, held)
    days.extend(resume, market, trades, _cash_rows(conn, portfolio_id, after, version), splits, going_ex, rule)


def _going_ex(conn: Connection, portfolio_id: str, closed: dict[str, date], version: BookVersion) -> list[ExDividend]:
    """The dividends of the book's names with an ex-date after the close it carries of each
    (`closed`: that close's session; `dividends.since_closes`), each saying whether the
    book's cash holds its credit, as of the version."""
    notices = dividends.since_closes(conn, closed, date.max, version.actions)
    if not notices:
        return []
    e = tables.cash_entries.c
    booked = {
        r.entry_id
        for r in conn.execute(
            select(e.entry_id, e.id).where(e.portfolio_id == portfolio_id, e.kind == "DIVIDEND", e.id <= version.cash)
        )
    }
    return [
        ExDividend(
            n["symbol"],
            n["action_date"],
            n["amount"],
            dividends.entry_id(portfolio_id, n["symbol"], n["action_date"]) in booked,
        )
        for n in notices
    ]


def _seed(conn: Connection, first: date, start: date, version: BookVersion) -> tuple[dict[str, float], dict[str, date]]:
    """Each symbol's latest close from `first` to the day before `start`, and its session."""
    seed: dict[str, float] = {}
    dated: dict[str, date] = {}
    for day, closes in sorted(stored_closes(conn, first - timedelta(days=1), start, version.prices).items()):
        seed.update(closes)
        dated.update(dict.fromkeys(closes, day))
    return seed, dated


def _market_days(conn: Connection, after: date, version: BookVersion) -> list[MarketDay]:
    """The market days after `after` with their closes, as of the version."""
    by_day = stored_closes(conn, after, through_id=version.prices)
    return [MarketDay(day, by_day[day]) for day in sorted(by_day)]


def _cash_rows(conn: Connection, portfolio_id: str, after: date | None, version: BookVersion) -> list[CashRow]:
    """The book's cash entries of the days after `after` (`ledger.cash_days`: a trade's cash
    on its trading date, as its shares, with the money entered before it in the same gap
    between sessions; another entry on the exchange date it took effect), as of the version
    (its id bound applied here: in the query SQLite would read the book by id, all of it,
    rather than by date). An entry's day is never after the exchange date it took effect,
    and a trade that moves one back to its trading date took effect on or after that date:
    the entries taking effect after `after` are all the query reads, and their days decide."""
    e = tables.cash_entries.c
    query = ledger.dated_cash(e.id, e.effective_at, e.amount, e.kind).where(e.portfolio_id == portfolio_id)
    if after is not None:
        next_day = datetime.combine(after + timedelta(days=1), time(0), tzinfo=EXCHANGE_TZ).astimezone(UTC)
        query = query.where(e.effective_at >= next_day)
    rows = [r for r in conn.execute(query) if r.id <= version.cash]
    dated = [CashRow(day, Decimal(r.amount), r.kind) for r, day in zip(rows, ledger.cash_days(rows), strict=True)]
    return [row for row in dated if after is None or row.day > after]


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)  # stored timestamps are UTC


def _without_statistics(days: BookDays, fills: int, reason: str) -> TrackRecord:
    """A record of valued days that gives no statistics: how many days and which (its first
    and last, the same day for one; none before the first valued day), the fills and why."""
    return TrackRecord(days=len(days.dates), first=days.first, last=days.last, fill_count=fills, reason=reason)


def book_record(conn: Connection, state: BookState, benchmarks: Benchmarks) -> TrackRecord:
    """The statistics of the state's valued days beside the benchmarks over the same days:
    every day a return (`daily_returns`: flows at the day's start, withdrawals at its end),
    the first measured from nothing before it, so its deposit is its base. A day whose base
    (the equity before it plus its deposits) was 0 or less has no return: the record says
    so in `reason` rather than counting it 0 or infinite. A record without statistics still
    names its days (`first`, `last`), as `statistics` does for one day."""
    days = state.days
    if days is None:
        return TrackRecord(days=0, fill_count=0, reason=NO_CLIENT_HISTORY)
    totals = state.totals.through(days.last or date.min)  # no valued day yet: no span
    too_few = (
        f"{len(days.dates)} market day(s) with prices since the first trade or cash movement ({days.start}): the "
        "statistics need at least two"
    )
    if len(days.dates) < 2:
        return _without_statistics(days, totals.fills, too_few)
    deposits, withdrawals = (pd.Series(x, index=days.dates) for x in (days.deposits, days.withdrawals))
    returns = daily_returns(pd.Series(days.equity, index=days.dates), deposits, withdrawals, opening=0.0)
    if returns.isna().any():
        i = int(returns.isna().to_numpy().argmax())
        base = (days.equity[i - 1] if i else 0.0) + days.deposits[i]
        reason = (
            f"on {days.dates[i]} the book started from {base:,.2f} (the equity before it plus the day's deposits): "
            "a day's return needs more than 0 to start from, so there are no statistics"
        )
        return _without_statistics(days, totals.fills, reason)
    positive = [e for e in days.equity if e > 0]
    series, index_source = benchmarks.over(conn, list(returns.index))
    out = statistics(
        returns,
        series,
        traded_value=float(totals.traded_value),
        mean_equity=float(pd.Series(positive).mean()) if positive else None,
        costs=CostBreakdown(fees=totals.paid.fees),
        exposure=pd.Series(days.exposure, index=days.dates, dtype=float),
        fill_count=totals.fills,
    )
    return out.with_view(reason=too_few if out.reason else None, trades=totals.rows, index_source=index_source)
