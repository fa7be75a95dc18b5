"""The executor's two halves: exits planned under the exit rail, and fills in the next
session.

The service decides after the close (T1, 16:15), so no order can fill at the close it was
decided from. The book (portfolio/book.py: which names to hold, when to replace one) plans
the orders with `plan_exit` and `estimate` from here; `fill_orders` fills them in the
next session the instrument's data arrives for, through the one cost model
(market/costs.py: the ask or the bid, else the close plus or minus half the estimated
spread; square-root impact; at most 25% of that session's volume; fees). What a session
cannot fill lapses, with the reason in the rationale, and the next plan asks again if it
still wants to. The backtest, the AI portfolio and the client suggestions run the same
plan and fills.

Every order carries its rationale: the signal with its expected excess, round-trip cost
and reason, the reasons behind the prediction (its three largest input contributions and
the base value, models/reasons.py), the gates or exit flags, the limits that bound its
size (`bound_by`), and once filled the fill's parts (touch, impact, spread, impact and fee
in money, what lapsed).

With `rails=False` exits sell everything whatever the day's volume. With
`realistic=False` fills are at the decision's own close, whole and cost-free (the
same-close comparison the backtest prints beside the real one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from typing import Required, TypedDict

from market.costs import MONEY, CostBreakdown, FeeSchedule, FillJson, affordable, fill, limit_price
from market.money import Fraction, Money, Price
from market.plain import JsonValue
from models.reasons import ServedReasons
from portfolio.rails import EntryCheckJson, ExitState, ExitStateJson, MarketDay, booked_whole, exit_state
from store.splits import Split, factor_between, renamed_on

CENT = MONEY


@dataclass(frozen=True)
class Signal:
    symbol: str
    score: float
    action: str
    tercile: str
    weight: float
    predicted_return: float
    held_edge: float = math.nan
    round_trip_cost: float = math.nan
    reason: str = ""
    # The three inputs that moved the prediction most and the base value, as served
    # (models/reasons.served: {"base_value", "inputs": [{"input", "contribution"}]}); None
    # for a prediction stored without them.
    reasons: ServedReasons | None = None
    ordinary: bool = True  # an ordinary share (market/instruments.py): only these enter the book


class SignalFacts(TypedDict):
    """The signal as an order's rationale records it (`signal_dict`)."""

    score: float
    action: str
    tercile: str
    weight: Fraction
    predicted_return: Fraction
    held_edge: Fraction | None
    round_trip_cost: Fraction | None
    decision_reason: str
    reasons: ServedReasons | None


class Estimate(TypedDict):
    """What the plan priced a filled order at, as its rationale records it."""

    price: Price  # decimal text
    quantity: int


class Limits(TypedDict, total=False):
    """What bounded an order's size: a sell's position and what the exit rail lets go today,
    a buy's slot, holding and what the cash pays for; `bound_by` names the one that bound."""

    bound_by: Required[str]  # exit_rail | whole_position (a sell); slot | adv_20 | session_volume | cash (a buy)
    held: int
    sellable_today: int
    slot_shares: int
    cash_cap: int


class Rationale(SignalFacts, total=False):
    """Why an order was planned, a JSON document that travels with it: planned by
    `plan_exit` (with the exit rail's state) or the book's buy (with the entry gates and the
    outlook), then noted by each step it passes: the day that decided it (`decided_at`,
    `model_id`, `record`), a split's adjustment, the fill (`decided_on`, `fill`, `estimate`)
    and the trade's `timestamp`. It is stored as it is (a pending order in the day's record,
    a trade's `rationale`, a suggestion's reason), so a document stored by older code comes
    back with its own keys."""

    reason: Required[str]
    exit: ExitStateJson
    gates: EntryCheckJson
    limits: Required[Limits]
    outlook: dict[str, float]  # the book's Outlook.as_dict: hold, multiplier
    close: float  # the close the plan read (a suggestion's: its confirmation checks it, portfolio/suggestions.py)
    rails: bool
    entry: str  # an opening buy of the book: "slot" or "reserve" (portfolio/book.py `_buy`)
    replaces: str
    decided_at: str
    model_id: str | None
    record: str
    split_adjustment: str
    split_factor: float  # the factor split_adjustment names (a suggestion's: its confirmation checks it)
    decided_on: str | None
    fill: FillJson  # market/costs.py Fill.as_dict
    estimate: Estimate  # the plan's price and quantity
    timestamp: str


