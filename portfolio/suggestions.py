"""Morning suggestions (T2, 07:00) and what a client does with them.

For trading date D, every client and house portfolio is first credited the dividends it
is owed up to D (`portfolio.dividends`), then gets the book's plan (the same `plan_book`
and mandate as the AI portfolio, portfolio/book.py, on the portfolio's own cash and
holdings at D, under the same delisting rule: a delisted holding is none of its names)
from the latest scored day before D and that day's market, read on D's share count
(`market_days(..., count_of=D)`: a split with an ex-date after the scored day and on or
before D divides its prices and multiplies its volumes, so a holding is valued
and an order sized and priced on the count it is held on; the reason's `split_adjustment`
says so) and as D's reference price (`portfolio.market.reference_market`: less the
dividends going ex after the scored day and by D, so a sell is not paid the dividend in
its price beside the dividend credited, nor a buy charged it; the reason's
`dividend_adjustment` says so). Every morning is a
rebalance for a client (a suggestion not confirmed is not a trade, so a cadence counted in
the client's days would drift from the AI book's); replacements still need a gap that
beats the pair's round trip, so a full book rarely gets one: each planned order becomes a PENDING
suggestion with quantity, limit price (the price the plan used) and the rationale. The
plan applies the band its confirmation applies (`_band`, `trading.within_band` on D): an
order priced outside it is left out with the band's refusal (`MorningSuggestions.left_out`,
the stage's `left_out` table) and a sell's proceeds are not spent, so every suggestion
confirms on an unchanged market. A portfolio that already has suggestions for D planned
from the latest scored day is left alone, so re-running T2 changes nothing; a set planned
from older signals (T2 ran before T1 closed the previous session) has its pending
suggestions expired and is replaced (`_stale_set`, `MorningSuggestions.replaced`).

Expiry is one rule (`is_expired`): a suggestion for trading day D is open until D's
session close (16:00 exchange time, its `expires_at`) on the clock of whoever asks, and
that clock is always passed in, never read here: the API passes the service's clock
(`Services.now`, which tests pin; on a replay it has to be the replayed market's), T2 the morning
of its own trading date (`t2_moment`: 07:00 on D, whenever the stage actually runs, so a
replay of 2019 or a re-run of an old day expires exactly the days before D, and never D's
own suggestions). T2 records EXPIRED for the pending suggestions of the days before D;
listing, confirming and rejecting apply the same rule at their own moment.

Confirm re-checks, under the portfolio's lock, at that moment: the suggestion is still
pending and unexpired; a buy still passes the entry gates with the resulting position and
is affordable with fees; a sell is still held and sellable under the exit rail; either is no
more than one session fills (`rails.booked_whole`, the cap every suggestion is planned within:
the rails read the latest priced day on D's count); the limit price is still within the price band of
the latest close on D's count, as a manual trade's price must be (`trading.within_band`: a
close stored after T2 planned is refused, not booked); D's share count, the dividends
going ex by D and the scored day's reference inputs its quantity and limit were computed from
(close, closing bid and ask, high and low, volume, ADV_20, volatility and spread estimate:
`PRICED_ON`, recorded in its reason) are those the plan read (`_unmoved`, checked first: a
split, a dividend notice or a T0 correction of any of those inputs stored after T2 planned is
a conflict, `PlanMoved`, and the suggestion stays pending for the client to reject); so is a
buy that would take the position past the mandate's largest (`Mandate.trim` slots) because the
portfolio holds more of the name than the plan sized it from (`_holding_moved`).
Before the ledger's cash check it credits the dividends owed up to the trading date, as a
manual trade does (a buy may spend a dividend paid since T2, never one a correction takes
back). Then it executes the trade at the limit price (a price at the instrument's tick)
with the fees the suggestion shows, so the cash it moves is the limit price times the
quantity plus those fees, and records CONFIRMED with the trade id, atomically. A
confirmation retried (a client whose answer was lost) is answered as the first one was,
with the trade id that CONFIRMED event stored, and books nothing; every other decision of
a suggestion no longer pending is a conflict.
Reject records REJECTED. Another portfolio's suggestion is "not found", never "forbidden".
Each state is an appended `suggestion_events` row.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, time
from decimal import Decimal

from sqlalchemy import Connection, Engine, Table, func, select

from market.clock import EXCHANGE_TZ, TradingCalendar, session_close_utc
from market.contract import MAX_SUGGESTION_ID, described
from market.errors import ConflictError, InvalidInputError, NotFoundError, NotReadyError, StageFailedError
from market.money import Money, Price, Shares
from market.settings import Settings
from portfolio import dividends, ledger
from portfolio.ai import day_signals, fee_schedule, record_name
from portfolio.book import BookDay, Mandate, Outlook, plan_book
from portfolio.delisting import BookView, book_view, stored_absences, stored_rule
from portfolio.executor import PriceRule, Rationale
from portfolio.ledger import TradeRejected, TradeRequest
from portfolio.market import known_persistence, reference_market
from portfolio.rails import MarketDay, booked_whole, check_entry, exit_state
from portfolio.trading import within_band
from store import tables
from store.history import append_history, current_rows
from store.splits import factor_between, stored_splits
from store.transactions import Respond, answered, write_transaction

log = logging.getLogger(__name__)

TERMINAL = ("CONFIRMED", "REJECTED", "EXPIRED")
SUGGESTION_FEES = (
    "The fee on limit_price x quantity, as the plan computed it: a confirmation charges exactly limit_price x "
    "quantity plus these fees (null on suggestions made before they were stored: the fee schedule's then)."
)
T2_TIME = time(7, 0)  # T2 runs at 07:00 exchange time on the trading day it suggests for
LIMIT = "the limit price"  # what the band's refusal calls the price, planning and confirming alike


class PlanMoved(ConflictError):
    """A confirmation refused because the market its plan read moved after T2 planned it
    (`_unmoved`): the name's share count, its dividends going ex or its reference session's
    prices, volumes, volatility or spread estimate (PRICED_ON).
    The suggestion's quantity and limit are the old market's; it stays pending, so the
    client can reject it and trade by hand on the market as it is now, and the next
    morning's plan reads the market as it is then."""


