"""The AI book: a long-only mandate that stays invested and trades only when it pays.

It holds `names` liquid ordinary shares with the largest expected excess over the holding
horizon (models/decisions.py), each sized to one slot, `exposure` x liquid equity /
`names`, so cash is a buffer, not a position the book drifts into. Round trips cost
several percent in this market, so it is Qlib's TopkDropout with a cost margin:

- **Exits, any day**: a held name that turned AVOID (its expected excess is below minus
  a round trip) is sold under the exit rail (portfolio/executor.plan_exit).
- **Top-ups, on rebalance days**: a held name worth less than TOP_UP_SHARE of its slot
  (a buy the participation cap cut short; a price that merely drifted does not get there)
  is bought up to the slot, while it is not AVOID and passes the entry gates.
- **Rebalance, every `rebalance_every` sessions** (the retrain cadence): empty slots are
  filled with the best LONG candidates; then at most `swaps` replacements, each of the
  weakest held name by the best remaining candidate, only when the candidate's expected
  excess beats the held name's by more than the pair's round trip: leaving the held name
  (half its spread, the impact of its size, one fee) plus entering the candidate (half
  its spread, the impact of the slot, one fee), market/costs.py.
- **Capacity**: no position is larger than `capacity` of the name's ADV_20 (its daily
  traded volume; the rail's size gate allows 15%), so impact stays bounded. Where capacity
  holds names below their slots, the book buys its reserve (the eligible names ranked after
  the LONG ones: ordinary shares passing the entry gates, not AVOID) while half a slot or
  more is uninvested, up to twice `names`; what is still uninvested stays in cash and
  shows in the average exposure.

Every order says why in its rationale, and every LONG name the book does not buy is in the
plan's `skipped` list with the reason. The parameters (names, swaps, horizon, capacity)
were chosen on NSE 2008-2011 alone (docs/portfolio.md, "The book").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from market.costs import FALLBACK_SPREAD, FeeSchedule, affordable, impact_fraction
from models.decisions import BOOK_NAMES, TARGET_EXPOSURE
from portfolio.executor import DayPlan, Order, Signal, estimate, plan_exit, signal_dict, wants_exit
from portfolio.rails import MAX_ADV_SHARE, MarketDay, check_entry, exit_state, value_positions

TOP_UP_SHARE = 0.5  # a held name worth less than this share of its slot is bought up to it


@dataclass(frozen=True)
class Mandate:
    names: int = BOOK_NAMES
    exposure: float = TARGET_EXPOSURE
    swaps: int = 1
    rebalance_every: int = 5
    capacity: float = MAX_ADV_SHARE  # largest position, as a share of ADV_20 (shares)

    def __post_init__(self) -> None:
        if self.names < 1 or self.swaps < 0 or self.rebalance_every < 1:
            raise ValueError(f"a mandate needs names >= 1, swaps >= 0 and rebalance_every >= 1: {self}")
        if not 0 < self.exposure <= 1 or not 0 < self.capacity <= MAX_ADV_SHARE:
            raise ValueError(f"exposure must be in (0, 1] and capacity in (0, {MAX_ADV_SHARE}]: {self}")


@dataclass(frozen=True)
class Candidate:
    signal: Signal
    day: MarketDay
    shares: int  # the slot in shares, within capacity
    bound_by: str = "slot"  # or "adv_20": the capacity share of ADV_20 held it below the slot


def plan_book(
    cash: Decimal,
    holdings: dict[str, int],
    signals: dict[str, Signal],
    market: dict[str, MarketDay],
    fees: FeeSchedule,
    mandate: Mandate = Mandate(),
    rebalance: bool = True,
    realistic: bool = True,
) -> DayPlan:
    """The day's orders for the book (fills in the next session, executor.fill_orders)."""
    plan = DayPlan()
    plan.liquid_equity = value_positions(float(cash), holdings, market).liquid_equity
    slot = mandate.exposure * plan.liquid_equity / mandate.names
    held = {s: q for s, q in holdings.items() if q > 0}
    for symbol in sorted(held):
        signal, day = signals.get(symbol), market.get(symbol)
        if wants_exit(signal) and day is not None:
            cash += plan_exit(plan, signal, day, held[symbol], fees, True, realistic)
            held[symbol] -= sum(o.quantity for o in plan.orders if o.symbol == symbol and o.side == "SELL")
            if held[symbol] <= 0:
                del held[symbol]
    if not rebalance:
        return plan
    cash = _top_ups(plan, held, signals, market, fees, slot, cash, realistic, mandate.capacity)
    candidates = _candidates(held, signals, market, slot, mandate)
    while candidates and _room_for_another(held, market, slot, mandate):
        if len(held) < mandate.names and candidates[0].signal.action != "LONG":
            break  # an empty slot takes a LONG name; the reserve only fills what capacity leaves
        best = candidates.pop(0)
        cash = _buy(
            plan, best, held, cash, fees, realistic, f"fills an empty slot ({len(held) + 1} of {mandate.names})"
        )
    for _ in range(mandate.swaps):
        proceeds = _swap(plan, held, signals, market, candidates, fees, slot, realistic) if candidates else None
        if proceeds is None:
            break
        cash = _buy(
            plan, candidates.pop(0), held, cash + proceeds, fees, realistic, plan.orders[-1].rationale["replaces"]
        )
    for left in (c for c in candidates if c.signal.action == "LONG"):
        plan.skipped.append({"symbol": left.signal.symbol, "side": "BUY", "reason": _not_bought(held, signals, left)})
    return plan


