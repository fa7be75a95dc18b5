"""A portfolio at current prices: positions with market value, PnL and exit flags, and
the totals (cash, equity, liquid equity, realised and unrealised PnL).

Prices are each symbol's latest close on or before `day` (point in time); a symbol that
did not trade on `day` is valued at its last close and flagged TRAPPED for that day, as
the rail would; one without a row on `day` (its rows stopped) is TRAPPED alone and says
since when and when the delisting rule delists it (`stopped`). A symbol never priced is
valued at its average cost and flagged UNPRICED, so equity never silently drops a
holding. A symbol without a row for the delisting rule's sessions (portfolio/delisting.py,
MARKETINTEL_DELIST_AFTER_SESSIONS), or that the exchange's DELISTING notice says is
delisted, is flagged DELISTED and priced by the rule (nothing, unless a corporate action
gives a value per share, or its last close), all of it out of liquid equity.

The answer is a `PortfolioValuation` (frozen), read by attribute: the REST bodies, the
GraphQL types and the summaries (views/portfolio.py, which the reports read) start from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from sqlalchemy import Connection, select

from market.contract import described
from market.money import Money, Price, Shares, shown_price, to_cents
from market.settings import get_settings
from portfolio import dividends, ledger
from portfolio.delisting import DELISTED, BookView, book_view, stored_absences, stored_rule
from portfolio.market import market_days
from portfolio.rails import SHORT_HISTORY, MarketDay, exit_state, illiquid_discount, short_history
from store import tables
from store.splits import Split, stored_splits

# What a position's pending fields mean, written once for REST's and GraphQL's descriptions.
PENDING_QUANTITY = (
    "Of `quantity`, the shares of trades booked for a session after the current one (a suggestion confirmed "
    "ahead of its session; negative for a sale booked ahead). A sell counts them from `pending_until`."
)
PENDING_UNTIL = "The session from which the pending shares count for a sell; null when none are pending."
ILLIQUID_DISCOUNTS = (
    "Discount per ticker, money as decimal text: what liquid equity leaves out of a position's value. TRAPPED (no "
    "trade that day): its whole value, until it trades again; DELISTED: all of what the delisting rule values it at "
    "(it will not trade again; nothing where the rule values it at nothing); HIGH_SPREAD: value x spread."
)


@dataclass(frozen=True)
class PositionValue:
    """An open position valued at the day's price: the one declaration of a position, from
    which REST's `Position` (and `AIPosition`, which adds the opening trade's direction,
    rationale and timestamp: views/portfolio.py `ai_positions`) and GraphQL's `Position`
    (which adds its share of equity, `weight`, and its relations) are derived, in this
    order, described here."""

    symbol: str
    quantity: Shares
    cost_basis: Money  # cents
    average_cost: Money  # at full precision; the answers show cents
    purchase_date: date | None  # the trading day the position was opened
    # the latest close on or before the day, else the average cost (UNPRICED)
    price: Price = described(
        "Latest close on or before the valuation day (on the current count: divided by a split known since); less "
        "a dividend whose ex-date is after that close (however long the name has not traded) and which the cash "
        "already holds, or which these shares do not earn (the ex-date's reference price). Two places where it is "
        "whole cents, else at most six: `market_value` is this price times `quantity`, to the cent."
    )
    market_value: Money  # cents
    unrealized_pnl: Money  # cents
    realized_pnl: Money  # cents, of this symbol's closed shares
    # the rail's exit flags (TRAPPED, SLOW_EXIT, HIGH_SPREAD), or UNPRICED, or DELISTED
    flags: tuple[str, ...] = described(
        "TRAPPED (no trade that day; alone without a row: `stopped` says since when), SLOW_EXIT (over 5 days to "
        "exit; a name with fewer than 20 sessions of history is not, `stopped` says why), HIGH_SPREAD, UNPRICED "
        "(never priced: at its "
        "average cost), DELISTED (the exchange's delisting notice, or no row for the delisting rule's sessions: at "
        "the rule's value)."
    )
    # Of `quantity`, the shares of trades booked for a session after the current one (a
    # suggestion confirmed ahead of its session; negative for a sale booked ahead): they
    # count for a sell from `pending_until` (market.clock `session_of`, docs/portfolio.md).
    pending_quantity: Shares = described(PENDING_QUANTITY, default=0)
    pending_until: date | None = described(PENDING_UNTIL, default=None)
    stopped: str | None = described(
        "For a held name without a row from the exchange on the valuation day: since when, how many sessions, and "
        "when the delisting rule delists it unless it has a row again (e.g. 'no row since 2026-10-05 (12 sessions): "
        "nothing can be sold; delisted after 60 sessions without a row (48 more) unless it has one again'; its only "
        "flag is TRAPPED: without a row its volume is unknown, so it has no days to exit); once DELISTED, since when "
        "and what it is worth (e.g. 'delisted on 2026-12-29 (no row since 2026-10-05, 60 sessions): worth nothing "
        "until a corporate action gives a value per share (its last close: 52.01)'); for a name with a row but "
        "fewer than 20 sessions of history, that its exit cannot be measured yet ('fewer than 20 sessions of "
        "history: too short to measure its days to exit ...'); null otherwise.",
        default=None,
    )


@dataclass(frozen=True)
class PortfolioValuation:
    """A portfolio at the day's prices: what `portfolio_view` returns, the one declaration of
    a valuation. The API caches it per valuation version (api/services.py `valuation`) and
    shares it between requests, so it is frozen and its positions and flags are tuples
    (its `illiquid_discounts` dict is never written to once built). Not named `Valuation`:
    portfolio/rails.py's `Valuation` is the executor's float valuation of a book.

    REST renders it by validating it as the response schema straight from its attributes
    (api/services.py `json_body`, `from_attributes`): `PortfolioPositions` and `Position`
    are projections of it, `PortfolioSummary` adds what `views.portfolio.summarise`
    derives. That was chosen over a `to_json` method (as `portfolio.trading.PlacedTrade`
    has): a valuation is never stored, so a JSON form would be a second rendering of the
    same values that the schema parses back (money to text and back), and the schema
    stays the one declaration of the REST shape. tests/api/test_shapes.py holds the
    schemas' fields to these."""

    portfolio_id: str
    as_of: date  # the valuation day
    cash: Money  # cents
    market_value: Money  # of the open positions, cents
    equity: Money  # cash plus market value, cents
    liquid_equity: Money  # equity less the illiquid discounts, cents
    illiquid_discounts: dict[str, Money]  # by symbol: what could not be sold at the close (floats)
    unrealized_pnl: Money
    realized_pnl: Money  # of every symbol traded, open or closed, cents
    positions: tuple[PositionValue, ...]  # the open positions, by symbol


