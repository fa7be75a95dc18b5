"""A client's (or the house's) book valued at every market day's close, kept as a read model
that a change extends or revalues from the last day it leaves untouched.

The track record of a book (views/track_record.py) is a statistic of these days: equity
(cash plus positions at the latest closes), the flows from outside (deposits,
withdrawals, statement reconciliations, and the shares a statement sync booked, at the
day's close) and exposure (market value / equity). A day's values follow from the
ledger's rows dated on or before it, the closes up to it and the splits with an ex-date
on or before it, so a change dated D (a trade, a cash movement, a corrected close, a
split notice) leaves every day before D as it was: `BookDays.resume_before(D)` keeps those
days and hands back the state at the latest checkpoint before D, and `BookDays.extend`
values the days after it from the rows dated after it. Replaying from a checkpoint is
exact (`portfolio.ledger.replay` with its `book`), so the days equal a valuation from
scratch, which is what a new read model does (tests/portfolio/test_book_days.py holds the
two equal after every kind of change).

Checkpoints (the cash, the positions and each symbol's latest close at a day's close) are
kept at every CHECKPOINT_EVERY-th day and at the last two days: a change of the newest day
(a deposit after the close) or a new market day resumes from the day before, one of an
older day from at most CHECKPOINT_EVERY days earlier; memory is O(days / CHECKPOINT_EVERY)
positions per book.

Rules (each as the valuation from scratch had them, and stated once here):
- a trade or cash entry dated between two market days counts at the next market day's
  close (a Saturday deposit is Monday's flow, not Monday's return); a cash entry's date is
  the reader's (`portfolio.ledger.cash_days`: a trade's cash on its trading date);
- a symbol is valued at its latest close on or before the day (carried over days it did
  not trade, on the day's share count: a close carried over a split's ex-date is divided
  by its factor); one without any close yet is not valued;
- a close carried over a dividend's ex-date (the name did not trade on it) is read less
  the dividend from the ex-date (on the day's count), as the exchange's reference price
  is, when the book's cash holds its credit or the book is not owed it (it held none of
  the name at the close before): views/valuation.py `_ex_dividend`'s rule, day by day, so
  the credit, effective at the ex-date's close, is counted once however long the name
  goes without a trade; a holder not credited keeps the close with the dividend in it;
- a holding the delisting rule delists on a day (portfolio/delisting.py: the exchange's
  DELISTING notice after its last close, or the rule's sessions without a close, counted
  over the book's days) is worth what the rule says from that day (nothing until a
  corporate action gives a value per share, or its last close under `last_close`), as its
  position is (views/valuation.py), not its last close for ever;
- the first day's closes are seeded with the closes of the SEED_DAYS calendar days before
  the book's first day (the reader's choice, views/book_record.py).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import Decimal
from typing import TypeVar

from portfolio.delisting import LAST_CLOSE, DelistingRule
from portfolio.ledger import Position, replay
from portfolio.rows import LedgerRow
from store.splits import Split, factor_between

CHECKPOINT_EVERY = 16
SEED_DAYS = 60  # calendar days of closes before a book's first day that seed its valuation
EXTERNAL_FLOWS = ("DEPOSIT", "WITHDRAWAL", "RECONCILIATION")
STATEMENT_SYNC = "STATEMENT_SYNC"
T = TypeVar("T")


@dataclass(frozen=True)
class CashRow:
    """A cash entry as the valuation reads it: its exchange date, amount and kind."""

    day: date
    amount: Decimal
    kind: str


@dataclass(frozen=True)
class ExDividend:
    """A dividend of a name the book traded whose ex-date is after the close the book
    carries of it (`portfolio.dividends.since_closes`), as the days read it."""

    symbol: str
    ex_date: date
    amount: Decimal  # per share held at the close before the ex-date (the notice's)
    credited: bool  # the book's cash holds its credit


@dataclass(frozen=True)
class MarketDay:
    """A market day: its date and the closes stored for it, by symbol."""

    day: date
    closes: dict[str, float]


@dataclass(frozen=True)
class Checkpoint:
    """The book at `day`'s close: the days valued up to and including it (`count`), its
    cash, its positions and each symbol's latest close."""

    day: date
    count: int
    cash: Decimal
    book: dict[str, Position]
    closes: dict[str, float]
    rows: dict[str, date] = field(default_factory=dict)  # the session of each symbol's latest close


