"""A name that stops trading: when a held position counts as delisted, what it is worth,
and what the record says. One rule, read by the backtest (portfolio/backtest.py
`run_backtest`), the live AI book (portfolio/ai.py `decide_day`) and the positions every
portfolio shows (views/valuation.py `portfolio_view`).

**When** (`DelistingRule.after_sessions`, MARKETINTEL_DELIST_AFTER_SESSIONS, 60 by default;
the backtest's `--delist-after`): a held name with no row for that many sessions is
delisted from the session on which the gap reached the count (`Absence.delisted_on`); in
the store, the exchange's DELISTING notice dated after the name's last row delists it from
the notice's date, whatever the count (`DelistingRule.notices`, `stored_rule`), and one
dated on the last row itself (its last trading day) from the next session (`DelistingRule.notice`). A
session is a day on which the market has any row: the backtest's days, the store's dates
with prices (`stored_sessions`; a replay of the AI book's executed days, the track record's
null books, counts these, not the days it replays), counted once (`absence`). Before
then the position is carried at its last close with no trades (TRAPPED and nothing else:
without a row its volume is unknown, not slow; out of liquid equity, as the rail says),
and its position says so (`Absence.describe`: "no row since D (N sessions): ... delisted
after 60 sessions without a row (M more) unless it has one again"). A name that has a
row again is no longer delisted (a long suspension that ended), and its gap counts afresh.

**What it is worth** (`DelistingRule.reading`, MARKETINTEL_DELISTED_VALUE): `nothing` (the
default, conservative): nothing, until a corporate action gives a value per share (a
`Settlement`: a DELISTING action with a positive amount, e.g. a cash offer or the value of
the shares a merger gave; the corporate-actions file's `delisting` rows in a backtest);
or `last_close`: the last close before the gap. The other reading is always kept beside
it (`DelistedPosition.value(reading)`), so a record can print both. Either way the
position is out of liquid equity (nothing can be sold) and out of the book's names: the
book neither counts it as a slot nor plans to sell it, while its shares stay held (the
ledger is the record of what was bought; a name that returns is the book's again).

Twenty sessions would delist names that merely did not trade for a month (the NSE files
before 2009 leave untraded names out: 20 gaps of 20 sessions or more in 2007-2009 end with
the name trading again, up to 283 sessions); sixty still catches a name whose rows end
within three months (docs/portfolio.md, "A name that stops").
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import date
from typing import Protocol

from sqlalchemy import Connection, func, select

from market.plain import JsonValue, to_plain
from market.settings import DELIST_AFTER_SESSIONS
from portfolio.rails import MarketDay, Valuation, value_positions
from store import tables
from store.history import current_rows
from store.splits import factor_between, stored_splits

NOTHING, LAST_CLOSE = "nothing", "last_close"
READINGS = (NOTHING, LAST_CLOSE)
DELISTED = "DELISTED"  # the flag a delisted position carries
DEFAULT_AFTER_SESSIONS = DELIST_AFTER_SESSIONS


class DelistingSettings(Protocol):
    """The settings the rule is read from (market/settings.py `Settings` has them)."""

    delist_after_sessions: int
    delisted_value: str


@dataclass(frozen=True)
class Settlement:
    """A corporate action's value per share for a name that stopped trading (what holders
    received, or will), known from `on`."""

    symbol: str
    on: date
    value: float


@dataclass(frozen=True)
class Notice:
    """The exchange's DELISTING notice of `symbol`, dated `on`."""

    symbol: str
    on: date