def _candidates(
    held: dict[str, int], signals: dict[str, Signal], market: dict[str, MarketDay], slot: float, mandate: Mandate
) -> list[Candidate]:
    """Names not held, each with its slot in shares within its capacity: the LONG names
    first, then the reserve (ordinary shares that pass the entry gates, neither LONG nor
    AVOID), each group best expected excess first. `plan_book` fills empty slots with LONG
    names only, and takes the reserve once the book holds its names and capacity leaves
    half a slot or more uninvested. (With `decide`'s ranks the reserve exists only where
    more than `names` names are eligible, and then a free slot always has a LONG name.)"""
    out = []
    for signal in sorted(signals.values(), key=lambda s: (s.action != "LONG", -_edge(s), -s.score, s.symbol)):
        day = market.get(signal.symbol)
        if signal.symbol in held or day is None or day.close <= 0 or not _eligible(signal):
            continue
        out.append(_candidate(signal, day, slot, mandate.capacity))
    return out


def _eligible(signal: Signal) -> bool:
    """LONG, or a reserve name: an ordinary share with an expected excess that passes the
    entry gates (a tercile) and is not AVOID."""
    if signal.action == "LONG":
        return True
    return signal.ordinary and signal.action != "AVOID" and signal.tercile != "ILLIQUID" and _edge(signal) > -math.inf


def capacity_shares(slot: float, day: MarketDay, capacity: float) -> int:
    """A slot in shares, at most `capacity` of the name's ADV_20."""
    return min(int(math.floor(slot / day.close)), int(math.floor(capacity * (day.adv_20 or 0.0))))


def _candidate(signal: Signal, day: MarketDay, slot: float, capacity: float) -> Candidate:
    shares = capacity_shares(slot, day, capacity)
    return Candidate(signal, day, shares, "slot" if shares == int(math.floor(slot / day.close)) else "adv_20")


def _room_for_another(held: dict[str, int], market: dict[str, MarketDay], slot: float, mandate: Mandate) -> bool:
    """Fewer names than the mandate's, or (capacity having held some below their slot) at
    least half a slot uninvested, below twice the mandate's names."""
    if len(held) < mandate.names:
        return True
    invested = sum(q * market[s].close for s, q in held.items() if s in market)
    return len(held) < 2 * mandate.names and invested <= slot * (mandate.names - 0.5)


def _edge(signal: Signal | None) -> float:
    return -math.inf if signal is None or signal.held_edge is None or math.isnan(signal.held_edge) else signal.held_edge


def pair_round_trip(
    leaving: MarketDay, leaving_shares: int, entering: MarketDay, entering_shares: int, fee_rate: float
) -> float:
    """What replacing one name by another costs, as a fraction of the position: half of
    each name's spread, the square-root impact of each size and two fees."""
    spreads = [d.spread if d.spread is not None else FALLBACK_SPREAD for d in (leaving, entering)]
    impact = impact_fraction(leaving_shares, leaving.session()) + impact_fraction(entering_shares, entering.session())
    return sum(spreads) / 2 + impact + 2 * fee_rate