def portfolio_view(conn: Connection, portfolio_id: str, day: date, session: date | None = None) -> PortfolioValuation:
    """The portfolio after every booked trade at `day`'s prices; `session`: the current
    session (market.clock `session_of`), after which a trade's shares are pending.

    Holdings and prices are on the current session's share count, as a trade is checked
    (`reference_close`, `check_trade`) and previewed: a split whose ex-date is the session
    applies before the ex-date's close is stored (the last close divided), so a trade
    booked on the new count is not replayed on the old one."""
    trades = ledger.trade_rows(conn, portfolio_id)
    count_of = max(day, session) if session is not None else day
    splits = stored_splits(conn, count_of, {t["symbol"] for t in trades})
    book = ledger.replay(trades, splits)
    open_positions = {s: p for s, p in book.items() if p.quantity > 0}
    pending = _pending(trades, splits, book, session)
    view = _delisting(conn, day, open_positions, count_of)
    market = view.with_carried(market_days(conn, day, list(open_positions), count_of=count_of))
    cash = ledger.cash_balance(conn, portfolio_id)
    closed = {s: m.dated or day for s, m in market.items() if s in open_positions}
    paid = _ex_dividend(conn, portfolio_id, closed, trades, splits, count_of)
    positions, discounts = [], {}
    for symbol, position in sorted(open_positions.items()):
        price, flags, discount = _priced(view, market.get(symbol), position)
        if symbol in paid and not {"UNPRICED", DELISTED} & set(flags):
            price = max(price - paid[symbol], Decimal(0))
        price = shown_price(price)  # the value is the price shown times the quantity, to the cent
        value = to_cents(price * position.quantity)
        if discount:
            discounts[symbol] = round(discount, 2)
        positions.append(
            PositionValue(
                symbol=symbol,
                quantity=position.quantity,
                cost_basis=to_cents(position.cost_basis),
                average_cost=position.average_cost,
                purchase_date=position.opened_on,
                price=price,
                market_value=value,
                unrealized_pnl=to_cents(value - position.cost_basis),
                realized_pnl=to_cents(position.realized_pnl),
                flags=flags,
                **pending.get(symbol, {}),
                stopped=view.stopped.get(symbol) or _unmeasured(market.get(symbol), flags),
            )
        )
    market_value = sum((p.market_value for p in positions), Decimal(0))
    equity = cash + market_value
    return PortfolioValuation(
        portfolio_id=portfolio_id,
        as_of=day,
        cash=to_cents(cash),
        market_value=market_value,
        equity=to_cents(equity),
        liquid_equity=to_cents(equity - Decimal(str(sum(discounts.values())))),
        illiquid_discounts=discounts,
        unrealized_pnl=sum((p.unrealized_pnl for p in positions), Decimal(0)),
        realized_pnl=to_cents(sum((p.realized_pnl for p in book.values()), Decimal(0))),
        positions=tuple(positions),
    )