@dataclass(frozen=True)
class Order:
    symbol: str
    side: str
    quantity: int
    price: Price
    fees: Money
    rationale: Rationale
    paid: CostBreakdown | None = None  # the fill's parts; None until the cost model filled it

    @property
    def bound_by(self) -> str:
        """The limit that bound the order's size (its rationale's `limits`)."""
        return self.rationale["limits"]["bound_by"]

    @property
    def reason(self) -> str:
        return self.rationale["reason"]

    def to_json(self) -> dict[str, JsonValue]:
        """The order as the day's record lists a pending one (money as decimal text)."""
        return {
            "symbol": self.symbol,
            "side": self.side,
            "quantity": self.quantity,
            "price": str(self.price),
            "fees": str(self.fees),
            "rationale": self.rationale,  # a JSON document
        }

    @classmethod
    def from_json(cls, stored: Mapping[str, JsonValue]) -> Order:
        """A pending order as the day's record stored it (`to_json`)."""
        return cls(
            str(stored["symbol"]),
            str(stored["side"]),
            int(stored["quantity"]),
            Decimal(str(stored["price"])),
            Decimal(str(stored["fees"])),
            stored["rationale"],  # the stored document
        )

    @property
    def gross(self) -> Decimal:
        return (self.price * self.quantity).quantize(CENT)

    @property
    def costs(self) -> CostBreakdown:
        """Spread, impact and fees paid (money), as the fill computed them (no longer read
        back from the rationale's text); fees alone for an order not filled through the cost
        model (a plan, or an order built by hand)."""
        return self.paid if self.paid is not None else CostBreakdown(fees=self.fees)


@dataclass(frozen=True)
class Skip:
    """A candidate the plan left alone, with the reason: a sell the exit rail held back (with
    its state), a buy the entry gates refused or the cash could not pay (with the gates), a
    LONG name the book did not buy."""

    symbol: str
    side: str
    reason: str
    exit: ExitStateJson | None = None
    gates: EntryCheckJson | None = None

    def to_json(self) -> dict[str, JsonValue]:
        """As the day's record lists it: the state or the gates only where there are some."""
        stored: dict[str, JsonValue] = {"symbol": self.symbol, "side": self.side, "reason": self.reason}
        if self.exit is not None:
            stored["exit"] = self.exit  # a JSON document
        if self.gates is not None:
            stored["gates"] = self.gates
        return stored

    @classmethod
    def from_json(cls, stored: Mapping[str, JsonValue]) -> Skip:
        """As `to_json` stored it (the first book also stored a refused buy's `limits`, which
        nothing reads: left out)."""
        return cls(
            str(stored["symbol"]),
            str(stored["side"]),
            str(stored["reason"]),
            stored.get("exit"),
            stored.get("gates"),
        )


@dataclass(frozen=True)
class Lapse:
    """An order, or the part of one, that its session did not fill, with the reason."""

    symbol: str
    side: str
    quantity: int
    reason: str | None

    def to_json(self) -> dict[str, JsonValue]:
        return {"symbol": self.symbol, "side": self.side, "quantity": self.quantity, "reason": self.reason}

    @classmethod
    def from_json(cls, stored: Mapping[str, JsonValue]) -> Lapse:
        symbol, side, quantity, reason = (stored[k] for k in ("symbol", "side", "quantity", "reason"))
        return cls(str(symbol), str(side), int(quantity), None if reason is None else str(reason))


