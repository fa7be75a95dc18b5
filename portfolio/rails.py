"""The liquidity rail: entry gates, exit flags and liquid equity, as pure functions.

Entry needs all four gates:
- ADV_20 >= 5,000 shares (the mean volume of the instrument's last 20 trading days,
  today included; fewer than 20 days of history means no ADV_20 and the gate fails);
- today's volume > 0;
- spread <= 5%;
- position size <= 15% of ADV_20 (the whole position after the buy, in shares).

Exit flags on a held position:
- TRAPPED: no volume today. Nothing can be sold; the position is left out of liquid equity.
  A name without a row on the day (`MarketDay.without_row`: its rows stopped, carried at
  its last close by the delisting rule, portfolio/delisting.py) is TRAPPED and nothing
  else: with no row its volume is unknown, not low, so it has no days to exit (None) and
  no SLOW_EXIT, and no spread of the day (no HIGH_SPREAD).
- SLOW_EXIT: more than 5 trading days to exit. Days to exit = quantity / (25% of ADV_20):
  we assume an exit may take at most a quarter of a normal day's volume without moving the
  price, the same participation that caps a partial exit, so a position becomes slow when
  it exceeds 1.25 x ADV_20 (typically because volume dried up after entry). A partial exit
  under SLOW_EXIT is capped at 25% of today's volume. A name with fewer than 20 sessions
  of history has no ADV_20: its days to exit are unknown (None), not never, so it is not
  SLOW_EXIT; its exit is capped at 25% of today's volume all the same, and its position
  says why (`SHORT_HISTORY`).
- HIGH_SPREAD: spread above 10%. Liquid equity discounts the position by the spread; the
  exit itself fills at the bid (or the close less half the estimated spread) like every fill
  (market/costs.py).

The spread (quotes, else the estimate from the name's recent bars where the caller put it
on the MarketDay, else the day's range over the close) and the three per-instrument
entry gates are defined once in market/liquidity.py, which the model's tercile gating and
the read views share; this module adds the position-size gate, the exit flags and liquid
equity.

Liquid equity = cash + market value of positions - illiquid discounts, where a TRAPPED
position is discounted by its whole value and a HIGH_SPREAD one by value x spread.
All new position sizing uses liquid equity.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import TypedDict

import numpy as np

from market.costs import MAX_PARTICIPATION, Session, max_fill
from market.liquidity import MAX_ENTRY_SPREAD, MIN_ADV, entry_gates, known, spread_fraction

MAX_ADV_SHARE = 0.15
EXIT_PARTICIPATION = MAX_PARTICIPATION  # the cost model's cap on a session's volume
SLOW_EXIT_DAYS = 5
HIGH_SPREAD = 0.10

TRAPPED, SLOW_EXIT, HIGH_SPREAD_FLAG = "TRAPPED", "SLOW_EXIT", "HIGH_SPREAD"
# What a held name with fewer than 20 sessions of history says (views/valuation.py
# `stopped`): too short to measure its exit, rather than SLOW_EXIT with no end.
SHORT_HISTORY = (
    "fewer than 20 sessions of history: too short to measure its days to exit (on its 20-session average "
    "volume), so it is not flagged SLOW_EXIT; a session sells at most 25% of that session's volume"
)


@dataclass(frozen=True)
class MarketDay:
    """What the rail needs to know about one instrument on one trading day."""

    symbol: str
    close: float
    volume: int
    adv_20: float | None
    bid: float | None = None
    ask: float | None = None
    high: float | None = None
    low: float | None = None
    volatility: float | None = None  # daily, volatility_20: the impact term's sigma
    spread_estimate: float | None = None  # market.liquidity.estimate_spreads' figure for the day
    spread_estimate_source: str = "estimate"  # its label (abdi_ranaldo, corwin_schultz, tick, range_window)
    # the session of `close` (None: not known); a name that did not trade on the day carries an earlier one
    dated: date | None = None
    # True: the name has no row on the day at all (its rows stopped), carried at its last close
    # (`dated`): nothing can be sold and its volume is unknown (`exit_state`)
    without_row: bool = False

    def session(self) -> Session:
        """This day as the cost model's session (market/costs.py), the estimate included."""
        return Session(
            self.close,
            self.volume,
            self.adv_20,
            self.bid,
            self.ask,
            self.high,
            self.low,
            self.volatility,
            self.spread_estimate,
            self.spread_estimate_source,
        )

    def spread_with_source(self) -> tuple[float | None, str]:
        """The day's spread and its source: quotes, else the estimate, else the day's range."""
        return self._spread_with_source

    @cached_property
    def _spread_with_source(self) -> tuple[float | None, str]:
        # worked out once a day: a null book's replay asks for it about 90 times a day
        return spread_fraction(
            self.bid,
            self.ask,
            self.high,
            self.low,
            self.close,
            (self.spread_estimate, self.spread_estimate_source),
            self.volume,
        )

    @property
    def spread(self) -> float | None:
        return self.spread_with_source()[0]

    @property
    def spread_source(self) -> str:
        return self.spread_with_source()[1]