@dataclass(frozen=True)
class DelistingRule:
    """After `after_sessions` sessions without a row, or from the exchange's DELISTING notice
    dated after its last row (`notices`), a held position is delisted and worth `reading`
    (module docstring); `settlements`: the corporate actions that give a value."""

    after_sessions: int = DEFAULT_AFTER_SESSIONS
    reading: str = NOTHING
    settlements: tuple[Settlement, ...] = ()
    notices: tuple[Notice, ...] = ()

    def __post_init__(self) -> None:
        if self.after_sessions < 1:
            raise ValueError(f"a name is delisted after 1 session without a row or more, not {self.after_sessions}")
        if self.reading not in READINGS:
            raise ValueError(f"a delisted position is worth {' or '.join(READINGS)}, not {self.reading!r}")

    @classmethod
    def of(
        cls, settings: DelistingSettings, settlements: Iterable[Settlement] = (), notices: Iterable[Notice] = ()
    ) -> DelistingRule:
        return cls(settings.delist_after_sessions, settings.delisted_value, tuple(settlements), tuple(notices))

    @property
    def other(self) -> str:
        """The reading printed beside the rule's own."""
        return LAST_CLOSE if self.reading == NOTHING else NOTHING

    def settlement(self, symbol: str, day: date, last_row: date | None = None) -> float | None:
        """The latest corporate action's value per share for `symbol` known by `day`, dated on
        or after its `last_row` (None: any): one before it was paid to the holders of another
        listing under the ticker (a row since is a name trading again, as `notice` reads it),
        and gave a name that later stopped without one that listing's value."""
        since = last_row or date.min
        known = [s for s in self.settlements if s.symbol == symbol and since <= s.on <= day]
        return max(known, key=lambda s: s.on).value if known else None

    def notice(self, symbol: str, last_row: date | None, day: date, first_without: date | None = None) -> date | None:
        """The date the exchange's DELISTING notice of `symbol` delists it from, as known on
        `day`: the latest notice after its `last_row` (None: never priced) and on or before
        `day`; else a notice dated on the last row itself (the name's last trading day: T0
        stores a notice under the session it came with, and the importer reads such a row as
        delisting the name from the day after its last) delists it from `first_without`, the
        first session after that row, where given and on or before `day`. A notice before
        the last row is not one (a row since is a name trading again: a ticker reused)."""
        after = last_row or date.min
        found = max((n.on for n in self.notices if n.symbol == symbol and after < n.on <= day), default=None)
        if found is not None or first_without is None or first_without > day:
            return found
        on_last_row = any(n.symbol == symbol and n.on == last_row for n in self.notices)
        return first_without if on_last_row else None

    def delisted_on(self, sessions_after_last_row: list[date], notice: date | None = None) -> date | None:
        """The session on which a gap that began after the last row reached the count, or
        the exchange's `notice` (`notice`) where that is earlier."""
        n = self.after_sessions
        counted = sessions_after_last_row[n - 1] if len(sessions_after_last_row) >= n else None
        return min((d for d in (counted, notice) if d is not None), default=None)

    def describe(self) -> str:
        worth = (
            "worth nothing until a corporate action gives a value per share"
            if self.reading == NOTHING
            else "worth its last close"
        )
        other = "its last close" if self.reading == NOTHING else "nothing"
        return (
            f"a held name without a row for {self.after_sessions} sessions is delisted from that session: {worth}, "
            f"out of liquid equity and of the book's names (the other reading, {other}, beside it)"
        )


@dataclass(frozen=True)
class Absence:
    """A held name without a row on a day: its last row (date and close, the close on the
    share count the name is held on: `stored_absences`), the sessions since without one
    (the day included) and the session on which that gap reached the rule's count (None
    before it did)."""

    last_row: date
    last_close: float
    sessions: int
    delisted_on: date | None

    def market_day(self, symbol: str) -> MarketDay:
        """The day as the rail reads it: the last close, no row (TRAPPED, its volume unknown)."""
        return MarketDay(symbol, self.last_close, 0, None, dated=self.last_row, without_row=True)

    def describe(self, rule: DelistingRule) -> str:
        """What a position in a name without a row, not yet delisted, shows: since when, and
        what the rule does next."""
        left = rule.after_sessions - self.sessions
        return (
            f"no row since {self.last_row.isoformat()} ({self.sessions} session{'s' * (self.sessions != 1)}): "
            f"nothing can be sold; delisted after {rule.after_sessions} sessions without a row ({left} more) "
            "unless it has one again"
        )


