"""Read models of portfolios for the API and the reports: a summary with the allocation
breakdown, the trade history, and the AI portfolio's record. Values come from
views/valuation.py, so every reader agrees on prices, PnL and flags."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from datetime import date
from decimal import Decimal
from typing import TypedDict

from sqlalchemy import Connection, select

from market.clock import exchange_iso
from market.contract import JsonOf
from market.money import Fraction, Money, Price, Shares, to_cents
from portfolio import dividends, ledger
from portfolio.ai import ExecutedDay, starting_cash
from portfolio.executor import Rationale
from portfolio.ledger import AI_PORTFOLIO
from portfolio.rows import LedgerRow, StoredPortfolioDay
from portfolio.suggestions import SuggestionReason
from portfolio.trading import ManualRationale
from store import tables
from store.history import current_rows
from store.splits import with_earlier_symbols
from views.valuation import PortfolioValuation, PositionValue, portfolio_view

CENTS = Decimal("0.01")


# A trade's rationale, by who booked it: the AI book's order (portfolio/executor.py), a
# confirmed suggestion's reason, a manual trade's reference close (a statement sync's names
# the statement: no money in it). Read as one document: their fields do not clash.
TradeRationale = Rationale | SuggestionReason | ManualRationale


class Allocation(TypedDict):
    symbol: str  # or CASH
    market_value: Money
    weight: Fraction  # of equity


class PortfolioSummary(TypedDict):
    """A `PortfolioValuation`'s totals (every field but its positions), with the positions'
    count, each position's and cash's share of equity, the flagged positions and the part
    of cash that is dividends not yet paid (portfolio/dividends.py)."""

    portfolio_id: str
    as_of: date
    cash: Money
    market_value: Money
    equity: Money
    liquid_equity: Money
    illiquid_discounts: dict[str, Money]
    unrealized_pnl: Money
    realized_pnl: Money
    positions_count: int
    allocation: list[Allocation]
    flags: dict[str, tuple[str, ...]]
    dividends_receivable: Money  # the part of cash credited for dividends not yet paid: not withdrawable


class AISummary(PortfolioSummary):
    started: bool  # False until the first executed day
    starting_cash: Money
    total_return_pct: float | None


class TradeView(TypedDict):
    """A booked trade as the history pages and the audit trail show it (the exchange-time
    timestamp, no offset; its value at the booked price, in cents rounded as the ledger rounds
    the cash the trade moved: market.money.to_cents, half up)."""

    trade_id: str
    trading_date: date
    timestamp: str
    symbol: str
    side: str
    quantity: Shares
    price: Price
    fees: Money
    value: Money
    origin: str
    rationale: TradeRationale


class CashMovement(TypedDict):
    entry_id: str
    timestamp: str  # when it takes effect, exchange time
    kind: str
    amount: Money
    balance: Money  # after it
    trade_id: str | None
    note: str | None


class AIDay(TypedDict):
    """An executed day of the AI portfolio: its valuation and its stored record
    (portfolio/ai.py `ExecutedDay.summary`)."""

    trading_date: date
    model_id: str | None
    equity: Money
    liquid_equity: Money
    cash: Money
    summary: JsonOf[ExecutedDay]  # its stored record (`ExecutedDay.summary()`)


class AIDayTrades(AIDay):
    trades: list[TradeView]  # executed that day, in recording order


class AIRecord(TypedDict):
    days: list[AIDay]
    trades: list[TradeView]


class AIPosition(TypedDict):
    """An open AI position: a `views.valuation.PositionValue`'s fields (tests/api/test_shapes.py
    holds them together) with the opening trade's direction, rationale and timestamp."""

    symbol: str
    quantity: Shares
    cost_basis: Money
    average_cost: Money
    purchase_date: date | None
    price: Price
    market_value: Money
    unrealized_pnl: Money
    realized_pnl: Money
    flags: tuple[str, ...]
    pending_quantity: Shares
    pending_until: date | None
    stopped: str | None
    direction: str
    entered_as: str | None  # "slot" or "reserve" (the opening buy's `entry`); None: opened before it was kept
    rationale: Rationale
    timestamp: str


class EquityPoint(TypedDict):
    trading_date: date
    cash: Money
    market_value: Money
    equity: Money
    liquid_equity: float


def summary(conn: Connection, portfolio_id: str, day: date) -> PortfolioSummary:
    """Totals plus each position's and cash's share of equity, the flagged positions and
    the dividends receivable on `day`."""
    view = portfolio_view(conn, portfolio_id, day)
    return summarise(view, receivable(conn, view, day))


def receivable(conn: Connection, view: PortfolioValuation, on: date) -> Decimal:
    """The part of the valuation's cash credited for dividends paid after the exchange date
    `on` (portfolio/dividends.py `dividends_receivable`): what a withdrawal that day may not take."""
    return dividends.dividends_receivable(view.cash, dividends.unpaid_dividends(conn, view.portfolio_id, on))