def max_position_shares(adv_20: float | None) -> int:
    """The largest position the size gate allows: 15% of ADV_20, whole shares."""
    if not known(adv_20) or adv_20 <= 0:
        return 0
    return int(math.floor(MAX_ADV_SHARE * adv_20 + 1e-9))


class GateJson(TypedDict):
    """A gate as a rationale stores it."""

    name: str
    value: float | None
    threshold: float
    passed: bool


class EntryCheckJson(TypedDict):
    """The entry gates as a buy's rationale (or a refused buy) stores them."""

    passed: bool
    gates: list[GateJson]


class ExitStateJson(TypedDict):
    """The exit rail's state as a sell's rationale (or a held-back sell) stores it;
    `days_to_exit` None for never (no volume over 20 sessions) or unknown (a day without a
    row, fewer than 20 sessions of history)."""

    flags: list[str]
    days_to_exit: float | None
    spread: float | None
    spread_source: str
    sellable_today: int


@dataclass(frozen=True)
class Gate:
    name: str
    value: float | None
    threshold: float
    passed: bool

    def as_dict(self) -> GateJson:
        return {"name": self.name, "value": self.value, "threshold": self.threshold, "passed": self.passed}


@dataclass(frozen=True)
class EntryCheck:
    gates: tuple[Gate, ...]

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def failed(self) -> list[str]:
        return [g.name for g in self.gates if not g.passed]

    def as_dict(self) -> EntryCheckJson:
        return {"passed": self.passed, "gates": [g.as_dict() for g in self.gates]}


def check_entry(day: MarketDay, position_after: int) -> EntryCheck:
    """All four entry gates for holding `position_after` shares after the buy."""
    adv = day.adv_20 if known(day.adv_20) else None
    spread = day.spread
    passed = entry_gates(adv, day.volume, spread)
    return EntryCheck(
        (
            Gate("adv_20", adv, MIN_ADV, passed["adv_20"]),
            Gate("volume_today", day.volume, 0, passed["volume_today"]),
            Gate("spread", spread, MAX_ENTRY_SPREAD, passed["spread"]),
            Gate(
                "position_size",
                position_after,
                max_position_shares(adv),
                adv is not None and 0 < position_after <= max_position_shares(adv),
            ),
        )
    )


def days_to_exit(quantity: int, adv_20: float | None) -> float:
    """Trading days to sell `quantity` at 25% of ADV_20 a day: infinite without volume, NaN
    (unknown) without an ADV_20 (fewer than 20 sessions of history)."""
    if quantity <= 0:
        return 0.0
    if not known(adv_20):
        return math.nan
    if adv_20 <= 0:
        return math.inf
    return quantity / (EXIT_PARTICIPATION * adv_20)