class SuggestionReason(Rationale, total=False):
    """A suggestion's reason: the plan's rationale for the order, with the day its signals are
    from (`model_id` and `record` name the model and the record that scored it)."""

    signals_from: str
    # the scored day's quotes and range the limit was computed from, beside `close`, and the
    # volumes, volatility and spread estimate its quantity and impact were (PRICED_ON; None:
    # the session had none): its confirmation checks them
    bid: float | None
    ask: float | None
    high: float | None
    low: float | None
    volume: int
    adv_20: float | None
    volatility: float | None
    spread_estimate: float | None


# The scored day's inputs a suggestion's quantity and limit are computed from (market/costs.py
# `fill`: the touch is the closing ask or bid, else the close and the range or the spread
# estimate; the impact reads the volatility, else the range, over the smaller of the volume and
# ADV_20; the one-session cap is 25% of the volume, the entry gates read ADV_20), as its reason
# records them and `_prices_moved` compares them at confirmation, with the words a refusal names
# each by (and, in SHOWN_AS, how it shows one that is not a price).
PRICED_ON = {
    "close": "close",
    "bid": "closing bid",
    "ask": "closing ask",
    "high": "high",
    "low": "low",
    "volume": "volume",
    "adv_20": "20-session average volume",
    "volatility": "20-session volatility",
    "spread_estimate": "estimated spread",
}
SHOWN_AS = {"volume": ",.0f", "adv_20": ",.0f", "volatility": ".4%", "spread_estimate": ".4%"}


@dataclass(frozen=True)
class Suggestion:
    """A stored suggestion with the state its events give (None: no event yet) and, once
    confirmed, the trade it became: the one declaration of a suggestion, from which REST's
    `Suggestion` schema and GraphQL's `Suggestion` type are derived (every field but the
    portfolio's, in this order, described here)."""

    suggestion_id: str
    portfolio_id: str = described(served=False)  # the caller's own: no transport shows it
    trading_date: date
    symbol: str
    side: str  # BUY or SELL
    quantity: Shares
    limit_price: Price  # the price the plan used: a price at the instrument's tick (market/costs.limit_price)
    # The fee on limit_price x quantity as the plan computed it: what the suggestion shows and
    # its confirmation charges (None on suggestions stored before migration 0021: the schedule's).
    fees: Money | None = described(SUGGESTION_FEES)
    reason: SuggestionReason  # the plan's rationale (JSON), with signals_from, model_id and record
    expires_at: datetime  # the trading day's session close, UTC
    # None: no event yet (never served: every suggestion is stored with its PENDING event)
    state: str | None = described("PENDING, CONFIRMED, REJECTED or EXPIRED.", served_as=str, default=None)
    trade_id: str | None = None

    @classmethod
    def of(cls, row: Mapping[str, object], state: str | None, trade_id: str | None = None) -> Suggestion:
        """From a `suggestions` row (its own columns; the history's are left out)."""
        own = {f.name: row[f.name] for f in fields(cls) if f.name not in ("state", "trade_id")}
        return cls(**own, state=state, trade_id=trade_id)

    def decided(self, state: str, trade_id: str | None = None) -> Suggestion:
        return Suggestion(**{**vars(self), "state": state, "trade_id": trade_id})


@dataclass(frozen=True)
class Planned:
    """A suggestion T2 created (what the stage's table lists)."""

    suggestion_id: str
    portfolio_id: str
    symbol: str
    side: str
    quantity: int


@dataclass(frozen=True)
class LeftOut:
    """An order a portfolio's plan left out because its confirmation would refuse its limit
    price (`trading.within_band`), with the plan's reason and the band's refusal: no
    suggestion is made of it, and the plan spends none of a sell's proceeds."""

    portfolio_id: str
    symbol: str
    side: str
    reason: str