def summarise(view: PortfolioValuation, dividends_receivable: Decimal) -> PortfolioSummary:
    """`summary` of a `portfolio_view` already read: its totals (every field but the
    positions), the positions' count, the allocation, the flagged positions and the
    dividends receivable (`receivable`)."""
    equity = view.equity

    def share(value: Decimal) -> float:
        return round(float(value / equity), 6) if equity > 0 else 0.0

    allocation: list[Allocation] = [
        {"symbol": p.symbol, "market_value": p.market_value, "weight": share(p.market_value)} for p in view.positions
    ]
    allocation.append({"symbol": "CASH", "market_value": view.cash, "weight": share(view.cash)})
    flags = {p.symbol: p.flags for p in view.positions if p.flags}
    return {f.name: getattr(view, f.name) for f in fields(view) if f.name != "positions"} | {
        "positions_count": len(view.positions),
        "allocation": allocation,
        "flags": flags,
        "dividends_receivable": dividends_receivable,
    }


def ai_summary(conn: Connection, day: date, opens_with: float, view: PortfolioValuation | None = None) -> AISummary:
    """The AI portfolio's summary with its start, starting cash and total return (`view`:
    its valuation at `day` when already read). The starting cash is its opening deposit
    once it has one, else `opens_with`, the setting it will open with (portfolio/ai.py
    `starting_cash`)."""
    starting = starting_cash(conn, opens_with).quantize(CENTS)
    body = summarise(view, receivable(conn, view, day)) if view is not None else summary(conn, ledger.AI_PORTFOLIO, day)
    started = bool(equity_curve(conn))
    total_return = round(float(body["equity"] / starting - 1) * 100, 4) if started else None
    return {**body, "started": started, "starting_cash": starting, "total_return_pct": total_return}


def trade_history(conn: Connection, portfolio_id: str) -> list[TradeView]:
    """Every trade, oldest first, with the exchange-time timestamp (no offset): the
    reports' audit trail; the API reads `trade_page`."""
    return [_trade(t) for t in ledger.trade_rows(conn, portfolio_id)]


def _trade(t: Mapping) -> TradeView:  # a trades row (portfolio.rows.TradeRow), or a SQLAlchemy row's mapping
    return {
        "trade_id": t["trade_id"],
        "trading_date": t["trading_date"],
        "timestamp": exchange_iso(t["executed_at"]),
        "symbol": t["symbol"],
        "side": t["side"],
        "quantity": int(t["quantity"]),
        "price": t["price"],
        "fees": t["fees"],
        "value": to_cents(t["price"] * int(t["quantity"])),  # the ledger's rounding of the cash it moved
        "origin": t["origin"],
        "rationale": t["rationale"],
    }


def trade_page(conn: Connection, portfolio_id: str, after: int | None, limit: int) -> list[tuple[int, TradeView]]:
    """At most `limit + 1` trades (the extra one says a page follows), each with its ledger
    id, the page's key: the trades recorded after ledger row `after` (None: from the first),
    in recording order. Recording order, not execution time: a statement's trade executed
    earlier but recorded later comes where it was recorded, so a page already read never
    shifts and a walk by key sees every trade exactly once (the ledger is append-only)."""
    t = tables.trades.c
    where = [t.portfolio_id == portfolio_id] + ([t.id > after] if after is not None else [])
    query = select(tables.trades).where(*where).order_by(t.id).limit(limit + 1)
    return [(r.id, _trade(r._mapping)) for r in conn.execute(query)]


def cash_page(conn: Connection, portfolio_id: str, after: int | None, limit: int) -> list[tuple[int, CashMovement]]:
    """At most `limit + 1` cash movements recorded after ledger row `after`, each with its
    id (the page's key): deposits, withdrawals, each trade's gross and fee, dividends (with
    what they pay for) and statement reconciliations, with the exchange-time timestamp it
    takes effect (no offset) and the balance after it (the amounts before the page summed
    exactly). Recording order, not the effective time: a dividend takes effect at its
    ex-date's close but is recorded when it is next credited, possibly after a later
    deposit; placed by its effective time it would change balances already shown and shift
    a page a client has read. Its timestamp still says when it took effect."""
    c = tables.cash_entries.c
    mine = c.portfolio_id == portfolio_id
    before = conn.execute(select(c.amount).where(mine, c.id <= after)).scalars() if after is not None else ()
    balance = sum(before, Decimal(0))  # summed here, exact: SQLite's SUM would add floats
    rows = conn.execute(
        select(c.id, c.entry_id, c.kind, c.amount, c.trade_id, c.note, c.effective_at)
        .where(mine, *([c.id > after] if after is not None else []))
        .order_by(c.id)
        .limit(limit + 1)
    )
    page: list[tuple[int, CashMovement]] = []
    for r in rows:
        balance += r.amount
        page.append(
            (
                r.id,
                {
                    "entry_id": r.entry_id,
                    "timestamp": exchange_iso(r.effective_at),
                    "kind": r.kind,
                    "amount": r.amount,
                    "balance": balance,
                    "trade_id": r.trade_id,
                    "note": r.note,
                },
            )
        )
    return page


