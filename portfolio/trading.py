"""User portfolios: one per client (all of a client's keys share it) plus the admin
"house" portfolio; manual trades, deposits and withdrawals, with idempotent retries.

A manual trade is checked, in this order, and refused with the reason (TradeRejected):
the symbol is listed; the quantity is a positive whole number; the price lies within
`trade_price_band` (default 15%, the exchange's daily limit) of the reference price: the
latest close on or before the trade's trading date, less a dividend going ex after it and
by that date (`portfolio.market.reference_close`); a sell does not exceed the holding; a buy plus its fees
does not exceed cash. The trade's trading date is the exchange date of the moment it is
made, or the last trading day before it on a weekend or holiday. Before any balance check
(a trade, a deposit, a withdrawal) the dividends the portfolio is owed up to that date are
credited (`portfolio.dividends`), so they can be spent. A trade or cash movement is booked
into a client's or the house portfolio only, never the AI book (`ledger.writable_portfolio`).

Idempotency: with an `Idempotency-Key` the first successful trade's or cash movement's
response is stored (`idempotency_records`, scope `trade:<portfolio>` or `cash:<portfolio>`)
in the same transaction as the write; a retry with the same key and the same request gets
that response back and books nothing; the same key with a different request is a conflict.
A refused trade or movement stores nothing, so a retry after topping up cash is evaluated
afresh. A request is its fingerprint (`_fingerprint`): money compared by value, so "6.480"
retried as "6.48" is the same request.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from datetime import date, datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import NotRequired, TypedDict

from sqlalchemy import Connection, Engine

from market.clock import TradingCalendar, exchange_date, utc_now
from market.contract import described, served_fields
from market.costs import Fill, Session, bounded, fill
from market.errors import ConflictError, InvalidInputError, NotFoundError
from market.fees import FeeSchedule, fee_schedule
from market.money import (
    CENTS,
    MAX_AMOUNT,
    MAX_CASH_MOVEMENT,
    Fraction,
    Money,
    Price,
    Shares,
    money_text,
    parse_money,
    to_cents,
    whole_cents,
)
from market.settings import Settings
from market.text import asked_symbol
from portfolio import dividends, ledger
from portfolio.delisting import delisted_since
from portfolio.ledger import CENT, TradeRejected, TradeRequest
from portfolio.market import (
    ReferenceClose,
    halt_said,
    halted_since,
    known_symbols,
    reference_close,
    reference_market,
)
from store import tables
from store.history import append_history, current_rows
from store.splits import renamed_on, stored_splits
from store.transactions import Respond, answered


@dataclass(frozen=True)
class ManualTrade:
    side: str
    symbol: str
    quantity: int  # checked again: a boolean, text or float is refused
    price: Decimal | str | int  # a Decimal as it is, anything else by market.money's rule
    fees: Decimal | str | int | None = None  # None: the fee schedule's, as a preview shows them (`_fees`)


@dataclass(frozen=True)
class PortfolioOrder:
    """A manual order for a portfolio at a moment, with the Idempotency-Key it came with (None:
    none, and a preview's): the one request a booking checks (`_checked_request`) and a
    preview's standing reads (`standing`), so both read the same order the same way."""

    portfolio_id: str
    order: ManualTrade
    moment: datetime
    idempotency_key: str | None = None


class ManualRationale(TypedDict):
    """A manual trade's rationale: the close its price was checked against (`_checked_request`)."""

    reference_close: Price  # decimal text: the reference price (the close less a dividend going ex since)
    reference_date: str
    reference_dividend: NotRequired[Price]  # the dividend taken off the close, where one goes ex since
    fees_from: NotRequired[str]  # SCHEDULE or STATED (`PlacedTrade.fees_from`); absent on a trade booked before it


class PlacedTradeJson(TypedDict):
    """`PlacedTrade.to_json`'s form (a JSON document: `idempotency_records.response` keeps
    it without `replayed`): money as text at the stored precision, dates in ISO 8601."""

    trade_id: str
    portfolio_id: str
    trading_date: str
    executed_at: str
    symbol: str
    side: str
    quantity: int
    price: Price
    fees: Money
    fees_from: str
    origin: str
    rationale: ManualRationale
    idempotency_key: str | None
    gross: Money
    position_after: int
    cash_after: Money | None
    replayed: NotRequired[bool]


@dataclass(frozen=True)
class PlacedTrade:
    """A trade placed through the service: what `place_manual_trade` returns and what an
    Idempotency-Key retry gets back (`replayed`). The one declaration of a placed trade:
    REST's `TradeOut` and GraphQL's `TradePlaced` carry exactly its fields marked for the
    API (tests/api/test_shapes.py holds the three together), and the CLI prints all
    of them. `to_json` is its JSON form (money as text at the stored precision, dates in
    ISO 8601): the body the API validates, the response stored for retries."""

    trade_id: str
    portfolio_id: str
    trading_date: date
    executed_at: datetime
    symbol: str
    side: str  # BUY or SELL
    quantity: Shares
    price: Price
    fees: Money
    fees_from: str = described(
        "SCHEDULE: the order stated no fees and was charged the fee schedule's, as the trade preview computes "
        "them; STATED: the fees the order stated (0 included: a broker that charged nothing)."
    )
    origin: str = described(served=False)  # MANUAL here; AI and STATEMENT trades are recorded elsewhere
    rationale: ManualRationale = described(served=False)
    idempotency_key: str | None = described(served=False)
    gross: Money = described(served=False)  # price x quantity, in cents
    position_after: int = described(served=False)
    cash_after: Money | None = None
    replayed: bool = described("True when an Idempotency-Key retry returned the stored result.", default=False)

    @classmethod
    def api_fields(cls) -> list[str]:
        """The fields REST and GraphQL serve (market.contract `served_fields`), in order."""
        return [f.name for f in served_fields(cls)]

    @classmethod
    def from_recorded(cls, recorded: Mapping[str, object]) -> PlacedTrade:
        """From `ledger.record_trade`'s answer (`fees_from` is kept in its rationale)."""
        named = {f.name: recorded[f.name] for f in fields(cls) if f.name not in ("fees_from", "replayed")}
        return cls(**named, fees_from=recorded["rationale"]["fees_from"])

    @classmethod
    def from_json(cls, stored: PlacedTradeJson, replayed: bool) -> PlacedTrade:
        """From `to_json`'s form, as `idempotency_records` keeps it (one stored before
        `fees_from` booked the fees the order stated, 0 when it stated none)."""
        cash = stored.get("cash_after")
        kept = ("cash_after", "fees_from", "replayed")
        return cls(
            **{
                **{f.name: stored[f.name] for f in fields(cls) if f.name not in kept},
                "fees_from": stored.get("fees_from", "STATED"),
                "trading_date": date.fromisoformat(stored["trading_date"]),
                "executed_at": datetime.fromisoformat(stored["executed_at"]),
                "price": Decimal(stored["price"]),
                "fees": Decimal(stored["fees"]),
                "gross": Decimal(stored["gross"]),
            },
            cash_after=None if cash is None else Decimal(cash),
            replayed=replayed,
        )

    def to_json(self) -> PlacedTradeJson:
        out = {}
        for key, value in asdict(self).items():
            if isinstance(value, Decimal):
                out[key] = str(value)
            elif hasattr(value, "isoformat"):
                out[key] = value.isoformat()
            else:
                out[key] = value
        return out  # type: ignore[return-value]  # every field, converted as PlacedTradeJson says


def open_client_portfolio(engine: Engine, client_id: str, kind: str = "CLIENT") -> str:
    portfolio_id = ledger.HOUSE_PORTFOLIO if kind == "HOUSE" else ledger.client_portfolio_id(client_id)
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        ledger.ensure_portfolio(conn, portfolio_id, kind, None if kind == "HOUSE" else client_id)
    return portfolio_id


def move_cash(
    engine: Engine,
    portfolio_id: str,
    amount: Decimal | str | int,
    note: str | None = None,
    now: datetime | None = None,
    respond: Respond = None,
    idempotency_key: str | None = None,
) -> Decimal:
    """A deposit (amount > 0) or a withdrawal (amount < 0); the new balance (or `respond`'s
    rendering of it, built before the commit: store.transactions.answered). At most
    market.money's MAX_CASH_MOVEMENT either way, the bound REST, GraphQL and the CLI apply
    before they get here; a refused movement writes nothing. With an `idempotency_key` a
    retry of the same movement (amount and note) books nothing and gets the balance the
    first one left back; the same key with another movement is a conflict. A withdrawal
    may not take the cash credited for dividends paid after its exchange date
    (`dividends.check_withdrawal`, CashRejected); a purchase may spend it (policy: only
    money leaving the service is held back until the payment date)."""
    value = _decimal(amount, "amount")
    if value == 0:
        raise InvalidInputError("a deposit or withdrawal must not be zero")
    if abs(value) > MAX_CASH_MOVEMENT:
        raise InvalidInputError(f"a deposit or withdrawal must be at most {MAX_CASH_MOVEMENT:,}, not {_shown(amount)}")
    moment = now or utc_now()
    scope, request_hash = f"cash:{portfolio_id}", _fingerprint([money_text(value), note])
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        ledger.writable_portfolio(conn, portfolio_id)
        if idempotency_key is not None:
            replay = _stored_response(conn, scope, idempotency_key, request_hash)
            if replay is not None:
                return answered(Decimal(replay["balance"]), respond)
        with dividends.credited_first(conn, portfolio_id, exchange_date(moment)):  # a withdrawal may spend them
            if value < 0:  # but not before they are paid
                dividends.check_withdrawal(conn, portfolio_id, -value, exchange_date(moment))
            kind = "DEPOSIT" if value > 0 else "WITHDRAWAL"
            balance = ledger.record_cash(conn, portfolio_id, f"C-{uuid.uuid4().hex}", value, kind, moment, note)
        if idempotency_key is not None:
            _remember(conn, scope, idempotency_key, request_hash, {"balance": str(balance)})
        return answered(balance, respond)


def place_manual_trade(
    engine: Engine,
    settings: Settings,
    calendar: TradingCalendar,
    portfolio_id: str,
    order: ManualTrade,
    idempotency_key: str | None = None,
    now: datetime | None = None,
    respond: Respond = None,
) -> PlacedTrade:
    """The trade checked and booked under the portfolio's lock, or the first result of a
    retried idempotency key; `respond` renders the answer before the commit
    (store.transactions.answered), so an answer that cannot be rendered books nothing."""
    moment = now or utc_now()
    # Case and spelling are not part of the order: "buy liq" at "6.480" retried as "BUY LIQ"
    # at "6.48" is the same trade (money in its canonical text, market.money.money_text).
    request_hash = _fingerprint(
        [
            str(order.side).upper(),
            asked_symbol(str(order.symbol)),
            str(order.quantity),
            money_text(_decimal(order.price, "price")),
            None if order.fees is None else money_text(_decimal(order.fees, "fees")),
        ]
    )
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        ledger.writable_portfolio(conn, portfolio_id)
        if idempotency_key is not None:
            replay = _stored_response(conn, f"trade:{portfolio_id}", idempotency_key, request_hash)
            if replay is not None:
                return answered(PlacedTrade.from_json(replay, replayed=True), respond)
        placed_order = PortfolioOrder(portfolio_id, order, moment, idempotency_key)
        request = _checked_request(conn, settings, calendar, placed_order)
        with dividends.credited_first(conn, portfolio_id, request.trading_date):  # a buy may spend them
            placed = PlacedTrade.from_recorded(ledger.record_trade(conn, request))
        if idempotency_key is not None:
            response = {k: v for k, v in placed.to_json().items() if k != "replayed"}
            _remember(conn, f"trade:{portfolio_id}", idempotency_key, request_hash, response)
        return answered(placed, respond)


def _checked_request(
    conn: Connection, settings: Settings, calendar: TradingCalendar, placed: PortfolioOrder
) -> TradeRequest:
    """`placed` as the ledger books it, or TradeRejected with the first check it fails (the
    module's order of checks up to the price band; the ledger's follow, `ledger.check_on_ledger`)."""
    order, moment = placed.order, placed.moment
    side = str(order.side).upper()
    if side not in ("BUY", "SELL"):
        raise TradeRejected(f"side must be buy or sell, not '{order.side}'")
    symbol = asked_symbol(str(order.symbol))
    if symbol not in known_symbols(conn):
        raise TradeRejected(f"unknown symbol '{order.symbol}'")
    quantity = _checked_quantity(order.quantity)
    price = _decimal(order.price, "price")
    if price <= 0:
        raise TradeRejected(f"price must be positive, not {order.price}")
    fees, fees_from = _fees(settings, order, price)
    trading_date = calendar.session_of(moment)
    rationale = within_band(conn, settings, symbol, trading_date, price)
    return TradeRequest(
        portfolio_id=placed.portfolio_id,
        trading_date=trading_date,
        executed_at=moment,
        symbol=symbol,
        side=side,
        quantity=quantity,
        price=price,
        fees=fees,
        origin="MANUAL",
        rationale={**rationale, "fees_from": fees_from},
        idempotency_key=placed.idempotency_key,
        trade_id=f"T-{uuid.uuid4().hex}",
    )


def _checked_quantity(quantity: object) -> int:
    """An order's quantity, or TradeRejected: a positive whole number of shares (a boolean,
    text or float refused), the one rule a booking and a preview apply."""
    if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity <= 0:
        raise TradeRejected(f"quantity must be a positive whole number of shares, not {quantity!r}")
    return quantity


def _fees(settings: Settings, order: ManualTrade, price: Decimal) -> tuple[Decimal, str]:
    """The fees a manual trade books and where they come from: the fees the order states
    (STATED: 0 is a broker that charged nothing), else the fee schedule's on its value
    (SCHEDULE), the one computation a trade preview shows (`FeeSchedule.order_fee`)."""
    if order.fees is None:
        return fee_schedule(settings).order_fee(price, order.quantity), "SCHEDULE"
    fees = _decimal(order.fees, "fees")
    if fees < 0:
        raise TradeRejected(f"fees must be zero or more, not {order.fees}")
    return fees, "STATED"


def within_band(
    conn: Connection, settings: Settings, symbol: str, trading_date: date, price: Decimal, name: str = "price"
) -> ManualRationale:
    """The close `price` was checked against, or TradeRejected when it lies outside the day's
    `price_band` of `symbol`: the one price band every trade a client books passes (a manual
    trade's price, a confirmed suggestion's limit, which a close stored since the plan can
    leave far from the market), the band a preview prices within (`preview_trade`), and the
    rule T2's plan applies before it suggests an order (portfolio/suggestions.py `_band`).
    Before any price is checked, a name halted or delisted on `trading_date` is refused
    saying so (`closed_to_trading`), however recent its last close."""
    closed = closed_to_trading(conn, settings, symbol, trading_date)
    if closed is not None:
        raise TradeRejected(closed)
    band = price_band(conn, settings, symbol, trading_date, name)
    if not band.low <= price <= band.high:
        raise TradeRejected(f"{name} {price:,.2f} is outside {band.said(trading_date)}")
    reference = band.reference
    rationale = ManualRationale(reference_close=str(reference.price), reference_date=reference.dated.isoformat())
    return rationale if not reference.dividend else {**rationale, "reference_dividend": str(reference.dividend)}


@dataclass(frozen=True)
class PriceBand:
    """The prices a trade of a name may book at on a session (`price_band`), in whole cents."""

    reference: ReferenceClose
    width: Decimal  # `trade_price_band`: 0.15 is 15% either side of the reference price
    low: Decimal  # the lowest price the band admits
    high: Decimal  # the highest

    def said(self, trading_date: date) -> str:
        """The band as a refusal and a preview say it."""
        around = _reference_said(self.reference, trading_date)
        return f"the day's band {self.low:,.2f}-{self.high:,.2f} ({self.width:.0%} around {around})"


def price_band(
    conn: Connection,
    settings: Settings,
    symbol: str,
    trading_date: date,
    name: str = "price",
    closed: str | None = None,
) -> PriceBand:
    """The day's price band of `symbol` on `trading_date`: `trade_price_band` (default 15%,
    the exchange's daily limit) either side of its reference price, the latest close on or
    before `trading_date`, on that date's share count and less the dividends going ex after
    it and by that date (`market.reference_close`). A listed name with no close to check
    against (listed before its first session, or not traded in the lookback) is refused,
    TradeRejected (422; GraphQL's InvalidInput), never "not found": the symbol is listed, the
    request is what cannot be processed. So is one whose band admits no price of a whole
    cent (a dividend going ex that reaches the close). A name `closed` to trading
    (`closed_to_trading`'s answer, where the caller has it) is refused saying so, as its
    booking is. A booking and a preview read it alike."""
    try:
        reference = reference_close(conn, symbol, trading_date)
    except NotFoundError as error:
        raise TradeRejected(closed or f"{name} cannot be checked: {error.detail}") from None
    width = Decimal(str(settings.trade_price_band))
    # In whole cents, as a price is given (whole_cents): the lowest and highest prices the
    # band admits, so the edges a refusal prints are prices the band accepts.
    low = (reference.price * (1 - width)).quantize(CENTS, rounding=ROUND_CEILING)
    high = (reference.price * (1 + width)).quantize(CENTS, rounding=ROUND_FLOOR)
    band = PriceBand(reference, width, low, high)
    if high < max(low, CENTS):  # a dividend as large as the close: nothing can be priced or booked
        raise TradeRejected(closed or f"{name} cannot be checked: {band.said(trading_date)} admits no price")
    return band


def _reference_said(reference: ReferenceClose, trading_date: date) -> str:
    """The band's centre as a refusal says it (money half up, as shown)."""
    close = f"the {reference.dated.isoformat()} close of {to_cents(reference.close):,.2f}"
    if not reference.dividend:
        return close
    return (
        f"{to_cents(reference.price):,.2f}: {close} less the dividend of {to_cents(reference.dividend):,.2f} per "
        f"share going ex by {trading_date.isoformat()}, the exchange's reference price"
    )


def closed_to_trading(conn: Connection, settings: Settings, symbol: str, trading_date: date) -> str | None:
    """Why nothing of `symbol` trades on `trading_date`, else None: the name is halted (the
    exchange's HALT notice with no RESUME since: `portfolio.market.halted_since`), or the
    store knows it was delisted (the exchange's DELISTING notice after its last row, else the
    delisting rule: portfolio/delisting.py `delisted_since`; a DELISTING that follows a HALT
    ends the halt, and the delisting is what refuses). What a trade and a confirmation are
    refused with (`within_band`) and a preview's `lapse_reason` (`preview_trade`). A name
    renamed on or before `trading_date` says first what it trades as now
    (`ledger.renamed_said`, the ledger's own refusal), however long it has had no row."""
    rename = renamed_on(stored_splits(conn, trading_date, [symbol]), symbol, trading_date)
    if rename is not None:
        return ledger.renamed_said(rename)
    halted = halted_since(conn, symbol, trading_date)
    if halted is not None:
        return halt_said(symbol, halted)
    delisted = delisted_since(conn, settings, symbol, trading_date)
    return None if delisted is None else f"{delisted}; a delisted name cannot be traded"


@dataclass(frozen=True)
class TradePreview:
    """What `preview_trade` estimates (money in cents, `impact` a fraction of the touch)."""

    symbol: str
    side: str  # BUY or SELL
    quantity: Shares
    as_of: str  # ISO 8601: the session priced on (the symbol's latest bar)
    close: Money
    touch: Money  # the ask (buy) or bid (sell), else the close plus or minus half the range
    touch_source: str
    impact: Fraction | None
    price: Price  # per share, touch and impact included, held within the day's band (`price_bound`)
    band_low: Price  # the day's price band (`price_band`): the prices a booking admits
    band_high: Price
    price_bound: str | None  # BAND_LOW or BAND_HIGH: the model's price lay past that edge and is held at it
    price_note: str | None  # why, in words, where `price_bound` is set
    fillable_in_one_session: Shares
    lapse_reason: str | None
    fees: Money
    spread_cost: Money
    impact_cost: Money
    total_cost: Money
    booking_total: Money = described(
        "The cash booking the order at `price`, stating no fees, moves: price x quantity plus the fee schedule's "
        "fees on it for a buy (paid), less them for a sell (received); the fees a booking charges."
    )
    held: Shares | None = described(
        "Shares of the symbol the portfolio holds on the trade's session, as its booking counts them; null where "
        "no portfolio was named (the CLI without --portfolio).",
        default=None,
    )
    cash_available: Money | None = described(
        "The portfolio's cash with the dividends its booking credits first (a buy may spend them); null where no "
        "portfolio was named.",
        default=None,
    )
    bookable: bool | None = described(
        "Whether booking the order at `price`, stating no fees, would be accepted for the portfolio now (its "
        "holdings, cash and the name's trading); null where no portfolio was named.",
        default=None,
    )
    refusal: str | None = described(
        "Why not, in the booking's own words (the sentence its refusal carries); null when bookable.",
        default=None,
    )


@dataclass(frozen=True)
class Standing:
    """An order as the portfolio's booking would take it now (`standing`)."""

    held: Shares
    cash_available: Money
    refusal: str | None  # the booking's refusal, None where it would book


def standing(conn: Connection, settings: Settings, calendar: TradingCalendar, placed: PortfolioOrder) -> Standing:
    """Whether `place_manual_trade` would book `placed` (its order for its portfolio at its moment), writing
    nothing: the booking's own checks (`_checked_request`, then the ledger's,
    `ledger.check_on_ledger`) with the dividends the booking credits first (`dividends.owed`),
    so a refusal is the booking's sentence. A portfolio the booking cannot write to (none of
    that id, or the AI book) is refused as the booking refuses it (`ledger.writable_portfolio`)."""
    portfolio_id = placed.portfolio_id
    ledger.writable_portfolio(conn, portfolio_id)
    trading_date = calendar.session_of(placed.moment)
    owed = dividends.owed(conn, portfolio_id, trading_date)
    held = ledger.holdings(conn, portfolio_id, trading_date).get(asked_symbol(str(placed.order.symbol)))
    refusal = None
    try:
        request = _checked_request(conn, settings, calendar, placed)
        ledger.check_on_ledger(conn, request, owed=owed)
    except TradeRejected as error:
        refusal = error.detail
    cash = ledger.cash_balance(conn, portfolio_id) + owed
    return Standing(held.quantity if held else 0, cash.quantize(CENT), refusal)


def preview_trade(
    conn: Connection,
    settings: Settings,
    calendar: TradingCalendar,
    side: str,
    symbol: str,
    quantity: int,
    moment: datetime,
) -> TradePreview:
    """What the one cost model (market/costs.py) says an order of `quantity` shares would
    cost in a session like the latest one before `moment`: the touch (the ask or the bid,
    else half the range proxy from the close), the square-root impact of the whole
    quantity, the price per share with both, the fee on price x quantity, and how much of
    it one session's volume would fill (25% of it). A client's own trade is recorded at the
    client's price, the whole quantity, with the schedule's fees on it when it states none
    (`_fees`); this is the estimate to set that price against, so the order booked at the
    preview's price without fees is charged the preview's `fees`, also past what one
    session fills (`booking_total`: the cash it moves). Whether a portfolio's booking would
    take it is `previewed_for`'s. Nothing is stored. A symbol renamed by `trading_date` is not found, the
    answer naming the symbol it trades under (`ledger.renamed_said`); a name with no close
    to price it from is refused as its booking is (`price_band`: TradeRejected, 422). Three
    steps: read the market (`_preview_market`), decide the fills (`_preview_fills`), answer
    in cents (`_preview_answer`)."""
    market = _preview_market(conn, settings, calendar, side, symbol, quantity, moment)
    return _preview_answer(market, quantity, _preview_fills(market, quantity, fee_schedule(settings)), settings)


@dataclass(frozen=True)
class _PreviewMarket:
    """What a preview reads (`_preview_market`): the order's side and symbol as a booking
    spells them, its session, why the name does not trade on it (None: it does), the day's
    band and the latest bar as the session the preview prices (`_priced_session`)."""

    side: str
    symbol: str
    trading_date: date
    closed: str | None
    band: PriceBand
    close: Decimal  # the reference session's close
    priced: Session  # the latest bar, as a session like it (`_priced_session`)


@dataclass(frozen=True)
class _PreviewFills:
    """What the cost model decides of the order (`_preview_fills`): its walk of the whole
    quantity, that walk as a booking books it (all of it, within the band) and one session's fill."""

    model: Fill
    done: Fill
    one_session: Fill


def _preview_market(
    conn: Connection,
    settings: Settings,
    calendar: TradingCalendar,
    side: str,
    symbol: str,
    quantity: int,
    moment: datetime,
) -> _PreviewMarket:
    """The read step of `preview_trade`: the order checked (InvalidInputError, NotFoundError,
    a renamed symbol naming the one it trades under, TradeRejected for a quantity the booking
    refuses: `_checked_quantity`), the name's trading on
    its session and the band a booking passes (a name with no close refused as its booking
    is), and the symbol's latest bar, with its own quotes, as the reference for the
    session: on its share count and less a dividend going ex by it, as the band reads it."""
    side = str(side).upper()
    if side not in ("BUY", "SELL"):
        raise InvalidInputError(f"side must be buy or sell, not '{side.lower()}'")
    symbol = asked_symbol(str(symbol))
    if symbol not in known_symbols(conn):
        raise NotFoundError(f"no instrument '{symbol}'")
    _checked_quantity(quantity)  # no shares, or fewer, refused as the booking refuses them
    trading_date = calendar.session_of(moment)
    rename = renamed_on(stored_splits(conn, trading_date, [symbol]), symbol, trading_date)
    if rename is not None:  # nothing trades under the old symbol: the answer names the one it trades under
        raise NotFoundError(ledger.renamed_said(rename))
    closed = closed_to_trading(conn, settings, symbol, trading_date)
    band = price_band(conn, settings, symbol, trading_date, closed=closed)  # no close: refused as a booking is
    session = reference_market(conn, band.reference.dated, trading_date, [symbol]).sessions[symbol]
    close = Decimal(str(session.close)).quantize(CENT)
    return _PreviewMarket(side, symbol, trading_date, closed, band, close, _priced_session(session, closed is not None))


def _preview_fills(market: _PreviewMarket, quantity: int, schedule: FeeSchedule) -> _PreviewFills:
    """The decide step of `preview_trade`: the whole order walked by the cost model, as a
    trade books it (all of it, `_whole`, its fees the schedule's on all of it) at a price a
    trade books (the model's, held within the day's band: `bounded`), and what of it one
    session fills."""
    side, priced, band = market.side, market.priced, market.band
    model = fill(side, quantity, priced, schedule, capped=False)
    done = bounded(_whole(model, priced.close, schedule), band.low, band.high, priced.close, schedule)
    return _PreviewFills(model, done, fill(side, quantity, priced, schedule))


def _preview_answer(market: _PreviewMarket, quantity: int, fills: _PreviewFills, settings: Settings) -> TradePreview:
    """The answer step of `preview_trade`: the fills in cents, with the cash the order booked
    at the preview's price stating no fees moves (`_fees`, the booking's own rule)."""
    model, done, band, side = fills.model, fills.done, market.band, market.side
    costs, price = done.costs, done.price.quantize(CENT)
    gross, fees = (
        to_cents(price * quantity),
        _fees(settings, ManualTrade(side, market.symbol, quantity, price), price)[0],
    )
    return TradePreview(
        symbol=market.symbol,
        side=side,
        quantity=quantity,
        as_of=band.reference.dated.isoformat(),
        close=market.close,
        touch=Decimal(str(done.touch)).quantize(CENT),
        touch_source=done.touch_source,
        impact=round(done.impact, 6) if model.quantity else None,
        price=price,
        band_low=band.low,
        band_high=band.high,
        price_bound=_bound(model.price, band),
        price_note=_bound_said(model, band, market.trading_date),
        fillable_in_one_session=fills.one_session.quantity,
        lapse_reason=market.closed or fills.one_session.lapse_reason,
        fees=costs.fees.quantize(CENT),
        spread_cost=costs.spread.quantize(CENT),
        impact_cost=costs.impact.quantize(CENT),
        total_cost=costs.total.quantize(CENT),
        booking_total=gross + fees if side == "BUY" else gross - fees,
    )


def previewed_for(
    conn: Connection,
    settings: Settings,
    calendar: TradingCalendar,
    portfolio_id: str,
    preview: TradePreview,
    moment: datetime,
) -> TradePreview:
    """`preview` (`preview_trade`'s, at `moment`) with whether the portfolio's booking of the
    order at its price, stating no fees, would be accepted now, and if not why, in the
    booking's words (`standing`): a sell past the holding or a buy past the cash is still
    priced, and says it would be refused."""
    order = ManualTrade(preview.side, preview.symbol, preview.quantity, preview.price)
    booked = standing(conn, settings, calendar, PortfolioOrder(portfolio_id, order, moment))
    return replace(
        preview,
        held=booked.held,
        cash_available=booked.cash_available,
        bookable=booked.refusal is None,
        refusal=booked.refusal,
    )


def _whole(model: Fill, close: float, schedule: FeeSchedule) -> Fill:
    """`model` on all the shares it was asked for, as a booking books them: a session without
    trades (no volume on the latest bar, no ADV_20 to stand in for it) fills none of the order
    in the cost model, which then charges nothing, while the order booked at its price pays
    the schedule's fee on all of it (`FeeSchedule.order_fee`) and the spread that price holds
    over the close on every share; no impact can be estimated without a volume (0)."""
    if model.quantity == model.requested:
        return model
    quantity, price = model.requested, model.price
    spread = (abs(price - Decimal(str(close))) * quantity).quantize(CENT)
    fee = schedule.order_fee(price, quantity)
    return replace(model, quantity=quantity, lapsed=0, fee=fee, spread_cost=spread, impact_cost=Decimal(0))


def _bound(price: Decimal, band: PriceBand) -> str | None:
    """The edge of the day's band `price` lies past (BAND_LOW, BAND_HIGH), else None."""
    if price < band.low:
        return "BAND_LOW"
    return "BAND_HIGH" if price > band.high else None


def _bound_said(model: Fill, band: PriceBand, trading_date: date) -> str | None:
    """Why a preview's price is the band's edge, not the cost model's, in words (None when it
    is the model's): a walk past the edge, or one the model cannot price at all (to zero)."""
    bound = _bound(model.price, band)
    if bound is None:
        return None
    edge, side = (band.low, "below") if bound == "BAND_LOW" else (band.high, "above")
    walked = (
        f"cannot price the whole order: its impact ({model.impact:.0%} of the touch) takes the price to zero"
        if model.price <= 0
        else f"prices the whole order at {model.price:,.2f}"
    )
    return (
        f"the cost model {walked}, {side} {band.said(trading_date)}; nothing trades outside the band, so the "
        f"order is priced at its edge, {edge:,.2f}, and the market may not take the whole order there"
    )


def _priced_session(day, closed: bool):  # noqa: ANN001, ANN202 - a rail MarketDay
    """The latest bar as a session: a day the name did not trade still has its last close,
    and its volume is the normal day's (ADV_20), so the preview prices a session like it;
    a session the name is halted or delisted on trades nothing (volume 0)."""

    session = day.session()
    if closed:
        return replace(session, volume=0)
    if session.volume <= 0 and day.adv_20:
        session = replace(session, volume=int(day.adv_20))
    return session


def _fingerprint(request: list) -> str:
    """A write's request as its idempotency records keep it: the SHA-256 of its JSON."""
    return hashlib.sha256(json.dumps(request).encode()).hexdigest()


def _remember(conn: Connection, scope: str, key: str, request_hash: str, response: dict) -> None:
    """The first answer of a keyed write, stored in the write's own transaction."""
    record = {"scope": scope, "idempotency_key": key, "request_hash": request_hash, "status_code": 201}
    append_history(conn, tables.idempotency_records, [{**record, "response": response}])


def _stored_response(conn: Connection, scope: str, key: str, request_hash: str) -> dict | None:
    c = tables.idempotency_records.c
    rows = current_rows(conn, tables.idempotency_records, where=[c.scope == scope, c.idempotency_key == key])
    if not rows:
        return None
    if rows[0]["request_hash"] != request_hash:
        raise ConflictError(f"Idempotency-Key '{key}' was already used with a different request")
    return rows[0]["response"]


def _decimal(value: Decimal | str | int, name: str) -> Decimal:
    """A client's money (a manual trade's price or fees, a deposit or withdrawal): a Decimal
    as it is (validated upstream), anything else (the CLI's text, a caller's number) by
    market.money's strict rule; either way a whole number of cents, never rounded."""
    if isinstance(value, Decimal):
        result = value
    else:
        try:
            result = parse_money(value, name)
        except InvalidInputError as error:
            raise TradeRejected(error.detail) from None
    if not result.is_finite() or abs(result) > MAX_AMOUNT:
        raise TradeRejected(f"{name} must be a finite number of at most {MAX_AMOUNT:,}, not {_shown(value)}")
    try:
        whole_cents(result, name)
    except InvalidInputError as error:
        raise TradeRejected(error.detail) from None
    return result.quantize(CENT)


def _shown(value: Decimal | str | int) -> str:
    """A client's amount in an error, as text (never a Decimal's repr), cut to 40 characters."""
    if isinstance(value, Decimal) and value.is_finite():
        return format(value, "f")[:40]
    return str(value)[:40]