@dataclass(frozen=True)
class MorningSuggestions:
    """What T2 did for a trading date: the suggestions created, the orders left out for
    their price, the pending ones of earlier days it expired, and the dividends credited first."""

    trading_date: str  # ISO 8601
    signals_from: str  # ISO 8601: the scored day the plans came from
    record: str  # the predictions record read
    portfolios: int
    suggestions: list[Planned]
    expired: int
    dividends: list[dict[str, object]]  # portfolio.dividends.credit_dividends's rows, with the portfolio_id
    left_out: list[LeftOut]
    # the pending suggestions of the day expired because newer signals replaced their set
    replaced: int = 0


def expires_at(day: date) -> datetime:
    """When the suggestions for trading day `day` stop being open: its 16:00 session close
    on the exchange clock, as a UTC instant (stored in `suggestions.expires_at`)."""
    return session_close_utc(day)


def is_expired(suggestion: Suggestion, now: datetime) -> bool:
    """The one expiry rule: `suggestion` (with its `expires_at`) is past its day's
    close at `now`, the caller's clock (the API's `Services.now`, T2's `t2_moment`). A
    naive `now` has no place on the exchange clock and is refused."""
    if now.tzinfo is None:
        raise ValueError("suggestion expiry needs an aware datetime, not a naive one")
    return now >= suggestion.expires_at


def t2_moment(day: date) -> datetime:
    """The stage's clock: 07:00 exchange time on `day`, T2's own morning."""
    return datetime.combine(day, T2_TIME, tzinfo=EXCHANGE_TZ).astimezone(UTC)


def suggestion_id(portfolio_id: str, day: date, symbol: str, side: str, replacing: date | None = None) -> str:
    """The suggestion's id; a replacement set (`replacing`: planned from newer signals than
    an expired set of the day) names its signals day, so no id of the expired set recurs."""
    digest = hashlib.sha256(portfolio_id.encode()).hexdigest()[:10]
    return f"S-{day:%Y%m%d}-{digest}-{symbol}-{side}" + (f"-from{replacing:%Y%m%d}" if replacing else "")


def latest_scored_day(conn: Connection, before: date, record: Table = tables.predictions) -> date | None:
    c = record.c
    return conn.execute(select(func.max(c.trading_date)).where(c.trading_date < before)).scalar()


def record_before(conn: Connection, day: date) -> Table:
    """The record T2 for `day` plans from: the live predictions where they have a day before
    it, else the validation record (the morning of the first live day, or a day before it,
    follows the validation record's last day, as bootstrapping plans it and as the AI book
    replays those days)."""
    if latest_scored_day(conn, day, tables.predictions) is not None:
        return tables.predictions
    return tables.validation_predictions


def generate(
    engine: Engine, settings: Settings, day: date, now: datetime | None = None, record: Table | None = None
) -> MorningSuggestions:
    """T2 for `day` from the latest day scored before it in `record` (None: `record_before`).
    `now`: the moment expiry is judged at; default the stage's own, `t2_moment(day)`,
    never the wall clock (on a replay the wall clock is years past every replayed close)."""
    moment = now or t2_moment(day)
    with engine.connect() as conn:
        record = record if record is not None else record_before(conn, day)
        scored = latest_scored_day(conn, day, record)
        portfolios = [r for r in current_rows(conn, tables.portfolios) if r["kind"] in ("CLIENT", "HOUSE")]
        if scored is None:
            raise NotReadyError(
                f"no predictions of a day before {day.isoformat()} in the {record_name(record)} record: T2 plans "
                "from the last day scored before its own"
            )
        outlook = Outlook.of(known_persistence(conn, scored), Mandate().hold)  # as the AI book weighs its day
    expired = expire_stale(engine, day, moment)
    created: list[Planned] = []
    left_out: list[LeftOut] = []
    credited: list[dict[str, object]] = []
    failed: list[str] = []
    replaced = 0
    for portfolio in sorted(portfolios, key=lambda p: p["portfolio_id"]):
        portfolio_id = portfolio["portfolio_id"]
        try:
            with ledger.portfolio_transaction(engine, portfolio_id) as conn:
                # the cash the plan spends includes the dividends owed up to the morning
                paid = [
                    {"portfolio_id": portfolio_id, **d} for d in dividends.credit_dividends(conn, portfolio_id, day)
                ]
                made, left, stale = _suggest_for(conn, settings, portfolio_id, (day, scored), record, outlook)
        except InvalidInputError as exc:  # one book that does not replay must not stop the others' morning
            log.error("T2 for %s skipped portfolio %s: %s", day, portfolio_id, exc.detail)
            failed.append(f"{portfolio_id}: {exc.detail}")
            continue
        credited.extend(paid)
        created.extend(made)
        left_out.extend(left)
        replaced += stale
    if failed:  # the others are planned and committed; the stage still fails, so the operator sees it
        raise StageFailedError(
            f"T2 for {day.isoformat()} planned {len(portfolios) - len(failed)} of {len(portfolios)} "
            f"portfolios; not: {'; '.join(failed)}"
        )
    return MorningSuggestions(
        trading_date=day.isoformat(),
        signals_from=scored.isoformat(),
        record=record_name(record),
        portfolios=len(portfolios),
        suggestions=created,
        expired=expired,
        dividends=credited,
        left_out=left_out,
        replaced=replaced,
    )


