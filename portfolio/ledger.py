"""The portfolio ledger: portfolios, trades and cash entries, and what follows from them.

Nothing here is ever updated: a trade is a `trades` row plus its `cash_entries` (the gross
amount and the fee, separately); cash is the sum of a portfolio's cash entries; positions
are the replay of its trades in execution order. Money is `Decimal` throughout.

Cost basis is average cost, buy fees included; a sell realises proceeds - fees - average
cost x quantity and leaves the average cost of the rest unchanged. A position's purchase
date is the date of the buy that opened it (a position sold to zero and bought again
starts a new date).

Every write that checks a balance first happens inside `portfolio_transaction`, which
serialises writers per portfolio (see its docstring), so two concurrent requests can
never both spend the same cash or sell the same shares.

The rows it reads and appends are typed in `portfolio.rows` (TypedDicts: they are the
store's rows, read and written as plain dicts).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction

from sqlalchemy import Connection, Engine, Row, Select, func, select
from sqlalchemy.sql.elements import ColumnElement

from market.clock import exchange_date
from market.costs import CostBreakdown
from market.errors import InvalidInputError, NotFoundError
from market.money import MAX_PRICE, to_cents, whole_cents
from portfolio.rows import (
    CashEntry,
    LedgerRow,
    NewTradeRow,
    PortfolioRow,
    RecordedTrade,
    ReplayEvent,
    TradeCashEntry,
    TradeRow,
)
from store import tables
from store.history import append_history, current_rows
from store.splits import Split, renamed_on, stored_splits
from store.transactions import hold_lock, write_transaction

AI_PORTFOLIO, HOUSE_PORTFOLIO = "AI", "HOUSE"
ZERO = Decimal("0")
CENT = Decimal("0.000001")


class TradeRejected(InvalidInputError):
    """A trade the ledger refuses (the reason in `detail`): a value it cannot hold, the day's
    price band, the rails, a sale of shares not held, the cash it would leave."""


class UnreplayableTrade(TradeRejected):
    """A trade refused because the ledger with it would not replay: a later trade sells
    shares it leaves unheld (`_replays`)."""


class ShortOfCash(TradeRejected):
    """A trade refused for the cash it would take (a buy over the cash, fees past a sale's
    proceeds, an entry leaving the balance below zero)."""


class CashRejected(TradeRejected):
    """A deposit or withdrawal refused (the balance it would leave); handled as a trade's
    refusal wherever one is, its detail saying what it refuses."""


def latest_executed_day(conn: Connection, portfolio_id: str) -> date | None:
    """The latest day the portfolio executed (`portfolio_days`), or None before its first: a
    book executes its days in date order, so no day before it can be executed any more."""
    c = tables.portfolio_days.c
    return conn.execute(select(func.max(c.trading_date)).where(c.portfolio_id == portfolio_id)).scalar()


def executed_on(conn: Connection, portfolio_id: str, day: date) -> bool:
    """Whether the portfolio executed `day` (a `portfolio_days` row for it)."""
    c = tables.portfolio_days.c
    query = select(c.trading_date).where(c.portfolio_id == portfolio_id, c.trading_date == day).limit(1)
    return conn.execute(query).first() is not None


def client_portfolio_id(client_id: str) -> str:
    return f"client:{client_id}"


def portfolio_transaction(engine: Engine, portfolio_id: str) -> AbstractContextManager[Connection]:
    """One transaction holding the portfolio's write lock.

    Postgres: a transaction-scoped advisory lock on the portfolio (the shared stage
    mechanism). It serialises exactly what a `SELECT ... FOR UPDATE` on the portfolio row
    would, but the service role may not take row locks: FOR UPDATE needs the UPDATE
    privilege, which the append-only role does not have. SQLite: BEGIN IMMEDIATE.
    """
    return write_transaction(engine, _lock_name(portfolio_id))


def lock_portfolio(conn: Connection, portfolio_id: str) -> None:
    """Take the portfolio's write lock, the one `portfolio_transaction` holds, in the
    transaction `conn` is in (another writer's: T0's day), until that transaction ends: a
    trade or cash movement of the portfolio waits for it, and it waits for theirs."""
    hold_lock(conn, _lock_name(portfolio_id))


def _lock_name(portfolio_id: str) -> str:
    return f"portfolio:{portfolio_id}"


def ensure_portfolio(conn: Connection, portfolio_id: str, kind: str, client_id: str | None = None) -> None:
    append_history(conn, tables.portfolios, [{"portfolio_id": portfolio_id, "kind": kind, "client_id": client_id}])


def get_portfolio(conn: Connection, portfolio_id: str) -> PortfolioRow:
    """The portfolio's current row; NotFoundError when there is none, naming the client's
    portfolio when `portfolio_id` is a client id (`portfolio open acme` opens client:acme,
    and the next command was given `acme`)."""
    rows = current_rows(conn, tables.portfolios, where=[tables.portfolios.c.portfolio_id == portfolio_id])
    if not rows:
        theirs = client_portfolio_id(portfolio_id)
        meant = current_rows(conn, tables.portfolios, where=[tables.portfolios.c.portfolio_id == theirs])
        hint = f"; client {portfolio_id}'s portfolio is '{theirs}'" if meant else ""
        raise NotFoundError(f"no portfolio '{portfolio_id}'{hint}")
    return rows[0]


def writable_portfolio(conn: Connection, portfolio_id: str) -> PortfolioRow:
    """The portfolio a manual trade, a cash movement or a statement sync is booked into: a
    client's or the house portfolio (NotFoundError when there is none). The AI portfolio is
    written by its own executor only (portfolio/ai.py `write_day`): a write path that names
    it (the CLI takes any id; REST and GraphQL reach only the caller's own) is refused,
    InvalidInputError, before anything is read or booked."""
    row = get_portfolio(conn, portfolio_id)
    if row["kind"] == AI_PORTFOLIO:
        raise InvalidInputError(
            f"portfolio '{portfolio_id}' is the AI book's own, written only by its executor: trade, move cash or "
            "sync a statement in a client's portfolio or the house portfolio"
        )
    return row


def trade_rows(conn: Connection, portfolio_id: str, until: datetime | None = None) -> list[TradeRow]:
    t = tables.trades
    query = select(t).where(t.c.portfolio_id == portfolio_id)
    if until is not None:
        query = query.where(t.c.executed_at <= until)
    return [dict(r._mapping) for r in conn.execute(query.order_by(t.c.executed_at, t.c.id))]


LEDGER_COLUMNS = (
    "id",
    "trade_id",
    "portfolio_id",
    "trading_date",
    "executed_at",
    "symbol",
    "side",
    "quantity",
    "price",
    "fees",
    "origin",
    "recorded_at",
)


def ledger_rows(
    conn: Connection, portfolio_id: str, after: date | None = None, through_id: int | None = None
) -> list[LedgerRow]:
    """The trades with what a replay reads (not their rationale documents: a long book's
    JSON costs more to decode than the replay itself); `after`: only those dated after that
    day, `through_id`: only those stored up to that id (a read model's watermark)."""
    t = tables.trades
    query = select(*(t.c[name] for name in LEDGER_COLUMNS)).where(t.c.portfolio_id == portfolio_id)
    if after is not None:
        query = query.where(t.c.trading_date > after)
    rows = [dict(r._mapping) for r in conn.execute(query.order_by(t.c.executed_at, t.c.id))]
    # The id bound is applied here: in the query SQLite reads the book by id (all of it)
    # rather than by date, and what is dated after a day is the smaller set.
    return rows if through_id is None else [r for r in rows if r["id"] <= through_id]


def dated_cash(*columns: ColumnElement) -> Select:
    """`columns` of the cash entries beside their trade's trading date (None for an entry
    of no trade), for `cash_day`: the one read of the day each cash entry belongs to."""
    c, t = tables.cash_entries.c, tables.trades.c
    joined = tables.cash_entries.outerjoin(tables.trades, c.trade_id == t.trade_id)
    return select(*columns, t.trading_date.label("trade_date")).select_from(joined)


def cash_days(rows: Sequence[Row]) -> list[date]:
    """The day each of a book's cash entries belongs to, in the order of `rows` (`dated_cash`
    rows with `id`, `trade_date` and `effective_at`, any order): its `cash_day`, or the
    trading date of a trade entered after it where that is earlier. A trade entered between
    sessions (a weekend, before the open) belongs to the session before, and so does the
    money entered before it that its cash was checked against: a Saturday deposit that paid
    for a trade dated Friday is Friday's, or Friday would spend cash the book did not have.
    The track record's rule (views/book_record.py); a statement sync reads each entry's own
    `cash_day` (portfolio/statements.py `_cash_entries`): a broker's Friday statement holds
    no money deposited on the Saturday, whatever was traded with it."""
    days = [cash_day(r.trade_date, r.effective_at) for r in rows]
    earliest = date.max
    for i in sorted(range(len(rows)), key=lambda i: rows[i].id, reverse=True):
        if rows[i].trade_date is not None:
            earliest = min(earliest, rows[i].trade_date)
        days[i] = min(days[i], earliest)
    return days


def cash_day(trade_date: date | None, effective_at: datetime) -> date:
    """The day a cash entry belongs to: its trade's trading date for a trade's gross and fee
    (a trade entered after the close or on a weekend belongs to its session, and its cash
    with it), else the exchange date it took effect (a stored timestamp without a zone is UTC)."""
    if trade_date is not None:
        return trade_date
    return exchange_date(effective_at if effective_at.tzinfo is not None else effective_at.replace(tzinfo=UTC))


def cash_balance(conn: Connection, portfolio_id: str) -> Decimal:
    c = tables.cash_entries.c
    amounts = conn.execute(select(c.amount).where(c.portfolio_id == portfolio_id)).scalars()
    return sum(amounts, ZERO)


@dataclass
class Position:
    symbol: str
    quantity: int = 0
    cost_basis: Decimal = ZERO
    opened_on: date | None = None
    realized_pnl: Decimal = ZERO
    renamed_to: str | None = None  # the symbol a ticker change carried the position on under (`_apply_rename`)
    renamed_until: date | None = None  # the day another company took the old ticker (`Split.until`)

    def carried_on(self, day: date) -> bool:
        """Whether what is booked under this symbol on `day` is carried on under `renamed_to`
        (a ticker change, until another company took the ticker)."""
        return self.renamed_to is not None and (self.renamed_until is None or day < self.renamed_until)

    @property
    def average_cost(self) -> Decimal:
        return (self.cost_basis / self.quantity).quantize(CENT) if self.quantity else ZERO


def split_quantity(quantity: int, factor: float) -> int:
    """Whole shares after a split of `factor` (shares after per share before): a fraction
    is dropped (the exchange settles it in cash at a price the notice does not carry). The
    factor is read as the nearest fraction with a denominator up to 10,000, so 30/11 is
    30/11 (not 2.7272...7, one share short on 11,000,000), an amount published as
    1.333333 is 4/3, and every factor T0 accepts (1/1,000 to 1,000) is exact."""
    return math.floor(quantity * _ratio(factor))


def _ratio(factor: float) -> Fraction:
    """A split's factor as the exact ratio `split_quantity` reads it."""
    return Fraction(factor).limit_denominator(10_000)


def _known_when_entered(split: Split, trade: LedgerRow) -> bool:
    """Whether the store knew of `split` when `trade` was entered: both times are the
    store's own clock (the notice row's and the trade row's recorded_at), so a replay of
    simulated days compares them as well as a live day does. Unknown times count as known."""
    entered = trade.get("recorded_at")
    return split.known_at is None or entered is None or entered >= split.known_at


def _id_or_last(trade: LedgerRow) -> float:
    return trade["id"] if trade.get("id") is not None else math.inf  # a trade not stored yet comes after its peers


def capital_order(split: Split) -> tuple[date, bool, str]:
    """The order the capital changes of one ex-date apply in: the renames first, so a split
    of that ex-date applies to the holding carried on, whether the notice names the old
    symbol or the new one (`_apply_split` follows `renamed_to`)."""
    return (split.ex_date, split.new_symbol is None, split.symbol)


def in_replay_order(trades: Iterable[LedgerRow], splits: Iterable[Split] = ()) -> list[ReplayEvent]:
    """Trades and splits in the order the ledger replays them, as ("trade", row) and
    ("split", Split). Trades by trading date, then execution (a statement's trades, dated
    the statement's day and executed when it was uploaded, fall where the statement says).
    A split comes before the first trade after its ex-date, or of its ex-date entered
    once the store knew of it (T0 stores the notice at the ex-date's close): a trade of
    the ex-date entered before then was checked and priced on the old count, and is
    replayed before the split multiplies what is left."""
    ordered = sorted(trades, key=lambda t: (t["trading_date"], t["executed_at"], _id_or_last(t)))
    pending = sorted(splits, key=capital_order)
    events: list[ReplayEvent] = []
    for trade in ordered:
        due = [
            x
            for x in pending
            if x.ex_date < trade["trading_date"]
            or (x.ex_date == trade["trading_date"] and _known_when_entered(x, trade))
        ]
        events.extend(("split", x) for x in due)
        pending = [x for x in pending if x not in due]
        events.append(("trade", trade))
    events.extend(("split", x) for x in pending)
    return events


def replay(
    trades: Iterable[LedgerRow], splits: Iterable[Split] = (), book: dict[str, Position] | None = None
) -> dict[str, Position]:
    """Positions from trades in the order of `in_replay_order` (the ones sold to zero are
    kept for their realised PnL; callers filter on quantity).

    `book`: the positions to continue from, changed in place and returned (a read model
    replaying day by day, portfolio/book_days.py): replaying the trades of dates after a
    day, with the splits of those dates, onto the positions at that day's close gives what
    replaying everything from the start gives, since a split of an ex-date on or before
    that day comes before every trade dated after it.

    `splits` (store.splits) multiply a holding from their ex-date on: the quantity becomes
    `split_quantity` and the cost basis of those whole shares stays, so the average cost
    is divided by the factor and the split is neither a gain nor a loss; the fraction of a
    share it drops takes its share of the cost basis as a realised loss (`_apply_split`).
    Pass only the splits known at the date the positions are for."""
    book = {} if book is None else book
    for kind, item in in_replay_order(trades, splits):
        if kind == "split":
            _apply_split(book, item)
            continue
        trade = item
        position = _holding(book, trade["symbol"], trade["trading_date"])
        quantity, price, fees = int(trade["quantity"]), Decimal(trade["price"]), Decimal(trade["fees"])
        if trade["side"] == "BUY":
            if position.quantity == 0:
                position.opened_on = trade["trading_date"]
            position.quantity += quantity
            position.cost_basis += quantity * price + fees
        else:
            if quantity > position.quantity:
                raise InvalidInputError(
                    f"ledger of {trade['portfolio_id']} sells {quantity} {trade['symbol']} holding {position.quantity}",
                    trade=trade,
                    held=position.quantity,
                )
            released = (position.cost_basis * quantity / position.quantity) if position.quantity else ZERO
            position.realized_pnl += quantity * price - fees - released
            position.cost_basis -= released
            position.quantity -= quantity
            if position.quantity == 0:
                position.cost_basis, position.opened_on = ZERO, None
    return book


@dataclass(frozen=True)
class BrokenBook:
    """A client's book the splits being stored would leave unreplayable
    (`books_broken_by_splits`): the first trade that no longer replays and what is held
    then. `moved`: the stored split in force for that trade that the same transaction
    withdraws (an import re-dating a split stored on the wrong day, `ingest` `Redated`),
    and `moved_to` the day it applies from instead: the client traded on the count the
    store held then. None: a split stored late, after a trade on the old count."""

    portfolio_id: str
    side: str
    quantity: int
    symbol: str
    trading_date: date
    trade_id: str
    held: int
    moved: Split | None = None
    moved_to: date | None = None

    def line(self) -> str:
        """The portfolio, the trade and what is held then, with why."""
        day = self.trading_date.isoformat()
        head = f"{self.portfolio_id}'s {self.side} of {self.quantity} {self.symbol} on {day} ({self.trade_id})"
        if self.moved is None:
            return f"{head} would sell more than the {self.held} held on the new count"
        to = f"from {self.moved_to.isoformat()}" if self.moved_to else "re-dated"
        return (
            f"{head} was recorded on the count the store held then ({self.symbol}'s split {self.moved.factor:g} "
            f"from {self.moved.ex_date.isoformat()}) and would sell more than the {self.held} held with the split {to}"
        )


def books_broken_by_splits(conn: Connection, symbols: Iterable[str], before_id: int) -> list[BrokenBook]:
    """One `BrokenBook` for each portfolio that has traded `symbols` whose ledger replays
    with the splits stored up to the corporate action `before_id` and not with those stored
    since (an import's or a T0 day's, in its transaction): a split stored after a client
    traded past its ex-date on the old count (a 1-for-10 consolidation imported or
    delivered late, after a sale of 60 of the 100 bought), or a stored split the
    transaction re-dates after a client traded on it, leaves the sale selling more than the
    replay holds, and the book unreadable for good (append-only). Empty when every book
    still replays.

    Each portfolio's write lock (`lock_portfolio`) is taken before its book is read, in
    portfolio-id order, and held to the caller's commit: a sale committed while the check
    ran, unseen by it, passed its own check on the old count (the split not yet committed)
    and broke the book all the same. Now such a sale either commits first, and this check
    reads it and refuses the split, or waits for the split's commit and is checked on the
    new count."""
    t = tables.trades.c
    held = conn.execute(select(t.portfolio_id).where(t.symbol.in_(sorted(set(symbols)))).distinct()).scalars()
    broken = []
    for portfolio_id in sorted(held):
        lock_portfolio(conn, portfolio_id)
        trades = ledger_rows(conn, portfolio_id)
        traded = {r["symbol"] for r in trades}
        before = stored_splits(conn, None, traded, through_id=before_id)
        try:
            replay(trades, before)
        except InvalidInputError:
            continue  # broken before: not this split's doing
        after = stored_splits(conn, None, traded)
        try:
            replay(trades, after)
        except InvalidInputError as exc:
            broken.append(_broken(portfolio_id, exc.context["trade"], exc.context["held"], before, after))
    return broken


def _same(split: Split) -> tuple:
    """What makes two reads of the splits the same split (not when the store learned of it)."""
    return split.symbol, split.ex_date, split.factor, split.new_symbol


def _broken(portfolio_id: str, trade: dict, held: int, before: list[Split], after: list[Split]) -> BrokenBook:
    """The `BrokenBook` of `trade`: with the split in force for it that `after` no longer
    holds (withdrawn, re-dated) and the day the symbol's split applies from instead."""
    symbol, day = trade["symbol"], trade["trading_date"]
    kept, was = {_same(s) for s in after}, {_same(s) for s in before}
    moved = next((s for s in before if s.symbol == symbol and s.ex_date <= day and _same(s) not in kept), None)
    moved_to = next(
        (
            s.ex_date
            for s in after
            if moved and s.symbol == symbol and s.ex_date > moved.ex_date and _same(s) not in was
        ),
        None,
    )
    return BrokenBook(
        portfolio_id, trade["side"], trade["quantity"], symbol, day, trade["trade_id"], held, moved, moved_to
    )


def _holding(book: dict[str, Position], symbol: str, day: date) -> Position:
    """The position a trade under `symbol` books into: the symbol's, or where a ticker
    change carried it on (`renamed_to`), the new symbol's (a trade under the old symbol
    entered before the rename was stored is the company's, as the exchange booked it),
    unless another company had taken the old ticker by `day` (`Position.carried_on`)."""
    position = book.setdefault(symbol, Position(symbol))
    while position.carried_on(day):
        position = book.setdefault(str(position.renamed_to), Position(str(position.renamed_to)))
    return position


def _apply_rename(book: dict[str, Position], rename: Split) -> None:
    """A ticker change from its ex-date: the old symbol's position carries on under the new
    one, the same shares, cost basis, purchase date and realised PnL (no trade, no fee),
    added to any the new symbol already holds; the old symbol's position is left empty,
    pointing at the new one (`_holding`)."""
    old = book.setdefault(rename.symbol, Position(rename.symbol))
    new = book.setdefault(str(rename.new_symbol), Position(str(rename.new_symbol)))
    if old.quantity:
        opened = [d for d in (old.opened_on, new.opened_on if new.quantity else None) if d is not None]
        new.opened_on = min(opened, default=None)
    new.quantity += old.quantity
    new.cost_basis += old.cost_basis
    new.realized_pnl += old.realized_pnl
    old.quantity, old.cost_basis, old.opened_on, old.realized_pnl = 0, ZERO, None, ZERO
    old.renamed_to, old.renamed_until = new.symbol, rename.until


def renamed_said(rename: Split) -> str:
    """Why a trade under a renamed symbol is refused from the rename's ex-date."""
    return (
        f"{rename.symbol} trades as {rename.new_symbol} from {rename.ex_date.isoformat()} (a ticker change; a "
        f"holding of {rename.symbol} is held as {rename.new_symbol}): enter the trade under {rename.new_symbol}"
    )


def _apply_split(book: dict[str, Position], split: Split) -> None:
    """The holding on the split's count: its whole shares (`split_quantity`) keep their
    cost; the fraction of a share dropped takes its share of the cost basis out as a
    realised loss, as a sale for nothing would (no cash in lieu is modelled: the exchange
    settles it at a price the notice does not carry). Kept and realised add up to the
    basis exactly; a consolidation that leaves less than one share realises all of it. A
    rename (`new_symbol`) carries the holding on under the new symbol (`_apply_rename`),
    and a split named under the old symbol after it applies to the holding carried on."""
    if split.new_symbol is not None:
        _apply_rename(book, split)
        return
    position = book.get(split.symbol)
    while position is not None and position.carried_on(split.ex_date):
        position = book.get(str(position.renamed_to))
    if position is None or not position.quantity:
        return
    exact = position.quantity * _ratio(split.factor)
    position.quantity = math.floor(exact)
    dropped = 1 - position.quantity / exact  # of the cost basis, a Fraction
    if dropped:
        released = position.cost_basis * dropped.numerator / dropped.denominator
        position.realized_pnl -= released
        position.cost_basis -= released
    if position.quantity == 0:
        position.cost_basis, position.opened_on = ZERO, None


def holdings(conn: Connection, portfolio_id: str, as_of: date | None = None) -> dict[str, Position]:
    """Open positions at the close of `as_of`: the trades dated on or before it, with the
    splits whose ex-date is on or before it (every trade and split when None: the
    positions as they stand now)."""
    trades = ledger_rows(conn, portfolio_id)
    if as_of is not None:
        trades = [t for t in trades if t["trading_date"] <= as_of]
    return open_positions(trades, stored_splits(conn, as_of, {t["symbol"] for t in trades}), as_of)


def open_positions(trades: list[LedgerRow], splits: Iterable[Split], as_of: date | None) -> dict[str, Position]:
    """`holdings` of trades and splits read beforehand: the trades dated on or before
    `as_of` with the splits whose ex-date is on or before it (all of both when None). A
    split of a name the trades never held changes nothing, so `splits` may hold more."""
    if as_of is not None:
        trades = [t for t in trades if t["trading_date"] <= as_of]
        splits = [x for x in splits if x.ex_date <= as_of]
    return {s: p for s, p in replay(trades, splits).items() if p.quantity > 0}


@dataclass
class TradeRequest:
    portfolio_id: str
    trading_date: date
    executed_at: datetime
    symbol: str
    side: str
    quantity: int
    price: Decimal
    fees: Decimal = ZERO
    origin: str = "MANUAL"
    rationale: dict = field(default_factory=dict)
    idempotency_key: str | None = None
    trade_id: str = ""
    # What the fill paid (market/costs.py), stored as the trade's spread_cost and
    # impact_cost; None for a trade at the client's own price: no spread or impact.
    costs: CostBreakdown | None = None


@dataclass(frozen=True)
class CheckedTrade:
    """A trade that passed the ledger's checks, as it will be stored: the `trades` row,
    its cash entries (none with `moves_cash=False`) and its gross amount in cents."""

    row: NewTradeRow
    entries: tuple[TradeCashEntry, ...]
    gross: Decimal

    @property
    def replayed(self) -> LedgerRow:
        """The row as the ledger replays it before it is stored: no id yet (it comes after
        its peers) and entered knowing every stored split (recorded_at None)."""
        return {**self.row, "id": None, "recorded_at": None}


def record_trade(conn: Connection, request: TradeRequest, *, moves_cash: bool = True) -> RecordedTrade:
    """Check the trade against the ledger as it is now and append it with its cash entries.

    Refuses (TradeRejected) a sell of more than is held and a buy that costs more than the
    cash; call it inside `portfolio_transaction` so the check and the write are atomic.
    `moves_cash=False` is for statement synchronisation, whose cash is reconciled apart.
    """
    book = check_on_ledger(conn, request, moves_cash=moves_cash)
    checked, trades, splits = book.checked, book.trades, book.splits
    append_trade(conn, checked)
    after = open_positions([*trades, checked.replayed], splits, request.trading_date).get(request.symbol)
    return {
        **checked.row,
        "gross": checked.gross,
        "position_after": after.quantity if after else 0,
        "cash_after": cash_balance(conn, request.portfolio_id),
    }


@dataclass(frozen=True)
class LedgerCheck:
    """A trade that passed `check_on_ledger`, with the ledger it was checked against."""

    checked: CheckedTrade
    trades: list[LedgerRow]
    splits: list[Split]


def check_on_ledger(
    conn: Connection, request: TradeRequest, *, moves_cash: bool = True, owed: Decimal = ZERO
) -> LedgerCheck:
    """The trade checked against the ledger as stored now, writing nothing: the checks
    `record_trade` books under, and a trade preview states (portfolio/trading.py
    `preview_trade`), so a refusal is the same sentence on both. `owed` is cash the
    booking would credit before it (the dividends due, `dividends.owed`), none once it has."""
    _terms(request)  # a malformed request is refused before the ledger is read
    trades = ledger_rows(conn, request.portfolio_id)  # read once: the checks replay it in memory
    splits = stored_splits(conn, None, {t["symbol"] for t in trades} | {request.symbol})
    cash = cash_balance(conn, request.portfolio_id) + owed
    return LedgerCheck(check_trade(request, trades, splits, cash, moves_cash=moves_cash), trades, splits)


def _terms(request: TradeRequest) -> tuple[Decimal, Decimal]:
    """The request's price (to the ledger's precision) and fees (in cents), or
    TradeRejected for a side, quantity, price or fee the ledger cannot hold (a price past
    `market.money.MAX_PRICE`: a statement sync's price for the shares it brings in is its
    cost basis less the book's over those shares, which a few shares can take past it). A price keeps
    six decimals for the trades the service prices itself (an AI fill with its costs, a
    statement's average cost); a MANUAL trade's price and fees are the client's own money
    and must be whole cents (market.money.whole_cents, the rule every transport applies),
    so its stored price and the cash it moves agree to the cent whichever way it came."""
    if request.side not in ("BUY", "SELL"):
        raise TradeRejected(f"side must be buy or sell, not '{request.side}'")
    if isinstance(request.quantity, bool) or not isinstance(request.quantity, int) or request.quantity <= 0:
        raise TradeRejected(f"quantity must be a positive whole number of shares, not {request.quantity!r}")
    price, fees = Decimal(request.price), Decimal(request.fees)
    if price.is_finite() and price > MAX_PRICE:  # past the store's price column (and quantize's digits)
        raise TradeRejected(f"price {price:,.2f} is over the limit of {MAX_PRICE:,} per share")
    price = price.quantize(CENT) if price.is_finite() else price
    if fees.is_finite():
        fees = to_cents(fees)  # money moved is stored in cents (market/money.to_cents)
    if not price.is_finite() or price < 0 or (price == 0 and not written_off(request.side, request.origin)):
        raise TradeRejected(f"price must be positive, not {request.price}")
    if not fees.is_finite() or fees < 0:
        raise TradeRejected(f"fees must be zero or more, not {request.fees}")
    if request.origin == "MANUAL":
        try:
            whole_cents(Decimal(request.price), "price")
            whole_cents(Decimal(request.fees), "fees")
        except InvalidInputError as error:
            raise TradeRejected(error.detail) from None
    return price, fees


def written_off(side: str, origin: str) -> bool:
    """Whether a trade of `side` and `origin` may be priced at 0: only a statement sync's
    sale, the holding of a name delisted with nothing paid to its holders leaving the book
    (portfolio/statements.py `_drop_price`; sql 0029). Replayed like any sale, it realises
    its whole cost basis as a loss and, booked moving no cash, moves none."""
    return side == "SELL" and origin == "STATEMENT_SYNC"


def record_trades(conn: Connection, requests: Sequence[TradeRequest], *, moves_cash: bool = True) -> None:
    """Trades booked as one, in their order: each checked against the ledger with the ones
    before it (`check_trade`), and the ledger with all of them replayed once (`_replays`),
    so a pair whose first alone would not replay is booked whole (a statement sync's sale
    of a holding at its cost basis and buy-back at the statement's, which a later sale of
    the name needs the shares of). Nothing is stored when one is refused. Call inside
    `portfolio_transaction`."""
    trades = ledger_rows(conn, requests[0].portfolio_id) if requests else []
    splits = stored_splits(conn, None, {t["symbol"] for t in trades} | {r.symbol for r in requests})
    cash = cash_balance(conn, requests[0].portfolio_id) if requests else ZERO
    checked: list[CheckedTrade] = []
    for request in requests:
        booked = [*trades, *(c.replayed for c in checked)]
        checked.append(check_trade(request, booked, splits, cash, moves_cash=moves_cash, replays=False))
        cash = balance_after(cash, checked[-1].entries)
    _replays([*trades, *(c.replayed for c in checked)], splits)
    for trade in checked:
        append_trade(conn, trade)


def check_trade(
    request: TradeRequest,
    trades: list[LedgerRow],
    splits: list[Split],
    cash: Decimal,
    *,
    moves_cash: bool = True,
    replays: bool = True,
) -> CheckedTrade:
    """The trade checked against a ledger read beforehand, touching no store: `trades` as
    `ledger_rows` reads them, `splits` every stored split of their symbols and the
    request's (any ex-date), `cash` the balance. Refuses (TradeRejected) what
    `record_trade` refuses, with the same messages; a trade under a symbol renamed on or
    before its trading date is refused naming the new symbol (`renamed_said`).
    `replays=False`: the whole ledger's replay is left to the caller (`record_trades`)."""
    price, fees = _terms(request)
    rename = renamed_on(splits, request.symbol, request.trading_date)
    if rename is not None:
        raise TradeRejected(renamed_said(rename))
    held = open_positions(trades, splits, request.trading_date).get(request.symbol)
    held_quantity = held.quantity if held else 0
    gross = to_cents(price * request.quantity)
    if request.side == "SELL" and request.quantity > held_quantity:
        raise TradeRejected(short_sale(request, held_quantity, trades, splits))
    if moves_cash:
        _check_cash(request, gross, fees, cash)
    checked = CheckedTrade(_trade_row(request, price, fees), _trade_entries(request, gross, fees, moves_cash), gross)
    if replays:
        _replays([*trades, checked.replayed], splits)
    return checked


def _replays(trades: list[LedgerRow], splits: list[Split]) -> None:
    """TradeRejected unless the whole ledger with the trades being entered still replays: a
    back-dated sell may not undo a later one (a trade entered now is entered knowing every
    stored split: recorded_at None)."""
    try:
        replay(trades, splits)
    except InvalidInputError as exc:
        raise UnreplayableTrade(f"the ledger would not hold: {exc.detail}") from exc


def short_sale(request: TradeRequest, held_quantity: int, trades: list[LedgerRow], splits: Iterable[Split]) -> str:
    """Why a sell of more than the portfolio holds on its trading date is refused, naming
    the shares of trades booked for a later session (a suggestion confirmed ahead of its
    session): they count from that session (`TradingCalendar.session_of`), as the
    positions' `pending_quantity` and `pending_until` say."""
    held = f"the portfolio holds {held_quantity}"
    later = [t for t in trades if t["symbol"] == request.symbol and t["trading_date"] > request.trading_date]
    booked = open_positions(trades, splits, None).get(request.symbol)
    pending = (booked.quantity if booked else 0) - held_quantity
    if later and pending > 0:
        until = max(t["trading_date"] for t in later).isoformat()
        held += f" on {request.trading_date.isoformat()}; {pending:,} more are pending until the {until} session"
    return f"cannot sell {request.quantity} {request.symbol}: {held}"


def _check_cash(request: TradeRequest, gross: Decimal, fees: Decimal, cash: Decimal) -> None:
    """A buy may not cost more than the cash, fees included; a sell's fees may not exceed
    the cash after the sale."""
    if request.side == "BUY" and gross + fees > cash:
        raise ShortOfCash(
            f"buying {request.quantity} {request.symbol} costs {gross + fees:,.2f} with fees; cash is {cash:,.2f}"
        )
    if request.side == "SELL" and fees > cash + gross:
        raise ShortOfCash(f"the fees of {fees:,.2f} exceed the cash after the sale")


def _trade_row(request: TradeRequest, price: Decimal, fees: Decimal) -> NewTradeRow:
    return {
        "trade_id": request.trade_id,
        "portfolio_id": request.portfolio_id,
        "trading_date": request.trading_date,
        "executed_at": request.executed_at,
        "symbol": request.symbol,
        "side": request.side,
        "quantity": request.quantity,
        "price": price,
        "fees": fees,
        "origin": request.origin,
        "rationale": request.rationale,
        "idempotency_key": request.idempotency_key,
        **_cost_columns(request.costs),
    }


def _trade_entries(
    request: TradeRequest, gross: Decimal, fees: Decimal, moves_cash: bool
) -> tuple[TradeCashEntry, ...]:
    """The trade's cash entries: the gross amount (paid for a buy, received for a sale) and
    the fee when there is one, apart; none when the trade moves no cash."""
    if not moves_cash:
        return ()
    amounts = [("gross", -gross if request.side == "BUY" else gross, "TRADE")]
    if fees:
        amounts.append(("fee", -fees, "FEE"))
    return tuple(
        {
            "entry_id": f"{request.trade_id}:{suffix}",
            "portfolio_id": request.portfolio_id,
            "amount": amount,
            "kind": kind,
            "trade_id": request.trade_id,
            "effective_at": request.executed_at,
        }
        for suffix, amount, kind in amounts
    )


def append_book(
    conn: Connection, portfolio_id: str, requests: Iterable[TradeRequest], deposits: Iterable[CashEntry] = ()
) -> int:
    """Append a whole book in one batch per table: `deposits`, then each trade's row and
    cash entries as `record_trade` stores them, WITHOUT checking the trades against the
    ledger (a book known to hold: a benchmark's or a load test's thousands of trades, which
    `record_trade`, replaying the ledger for each, would take minutes to enter). Each
    request's terms are checked (`_terms`) and must be of `portfolio_id`; the number of
    trades appended."""
    rows, entries = [], list(deposits)
    for request in requests:
        if request.portfolio_id != portfolio_id:
            raise TradeRejected(f"a trade of {request.portfolio_id} in the book of {portfolio_id}")
        price, fees = _terms(request)
        rows.append(_trade_row(request, price, fees))
        entries.extend(_trade_entries(request, to_cents(price * request.quantity), fees, True))
    t, c = tables.trades.c, tables.cash_entries.c
    append_history(conn, tables.trades, rows, scope=[t.portfolio_id == portfolio_id])
    append_history(conn, tables.cash_entries, entries, scope=[c.portfolio_id == portfolio_id])
    return len(rows)


def append_trade(conn: Connection, checked: CheckedTrade) -> None:
    """Store a checked trade: its row, then its cash entries (when it moves cash)."""
    append_history(conn, tables.trades, [checked.row])
    if checked.entries:
        append_history(conn, tables.cash_entries, list(checked.entries))


def balance_after(cash: Decimal, entries: Iterable[TradeCashEntry | CashEntry]) -> Decimal:
    """The balance `cash_balance` reads once `entries` are stored beside `cash` (a balance
    it read): the store keeps money to six places (store/types.Money), so the sum has its
    digits as well as its value."""
    return sum((Decimal(e["amount"]).quantize(CENT) for e in entries), cash)


def _cost_columns(costs: CostBreakdown | None) -> dict[str, Decimal]:
    """The trade's cost columns: the fill's spread and impact (its fee is `fees`)."""
    paid = costs or CostBreakdown()
    return {"spread_cost": paid.spread, "impact_cost": paid.impact}


def record_cash(
    conn: Connection,
    portfolio_id: str,
    entry_id: str,
    amount: Decimal,
    kind: str,
    effective_at: datetime,
    note: str | None = None,
) -> Decimal:
    """Append a cash movement that is not a trade, in cents; refuses one that would leave
    cash below zero."""
    balance = cash_balance(conn, portfolio_id)
    entry = cash_entry(portfolio_id, entry_id, amount, kind, effective_at, note, balance)
    append_history(conn, tables.cash_entries, [entry])
    return balance + entry["amount"]


def cash_entry(
    portfolio_id: str,
    entry_id: str,
    amount: Decimal,
    kind: str,
    effective_at: datetime,
    note: str | None,
    balance: Decimal,
) -> CashEntry:
    """`record_cash`'s entry checked against a balance read beforehand, touching no store:
    the amount in cents; InvalidInputError for an amount that is not a finite number,
    TradeRejected (CashRejected for a deposit or withdrawal) for one that would leave the
    balance below zero."""
    amount = Decimal(amount)
    if not amount.is_finite():
        raise InvalidInputError("a cash amount must be a finite number")
    amount = to_cents(amount)
    if balance + amount < 0:
        refused = CashRejected if kind in ("DEPOSIT", "WITHDRAWAL") else ShortOfCash
        raise refused(f"a {kind.lower()} of {amount:,.2f} would leave cash at {balance + amount:,.2f}")
    return {
        "entry_id": entry_id,
        "portfolio_id": portfolio_id,
        "amount": amount,
        "kind": kind,
        "note": note,
        "effective_at": effective_at,
    }
