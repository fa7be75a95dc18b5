"""The AI book: a long-only mandate that stays invested and spends turnover where the
ranking pays.

It holds `names` liquid ordinary shares with the largest expected excess (models/decisions.py),
each sized to one slot, `exposure` x liquid equity / `names`, so cash is a buffer, not a
position the book drifts into. Round trips cost several percent in this market, and the
model's ranking keeps paying long after the label's five sessions (its rank IC is about
0.11 over sessions 1-5 after the fill and about 0.05 in each later window out to 60 on NSE,
docs/portfolio.md "Persistence"), so every trade is weighed by what it is expected to earn
over the time a position is expected to be held (`Mandate.hold` sessions), not over the
label's horizon: the day's expected excess times the `Outlook` multiplier, which the
signal's persistence as the walk-forward has seen it so far gives (point in time,
models/metrics.py `edge_multiplier`). This is Garleanu and Pedersen's point (2013: a
persistent signal earns over the whole time it is held, so it is worth more trading cost
than a fleeting one) applied to Qlib's TopkDropout, whose hold threshold is the cost:

- **Exits**: a held name is sold under the exit rail (portfolio/executor.plan_exit) when it
  turned AVOID (any day), or, on a rebalance day, when it is expected to lose more over
  the hold than its round trip (leaving it and entering an average name) costs. A plan
  sells a name once (`_sell`): what the rail leaves of it is neither trimmed nor replaced.
- **Trims, on rebalance days**: a position that drifted above `trim` slots (a winner that
  grew) is sold back to its slot, the proceeds going to the slots below theirs: the
  mandate's largest weight, a risk budget (one name's idiosyncratic risk grows with the
  square of its weight, the trim's cost only with the amount sold), chosen on the early
  span with the other parameters.
- **Top-ups, on rebalance days**: a held name worth less than TOP_UP_SHARE of its slot
  (a buy the participation cap cut short; a price that merely drifted does not get there)
  is bought up to the slot, while it is not to be sold and passes the entry gates.
- **Rebalance, every `rebalance_every` sessions** (the retrain cadence): empty slots are
  filled with the best LONG candidates; then at most `swaps` replacements, each of the
  weakest held name by the best remaining candidate, only when the gap in what they are
  expected to earn over the hold beats the pair's round trip: leaving the held name (half
  its spread, the impact of its size, one fee) plus entering the candidate (half its
  spread, the impact of the slot, one fee), market/costs.py.
- **Capacity**: no position is larger than `capacity` of the name's ADV_20 (its daily
  traded volume; the rail's size gate allows 15%), so impact stays bounded. Where capacity
  holds names below their slots, the book buys its reserve (the eligible names ranked after
  the LONG ones: ordinary shares passing the entry gates, not AVOID) while what capacity
  leaves uninvested is half a slot or more (`_capacity_shortfall`: cash that merely came in
  buys no reserve), up to twice `names`; a reserve buy says so and is counted apart from
  the slots, and what is still uninvested stays in cash and shows in the average exposure.

Every order says why in its rationale (a buy whose expected excess is negative says that
it is bought because the mandate stays invested in the day's best-ranked names), and every
LONG name the book does not buy is in the plan's `skipped` list with the reason. The
parameters (names, swaps, hold, trim, capacity) were chosen on NSE 2008-2011 alone against
the book's null books (docs/portfolio.md, "The book").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal

from market.costs import FALLBACK_SPREAD, FeeSchedule, affordable, impact_fraction
from models.decisions import BOOK_NAMES, HORIZON, TARGET_EXPOSURE
from models.metrics import edge_multiplier
from portfolio.executor import (
    CENT,
    DayPlan,
    Order,
    PlanTerms,
    PriceRule,
    Rationale,
    Signal,
    Skip,
    estimate,
    plan_exit,
    signal_dict,
    wants_exit,
)
from portfolio.rails import MAX_ADV_SHARE, MarketDay, check_entry, exit_state, value_positions

TOP_UP_SHARE = 0.5  # a held name worth less than this share of its slot is bought up to it


@dataclass(frozen=True)
class Mandate:
    names: int = BOOK_NAMES
    exposure: float = TARGET_EXPOSURE
    swaps: int = 1
    rebalance_every: int = 5
    capacity: float = MAX_ADV_SHARE  # largest position, as a share of ADV_20 (shares)
    hold: int = HORIZON  # sessions a position is expected to be held: what a trade is weighed over
    trim: float | None = 2.0  # the largest position, in slots, past which it is sold back to its slot

    def __post_init__(self) -> None:
        if self.names < 1 or self.swaps < 0 or self.rebalance_every < 1 or self.hold < HORIZON:
            raise ValueError(
                f"a mandate needs names >= 1, swaps >= 0, rebalance_every >= 1 and hold >= {HORIZON}: {self}"
            )
        if not 0 < self.exposure <= 1 or not 0 < self.capacity <= MAX_ADV_SHARE:
            raise ValueError(f"exposure must be in (0, 1] and capacity in (0, {MAX_ADV_SHARE}]: {self}")
        if self.trim is not None and not self.trim > 1:
            raise ValueError(f"trim must be more than one slot (or None): {self}")


@dataclass(frozen=True)
class Outlook:
    """What a day's expected excess (over the label's HORIZON sessions) is expected to earn
    over `hold` sessions: `multiplier` times it, from the signal's persistence known on the
    day (models/metrics.py `edge_multiplier`). The default, 1 over HORIZON sessions, weighs
    a trade as if the position were held for the label's horizon only."""

    hold: int = HORIZON
    multiplier: float = 1.0

    @classmethod
    def of(cls, ics: Mapping[str, float | None] | None, hold: int) -> Outlook:
        """From the persistence's mean rank IC per window known on the day (none: 1)."""
        return cls(hold, edge_multiplier(ics or {}, hold))

    def worth(self, signal: Signal | None) -> float:
        """What the signal's name is expected to earn over the hold (-inf without an edge)."""
        edge = _edge(signal)
        return edge * self.multiplier if math.isfinite(edge) else edge

    def words(self) -> str:
        return f"over {self.hold} sessions ({self.multiplier:.2f} x the {HORIZON}-session expected excess)"

    def as_dict(self) -> dict[str, float]:
        return {"hold": self.hold, "multiplier": round(self.multiplier, 4)}