def _suggest_for(
    conn: Connection, settings: Settings, portfolio_id: str, days: tuple[date, date], record: Table, outlook: Outlook
) -> tuple[list[Planned], list[LeftOut], int]:
    """The portfolio's plan for trading day `days[0]` from the signals of `days[1]` (the
    latest scored day before it), as pending suggestions, the orders it left out because
    their confirmation would refuse the price (`_band`) and how many pending suggestions of
    a set planned from older signals it replaced; none if its set for the day is current."""
    day, scored = days
    prior = _stale_set(conn, portfolio_id, day, scored)
    if prior is None:
        return [], [], 0
    model_id, signals = day_signals(conn, scored, record)
    held = {s: p.quantity for s, p in ledger.holdings(conn, portfolio_id, day).items()}
    cash = ledger.cash_balance(conn, portfolio_id)
    # the scored day's market as D's reference: on D's share count, the count the holdings
    # are on, and less the dividends going ex by D
    market = reference_market(conn, scored, day)
    view = _under_delisting(conn, settings, held, days)
    sessions = view.with_carried(market.sessions)
    book = BookDay(cash, view.names, signals, sessions, fee_schedule(settings), _band(conn, settings, day))
    plan = plan_book(book, Mandate(), rebalance=True, outlook=outlook)
    left = [LeftOut(portfolio_id, s.symbol, s.side, s.reason) for s in plan.left_out]
    for order in left:
        log.info("T2 for %s left out %s %s for %s: %s", day, order.side, order.symbol, portfolio_id, order.reason)
    later = stored_splits(conn, day, after=scored)
    rows = [
        {
            "suggestion_id": suggestion_id(portfolio_id, day, o.symbol, o.side, scored if prior.existed else None),
            "portfolio_id": portfolio_id,
            "trading_date": day,
            "symbol": o.symbol,
            "side": o.side,
            "quantity": o.quantity,
            "limit_price": o.price,
            "fees": o.fees,
            "reason": {
                **o.rationale,
                **{field: _recorded(getattr(sessions[o.symbol], field)) for field in PRICED_ON},
                **_on_count_note(factor_between(later, o.symbol, scored, day)),
                **_ex_dividend_note(market.dividends.get(o.symbol), day),
                "signals_from": scored.isoformat(),
                "model_id": model_id,
                "record": record_name(record),
            },
            "expires_at": expires_at(day),
        }
        for o in plan.orders
    ]
    if rows:
        append_history(conn, tables.suggestions, rows)
        append_history(
            conn, tables.suggestion_events, [_event(r["suggestion_id"], portfolio_id, "PENDING") for r in rows]
        )
    planned = [Planned(r["suggestion_id"], portfolio_id, r["symbol"], r["side"], r["quantity"]) for r in rows]
    return planned, left, prior.replaced


@dataclass(frozen=True)
class _Prior:
    """A portfolio's earlier set of suggestions for the day: whether it had one, and how many
    of its pending suggestions were expired because newer signals replace it."""

    existed: bool
    replaced: int


def _stale_set(conn: Connection, portfolio_id: str, day: date, scored: date) -> _Prior | None:
    """None when the portfolio's suggestions for `day` are current (planned from `scored`
    or later: re-running T2 changes nothing); else its earlier set (`_Prior`), whose pending
    suggestions, planned from older signals, are recorded EXPIRED here: newer signals
    replace that set."""
    c = tables.suggestions.c
    rows = current_rows(conn, tables.suggestions, where=[c.portfolio_id == portfolio_id, c.trading_date == day])
    if not rows:
        return _Prior(False, 0)
    if max(str(r["reason"].get("signals_from") or "") for r in rows) >= scored.isoformat():
        return None
    stale = [r["suggestion_id"] for r in rows if _state(conn, r["suggestion_id"]) == "PENDING"]
    append_history(conn, tables.suggestion_events, [_event(sid, portfolio_id, "EXPIRED") for sid in stale])
    log.warning("T2 for %s replaced %d suggestions of %s planned from older signals", day, len(stale), portfolio_id)
    return _Prior(True, len(stale))