@dataclass(frozen=True)
class ExitState:
    flags: tuple[str, ...]
    days_to_exit: float
    spread: float | None
    spread_source: str
    sellable_today: int

    def as_dict(self) -> ExitStateJson:
        return {
            "flags": list(self.flags),
            "days_to_exit": round(self.days_to_exit, 2) if math.isfinite(self.days_to_exit) else None,
            "spread": self.spread,
            "spread_source": self.spread_source,
            "sellable_today": self.sellable_today,
        }


def exit_state(day: MarketDay, quantity: int) -> ExitState:
    """The exit rail's flags for a position of `quantity` shares and how much of it can be
    sold today: nothing when TRAPPED, 25% of today's volume when SLOW_EXIT or its days to
    exit are unknown (fewer than 20 sessions: `short_history`), else all. A day without a row is
    TRAPPED alone, its days to exit unknown (NaN: `as_dict` None)."""
    if day.without_row:
        return ExitState((TRAPPED,), math.nan, None, "none", 0)
    flags: list[str] = []
    if day.volume <= 0:
        flags.append(TRAPPED)
    days = days_to_exit(quantity, day.adv_20)
    if days > SLOW_EXIT_DAYS:
        flags.append(SLOW_EXIT)
    spread, source = day.spread_with_source()
    if spread is not None and spread > HIGH_SPREAD:
        flags.append(HIGH_SPREAD_FLAG)
    if TRAPPED in flags:
        sellable = 0
    elif SLOW_EXIT in flags or short_history(day):
        sellable = min(quantity, int(math.floor(EXIT_PARTICIPATION * day.volume + 1e-9)))
    else:
        sellable = quantity
    return ExitState(tuple(flags), days, spread, source, sellable)


def short_history(day: MarketDay) -> bool:
    """Whether `day`'s name has a row but no ADV_20 (fewer than 20 sessions of history): the
    rail cannot measure a position's days to exit (`SHORT_HISTORY` says so)."""
    return not day.without_row and not known(day.adv_20)


def booked_whole(day: MarketDay, wanted: int) -> int:
    """The most of `wanted` shares an order booked whole at its limit, without a fill (a
    morning suggestion, whose confirmation is its trade), may ask for: what one session
    fills, 25% of `day`'s volume (market/costs.py `max_fill`), the cap the AI book's and the
    backtest's fills apply to every order, a buy or a sell, slow or not."""
    return min(wanted, max_fill(day.session()))


def illiquid_discount(day: MarketDay, quantity: int) -> float:
    """What liquid equity leaves out of this position's market value."""
    value = quantity * day.close
    state = exit_state(day, quantity)
    if TRAPPED in state.flags:
        return value
    if HIGH_SPREAD_FLAG in state.flags and state.spread is not None:
        return value * state.spread
    return 0.0


@dataclass
class Valuation:
    cash: float
    market_value: float
    discounts: dict[str, float] = field(default_factory=dict)

    @property
    def equity(self) -> float:
        return self.cash + self.market_value

    @property
    def liquid_equity(self) -> float:
        return self.equity - sum(self.discounts.values())


def value_positions(cash: float, holdings: Mapping[str, int], market: Mapping[str, MarketDay]) -> Valuation:
    """Equity and liquid equity. `market` holds the latest known day of every held symbol;
    a symbol that has never been priced adds nothing (it has no value to discount)."""
    valuation = Valuation(cash=cash, market_value=0.0)
    for symbol, quantity in holdings.items():
        if quantity <= 0:
            continue
        day = market.get(symbol)
        if day is None:
            continue
        valuation.market_value += quantity * day.close
        discount = illiquid_discount(day, quantity)
        if discount:
            valuation.discounts[symbol] = discount
    return valuation


def adv_20(volumes: np.ndarray | list[float]) -> float | None:
    """Mean of the last 20 daily volumes (zero-volume days count); None with fewer than 20."""
    values = np.asarray(volumes, dtype=float)
    if len(values) < 20:
        return None
    return float(values[-20:].mean())