@dataclass(frozen=True)
class BookDay:
    """What a book plans on for one day: its cash and holdings (shares per name), the day's
    signals and market, the fees its trades pay, and the rule an order's price must pass to
    be booked (`booking`, executor.PlanTerms: a morning suggestion's band; None for the AI
    book and the backtest). An order it refuses is left out (`DayPlan.left_out`): a sell's
    proceeds are not spent, a buy's cash stays for the next name."""

    cash: Decimal
    holdings: Mapping[str, int]
    signals: Mapping[str, Signal]
    market: Mapping[str, MarketDay]
    fees: FeeSchedule
    booking: PriceRule | None = None


@dataclass(frozen=True)
class Candidate:
    signal: Signal
    day: MarketDay
    shares: int  # the slot in shares, within capacity
    bound_by: str = "slot"  # or "adv_20": the capacity share of ADV_20 held it below the slot


@dataclass
class _Planning:
    """One plan in the making: what the book holds and may spend as its orders are planned,
    and what every step reads (the day's signals and market, the fees, the mandate, the
    outlook, the slot)."""

    plan: DayPlan
    cash: Decimal
    held: dict[str, int]
    signals: Mapping[str, Signal]
    market: Mapping[str, MarketDay]
    fees: FeeSchedule
    mandate: Mandate
    outlook: Outlook
    realistic: bool
    booking: PriceRule | None = None
    slot: float = 0.0
    reserve: int = field(default=0)  # reserve names bought in this plan
    selling: set[str] = field(default_factory=set)  # names this plan sells (or tried to): one exit per name

    def signal(self, symbol: str) -> Signal | None:
        return self.signals.get(symbol)

    @property
    def terms(self) -> PlanTerms:
        """The book's orders are always under the rails."""
        return PlanTerms(self.fees, True, self.realistic, self.booking)