def _under_delisting(conn: Connection, settings: Settings, held: dict[str, int], days: tuple[date, date]) -> BookView:
    """`held` under the delisting rule on the scored day `days[1]` (on trading day `days[0]`'s
    share count), as the AI book plans (portfolio/delisting.py): a delisted holding is none
    of the plan's names (no slot, no sell it could never fill), a name without a row is
    carried at its last close."""
    day, scored = days
    rule = stored_rule(conn, settings, scored, held)
    return book_view(held, stored_absences(conn, scored, held, rule, day), rule, scored)


def _band(conn: Connection, settings: Settings, day: date) -> PriceRule:
    """The price rule a confirmation on trading day `day` applies (`trading.within_band`, on
    the latest close on or before `day`, `day`'s halts and delistings), for the plan: an
    order it refuses is left out rather than suggested, so every suggestion T2 makes is
    confirmable on an unchanged market. A sell is not clamped to the band's edge: its limit
    is what the confirmation books, and booking the whole order at a price better than the
    cost model's estimate would credit proceeds the market was not expected to pay."""

    def refusal(symbol: str, price: Decimal) -> str | None:
        try:
            within_band(conn, settings, symbol, day, price, LIMIT)
        except TradeRejected as error:
            return error.detail
        return None

    return refusal


def _on_count_note(factor: float) -> dict[str, str]:
    """The reason's note for a name the plan read on D's share count (a split with an
    ex-date after the scored day and on or before D): none where nothing changed it."""
    if factor == 1.0:
        return {}
    return {
        "split_adjustment": f"the scored day's prices divided and volumes multiplied by {factor:g}, "
        "for a split with an ex-date after it: on the share count of the trading date",
        "split_factor": factor,
    }


def _ex_dividend_note(per_share: Decimal | None, day: date) -> dict[str, str]:
    """The reason's note for a name with a dividend going ex after the scored day and by D,
    which the plan took off the scored day's prices (`portfolio.market.reference_market`);
    `dividend_per_share` is what `_dividend_moved` compares with at confirmation."""
    if not per_share:
        return {}
    return {
        "dividend_adjustment": f"the scored day's prices less the dividend of {per_share} per share going ex by "
        f"{day.isoformat()}: the exchange's reference price, the dividend being credited, not sold or bought",
        "dividend_per_share": str(per_share),
    }


def _unmoved(conn: Connection, suggestion: Suggestion) -> None:
    """PlanMoved when the market the plan read moved after T2 planned (a suggestion without
    `signals_from` is not judged): the share count first, then the dividends, then the
    prices the limit was computed from, so the refusal names the first thing that moved (a
    split or a dividend moves the reference prices too)."""
    scored = suggestion.reason.get("signals_from")
    if scored is None:
        return
    for moved in (_count_moved, _dividend_moved, _prices_moved):
        moved(conn, suggestion, date.fromisoformat(scored))


def _prices_moved(conn: Connection, suggestion: Suggestion, scored: date) -> None:
    """PlanMoved when an input of the scored day's reference session (`reference_market`, as
    the plan read it) the quantity and limit were computed from is not the one the plan
    recorded (PRICED_ON, in that order: a reason compares what it recorded, a suggestion stored
    before the quotes were kept its `close` alone, one stored before the volumes were kept its
    prices; a name the market no longer has a bar of is not judged): T0 corrected the scored
    day's bar, or a bar of its window, after T2 planned. A correction inside the price band let
    the old limit through: a buy planned on a close of 50 corrected to 45 was booked 11% over the
    market, one planned on an ask of 50.10 corrected to 47.00 (its close unchanged) 6.6% over it,
    one of 500 shares planned on a volume of 2,000 corrected to 40,000 at 51.15 where the impact
    on the corrected volume prices it at 50.33."""
    day, symbol, reason = suggestion.trading_date, suggestion.symbol, suggestion.reason
    session = reference_market(conn, scored, day, [symbol]).sessions.get(symbol)
    if session is None:
        return
    for field, words in PRICED_ON.items():
        planned, now = reason.get(field), _recorded(getattr(session, field))
        if field not in reason or _same_price(planned, now):
            continue
        shown = SHOWN_AS.get(field, ",.2f")
        raise PlanMoved(
            f"{symbol}'s {scored.isoformat()} {words} was corrected after this suggestion was planned "
            f"({_price_words(planned, shown)} then, {_price_words(now, shown)} now): its quantity and limit price "
            f"were planned on the old {words}; reject it and, to trade now, place a manual trade (its preview prices "
            f"it on the corrected {words}); the next morning's suggestions are planned on the corrected {words}"
        )


def _recorded(value: float | None) -> float | None:
    """A session's input as a reason records it: None for one unknown (a NaN is no JSON)."""
    return None if value is None or not math.isfinite(value) else value


def _same_price(planned: float | None, now: float | None) -> bool:
    if planned is None or now is None:
        return planned is None and now is None
    return abs(now - planned) <= 1e-9 * max(abs(planned), 1.0)


def _price_words(price: float | None, shown: str = ",.2f") -> str:
    return "none" if price is None else format(price, shown)