def absence(
    rule: DelistingRule, symbol: str, last_row: date, last_close: float, sessions: Sequence[date], day: date
) -> Absence:
    """`symbol` without a row on `day` since `last_row`, by the one count: the sessions of
    `sessions` (the market's, in date order: the dates on which it has any row, `stored_sessions`;
    the backtest's days) after its last row and on or before `day`, and the session on which that
    gap reached `rule.after_sessions` (or the exchange's notice). The live book, the positions and
    every replayed book (portfolio/backtest.py) count a gap here, never by the days a book traded."""
    start, end = bisect_right(sessions, last_row), bisect_right(sessions, day)
    counted = list(sessions[start : min(end, start + rule.after_sessions)])  # the rule reads no further
    notice = rule.notice(symbol, last_row, day, counted[0] if counted else None)
    return Absence(last_row, last_close, end - start, rule.delisted_on(counted, notice))


def stored_sessions(conn: Connection, after: date, day: date) -> list[date]:
    """The store's sessions after `after` and on or before `day`, in date order: the dates on
    which it holds any price (what the delisting rule counts, `absence`)."""
    c = tables.eod_prices.c
    query = select(c.trading_date).distinct().where(c.trading_date > after, c.trading_date <= day)
    return sorted(d for (d,) in conn.execute(query))


@dataclass(frozen=True)
class DelistedPosition:
    """A delisted position on a day, valued by `reading`, with the other reading beside it."""

    symbol: str
    quantity: int
    last_row: date
    delisted_on: date
    sessions: int  # without a row, to the day
    last_close: float
    settlement: float | None  # a corporate action's value per share, where one gives it
    reading: str

    def price(self, reading: str | None = None) -> float:
        """The value per share under `reading` (the rule's by default)."""
        if (reading or self.reading) == LAST_CLOSE:
            return self.last_close
        return self.settlement or 0.0

    def value(self, reading: str | None = None) -> float:
        return self.quantity * self.price(reading)

    def describe(self) -> str:
        """What the position shows beside its DELISTED flag: since when, and what it is worth."""
        if self.reading == LAST_CLOSE:
            worth = f"its last close, {self.last_close:,.2f} a share, out of liquid equity"
        elif self.settlement is not None:
            worth = f"{self.settlement:,.2f} a share, the value a corporate action gives"
        else:
            worth = f"nothing until a corporate action gives a value per share (its last close: {self.last_close:,.2f})"
        return (
            f"delisted on {self.delisted_on.isoformat()} (no row since {self.last_row.isoformat()}, "
            f"{self.sessions} session{'s' * (self.sessions != 1)}): worth {worth}"
        )

    @property
    def valued_at(self) -> str:
        if self.reading == LAST_CLOSE:
            return "last close"
        return "corporate action" if self.settlement is not None else "nothing"

    def record(self) -> DelistedRecord:
        """The position as a day's record lists it: its value under the rule and under each
        reading, rounded to cents."""
        return DelistedRecord(
            self.symbol,
            self.quantity,
            self.last_row,
            self.delisted_on,
            self.sessions,
            self.last_close,
            self.valued_at,
            round(self.value(), 2),
            round(self.value(NOTHING), 2),
            round(self.value(LAST_CLOSE), 2),
        )