def plan_book(
    day: BookDay,
    mandate: Mandate = Mandate(),
    rebalance: bool = True,
    realistic: bool = True,
    outlook: Outlook = Outlook(),
) -> DayPlan:
    """The day's orders for the book (fills in the next session, executor.fill_orders): at
    most one per name (`_one_order_per_name`)."""
    plan = DayPlan()
    plan.liquid_equity = value_positions(float(day.cash), day.holdings, day.market).liquid_equity
    held = {s: q for s, q in day.holdings.items() if q > 0}
    book = _Planning(plan, day.cash, held, day.signals, day.market, day.fees, mandate, outlook, realistic, day.booking)
    book.slot = mandate.exposure * plan.liquid_equity / mandate.names
    for symbol in sorted(book.held):
        _exit_if_due(book, symbol, rebalance)
    if rebalance:
        _rebalance(book)
    return _one_order_per_name(plan)


def _rebalance(book: _Planning) -> None:
    """A rebalance day's steps after the exits: trims, top-ups, empty slots, replacements."""
    plan, mandate = book.plan, book.mandate
    for symbol in sorted(book.held):
        _trim_if_over(book, symbol)
    _top_ups(book)
    candidates = _candidates(book)
    _fill_slots(book, candidates)
    for _ in range(mandate.swaps):
        if not candidates or not _swap(book, candidates):
            break
    for left in (c for c in candidates if c.signal.action == "LONG"):
        plan.skipped.append(Skip(left.signal.symbol, "BUY", _not_bought(book, left)))


def _one_order_per_name(plan: DayPlan) -> DayPlan:
    """The backstop behind the one exit per name (`_sell`) and "a name bought in the plan is
    never sold in it": a plan with two orders for one name is a bug, refused here, where it
    is made, rather than stored as pending orders whose fills would share one trade id
    (portfolio/ai.py `_fill_request`: `AI-<day>-<symbol>-<side>`) and fail every later day."""
    seen: set[str] = set()
    for order in plan.orders:
        if order.symbol in seen:
            twice = [(o.side, o.quantity, o.rationale.get("reason")) for o in plan.orders if o.symbol == order.symbol]
            raise ValueError(f"the book planned two orders for {order.symbol} in one plan: {twice}")
        seen.add(order.symbol)
    return plan


def _exit_reason(book: _Planning, signal: Signal | None, rebalance: bool = True) -> str | None:
    """Why a held name is to be sold, or None: AVOID (any day), or, on a rebalance day,
    expected to lose more over the hold than its round trip costs (leaving it and entering
    an average name). The hold's test waits for the rebalance, as a replacement does: a
    day's expected excess is noisy, and a name sold on one day's dip is bought back days
    later at another round trip."""
    if signal is None:
        return None
    if wants_exit(signal):
        return "turned AVOID: " + signal.reason if signal.reason else "turned AVOID"
    if not rebalance:
        return None
    worth, trip = book.outlook.worth(signal), signal.round_trip_cost
    if book.outlook.hold > HORIZON and math.isfinite(worth) and math.isfinite(trip) and worth + trip < 0:
        return f"expected to lose {-worth:.2%} {book.outlook.words()}, more than its round trip {trip:.2%}"
    return None


def _exit_if_due(book: _Planning, symbol: str, rebalance: bool) -> None:
    signal, day = book.signal(symbol), book.market.get(symbol)
    reason = _exit_reason(book, signal, rebalance)
    if reason is None or day is None:
        return
    _sell(book, symbol, book.held[symbol], reason)