@dataclass(frozen=True)
class Resume:
    """Where a catch-up starts: the last day it keeps (None: from the book's first day),
    the state at that day's close and the closes seeding the first day after it."""

    after: date | None
    cash: Decimal
    book: dict[str, Position]
    closes: dict[str, float]
    rows: dict[str, date] = field(default_factory=dict)  # the session of each close in `closes`


@dataclass
class BookDays:
    """The valued days of one book from its first day (`start`), with their checkpoints."""

    start: date
    dates: list[date] = field(default_factory=list)
    equity: list[float] = field(default_factory=list)
    deposits: list[float] = field(default_factory=list)  # money in from outside, each day
    withdrawals: list[float] = field(default_factory=list)  # money out to outside, each day (positive)
    exposure: list[float] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)

    @property
    def first(self) -> date | None:
        """The first valued day; None before it."""
        return self.dates[0] if self.dates else None

    @property
    def last(self) -> date | None:
        """The last valued day; None before the first."""
        return self.dates[-1] if self.dates else None

    def resume_before(self, changed: date, seed: dict[str, float]) -> Resume:
        """Forget the days from the latest checkpoint before `changed` on and say where to
        resume (`seed`: the closes before the book's first day, for a resume from it)."""
        kept = [c for c in self.checkpoints if c.day < changed]
        self.checkpoints = kept
        point = kept[-1] if kept else None
        count = point.count if point else 0
        for values in (self.dates, self.equity, self.deposits, self.withdrawals, self.exposure):
            del values[count:]
        if point is None:
            return Resume(None, Decimal(0), {}, dict(seed))
        return Resume(point.day, point.cash, _copy(point.book), dict(point.closes), dict(point.rows))

    def extend(
        self,
        resume: Resume,
        market: Sequence[MarketDay],
        trades: Sequence[LedgerRow],
        cash: Sequence[CashRow],
        splits: Sequence[Split],
        dividends: Sequence[ExDividend] = (),
        delisting: DelistingRule | None = None,
    ) -> None:
        """Value `market`'s days (those after `resume.after`, in order) from `resume`, with
        the trades, cash entries, splits and dividends dated after it (any order: sorted
        here; those dated after the last market day wait for theirs); a holding `delisting`
        says is delisted on a day is worth what it says (module docstring)."""
        trades = sorted(trades, key=lambda t: t["trading_date"])
        entries = sorted(cash, key=lambda e: e.day)
        splits = sorted(splits, key=lambda x: x.ex_date)
        going_ex = sorted(dividends, key=lambda x: x.ex_date)
        balance, book, closes, rows = resume.cash, resume.book, resume.closes, resume.rows
        t = e = s = d = 0
        for market_day in market:
            day = market_day.day
            closes.update(market_day.closes)
            rows.update(dict.fromkeys(market_day.closes, day))
            batch, t = _through(trades, t, day, lambda r: r["trading_date"])
            due, s = _through(splits, s, day, lambda x: x.ex_date)
            ex, d = _through(going_ex, d, day, lambda x: x.ex_date)
            held = {x.symbol: book[x.symbol].quantity if x.symbol in book else 0 for x in ex}  # the close before
            replay(batch, due, book)
            _carried_on_count(closes, due, market_day.closes)
            _carried_ex_dividend(closes, ex, market_day, held, splits)
            flows = [_synced_shares(batch, closes)]
            while e < len(entries) and entries[e].day <= day:
                balance += entries[e].amount
                flows.append(float(entries[e].amount) if entries[e].kind in EXTERNAL_FLOWS else 0.0)
                e += 1
            prices = self._under_delisting(day, closes, rows, book, delisting)
            value = sum(p.quantity * prices[sym] for sym, p in book.items() if p.quantity > 0 and sym in prices)
            self._append(day, balance, value, flows)
            self._checkpoint(day, balance, book, closes, rows)

    def _under_delisting(
        self,
        day: date,
        closes: dict[str, float],
        rows: dict[str, date],
        book: dict[str, Position],
        rule: DelistingRule | None,
    ) -> dict[str, float]:
        """`closes` with each holding the rule delists on `day` at the rule's price: the gap
        after its last close counted over the book's days (those before its first day are
        not counted), or the exchange's notice after it (portfolio/delisting.py)."""
        if rule is None:
            return closes
        prices = dict(closes)
        for symbol, position in book.items():
            last = rows.get(symbol)
            if position.quantity <= 0 or last is None or last >= day:
                continue
            after = [*self.dates[bisect_right(self.dates, last) :], day]
            if rule.delisted_on(after, rule.notice(symbol, last, day, after[0])) is not None:
                settled = rule.settlement(symbol, day, last)
                prices[symbol] = closes[symbol] if rule.reading == LAST_CLOSE else settled or 0.0
        return prices

    def _append(self, day: date, cash: Decimal, value: float, flows: list[float]) -> None:
        """The day's values; `flows`: each movement from outside (in positive, out negative),
        summed apart by direction (never netted: `track_record.daily_returns`)."""
        equity = float(cash) + value
        self.dates.append(day)
        self.equity.append(equity)
        self.deposits.append(sum(f for f in flows if f > 0))
        self.withdrawals.append(-sum(f for f in flows if f < 0))
        self.exposure.append(value / equity if equity > 0 else float("nan"))

    def _checkpoint(
        self, day: date, cash: Decimal, book: dict[str, Position], closes: dict[str, float], rows: dict[str, date]
    ) -> None:
        """A checkpoint at `day` (the newest); the previous newest goes unless it is on the grid
        or the day before this one."""
        count = len(self.dates)
        self.checkpoints.append(Checkpoint(day, count, cash, _copy(book), dict(closes), dict(rows)))
        if len(self.checkpoints) >= 3:
            older = self.checkpoints[-3]
            if older.count % CHECKPOINT_EVERY:
                del self.checkpoints[-3]