def _swap(
    plan: DayPlan,
    held: dict[str, int],
    signals: dict[str, Signal],
    market: dict[str, MarketDay],
    candidates: list[Candidate],
    fees: FeeSchedule,
    slot: float,
    realistic: bool,
) -> Decimal | None:
    """Sell the weakest held name for the best candidate when the gap pays the pair's
    round trip, the estimated proceeds; None (nothing planned) when it does not or the name
    cannot be sold whole. A name bought today (a top-up) is not sold in the same plan."""
    buying = {o.symbol for o in plan.orders if o.side == "BUY"}
    scored = [s for s in held if s in signals and s in market and s not in buying]
    if not scored:
        return None
    weakest = min(scored, key=lambda s: (_edge(signals[s]), s))
    best, leaving = candidates[0], market[weakest]
    gap = _edge(best.signal) - _edge(signals[weakest])
    cost = pair_round_trip(leaving, held[weakest], best.day, best.shares, float(fees.rate))
    if not gap > cost or exit_state(leaving, held[weakest]).sellable_today < held[weakest]:
        return None
    proceeds = plan_exit(plan, signals[weakest], leaving, held[weakest], fees, True, realistic, reason="replaced")
    text = (
        f"replaces {weakest} (expected excess {_edge(signals[weakest]):+.2%}): the gap {gap:+.2%} beats the "
        f"pair's round trip {cost:.2%}"
    )
    plan.orders[-1].rationale["replaces"] = text
    del held[weakest]
    return proceeds


def _top_ups(
    plan: DayPlan,
    held: dict[str, int],
    signals: dict[str, Signal],
    market: dict[str, MarketDay],
    fees: FeeSchedule,
    slot: float,
    cash: Decimal,
    realistic: bool,
    capacity: float,
) -> Decimal:
    for symbol in sorted(held):
        signal, day = signals.get(symbol), market.get(symbol)
        if signal is None or day is None or day.close <= 0 or signal.action == "AVOID":
            continue
        candidate = _candidate(signal, day, slot, capacity)
        if held[symbol] * day.close >= TOP_UP_SHARE * slot or held[symbol] >= candidate.shares:
            continue
        cash = _buy(plan, candidate, held, cash, fees, realistic, "tops up to its slot")
    return cash


def _buy(
    plan: DayPlan,
    candidate: Candidate,
    held: dict[str, int],
    cash: Decimal,
    fees: FeeSchedule,
    realistic: bool,
    why: str,
) -> Decimal:
    """Plan a buy up to the candidate's slot within the cash and the entry gates."""
    signal, day = candidate.signal, candidate.day
    owned = held.get(signal.symbol, 0)
    price, _ = estimate("BUY", 1, day, fees, realistic)
    cash_cap = affordable(cash, price, fees)
    quantity = min(candidate.shares - owned, cash_cap)
    bound_by = "cash" if cash_cap < candidate.shares - owned else candidate.bound_by
    check = check_entry(day, owned + max(quantity, 0))
    plan.would_trade += 1
    plan.blocked_by_rails += int(quantity > 0 and not check.passed)
    plan.cut_by_rails += int(quantity > 0 and check.passed and bound_by == "adv_20")
    if quantity <= 0 or not check.passed:
        reason = "no cash left" if quantity <= 0 else "entry gates failed: " + ", ".join(check.failed)
        plan.skipped.append({"symbol": signal.symbol, "side": "BUY", "reason": reason, "gates": check.as_dict()})
        return cash
    price, fee = estimate("BUY", quantity, day, fees, realistic)
    rationale = {
        "reason": f"{why}: {signal.reason}" if signal.reason else why,
        **signal_dict(signal),
        "gates": check.as_dict(),
        "limits": {"slot_shares": candidate.shares, "held": owned, "cash_cap": cash_cap, "bound_by": bound_by},
        "close": day.close,
        "rails": True,
    }
    order = Order(signal.symbol, "BUY", quantity, price, fee, rationale)
    plan.orders.append(order)
    held[signal.symbol] = owned + quantity
    return cash - order.gross - order.fees


def _not_bought(held: dict[str, int], signals: dict[str, Signal], candidate: Candidate) -> str:
    scored = [s for s in held if s in signals]
    if not scored:
        return "LONG, but no cash or slot was left this rebalance"
    weakest = min(scored, key=lambda s: (_edge(signals[s]), s))
    gap = _edge(candidate.signal) - _edge(signals[weakest])
    return (
        f"LONG, but the book is full: its expected excess beats the weakest held name ({weakest}) by {gap:+.2%}, "
        "not by the pair's round trip, or the rebalance's replacements were used"
    )