def _dividend_moved(conn: Connection, suggestion: Suggestion, scored: date) -> None:
    """PlanMoved when the dividends going ex after the scored day's closes and by the
    trading date (`reference_market`, as the plan read them) are not those the plan took off its prices (its reason's
    `dividend_per_share`, 0 when it names none): a notice stored once T2 had planned makes
    the limit the price with the dividend in it, a sell paid it twice (in the price and
    credited), a buy paid it for a share that earns none."""
    day, symbol = suggestion.trading_date, suggestion.symbol
    now = reference_market(conn, scored, day, [symbol]).dividends.get(symbol, Decimal(0))
    planned = Decimal(str(suggestion.reason.get("dividend_per_share", 0)))
    if now != planned:
        raise PlanMoved(
            f"{symbol}'s dividends going ex by {day.isoformat()} changed after this suggestion was planned "
            f"({planned} per share then, {now} now): its limit price is not the exchange's reference price; reject "
            "it (the next morning's suggestions are priced on the dividends known then)"
        )


def _count_moved(conn: Connection, suggestion: Suggestion, scored: date) -> None:
    """PlanMoved when the name's share count on the trading date moved after the plan:
    a split or bonus issue with an ex-date after the scored day and on or before the trading
    date, stored once T2 had planned (its notice delivered between 07:00 and the close),
    makes the suggestion's quantity and limit price the old count's. Booked at that limit, a
    buy of a 1.1 split (inside the price band) paid 10% over the market, a sell was paid as
    much above it. The plan's factor is its reason's `split_factor` (1 when it names none;
    a reason stored before the factor was kept, which names an adjustment without it, is
    not judged)."""
    reason = suggestion.reason
    if "split_adjustment" in reason and "split_factor" not in reason:
        return
    day, symbol = suggestion.trading_date, suggestion.symbol
    splits = stored_splits(conn, day, symbols=[symbol], after=scored)
    now, planned = factor_between(splits, symbol, scored, day), reason.get("split_factor", 1.0)
    if abs(now / planned - 1) > 1e-9:
        raise PlanMoved(
            f"{symbol}'s share count on {day.isoformat()} changed after this suggestion was planned (a split or "
            f"bonus issue of {now / planned:g} shares per share): its quantity and limit price are on the old "
            "count; reject it (the next morning's suggestions are planned on the new count)"
        )


def expire_stale(engine: Engine, day: date, now: datetime) -> int:
    """Record EXPIRED for the pending suggestions (of days up to `day`) expired at `now`.

    Each of their portfolios' locks (`ledger.lock_portfolio`) is taken, in portfolio-id
    order, before anything is written, and their states are read again under it: every
    writer of a portfolio's suggestion events holds its lock, so they commit their ids in
    order (what the portfolio's kept suggestions read is keyed by: desk/versions.py
    `suggestions`), and a decision committed meanwhile is not overwritten as EXPIRED."""
    with write_transaction(engine, "suggestions:expire") as conn:
        candidates = [
            s
            for s in (
                Suggestion.of(r, None)
                for r in current_rows(conn, tables.suggestions, where=[tables.suggestions.c.trading_date <= day])
            )
            if is_expired(s, now) and _state(conn, s.suggestion_id) == "PENDING"
        ]
        for portfolio_id in sorted({s.portfolio_id for s in candidates}):
            ledger.lock_portfolio(conn, portfolio_id)
        stale = [s for s in candidates if _state(conn, s.suggestion_id) == "PENDING"]
        append_history(
            conn, tables.suggestion_events, [_event(s.suggestion_id, s.portfolio_id, "EXPIRED") for s in stale]
        )
    return len(stale)


def _event(sid: str, portfolio_id: str, state: str, **more: object) -> dict[str, object]:
    """A suggestion event's row, naming the suggestion's portfolio: its writer holds that
    portfolio's lock, and its kept suggestions read is keyed by the portfolio's newest event
    (desk/versions.py `suggestions`)."""
    return {"suggestion_id": sid, "state": state, "portfolio_id": portfolio_id, **more}


def _state(conn: Connection, sid: str) -> str | None:
    return _decision(conn, sid)[0]


def _decision(conn: Connection, sid: str) -> tuple[str | None, str | None]:
    """The state the suggestion's events give, and the trade its CONFIRMED event stored."""
    events = {
        e["state"]: e["trade_id"]
        for e in current_rows(conn, tables.suggestion_events, where=[tables.suggestion_events.c.suggestion_id == sid])
    }
    state = next((s for s in TERMINAL if s in events), "PENDING" if "PENDING" in events else None)
    return state, events.get("CONFIRMED")


def _view(conn: Connection, row: Mapping[str, object], now: datetime) -> Suggestion:
    suggestion = Suggestion.of(row, *_decision(conn, str(row["suggestion_id"])))
    if suggestion.state == "PENDING" and is_expired(suggestion, now):
        return suggestion.decided("EXPIRED")
    return suggestion