def ai_record(conn: Connection) -> AIRecord:
    """The AI portfolio's whole record for the reports: each executed day (what was
    planned, blocked, cut) and every trade with its rationale; the API reads `ai_day_page`."""
    return {"days": [_ai_day(d) for d in _ai_days(conn, None)], "trades": trade_history(conn, ledger.AI_PORTFOLIO)}


def ai_day_page(conn: Connection, after: date | None, limit: int) -> list[tuple[date, AIDayTrades]]:
    """At most `limit + 1` executed days of the AI portfolio after `after` (None: from the
    first), oldest first, each keyed by its date and holding the trades executed that day
    (in recording order). A day's trades are bounded by the universe and the rails, so a
    page of days is bounded too; a new day is appended after every day already listed."""
    days = _ai_days(conn, after)[: limit + 1]
    t = tables.trades.c
    trades: dict[date, list[TradeView]] = {d["trading_date"]: [] for d in days[:limit]}
    if trades:
        query = (
            select(tables.trades)
            .where(t.portfolio_id == ledger.AI_PORTFOLIO, t.trading_date.in_(list(trades)))
            .order_by(t.id)
        )
        for r in conn.execute(query):
            trades[r.trading_date].append(_trade(r._mapping))
    return [(d["trading_date"], _ai_day(d) | {"trades": trades.get(d["trading_date"], [])}) for d in days]


def _ai_days(conn: Connection, after: date | None) -> list[StoredPortfolioDay]:
    d = tables.portfolio_days.c
    where = [d.portfolio_id == ledger.AI_PORTFOLIO] + ([d.trading_date > after] if after is not None else [])
    return sorted(current_rows(conn, tables.portfolio_days, where=where), key=lambda r: r["trading_date"])


def _ai_day(d: StoredPortfolioDay) -> AIDay:
    return {
        "trading_date": d["trading_date"],
        "model_id": d["model_id"],
        "equity": float(d["cash"] + d["market_value"]),
        "liquid_equity": float(d["liquid_equity"]),
        "cash": float(d["cash"]),
        "summary": d["summary"],
    }


def ai_positions(conn: Connection, day: date, view: PortfolioValuation | None = None) -> list[AIPosition]:
    """Open AI positions valued at `day` (views/valuation.py), each a `PositionValue`'s
    fields with the direction, rationale and exchange-time timestamp of the trade that
    opened it (`view`: the valuation at `day` when already read)."""
    trades = ledger.trade_rows(conn, AI_PORTFOLIO)
    result: list[AIPosition] = []
    for position in (view if view is not None else portfolio_view(conn, AI_PORTFOLIO, day)).positions:
        opening = _opening_trade(trades, position, with_earlier_symbols(conn, [position.symbol], day))
        result.append(
            {
                **asdict(position),
                "direction": "LONG",
                "entered_as": opening["rationale"].get("entry"),
                "rationale": opening["rationale"],
                "timestamp": opening["rationale"].get("timestamp", exchange_iso(opening["executed_at"])),
            }
        )
    return result


def _opening_trade(trades: list[LedgerRow], position: PositionValue, symbols: list[str]) -> LedgerRow:
    """The buy that opened `position`: on its purchase date, under its symbol or under one a
    ticker change carried the holding on from (`symbols`, store.splits `with_earlier_symbols`:
    a position opened as LIQ is held as LQX from the rename's ex-date, its trades under LIQ)."""
    for trade in reversed(trades):
        if trade["symbol"] in symbols and trade["side"] == "BUY" and trade["trading_date"] == position.purchase_date:
            return trade
    raise LookupError(f"the AI ledger holds no buy of {position.symbol} on {position.purchase_date} that opened it")


def equity_curve(conn: Connection, portfolio_id: str = AI_PORTFOLIO) -> list[EquityPoint]:
    rows = current_rows(conn, tables.portfolio_days, where=[tables.portfolio_days.c.portfolio_id == portfolio_id])
    return [
        {
            "trading_date": r["trading_date"],
            "cash": float(r["cash"]),
            "market_value": float(r["market_value"]),
            "equity": float(r["cash"] + r["market_value"]),
            "liquid_equity": float(r["liquid_equity"]),
        }
        for r in sorted(rows, key=lambda r: r["trading_date"])
    ]