def _sell(book: _Planning, symbol: str, quantity: int, reason: str) -> bool:
    """The plan's one sell of `symbol` (under the exit rail, judged on the whole position),
    taken off what the book holds; True when it was planned. The name is then the plan's to
    sell: it is neither trimmed nor replaced in the same plan, whatever the rail left of it
    (a second sell would spend the rail's allowance twice and its fill share the first one's
    trade id)."""
    book.selling.add(symbol)
    planned = len(book.plan.orders)
    held = book.held[symbol]
    book.cash += plan_exit(book.plan, book.signals[symbol], book.market[symbol], quantity, book.terms, reason, held)
    if len(book.plan.orders) == planned:  # TRAPPED, or left out (its price is not booked)
        return False
    book.held[symbol] -= book.plan.orders[-1].quantity
    if book.held[symbol] <= 0:
        del book.held[symbol]
    return True


def _trim_if_over(book: _Planning, symbol: str) -> None:
    """A position past `trim` slots sold back to its slot (under the exit rail), unless the
    plan already sells it."""
    signal, day, limit = book.signal(symbol), book.market.get(symbol), book.mandate.trim
    if limit is None or signal is None or day is None or day.close <= 0 or symbol in book.selling:
        return
    value = book.held[symbol] * day.close
    excess = book.held[symbol] - int(math.floor(book.slot / day.close))
    if value <= limit * book.slot or excess <= 0:
        return
    _sell(book, symbol, excess, f"trimmed to its slot: {value / book.slot:.1f} slots, past the mandate's {limit:g}")


def _top_ups(book: _Planning) -> None:
    for symbol in sorted(book.held):
        signal, day = book.signal(symbol), book.market.get(symbol)
        if signal is None or day is None or day.close <= 0 or symbol in book.selling:
            continue
        if _exit_reason(book, signal) is not None:
            continue
        candidate = _candidate(signal, day, book.slot, book.mandate.capacity)
        if book.held[symbol] * day.close >= TOP_UP_SHARE * book.slot or book.held[symbol] >= candidate.shares:
            continue
        _buy(book, candidate, "tops up to its slot")


def _fill_slots(book: _Planning, candidates: list[Candidate]) -> None:
    """Empty slots take the best LONG names; the reserve only what capacity leaves."""
    names = book.mandate.names
    while candidates and _room_for_another(book):
        if len(book.held) < names and candidates[0].signal.action != "LONG":
            return  # an empty slot takes a LONG name; the reserve only fills what capacity leaves
        best = candidates.pop(0)
        if _entry(book) == "slot":
            _buy(book, best, f"fills an empty slot ({len(book.held) + 1} of {names})")
            continue
        why = (
            f"reserve {book.reserve + 1}: capacity holds the book's {names} names below their slots, "
            "so the next-ranked eligible name takes what is uninvested"
        )
        book.reserve += int(_buy(book, best, why))


def _candidates(book: _Planning) -> list[Candidate]:
    """Names not held, each with its slot in shares within its capacity: the LONG names
    first, then the reserve (ordinary shares that pass the entry gates, neither LONG nor
    AVOID), each group best expected excess first. `plan_book` fills empty slots with LONG
    names only, and takes the reserve once the book holds its names and capacity leaves
    half a slot or more uninvested. (With `decide`'s ranks the reserve exists only where
    more than `names` names are eligible, and then a free slot always has a LONG name.)"""
    out = []
    for signal in sorted(book.signals.values(), key=lambda s: (s.action != "LONG", -_edge(s), -s.score, s.symbol)):
        day = book.market.get(signal.symbol)
        taken = signal.symbol in book.held or signal.symbol in book.selling
        if taken or day is None or day.close <= 0 or not _eligible(signal):
            continue
        out.append(_candidate(signal, day, book.slot, book.mandate.capacity))
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