def list_pending(engine: Engine, portfolio_id: str, now: datetime) -> list[Suggestion]:
    """The portfolio's suggestions still pending at `now` (the caller's clock)."""
    with engine.connect() as conn:
        return pending_at(suggestion_states(conn, portfolio_id), now)


def suggestion_states(conn: Connection, portfolio_id: str) -> list[Suggestion]:
    """Every suggestion of the portfolio with the state its events give (expiry by the
    clock not applied: `pending_at` applies it), so a reader can keep this between writes."""
    rows = current_rows(conn, tables.suggestions, where=[tables.suggestions.c.portfolio_id == portfolio_id])
    return [Suggestion.of(r, _state(conn, r["suggestion_id"])) for r in rows]


def pending_at(states: list[Suggestion], now: datetime) -> list[Suggestion]:
    """The suggestions still pending at `now` (not decided, not expired: `is_expired`)."""
    return sorted(
        (s for s in states if s.state == "PENDING" and not is_expired(s, now)),
        key=lambda v: (v.trading_date, v.side != "SELL", v.symbol),
    )


def _owned(conn: Connection, portfolio_id: str, sid: str, now: datetime) -> Suggestion:
    """The caller's suggestion `sid`; NotFoundError for none of theirs, InvalidInputError
    for an id longer than any suggestion's (MAX_SUGGESTION_ID), not echoed back."""
    if len(sid) > MAX_SUGGESTION_ID:
        raise InvalidInputError(f"a suggestion id is at most {MAX_SUGGESTION_ID} characters; this one has {len(sid):,}")
    rows = current_rows(conn, tables.suggestions, where=[tables.suggestions.c.suggestion_id == sid])
    if not rows or rows[0]["portfolio_id"] != portfolio_id:
        raise NotFoundError(f"no suggestion '{sid}'")
    return _view(conn, rows[0], now)


def reject(engine: Engine, portfolio_id: str, sid: str, now: datetime, respond: Respond = None) -> Suggestion:
    """REJECTED, if the suggestion is still pending at `now` (the caller's clock)."""
    return _decide(engine, portfolio_id, sid, now, None, respond)


def confirm(
    engine: Engine,
    settings: Settings,
    calendar: TradingCalendar,
    portfolio_id: str,
    sid: str,
    now: datetime,
    respond: Respond = None,
) -> Suggestion:
    """The trade, if the suggestion is still pending at `now` (the caller's clock, also the
    trade's executed_at) and passes the re-checks."""
    return _decide(engine, portfolio_id, sid, now, (settings, calendar), respond)


def _decide(
    engine: Engine,
    portfolio_id: str,
    sid: str,
    now: datetime,
    confirm: tuple[Settings, TradingCalendar] | None,
    respond: Respond,
) -> Suggestion:
    """Confirm (with the settings the re-checks read and the calendar that dates `now`) or
    reject (None), answering from inside
    the transaction (store.transactions.answered). A decision retried (its answer lost) is
    answered as the first one was and writes nothing: a confirmation of a CONFIRMED one with
    the trade its CONFIRMED event stored, a rejection of a REJECTED one with its state. Any
    other suggestion that is not pending at `now` is a ConflictError and writes
    nothing (one already expired by the clock is recorded EXPIRED by T2's `expire_stale`;
    listing applies the same rule)."""
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        suggestion = _owned(conn, portfolio_id, sid, now)
        if suggestion.state == ("CONFIRMED" if confirm is not None else "REJECTED"):
            return answered(suggestion, respond)
        if suggestion.state != "PENDING":
            raise ConflictError(f"suggestion '{sid}' is {suggestion.state}, not PENDING")
        if confirm is None:
            append_history(conn, tables.suggestion_events, [_event(sid, portfolio_id, "REJECTED")])
            return answered(suggestion.decided("REJECTED"), respond)
        trade_id = _execute(conn, *confirm, suggestion, now)
        append_history(conn, tables.suggestion_events, [_event(sid, portfolio_id, "CONFIRMED", trade_id=trade_id)])
        return answered(suggestion.decided("CONFIRMED", trade_id), respond)


