"""The autonomous executor: a day's decisions, then their fills in the next session.

The service decides after the close (T1, 16:15), so no order can fill at the close it was
decided from. `plan_day` turns the day's signals into orders (the decision, priced at an
estimate for the cash budget); `fill_orders` fills them in the next session the
instrument's data arrives for, through the one cost model (market/costs.py: the ask or
the bid, else the close plus or minus half the spread proxy; square-root impact; at most
25% of that session's volume; fees). What a session cannot fill lapses, with the reason
in the rationale, and the next decision asks again if it still wants to. The backtest and
the AI portfolio run this pair; the suggestions show the plan (a client confirms it).

`plan_day`, in order:

1. Exits first (they free cash): a held name whose signal turned AVOID (its held edge is
   below minus the cost of leaving it, models/decisions.py) is sold under the exit rail:
   nothing when TRAPPED, at most 25% of today's volume when SLOW_EXIT. A held name with
   no signal today, or any other Action, is kept: a Score that drifts within the band
   between the entry and exit rules neither sells nor re-buys (the hysteresis).
2. Entries, best Score first (ties: higher predicted return): a LONG name in the TOP
   tercile is bought up to its target, Position Weight x Liquid Equity (liquid equity
   taken once, before the day's trades), capped by the size gate (the whole position at
   most 15% of ADV_20), by the size whose square-root impact its held edge still pays
   for (`bound_by: cost`), and by the cash left after costs; it must pass all four entry
   gates with the position it would end with. A name already at or above its target is
   left.

Every order carries its rationale: the signal with its held edge, round-trip cost and
reason, the reasons behind the prediction (its three largest input contributions and the
base value, models/reasons.py), the gates or exit flags, the limits that bound its size (`bound_by`), and once
filled the fill's parts (touch, impact, spread, impact and fee in money, what lapsed).

With `rails=False` (the backtest's comparison) nothing is gated or capped by ADV, and
exits sell everything whatever the day's volume. With `realistic=False` fills are at the
decision's own close, whole and cost-free (the same-close comparison the backtest prints
beside the real one). With rails on, the plan also counts the would-be orders (what
rails-off would have done from the same state) that the rails blocked or cut.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

from market.costs import MONEY, FeeSchedule, affordable, fill, size_for_edge
from portfolio.rails import MarketDay, check_entry, exit_state, max_position_shares, value_positions

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


@dataclass(frozen=True)
class Order:
    symbol: str
    side: str
    quantity: int
    price: Decimal
    fees: Decimal
    rationale: dict

    @property
    def gross(self) -> Decimal:
        return (self.price * self.quantity).quantize(CENT)

    @property
    def costs(self) -> dict[str, Decimal]:
        """Spread, impact and fees paid (money), from the fill's record; fees alone for an
        order not filled through the cost model."""
        parts = (self.rationale.get("fill") or {}).get("costs")
        if not parts:
            return {"spread": Decimal(0), "impact": Decimal(0), "fees": self.fees, "total": self.fees}
        return {k: Decimal(v) for k, v in parts.items()}


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


def _signal_dict(signal: Signal) -> dict:
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


def wants_entry(signal: Signal) -> bool:
    return signal.action == "LONG" and signal.tercile == "TOP" and signal.weight > 0


def plan_day(
    cash: Decimal,
    holdings: dict[str, int],
    signals: dict[str, Signal],
    market: dict[str, MarketDay],
    fees: FeeSchedule,
    rails: bool = True,
    realistic: bool = True,
) -> DayPlan:
    plan = DayPlan()
    valuation = value_positions(float(cash), holdings, market)
    plan.liquid_equity = valuation.liquid_equity if rails else valuation.equity
    held = dict(holdings)
    for symbol in sorted(held):
        signal, day = signals.get(symbol), market.get(symbol)
        if not wants_exit(signal) or day is None or held[symbol] <= 0:
            continue
        cash += _plan_exit(plan, signal, day, held[symbol], fees, rails, realistic)
        held[symbol] -= sum(o.quantity for o in plan.orders if o.symbol == symbol and o.side == "SELL")
    candidates = sorted(
        (s for s in signals.values() if wants_entry(s)), key=lambda s: (-s.score, -s.predicted_return, s.symbol)
    )
    for signal in candidates:
        day = market.get(signal.symbol)
        if day is None or day.close <= 0:
            continue
        order = _plan_entry(plan, signal, day, held.get(signal.symbol, 0), cash, fees, rails, realistic)
        if order is not None:
            plan.orders.append(order)
            cash -= order.gross + order.fees
            held[signal.symbol] = held.get(signal.symbol, 0) + order.quantity
    return plan


def _estimate(side: str, quantity: int, day: MarketDay, fees: FeeSchedule, realistic: bool) -> tuple[Decimal, Decimal]:
    """The decision's estimate of the price and fee (the decision day's session standing
    in for the next): what the cash budget is planned on."""
    estimate = fill(side, quantity, _whole(day.session()), fees, realistic)
    return estimate.price, estimate.fee


def _whole(session):  # noqa: ANN001, ANN202 - the estimate ignores the participation cap (the fill applies it)
    from dataclasses import replace

    return replace(session, volume=max(session.volume, 1) * 10**9) if session.volume > 0 else session


def _plan_exit(
    plan: DayPlan, signal: Signal, day: MarketDay, quantity: int, fees: FeeSchedule, rails: bool, realistic: bool
) -> Decimal:
    state = exit_state(day, quantity)
    plan.would_trade += 1
    sellable = state.sellable_today if rails else quantity
    if rails and sellable < quantity:
        if sellable == 0:
            plan.blocked_by_rails += 1
        else:
            plan.cut_by_rails += 1
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
        _estimate("SELL", sellable, day, fees, realistic)
        if day.volume > 0 or not realistic
        else (Decimal(str(day.close)).quantize(CENT), Decimal(0))
    )
    gross = (price * sellable).quantize(CENT)
    rationale = {
        "reason": reason,
        **_signal_dict(signal),
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


def _plan_entry(
    plan: DayPlan,
    signal: Signal,
    day: MarketDay,
    held: int,
    cash: Decimal,
    fees: FeeSchedule,
    rails: bool,
    realistic: bool,
) -> Order | None:
    price, _ = _estimate("BUY", 1, day, fees, realistic)
    target = int(math.floor(signal.weight * plan.liquid_equity / float(price)))
    wanted = target - held
    cash_cap = affordable(cash, price, fees)
    unrailed = min(wanted, cash_cap)
    limits = {"target_shares": target, "held": held, "cash_cap": cash_cap}
    if unrailed > 0:
        plan.would_trade += 1
    quantity, bound_by = unrailed, ("cash" if cash_cap < wanted else "weight")
    if realistic and _finite(signal.held_edge) is not None:
        spread = day.spread if day.spread is not None else signal.round_trip_cost - 2 * float(fees.rate)
        room = size_for_edge(signal.held_edge, spread, float(fees.rate), day.session())
        cost_cap = int(math.floor(room)) if math.isfinite(room) else quantity
        limits["cost_cap"] = cost_cap
        if cost_cap < quantity:
            quantity, bound_by = cost_cap, "cost"
    check = None
    if rails:
        adv_cap = max_position_shares(day.adv_20) - held
        limits["adv_cap"] = max(adv_cap, 0)
        if adv_cap < quantity:
            quantity, bound_by = adv_cap, "adv_20"
        check = check_entry(day, held + max(quantity, 0))
        if quantity <= 0 or not check.passed:
            if unrailed > 0:
                plan.blocked_by_rails += 1
            plan.skipped.append(
                {
                    "symbol": day.symbol,
                    "side": "BUY",
                    "reason": _entry_refusal(check, quantity, wanted, bound_by),
                    "gates": check.as_dict(),
                    "limits": limits,
                }
            )
            return None
        if quantity < unrailed:
            plan.cut_by_rails += 1
    if quantity <= 0:
        plan.skipped.append(
            {
                "symbol": day.symbol,
                "side": "BUY",
                "limits": limits,
                "reason": "already at its target weight"
                if wanted <= 0
                else ("its edge pays for no size after impact" if bound_by == "cost" else "no cash left"),
            }
        )
        return None
    price, fee = _estimate("BUY", quantity, day, fees, realistic)
    rationale = {
        "reason": "LONG in the TOP tercile: " + signal.reason if signal.reason else "LONG in the TOP tercile",
        **_signal_dict(signal),
        "gates": check.as_dict() if check else {"passed": None, "gates": []},
        "limits": {**limits, "bound_by": bound_by},
        "close": day.close,
        "rails": rails,
    }
    return Order(day.symbol, "BUY", quantity, price, fee, rationale)


def _entry_refusal(check, quantity: int, wanted: int, bound_by: str) -> str:  # noqa: ANN001 - an EntryCheck
    if wanted <= 0:
        return "already at its target weight"
    if quantity <= 0 and bound_by == "cost":
        return "its edge pays for no size after impact"
    failed = [g for g in check.failed if g != "position_size" or quantity > 0]
    if quantity <= 0 and not failed:
        return "no room: the position is already at 15% of ADV_20, or no cash is left"
    return "entry gates failed: " + ", ".join(failed or check.failed)


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
        filled = Order(order.symbol, order.side, done.quantity, done.price, done.fee, rationale)
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