def _room_for_another(book: _Planning) -> bool:
    """Fewer names than the mandate's, or, below twice its names, at least half a slot that
    capacity leaves uninvested (`_capacity_shortfall`)."""
    names = book.mandate.names
    if len(book.held) < names:
        return True
    return len(book.held) < 2 * names and _capacity_shortfall(book) >= book.slot / 2


def _capacity_shortfall(book: _Planning) -> float:
    """What capacity keeps the book from investing: the mandate's `names` slots less what
    the held names hold, each counted at least at its slot within capacity. With the book's
    names held at their slots and no reserve, it is the sum over the names capacity binds of
    their slot less their capacity; a name merely below its slot (cash that came in, a
    price that fell) counts as full, and the reserve names held count as the slots do."""
    full = 0.0
    for symbol, quantity in book.held.items():
        day = book.market.get(symbol)
        if day is not None and day.close > 0:
            fits = capacity_shares(book.slot, day, book.mandate.capacity) * day.close
            full += max(quantity * day.close, fits)
    return book.mandate.names * book.slot - full


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


def _weakest(book: _Planning) -> str | None:
    """The held name that is expected to earn least (not one this plan buys or sells)."""
    planned = {o.symbol for o in book.plan.orders} | book.selling
    scored = [s for s in book.held if s in book.signals and s in book.market and s not in planned]
    return min(scored, key=lambda s: (_edge(book.signals[s]), s)) if scored else None


def _swap(book: _Planning, candidates: list[Candidate]) -> bool:
    """Sell the weakest held name for the best candidate when the gap in what they are
    expected to earn over the hold pays the pair's round trip; False (nothing planned) when
    it does not or the name cannot be sold whole."""
    weakest = _weakest(book)
    if weakest is None:
        return False
    best, leaving = candidates[0], book.market[weakest]
    gap = book.outlook.worth(best.signal) - book.outlook.worth(book.signals[weakest])
    cost = pair_round_trip(leaving, book.held[weakest], best.day, best.shares, float(book.fees.rate))
    sellable = book.terms.booked(leaving, exit_state(leaving, book.held[weakest]).sellable_today)
    if not gap > cost or sellable < book.held[weakest]:
        return False
    held_edge = _edge(book.signals[weakest])
    if not _sell(book, weakest, book.held[weakest], "replaced"):  # left out (its price is not booked)
        return False
    why = (
        f"replaces {weakest} (expected excess {held_edge:+.2%}): the gap {gap:+.2%} {book.outlook.words()} beats "
        f"the pair's round trip {cost:.2%}"
    )
    sell = book.plan.orders[-1]
    book.plan.orders[-1] = replace(sell, rationale={**sell.rationale, "replaces": why})
    _buy(book, candidates.pop(0), why)
    return True


def _buy(book: _Planning, candidate: Candidate, why: str) -> bool:
    """Plan a buy up to the candidate's slot within the cash and the entry gates (left out
    where its price is not booked: `PlanTerms.booking`); True when it was planned."""
    signal, day = candidate.signal, candidate.day
    owned = book.held.get(signal.symbol, 0)
    wanted, bound_by = _booked_whole(book, day, candidate.shares - owned, candidate.bound_by)
    cash_cap = _cash_cap(book, day, wanted)
    quantity = min(wanted, cash_cap)
    bound_by = "cash" if cash_cap < wanted else bound_by
    check = check_entry(day, owned + max(quantity, 0))
    plan = book.plan
    plan.would_trade += 1
    plan.blocked_by_rails += int(quantity > 0 and not check.passed)
    plan.cut_by_rails += int(quantity > 0 and check.passed and bound_by == "adv_20")
    if quantity <= 0 or not check.passed:
        reason = "no cash left" if quantity <= 0 else "entry gates failed: " + ", ".join(check.failed)
        plan.skipped.append(Skip(signal.symbol, "BUY", reason, gates=check.as_dict()))
        return False
    price, fee = estimate("BUY", quantity, day, book.fees, book.realistic)
    refused = book.terms.refusal(signal.symbol, price)
    if refused is not None:  # its cash stays for the next name
        plan.left_out.append(Skip(signal.symbol, "BUY", f"{why}; left out: {refused}", gates=check.as_dict()))
        return False
    rationale: Rationale = {
        "reason": _buy_reason(why, signal),
        **signal_dict(signal),
        "gates": check.as_dict(),
        "limits": {"slot_shares": candidate.shares, "held": owned, "cash_cap": cash_cap, "bound_by": bound_by},
        "outlook": book.outlook.as_dict(),
        "close": day.close,
        "rails": True,
    }
    if not owned:
        rationale["entry"] = _entry(book)
    order = Order(signal.symbol, "BUY", quantity, price, fee, rationale)
    plan.orders.append(order)
    book.held[signal.symbol] = owned + quantity
    book.cash -= order.gross + order.fees
    return True