@dataclass
class DayPlan:
    orders: list[Order] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)  # candidates left alone, with the reason
    # orders priced where the plan's booking rule refuses them (PlanTerms.booking), left out
    # with the rule's refusal, their proceeds not spent and their cost not charged
    left_out: list[Skip] = field(default_factory=list)
    would_trade: int = 0
    blocked_by_rails: int = 0
    cut_by_rails: int = 0
    liquid_equity: float = 0.0


@dataclass
class Execution:
    filled: list[Order] = field(default_factory=list)
    lapsed: list[Lapse] = field(default_factory=list)  # orders or parts no session filled, with the reason
    cash: Decimal = Decimal(0)


def _finite(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(float(value), 6)


def signal_dict(signal: Signal) -> SignalFacts:
    return {
        "score": signal.score,
        "action": signal.action,
        "tercile": signal.tercile,
        "weight": signal.weight,
        "predicted_return": round(signal.predicted_return, 6),
        "held_edge": _finite(signal.held_edge),
        "round_trip_cost": _finite(signal.round_trip_cost),
        "decision_reason": signal.reason,
        "reasons": signal.reasons,
    }


def wants_exit(signal: Signal | None) -> bool:
    return signal is not None and signal.action == "AVOID"


def estimate(side: str, quantity: int, day: MarketDay, fees: FeeSchedule, realistic: bool) -> tuple[Decimal, Decimal]:
    """The decision's estimate of the price and fee (the decision day's session standing
    in for the next): what the cash budget is planned on, and what a morning suggestion
    offers. The whole quantity is priced past the participation cap (`fill(capped=False)`:
    the fill applies the cap), its impact measured as every fill's is, against the smaller
    of the session's volume and ADV_20. The price is taken to the instrument's tick against
    the order (market/costs.py `limit_price`) and the fee is that price's, so a suggestion's
    limit times its quantity plus its fees is what its confirmation charges."""
    estimate = fill(side, quantity, day.session(), fees, realistic, capped=False)
    if not realistic or quantity <= 0 or estimate.price <= 0:
        return estimate.price, estimate.fee
    price = limit_price(side, estimate.price)
    return price, fees.order_fee(price, quantity)


PriceRule = Callable[[str, Decimal], str | None]
"""Why an order for a symbol at a price cannot be booked on the plan's trading day, or None
where it can: a morning suggestion's plan is given the band its confirmation enforces
(portfolio/suggestions.py, `trading.within_band`)."""


@dataclass(frozen=True)
class PlanTerms:
    """How a plan prices and rails its orders: the fees, whether the exit rail holds a sell
    back (`rails`), whether prices are the cost model's estimate for the next session
    (`realistic`) or the decision's own close, whole and cost-free, and the rule an order's
    price must pass to be booked at all (`booking`; None: every price, as the AI book's and
    the backtest's fills are the cost model's)."""

    fees: FeeSchedule
    rails: bool = True
    realistic: bool = True
    booking: PriceRule | None = None

    def booked(self, day: MarketDay, wanted: int) -> int:
        """What an order of `wanted` shares asks for: where `booking` books it whole at its
        limit (a morning suggestion), at most what one session fills (rails `booked_whole`);
        else `wanted`, as the AI book's and the backtest's fills apply the cap."""
        return wanted if self.booking is None else booked_whole(day, wanted)

    def refusal(self, symbol: str, price: Decimal) -> str | None:
        """Why `booking` refuses `price` for `symbol` (None: it is booked as planned)."""
        return None if self.booking is None else self.booking(symbol, price)


def _sellable(plan: DayPlan, day: MarketDay, state: ExitState, quantity: int, terms: PlanTerms) -> tuple[int, int]:
    """Of `quantity`, what the exit rail lets go today (`railed`: all of it with
    `terms.rails` False) and what of that is booked (`terms.booked`); a sell the rail blocks
    or cuts is counted on `plan`."""
    railed = min(quantity, state.sellable_today) if terms.rails else quantity
    sellable = terms.booked(day, railed)
    if terms.rails and sellable < quantity:
        if sellable == 0:
            plan.blocked_by_rails += 1
        else:
            plan.cut_by_rails += 1
    return railed, sellable


def plan_exit(
    plan: DayPlan,
    signal: Signal,
    day: MarketDay,
    quantity: int,
    terms: PlanTerms,
    reason: str | None = None,
    held: int | None = None,
) -> Decimal:
    """Plan selling `quantity` of a position of `held` shares (default: all of it) under the
    exit rail, which judges the position (nothing when TRAPPED, 25% of today's volume when
    it is SLOW_EXIT, whatever part of it is sold: a trim of a slow position is as slow to
    sell; everything with `terms.rails` False), and, where it is booked whole (a morning
    suggestion: `terms.booked`), at most what one session fills; the estimated proceeds net
    of the fee.
    `reason`: why it is sold (default: the signal turned AVOID). A sell priced where
    `terms.booking` refuses it is left out (`DayPlan.left_out`, with the refusal) and brings
    in nothing; one whose proceeds do not cover its fee (a minimum fee on the few shares the
    rail lets go) is skipped with that reason: it would cost the book more than it sells."""
    rails, realistic = terms.rails, terms.realistic
    position = quantity if held is None else max(held, quantity)
    state = exit_state(day, position)
    plan.would_trade += 1
    railed, sellable = _sellable(plan, day, state, quantity, terms)
    if reason is None:
        reason = "turned AVOID: " + signal.reason if signal.reason else "turned AVOID"
    if sellable <= 0:
        why = f"{reason}; but TRAPPED: {'no row' if day.without_row else 'no volume'} today"
        plan.skipped.append(Skip(day.symbol, "SELL", why, exit=state.as_dict()))
        return Decimal(0)
    price, fee = (
        estimate("SELL", sellable, day, terms.fees, realistic)
        if day.volume > 0 or not realistic
        else (Decimal(str(day.close)).quantize(CENT), Decimal(0))
    )
    refused = terms.refusal(day.symbol, price)
    if refused is not None:
        plan.left_out.append(Skip(day.symbol, "SELL", f"{reason}; left out: {refused}", exit=state.as_dict()))
        return Decimal(0)
    gross = (price * sellable).quantize(CENT)
    if gross <= fee:  # a sell that brings in less than its fee (a minimum fee on a few shares)
        why = f"{reason}; but its proceeds, {gross:.2f}, do not cover its fee, {fee:.2f}"
        plan.skipped.append(Skip(day.symbol, "SELL", why, exit=state.as_dict()))
        return Decimal(0)
    rationale: Rationale = {
        "reason": reason,
        **signal_dict(signal),
        "exit": state.as_dict(),
        "limits": {
            "held": position,
            "sellable_today": sellable,
            "bound_by": _sell_bound_by(quantity, railed, sellable),
        },
        "close": day.close,
        "rails": rails,
    }
    plan.orders.append(Order(day.symbol, "SELL", sellable, price, fee, rationale))
    return gross - fee


def _sell_bound_by(quantity: int, railed: int, sellable: int) -> str:
    """What held a sell of `quantity` to `sellable` shares (`railed` after the exit rail)."""
    if sellable < railed:
        return "session_volume"
    return "exit_rail" if railed < quantity else "whole_position"


def fill_orders(
    orders: list[Order],
    sessions: dict[str, MarketDay],
    cash: Decimal,
    fees: FeeSchedule,
    realistic: bool = True,
    decided_on: str | None = None,
) -> Execution:
    """Fill the orders a decision made, in `sessions` (the next session's market; the
    decision's own with `realistic=False`): sells first, then buys within the cash their
    fills leave. Cash never goes below zero: a buy is cut to what the cash pays at its
    fill price, and a sell whose fee is more than its proceeds and the cash lapses (a plan
    does not make one: `plan_exit`). An order for a symbol without a session lapses."""
    run = Execution(cash=cash)
    for order in sorted(orders, key=lambda o: (o.side != "SELL",)):
        day = sessions.get(order.symbol)
        if day is None:
            run.lapsed.append(Lapse(order.symbol, order.side, order.quantity, "no session for the symbol"))
            continue
        done = fill(order.side, order.quantity, day.session(), fees, realistic)
        if order.side == "BUY" and done.quantity and done.gross + done.fee > run.cash:
            cut = affordable(run.cash, done.price, fees)
            done = fill(order.side, cut, day.session(), fees, realistic)
            done = _relabel(done, order.quantity, "cut to the cash left")
        if done.lapsed:
            run.lapsed.append(Lapse(order.symbol, order.side, done.lapsed, done.lapse_reason))
        if done.quantity <= 0:
            continue
        if order.side == "SELL" and run.cash + done.gross - done.fee < 0:  # its fee past its proceeds and the cash
            run.lapsed.append(
                Lapse(order.symbol, order.side, done.quantity, "its proceeds and the cash do not pay its fee")
            )
            continue
        rationale: Rationale = {
            **order.rationale,
            "decided_on": decided_on,
            "fill": done.as_dict(),
            "estimate": {"price": str(order.price), "quantity": order.quantity},
        }
        filled = Order(order.symbol, order.side, done.quantity, done.price, done.fee, rationale, done.costs)
        run.cash += (filled.gross if filled.side == "SELL" else -filled.gross) - filled.fees
        run.filled.append(filled)
    return run


def split_adjusted(orders: list[Order], splits: Sequence[Split], decided_on: str | None, day: date) -> list[Order]:
    """The pending orders on the share count of `day`: an order decided before a split whose
    ex-date falls after its decision and on or before the fill is for `factor` times as many
    shares (rounded down: a consolidation never asks to sell more than the book holds) at
    1/factor of the price; its rationale says so. Without this a sell planned before a 1:2
    consolidation asked the next session for twice the shares held and failed the day. The
    AI book's pending orders (portfolio/ai.py) and a replay's over stored splits
    (portfolio/backtest.py `_Replay.on_count`) read it. An order of a symbol renamed after
    the decision is for the new symbol (`store.splits.renamed_on`: the company's shares
    trade under it from the ex-date)."""
    if decided_on is None:
        return orders
    since = date.fromisoformat(decided_on)
    out = []
    for order in (_renamed(o, splits, since, day) for o in orders):
        factor = factor_between(splits, order.symbol, since, day)
        if factor == 1.0:
            out.append(order)
            continue
        note = f"adjusted for a split of {factor:g} shares per share (ex-date after the decision)"
        out.append(
            replace(
                order,
                quantity=int(order.quantity * factor),
                price=(order.price / Decimal(str(factor))).quantize(Decimal("0.000001")),
                rationale={**order.rationale, "split_adjustment": note},
            )
        )
    return [o for o in out if o.quantity > 0]


def _renamed(order: Order, splits: Sequence[Split], since: date, day: date) -> Order:
    """`order` under the symbol its company trades under on `day`, where a rename's ex-date
    falls after `since` (a chain followed)."""
    rename = renamed_on(splits, order.symbol, day)
    while rename is not None and rename.ex_date > since:
        order = replace(order, symbol=str(rename.new_symbol))
        rename = renamed_on(splits, order.symbol, day)
    return order


def _relabel(done, requested: int, reason: str):  # noqa: ANN001, ANN202 - a Fill
    return replace(
        done,
        requested=requested,
        lapsed=requested - done.quantity,
        lapse_reason=done.lapse_reason or reason if requested > done.quantity else done.lapse_reason,
    )