@dataclass(frozen=True)
class DelistedRecord:
    """A position delisted on a day, as the AI portfolio's day record lists it
    (`DelistedPosition.record`; JSON: dates as ISO text)."""

    symbol: str
    quantity: int
    last_row: date
    delisted_on: date
    sessions_without_row: int
    last_close: float
    valued_at: str  # last close | corporate action | nothing
    value: float
    value_nothing: float
    value_last_close: float

    def to_json(self) -> dict[str, JsonValue]:
        return {f.name: to_plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_json(cls, stored: Mapping[str, JsonValue]) -> DelistedRecord:
        dates, known = {"last_row", "delisted_on"}, {f.name for f in fields(cls)}
        return cls(**{k: date.fromisoformat(str(v)) if k in dates else v for k, v in stored.items() if k in known})


@dataclass(frozen=True)
class BookView:
    """A book's holdings under the rule on a day: `names`, what the book plans and sizes on
    (every held name but the delisted), the delisted positions, and `carried`: a held name
    without a row that is not yet delisted, at its last close with no trades, for a market
    that does not price it (the store's market days look back only so far)."""

    names: dict[str, int]
    delisted: tuple[DelistedPosition, ...] = ()
    carried: dict[str, MarketDay] = field(default_factory=dict)
    # each carried or delisted name's state in words (`Absence.describe`,
    # `DelistedPosition.describe`): what its position shows
    stopped: dict[str, str] = field(default_factory=dict)

    def with_carried(self, market: Mapping[str, MarketDay]) -> dict[str, MarketDay]:
        """`market` with the carried names it lacks, and each carried name it has (an earlier
        session's day: its close, less a dividend since where the market took it off) read
        as a day without a row: TRAPPED alone, not slow by an earlier session's volumes
        (portfolio/rails.py `exit_state`)."""
        out = {**self.carried, **market}
        for symbol in self.carried:
            out[symbol] = replace(out[symbol], without_row=True)
        return out

    def value(self, reading: str | None = None) -> float:
        """The delisted positions' value under `reading` (the rule's by default)."""
        return sum(d.value(reading) for d in self.delisted)

    def valuation(self, cash: float, market: Mapping[str, MarketDay]) -> Valuation:
        """Equity and liquid equity (portfolio/rails.py `value_positions` over `names`) with
        each delisted position at the rule's value, all of it out of liquid equity."""
        valuation = value_positions(cash, self.names, self.with_carried(market))
        for position in self.delisted:
            worth = position.value()
            if worth:
                valuation.market_value += worth
                valuation.discounts[position.symbol] = worth
        return valuation


def book_view(held: Mapping[str, int], absences: Mapping[str, Absence], rule: DelistingRule, day: date) -> BookView:
    """`held` on `day` under `rule`: `absences` says, for each held name without a row on
    the day, its last row and how long it has gone without one."""
    names, delisted, carried, stopped = {}, [], {}, {}
    for symbol, quantity in held.items():
        absence = absences.get(symbol)
        if quantity <= 0 or absence is None:
            names[symbol] = quantity
            continue
        if absence.delisted_on is None:
            names[symbol] = quantity
            carried[symbol] = absence.market_day(symbol)
            stopped[symbol] = absence.describe(rule)
            continue
        delisted.append(
            DelistedPosition(
                symbol,
                quantity,
                absence.last_row,
                absence.delisted_on,
                absence.sessions,
                absence.last_close,
                rule.settlement(symbol, day, absence.last_row),
                rule.reading,
            )
        )
    stopped |= {d.symbol: d.describe() for d in delisted}
    return BookView(names, tuple(sorted(delisted, key=lambda d: d.symbol)), carried, stopped)


# ---- the store's reading, for the live book and the positions -------------------------------
def stored_rule(conn: Connection, settings: DelistingSettings, day: date, symbols: Iterable[str]) -> DelistingRule:
    """The rule the settings state, with the stored corporate actions that give a value to
    `symbols` by `day` (`stored_settlements`) and the exchange's DELISTING notices of them.
    A name is delisted from the notice on, whatever the count: the notice a trade in it is
    refused with (`delisted_since`), so its positions read DELISTED, not carried at their
    last close with the rail's TRAPPED and SLOW_EXIT flags."""
    wanted = sorted(set(symbols))
    return DelistingRule.of(settings, stored_settlements(conn, day, wanted), stored_notices(conn, day, wanted))


def stored_notices(conn: Connection, day: date, symbols: Iterable[str]) -> list[Notice]:
    """The DELISTING notices stored for `symbols` up to `day`, with or without an amount."""
    wanted = sorted(set(symbols))
    if not wanted:
        return []
    c = tables.corporate_actions.c
    where = [c.kind == "DELISTING", c.action_date <= day, c.symbol.in_(wanted)]
    return [Notice(r["symbol"], r["action_date"]) for r in current_rows(conn, tables.corporate_actions, where=where)]


def stored_settlements(conn: Connection, day: date, symbols: Iterable[str]) -> list[Settlement]:
    """The DELISTING corporate actions stored for `symbols` up to `day` with a positive,
    finite amount: the value per share holders receive (a notice without one gives none)."""
    wanted = sorted(set(symbols))
    if not wanted:
        return []
    c = tables.corporate_actions.c
    rows = current_rows(
        conn, tables.corporate_actions, where=[c.kind == "DELISTING", c.action_date <= day, c.symbol.in_(wanted)]
    )
    return [
        Settlement(r["symbol"], r["action_date"], float(r["amount"]))
        for r in rows
        if r["amount"] is not None and math.isfinite(r["amount"]) and r["amount"] > 0
    ]


def stored_absences(
    conn: Connection, day: date, symbols: Iterable[str], rule: DelistingRule, count_of: date | None = None
) -> dict[str, Absence]:
    """Each of `symbols` whose latest stored row on or before `day` is older than `day`: that
    row's date and close, and the sessions after it up to `day` (dates on which the store
    holds any price), with the one on which the gap reached `rule.after_sessions`. A name
    never priced is not absent: it has nothing to carry (views/valuation.py: UNPRICED).

    The close is on the share count the holdings are (`count_of`, else `day`: a later
    session's, as portfolio/market.py `market_days` reads it): divided by
    `store.splits.factor_between` of the splits with an ex-date after the row, so a name
    consolidated while it has no row is carried and delisted at its close on the count it
    is held on, not ten times below it."""
    wanted = sorted(set(symbols))
    if not wanted:
        return {}
    c = tables.eod_prices.c
    latest = conn.execute(
        select(c.symbol, func.max(c.trading_date)).where(c.symbol.in_(wanted), c.trading_date <= day).group_by(c.symbol)
    ).all()
    gone = {symbol: last for symbol, last in latest if last < day}
    if not gone:
        return {}
    closes = {
        (r["symbol"], r["trading_date"]): float(r["close"])
        for r in current_rows(
            conn, tables.eod_prices, where=[c.symbol.in_(sorted(gone)), c.trading_date.in_(sorted(set(gone.values())))]
        )
    }
    sessions = stored_sessions(conn, min(gone.values()), day)
    through = max(day, count_of) if count_of is not None else day
    splits = stored_splits(conn, through, gone, after=min(gone.values()))
    return {
        symbol: absence(
            rule, symbol, last, closes[(symbol, last)] / factor_between(splits, symbol, last, through), sessions, day
        )
        for symbol, last in gone.items()
    }


def delisted_since(conn: Connection, settings: DelistingSettings, symbol: str, day: date) -> str | None:
    """Where the store knows `symbol` was delisted by `day`, a sentence saying when and how
    it knows, else None: the exchange's latest DELISTING notice dated after the name's last
    row on or before `day` (a row since is a name trading again: a ticker reused), else the
    rule's session (`stored_absences`: MARKETINTEL_DELIST_AFTER_SESSIONS without a row). What
    a trade or confirmation of the name is refused with, and what its preview says fills
    nothing (portfolio/trading.py `closed_to_trading`), whether or not a close is left to
    check a price against."""
    rule = stored_rule(conn, settings, day, [symbol])
    absence = stored_absences(conn, day, [symbol], rule).get(symbol)
    p = tables.eod_prices.c
    last_row = conn.execute(select(func.max(p.trading_date)).where(p.symbol == symbol, p.trading_date <= day)).scalar()
    first_without = stored_sessions(conn, last_row, day)[:1] if absence is not None and last_row is not None else []
    notice = rule.notice(symbol, last_row, day, next(iter(first_without), None))
    last = f"{absence.last_close:,.2f} on {absence.last_row.isoformat()}" if absence is not None else None
    if notice is not None:
        return f"{symbol} was delisted on {notice.isoformat()} (the exchange's delisting notice" + (
            f"; its last close was {last})" if last else ")"
        )
    if absence is not None and absence.delisted_on is not None:
        return (
            f"{symbol} was delisted on {absence.delisted_on.isoformat()} (no row for {rule.after_sessions} sessions "
            f"after its last close, {last}: the delisting rule)"
        )
    return None