def _booked_whole(book: _Planning, day: MarketDay, wanted: int, bound_by: str) -> tuple[int, str]:
    """What a buy asks for where its confirmation books it whole at its limit (a morning
    suggestion: `book.booking`): at most what one session fills (market/costs.py
    `max_fill`, 25% of the session's volume), so its limit is a price the market could
    give the whole of it; the next morning's plan asks again for the rest. The AI book's
    and the backtest's orders are filled by the cost model, which applies the cap."""
    fillable = book.terms.booked(day, wanted)
    return (wanted, bound_by) if fillable == wanted else (fillable, "session_volume")


def _cash_cap(book: _Planning, day: MarketDay, wanted: int) -> int:
    """The most shares of `wanted` the cash pays for at the price of the quantity bought
    (impact and the tick included: more than one share's), fee included, so the plan's
    cash, and a suggestion's confirmation, never goes below zero. It converges: the price
    does not rise as the quantity falls."""
    quantity = max(wanted, 1)
    while True:
        price, fee = estimate("BUY", quantity, day, book.fees, book.realistic)
        if (price * quantity).quantize(CENT) + fee <= book.cash:
            return quantity if quantity < wanted else affordable(book.cash, price, book.fees)
        smaller = min(affordable(book.cash, price, book.fees), quantity - 1)
        if smaller <= 0:
            return 0
        quantity = smaller


def _entry(book: _Planning) -> str:
    """What an opening buy enters as: one of the mandate's `names` slots while the book
    holds fewer names than that (an empty slot, or the place a replaced name left), else
    its reserve (capacity held the slots below their size). One rule for `_fill_slots`'
    reason, a replacement and what a position says it entered as (views/portfolio.py)."""
    return "slot" if len(book.held) < book.mandate.names else "reserve"


def _buy_reason(why: str, signal: Signal) -> str:
    """The order's reason: why it is bought, why a name expected to trail the universe is
    bought at all, and the signal's own reason."""
    edge = _edge(signal)
    if math.isfinite(edge) and round(edge, 4) < 0:  # negative as the reason prints it (to 0.01%)
        why += (
            f"; its expected excess is negative ({edge:+.2%}), but it ranks among the day's best eligible names and "
            "the mandate stays invested (cash would trail the universe by its whole return)"
        )
    return f"{why}: {signal.reason}" if signal.reason else why


def _not_bought(book: _Planning, candidate: Candidate) -> str:
    scored = [s for s in book.held if s in book.signals and s not in book.selling]
    if not scored:
        return "LONG, but no cash or slot was left this rebalance"
    weakest = min(scored, key=lambda s: (_edge(book.signals[s]), s))
    gap = book.outlook.worth(candidate.signal) - book.outlook.worth(book.signals[weakest])
    return (
        f"LONG, but the book is full: what it is expected to earn {book.outlook.words()} beats the weakest held "
        f"name ({weakest}) by {gap:+.2%}, not by the pair's round trip, or the rebalance's replacements were used"
    )
