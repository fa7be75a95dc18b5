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
from dataclasses import dataclass, field
from decimal import Decimal

from market.costs import MONEY, CostBreakdown, FeeSchedule, affordable, fill, limit_price
from portfolio.rails import MarketDay, exit_state

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
    reasons: dict | None = None
    ordinary: bool = True  # an ordinary share (market/instruments.py): only these enter the book


@dataclass(frozen=True)
class Order:
    symbol: str
    side: str
    quantity: int
    price: Decimal
    fees: Decimal
    rationale: dict
    paid: CostBreakdown | None = None  # the fill's parts; None until the cost model filled it

    @property
    def gross(self) -> Decimal:
        return (self.price * self.quantity).quantize(CENT)

    @property
    def costs(self) -> CostBreakdown:
        """Spread, impact and fees paid (money), as the fill computed them (no longer read
        back from the rationale's text); fees alone for an order not filled through the cost
        model (a plan, or an order built by hand)."""
        return self.paid if self.paid is not None else CostBreakdown(fees=self.fees)


@dataclass
class DayPlan:
    orders: list[Order] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # candidates left alone, with the reason
    would_trade: int = 0
    blocked_by_rails: int = 0
    cut_by_rails: int = 0
    liquid_equity: float = 0.0


@dataclass
class Execution:
    filled: list[Order] = field(default_factory=list)
    lapsed: list[dict] = field(default_factory=list)  # orders or parts no session filled, with the reason
    cash: Decimal = Decimal(0)


def _finite(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(float(value), 6)


def signal_dict(signal: Signal) -> dict:
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
    offers. The price is taken to the instrument's tick against the order
    (market/costs.py `limit_price`) and the fee is that price's, so a suggestion's limit
    times its quantity plus its fees is what its confirmation charges."""
    estimate = fill(side, quantity, _whole(day.session()), fees, realistic)
    if not realistic or quantity <= 0 or estimate.price <= 0:
        return estimate.price, estimate.fee
    price = limit_price(side, estimate.price)
    return price, fees.fee((price * quantity).quantize(CENT))


def _whole(session):  # noqa: ANN001, ANN202 - the estimate ignores the participation cap (the fill applies it)
    from dataclasses import replace

    return replace(session, volume=max(session.volume, 1) * 10**9) if session.volume > 0 else session


def plan_exit(
    plan: DayPlan,
    signal: Signal,
    day: MarketDay,
    quantity: int,
    fees: FeeSchedule,
    rails: bool,
    realistic: bool,
    reason: str | None = None,
) -> Decimal:
    """Plan selling `quantity` under the exit rail (nothing when TRAPPED, 25% of today's
    volume when SLOW_EXIT; everything with `rails=False`); the estimated proceeds net of the
    fee. `reason`: why it is sold (default: the signal turned AVOID)."""
    state = exit_state(day, quantity)
    plan.would_trade += 1
    sellable = state.sellable_today if rails else quantity
    if rails and sellable < quantity:
        if sellable == 0:
            plan.blocked_by_rails += 1
        else:
            plan.cut_by_rails += 1
    if reason is None:
        reason = "turned AVOID: " + signal.reason if signal.reason else "turned AVOID"
    if sellable <= 0:
        plan.skipped.append(
            {
                "symbol": day.symbol,
                "side": "SELL",
                "reason": f"{reason}; but TRAPPED: no volume today",
                "exit": state.as_dict(),
            }
        )
        return Decimal(0)
    price, fee = (
        estimate("SELL", sellable, day, fees, realistic)
        if day.volume > 0 or not realistic
        else (Decimal(str(day.close)).quantize(CENT), Decimal(0))
    )
    gross = (price * sellable).quantize(CENT)
    rationale = {
        "reason": reason,
        **signal_dict(signal),
        "exit": state.as_dict(),
        "limits": {
            "held": quantity,
            "sellable_today": sellable,
            "bound_by": "exit_rail" if sellable < quantity else "whole_position",
        },
        "close": day.close,
        "rails": rails,
    }
    plan.orders.append(Order(day.symbol, "SELL", sellable, price, fee, rationale))
    return gross - fee


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
    fill price. An order for a symbol without a session lapses."""
    run = Execution(cash=cash)
    for order in sorted(orders, key=lambda o: (o.side != "SELL",)):
        day = sessions.get(order.symbol)
        if day is None:
            run.lapsed.append(
                {
                    "symbol": order.symbol,
                    "side": order.side,
                    "quantity": order.quantity,
                    "reason": "no session for the symbol",
                }
            )
            continue
        done = fill(order.side, order.quantity, day.session(), fees, realistic)
        if order.side == "BUY" and done.quantity and done.gross + done.fee > run.cash:
            cut = affordable(run.cash, done.price, fees)
            done = fill(order.side, cut, day.session(), fees, realistic)
            done = _relabel(done, order.quantity, "cut to the cash left")
        if done.lapsed:
            run.lapsed.append(
                {"symbol": order.symbol, "side": order.side, "quantity": done.lapsed, "reason": done.lapse_reason}
            )
        if done.quantity <= 0:
            continue
        rationale = {
            **order.rationale,
            "decided_on": decided_on,
            "fill": done.as_dict(),
            "estimate": {"price": str(order.price), "quantity": order.quantity},
        }
        filled = Order(order.symbol, order.side, done.quantity, done.price, done.fee, rationale, done.costs)
        run.cash += (filled.gross if filled.side == "SELL" else -filled.gross) - filled.fees
        run.filled.append(filled)
    return run


def _relabel(done, requested: int, reason: str):  # noqa: ANN001, ANN202 - a Fill
    from dataclasses import replace

    return replace(
        done,
        requested=requested,
        lapsed=requested - done.quantity,
        lapse_reason=done.lapse_reason or reason if requested > done.quantity else done.lapse_reason,
    )
