"""The autonomous executor's decisions for one trading day, as a pure function.

`plan_day` takes the portfolio (cash and holdings), the day's signals and market, and
returns the orders, in the order they execute:

1. Exits first (they free cash): a held name whose signal turned AVOID or BOTTOM is sold
   under the exit rail: nothing when TRAPPED, at most 25% of today's volume when
   SLOW_EXIT (a trim; the rest waits for later days), at the close less the spread when
   HIGH_SPREAD. A held name with no signal today is kept.
2. Entries, best Score first (ties: higher predicted return): a LONG name in the TOP
   tercile is bought up to its target, Position Weight x Liquid Equity (liquid equity
   taken once, before the day's trades), capped by the size gate (the whole position at
   most 15% of ADV_20) and by the cash left after fees; it must pass all four entry gates
   with the position it would end with. A name already at or above its target is left.

Execution price is the close (the service runs after it); brokerage fees are
max(min fee, rate x value). Every order carries its rationale: the signal, the gates or
exit flags, and the limits that bound its size (`bound_by`).

With `rails=False` (the backtest's comparison) nothing is gated, capped by ADV or
discounted, and exits sell everything at the close whatever the day's volume. With rails
on, the plan also counts the would-be orders (what rails-off would have done from the same
state) that the rails blocked or cut, for the backtest's "share blocked".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, Decimal

from portfolio.rails import (MarketDay, check_entry, exit_price, exit_state, max_position_shares, value_positions)

CENT = Decimal("0.000001")


@dataclass(frozen=True)
class Signal:
    symbol: str
    score: float
    action: str
    tercile: str
    weight: float
    predicted_return: float


@dataclass(frozen=True)
class FeeSchedule:
    rate: Decimal = Decimal("0.005")
    minimum: Decimal = Decimal("0")

    def fee(self, gross: Decimal) -> Decimal:
        return max(self.minimum, gross * self.rate).quantize(CENT)


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


@dataclass
class DayPlan:
    orders: list[Order] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # candidates left alone, with the reason
    would_trade: int = 0
    blocked_by_rails: int = 0
    cut_by_rails: int = 0
    liquid_equity: float = 0.0


def _money(value: float) -> Decimal:
    return Decimal(str(value)).quantize(CENT)


def _signal_dict(signal: Signal) -> dict:
    return {"score": signal.score, "action": signal.action, "tercile": signal.tercile,
            "weight": signal.weight, "predicted_return": round(signal.predicted_return, 6)}


def wants_exit(signal: Signal | None) -> bool:
    return signal is not None and (signal.action == "AVOID" or signal.tercile == "BOTTOM")


def wants_entry(signal: Signal) -> bool:
    return signal.action == "LONG" and signal.tercile == "TOP" and signal.weight > 0


def plan_day(cash: Decimal, holdings: dict[str, int], signals: dict[str, Signal], market: dict[str, MarketDay],
             fees: FeeSchedule, rails: bool = True) -> DayPlan:
    plan = DayPlan()
    valuation = value_positions(float(cash), holdings, market)
    plan.liquid_equity = valuation.liquid_equity if rails else valuation.equity
    held = dict(holdings)
    for symbol in sorted(held):
        signal, day = signals.get(symbol), market.get(symbol)
        if not wants_exit(signal) or day is None or held[symbol] <= 0:
            continue
        cash += _plan_exit(plan, signal, day, held[symbol], fees, rails)
        held[symbol] -= sum(o.quantity for o in plan.orders if o.symbol == symbol and o.side == "SELL")
    candidates = sorted((s for s in signals.values() if wants_entry(s)), key=lambda s: (-s.score, -s.predicted_return, s.symbol))
    for signal in candidates:
        day = market.get(signal.symbol)
        if day is None or day.close <= 0:
            continue
        order = _plan_entry(plan, signal, day, held.get(signal.symbol, 0), cash, fees, rails)
        if order is not None:
            plan.orders.append(order)
            cash -= order.gross + order.fees
            held[signal.symbol] = held.get(signal.symbol, 0) + order.quantity
    return plan


def _plan_exit(plan: DayPlan, signal: Signal, day: MarketDay, quantity: int, fees: FeeSchedule, rails: bool) -> Decimal:
    state = exit_state(day, quantity)
    plan.would_trade += 1
    sellable = state.sellable_today if rails else quantity
    if rails and sellable < quantity:
        if sellable == 0:
            plan.blocked_by_rails += 1
        else:
            plan.cut_by_rails += 1
    reason = "turned AVOID" if signal.action == "AVOID" else "fell to the BOTTOM tercile"
    if sellable <= 0:
        plan.skipped.append({"symbol": day.symbol, "side": "SELL", "reason": f"{reason} but TRAPPED: no volume today",
                             "exit": state.as_dict()})
        return Decimal(0)
    price = _money(exit_price(day, state) if rails else day.close)
    gross = (price * sellable).quantize(CENT)
    fee = fees.fee(gross)
    rationale = {"reason": reason, **_signal_dict(signal), "exit": state.as_dict(),
                 "limits": {"held": quantity, "sellable_today": sellable,
                            "bound_by": "exit_rail" if sellable < quantity else "whole_position"},
                 "close": day.close, "rails": rails}
    plan.orders.append(Order(day.symbol, "SELL", sellable, price, fee, rationale))
    return gross - fee


def _plan_entry(plan: DayPlan, signal: Signal, day: MarketDay, held: int, cash: Decimal, fees: FeeSchedule,
                rails: bool) -> Order | None:
    price = _money(day.close)
    target = int(math.floor(signal.weight * plan.liquid_equity / float(price)))
    wanted = target - held
    affordable = _affordable(cash, price, fees)
    unrailed = min(wanted, affordable)
    limits = {"target_shares": target, "held": held, "cash_cap": affordable}
    if unrailed > 0:
        plan.would_trade += 1
    quantity, bound_by = unrailed, ("cash" if affordable < wanted else "weight")
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
            plan.skipped.append({"symbol": day.symbol, "side": "BUY", "reason": _entry_refusal(check, quantity, wanted),
                                 "gates": check.as_dict(), "limits": limits})
            return None
        if quantity < unrailed:
            plan.cut_by_rails += 1
    if quantity <= 0:
        plan.skipped.append({"symbol": day.symbol, "side": "BUY", "limits": limits,
                             "reason": "already at its target weight" if wanted <= 0 else "no cash left"})
        return None
    gross = (price * quantity).quantize(CENT)
    rationale = {"reason": "LONG in the TOP tercile", **_signal_dict(signal),
                 "gates": check.as_dict() if check else {"passed": None, "gates": []},
                 "limits": {**limits, "bound_by": bound_by}, "close": day.close, "rails": rails}
    return Order(day.symbol, "BUY", quantity, price, fees.fee(gross), rationale)


def _entry_refusal(check, quantity: int, wanted: int) -> str:
    if wanted <= 0:
        return "already at its target weight"
    failed = [g for g in check.failed if g != "position_size" or quantity > 0]
    if quantity <= 0 and not failed:
        return "no room: the position is already at 15% of ADV_20, or no cash is left"
    return "entry gates failed: " + ", ".join(failed or check.failed)


def _affordable(cash: Decimal, price: Decimal, fees: FeeSchedule) -> int:
    """The most whole shares whose value plus fee fits in `cash`."""
    if cash <= 0:
        return 0
    quantity = int(min(cash / (price * (1 + fees.rate)), max(cash - fees.minimum, Decimal(0)) / price)
                   .to_integral_value(rounding=ROUND_DOWN))
    while quantity > 0 and (price * quantity).quantize(CENT) + fees.fee((price * quantity).quantize(CENT)) > cash:
        quantity -= 1
    return quantity