def _holding_moved(suggestion: Suggestion, held: int) -> None:
    """PlanMoved when a buy would take the position past the mandate's largest (`Mandate.trim`
    slots, the weight past which the plan sells a position back to its slot) because the
    portfolio holds more of the name than when T2 planned it (its reason's `limits`: the
    `held` it sized the buy from, the `slot_shares` it filled): a manual buy or a statement's
    trade since. The plan never buys past one slot; confirmed past two, the next
    morning's plan would sell the excess back at a round trip's cost. Decision: a holding
    grown within the largest position still confirms (the plan's own tolerance before it
    trims); past it, the suggestion stays pending for the client to reject. A buy whose
    reason names no `limits.held` and `limits.slot_shares`, and a sell (the ledger refuses
    one past the holding), are not judged here."""
    limits, largest = suggestion.reason.get("limits"), Mandate().trim
    if suggestion.side != "BUY" or largest is None or not {"held", "slot_shares"} <= set(limits or {}):
        return
    planned, slot, quantity = int(limits["held"]), int(limits["slot_shares"]), int(suggestion.quantity)
    cap = math.floor(largest * slot)
    if held <= planned or held + quantity <= cap:
        return
    raise PlanMoved(
        f"the portfolio holds {held:,} {suggestion.symbol} now, {planned:,} when this suggestion was planned: "
        f"confirming its {quantity:,} would hold {held + quantity:,}, past the mandate's largest position of "
        f"{largest:g} slots ({cap:,} shares of the plan's slot of {slot:,}); reject it (the next morning's "
        "suggestions are sized on the holding as it is then)"
    )


def _rails(day: MarketDay, suggestion: Suggestion, held: int) -> None:
    """TradeRejected when the rails, on the latest priced session `day` (on the trading
    date's count), refuse the suggestion now: a buy that no longer passes the entry gates
    with the `held` shares, a sell past what the exit rail sells now, and either side past
    what one session fills (`rails.booked_whole`, the cap the plan sized it within: a
    confirmation books the whole quantity at the limit). A sell of more than is held is left
    to the ledger's one message."""
    symbol, quantity = suggestion.symbol, int(suggestion.quantity)
    if suggestion.side == "BUY":
        check = check_entry(day, held + quantity)
        if not check.passed:
            raise TradeRejected(f"{symbol} no longer passes the entry gates: {', '.join(check.failed)}")
    elif quantity > held:
        return
    elif quantity > (sellable := exit_state(day, held)).sellable_today:
        raise TradeRejected(
            f"the exit rail allows selling {sellable.sellable_today} {symbol} now ({', '.join(sellable.flags)})"
        )
    if quantity > (fills := booked_whole(day, quantity)):
        raise TradeRejected(f"one session fills at most {fills} {symbol} (25% of its {day.volume:,} shares)")


def _execute(
    conn: Connection, settings: Settings, calendar: TradingCalendar, suggestion: Suggestion, now: datetime
) -> str:
    """The suggestion executed at its limit price after the re-checks; the trade's id. The
    dividends owed are credited first, through the suggestion's session or the current one
    (`calendar.session_of(now)`), whichever is earlier: a confirmation ahead of its session
    (Monday's, on Saturday) credits no dividend going ex in a session still to come, whose
    holders are not yet known (a sale dated Friday may still end the holding) and whose
    credit the next cash use from the ex-date on makes."""
    portfolio_id, symbol, quantity = suggestion.portfolio_id, suggestion.symbol, int(suggestion.quantity)
    _unmoved(conn, suggestion)  # first: a rail refusing a plan whose inputs moved names the wrong cause
    priced = conn.execute(
        select(func.max(tables.eod_prices.c.trading_date)).where(
            tables.eod_prices.c.trading_date <= suggestion.trading_date
        )
    ).scalar()
    day = reference_market(conn, priced, suggestion.trading_date, [symbol]).sessions.get(symbol) if priced else None
    if day is None:
        raise TradeRejected(f"no market data for {symbol} to check the rails against")
    held = ledger.holdings(conn, portfolio_id, suggestion.trading_date).get(symbol)
    _holding_moved(suggestion, held.quantity if held else 0)
    _rails(day, suggestion, held.quantity if held else 0)
    price = Decimal(suggestion.limit_price)
    within_band(conn, settings, symbol, suggestion.trading_date, price, LIMIT)
    fees = _fees(settings, suggestion)
    through = min(suggestion.trading_date, calendar.session_of(now))
    request = TradeRequest(
        portfolio_id=portfolio_id,
        trading_date=suggestion.trading_date,
        executed_at=now,
        symbol=symbol,
        side=suggestion.side,
        quantity=quantity,
        price=price,
        fees=fees,
        origin="SUGGESTION",
        rationale={"suggestion_id": suggestion.suggestion_id, **suggestion.reason},
        trade_id=f"T-{suggestion.suggestion_id}",
    )
    with dividends.credited_first(conn, portfolio_id, through):  # a buy may spend them, not a reversal
        recorded = ledger.record_trade(conn, request)
    return recorded["trade_id"]


def _fees(settings: Settings, suggestion: Suggestion) -> Decimal:
    """What a confirmation charges: the fees the suggestion shows (what the client was shown
    is what it pays), or, on one stored before they were (migration 0021), the fee schedule's
    on its limit times its quantity by the one rule of an order's fee (`FeeSchedule.order_fee`,
    on the value in cents), which the trade preview shows and a manual trade stating no fees
    books: the same order costs the same whichever way it is placed."""
    if suggestion.fees is not None:
        return Decimal(suggestion.fees)
    return fee_schedule(settings).order_fee(Decimal(suggestion.limit_price), int(suggestion.quantity))