def _delisting(conn: Connection, day: date, open_positions: dict[str, ledger.Position], count_of: date) -> BookView:
    """The open positions (on `count_of`'s share count) under the delisting rule the
    settings state (portfolio/delisting.py)."""
    rule = stored_rule(conn, get_settings(), day, open_positions)
    held = {s: p.quantity for s, p in open_positions.items()}
    return book_view(held, stored_absences(conn, day, open_positions, rule, count_of), rule, day)


def _ex_dividend(
    conn: Connection,
    portfolio_id: str,
    closed: dict[str, date],
    trades: list[ledger.LedgerRow],
    splits: list[Split],
    count_of: date,
) -> dict[str, Decimal]:
    """By symbol, the dividend per share the close a holding is read at still holds (`closed`:
    the session of each symbol's close) and the portfolio's cash holds too: the notices with
    an ex-date after that close (`dividends.since_closes`) whose credit is booked. That close
    is read ex-dividend, as the exchange's reference price after the ex-date is, so equity
    counts the dividend once, however the close and the credit fall: credited ahead of its
    ex-date (the ex-date's morning, any cash use, or the T2 stage of a later session run
    before it: a Saturday's run for Monday; portfolio/dividends.py) beside the close before
    it, or an ex-date the name did not trade on, whose close before it is carried until it
    trades again (weeks, on a thin name) beside the credit. A holder not yet credited reads
    the close with the dividend in it. A notice the portfolio is not owed (it held none of
    the name at the close before the ex-date: shares bought on the ex-date, or booked ahead
    of it, earn no dividend) is taken off too, so those shares are worth the ex-date's
    reference price, as their trade was priced, not the close with the dividend in it (an
    unrealised gain of a dividend they never had). Each amount is on `count_of`'s count, as
    the close and the holding are (`dividends.per_share_on_count`: a split of the same
    ex-date divides it once the session is that ex-date). The book's days apply the same
    rule day by day (portfolio/book_days.py): the credit is effective at the ex-date's close."""
    notices = {
        dividends.entry_id(portfolio_id, n["symbol"], n["action_date"]): n
        for n in dividends.since_closes(conn, closed, date.max)
    }
    if not notices:
        return {}
    c = tables.cash_entries.c
    booked = conn.execute(
        select(c.entry_id).where(c.portfolio_id == portfolio_id, c.entry_id.in_(sorted(notices)))
    ).scalars()
    credited, held_before = set(booked), dividends.holdings_before(trades, splits)
    taken = [n for key, n in notices.items() if key in credited or not held_before(n["symbol"], n["action_date"])]
    return dividends.per_share_by_symbol(taken, splits, count_of)


def _priced(
    view: BookView, market_day: MarketDay | None, position: ledger.Position
) -> tuple[Decimal, tuple[str, ...], float]:
    """A position's price, flags and illiquid discount: DELISTED at the rule's price (all of
    it out of liquid equity), else its latest close with the rail's exit flags, else (never
    priced) its average cost, UNPRICED."""
    delisted = next((d for d in view.delisted if d.symbol == position.symbol), None)
    if delisted is not None:
        return Decimal(str(delisted.price())), (DELISTED,), delisted.value()
    if market_day is None:
        return position.average_cost, ("UNPRICED",), 0.0
    flags = tuple(exit_state(market_day, position.quantity).flags)
    return Decimal(str(market_day.close)), flags, illiquid_discount(market_day, position.quantity)


def _unmeasured(market_day: MarketDay | None, flags: tuple[str, ...]) -> str | None:
    """What a priced position whose name has fewer than 20 sessions of history says
    (portfolio/rails.py `SHORT_HISTORY`): its exit is not measured, not never."""
    if market_day is None or DELISTED in flags or not short_history(market_day):
        return None
    return SHORT_HISTORY


def _pending(
    trades: list, splits: list, book: dict[str, ledger.Position], session: date | None
) -> dict[str, dict[str, object]]:
    """By symbol, the `pending_quantity` and `pending_until` of the trades dated after
    `session`: the booked quantity less what the trades dated on or before it hold."""
    later = [t for t in trades if session is not None and t["trading_date"] > session]
    if not later:
        return {}
    counted = ledger.open_positions(trades, splits, session)
    out = {}
    for symbol in {t["symbol"] for t in later}:
        booked = book[symbol].quantity if symbol in book else 0
        held = counted[symbol].quantity if symbol in counted else 0
        if booked != held:
            until = max(t["trading_date"] for t in later if t["symbol"] == symbol)
            out[symbol] = {"pending_quantity": booked - held, "pending_until": until}
    return out