def _through(rows: Sequence[T], start: int, day: date, when: Callable[[T], date]) -> tuple[list[T], int]:
    """The rows from `start` dated on or before `day` (rows sorted by date), and where the next begins."""
    end = start
    while end < len(rows) and when(rows[end]) <= day:
        end += 1
    return list(rows[start:end]), end


def _carried_on_count(closes: dict[str, float], due: Sequence[Split], today: dict[str, float]) -> None:
    """The carried closes of the names split today that did not trade today on the new
    count (divided by the factor, as `store.splits.factor_between` reads an earlier price on
    a later day's count): the holding is on it, so a thin name's ex-date is not a jump."""
    for split in due:
        if split.symbol in closes and split.symbol not in today:
            closes[split.symbol] /= split.factor


def _carried_ex_dividend(
    closes: dict[str, float], ex: Sequence[ExDividend], today: MarketDay, held: dict[str, int], splits: Sequence[Split]
) -> None:
    """The carried closes of the names going ex by today that did not trade today, less the
    dividend on today's count (`portfolio.dividends.per_share_on_count`'s factor), when the
    cash holds its credit or the book held none of the name at the close before (module
    docstring): the exchange's reference price, as a thin name's ex-date is not a gain."""
    for dividend in ex:
        symbol = dividend.symbol
        if symbol not in closes or symbol in today.closes or not (dividend.credited or held[symbol] <= 0):
            continue
        factor = factor_between(splits, symbol, dividend.ex_date - timedelta(days=1), today.day)
        closes[symbol] = max(closes[symbol] - float(dividend.amount) / factor, 0.0)


def _synced_shares(batch: Sequence[LedgerRow], closes: dict[str, float]) -> float:
    """The net value, at the day's closes, of the shares a statement sync brought in (or
    took out): they arrive from outside like cash (one sync's lines: netted, one movement)."""
    flow = 0.0
    for trade in batch:
        if trade["origin"] == STATEMENT_SYNC and trade["symbol"] in closes:
            sign = 1 if trade["side"] == "BUY" else -1
            flow += sign * int(trade["quantity"]) * closes[trade["symbol"]]
    return flow


def _copy(book: dict[str, Position]) -> dict[str, Position]:
    return {symbol: replace(position) for symbol, position in book.items()}
