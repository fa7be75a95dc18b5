"""The one cost model: what a fill could have cost, wherever a fill happens.

Every fill (the AI portfolio's executor, the backtest, the validation record's replay, the
morning suggestions, the manual-trade preview) and every decision that weighs an edge
against its cost (models/decisions.py) reads this module. It lives in market/, the
vocabulary every layer may import, beside the spread it builds on (market/liquidity.py):
the risk model's Action needs the same round-trip cost the executor pays, and models/
sits below portfolio/.

A fill's price, per share, for a buy (a sell mirrors it):

1. **Touch.** The ask where the session's closing quotes exist (bid > 0, ask >= bid);
   elsewhere the close plus half the estimated spread where the caller gives the session
   one (`Session.spread_estimate`, from `market.liquidity.estimate_spreads` over the
   name's recent bars: Abdi-Ranaldo, else Corwin-Schultz or the tick floor, else the
   window's mean range); without an estimate (no history) half the day's range over the
   close (market/liquidity.py: wider than a quoted spread, so it errs against us). With
   none of these the close plus half of `FALLBACK_SPREAD` (no flattering zero).
   `Fill.touch_source` says which priced the fill: `quotes`, the estimator's label
   (`abdi_ranaldo`, `corwin_schultz`, `tick`, `range_window`), `range` or `fallback`.
2. **Market impact**, the square-root law (Almgren et al. 2005; Toth et al. 2011):
   impact = IMPACT_Y x sigma x sqrt(participation), sigma the name's daily volatility
   (volatility_20; the day's range times 0.6, Parkinson's estimator, where unknown; never
   below 0.6 x one tick over the close, a one-tick range, `sigma_floor`), and
   participation = quantity / the smaller of the session's volume and ADV_20, so a fill
   pays for both its share of the day and its share of a normal day (a block trade that
   inflated ADV_20 does not make the next order cheap). IMPACT_Y = 1: the coefficient is
   of order one across the equity markets it was measured on; it is not fitted to this
   project's strategy, and its inputs (volatility, volume) are the name's own facts.
3. **Participation cap.** No fill exceeds MAX_PARTICIPATION (25%) of the session's
   traded volume, the same share the exit rail assumes a seller can take
   (portfolio/rails.py); what is left lapses (a new decision the next day may ask again)
   and the rationale says so. A session without trades fills nothing.
4. **Fees**, the market's published schedule (market/fees.py): each statutory levy's rate
   of the value plus brokerage, max(brokerage minimum, rate x value), per fill, each line
   in cents; `FeeSchedule.rate` is their proportional sum per side.

**Prices that multiply.** A fill's price is whole cents: the touch is taken to the cent
(half up) and the price with its impact again, so price x quantity is the fill's value to
the cent on every surface, and the parts reconcile: spread = |touch - close| x quantity and
impact = |price - touch| x quantity, both at least zero (rounding to the nearest cent,
not against the order, adds no cost on average: at a price of 2.00 a cent against the
order would be 0.25% a side). A plan's price (`portfolio.executor.estimate`: what a
morning suggestion offers as its limit) is further taken to the instrument's tick against
the order (`limit_price`): a limit a broker accepts, which the confirmation charges.

`Fill.costs` keeps the parts in money, a `CostBreakdown` (spread = |touch - close| x
quantity, impact, fees), so a trade stores what it paid (the trade's `fees`, `spread_cost`
and `impact_cost` columns, store/tables.py) and the track record attributes costs from them.

The round-trip cost a decision weighs (`round_trip_cost`) is the spread (half in, half
out; `round_trip_costs` reads a frame's `spread_estimate` where there are no quotes), two
fees at the rate, and, when a size is given, twice the impact of that size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import TypedDict

import pandas as pd

from market.fees import FeeSchedule
from market.liquidity import SPREAD_DECIMALS, known, spread_fraction, spread_series, tick_size
from market.money import Fraction, Money

IMPACT_Y = 1.0
MAX_PARTICIPATION = 0.25
PARKINSON = 0.6  # daily sigma ~ 0.6 x (high - low) / close (Parkinson 1980: 1 / (2 sqrt(ln 2)))
FALLBACK_SPREAD = 0.05  # neither quotes nor a range: the entry gate's widest spread
MONEY = Decimal("0.000001")
CENTS = Decimal("0.01")


@dataclass(frozen=True)
class Session:
    """What the cost model needs to know of the session a fill happens in."""

    close: float
    volume: int
    adv_20: float | None = None
    bid: float | None = None
    ask: float | None = None
    high: float | None = None
    low: float | None = None
    volatility: float | None = None
    spread_estimate: float | None = None  # estimate_spreads' figure for the name on this day
    spread_estimate_source: str = "estimate"  # its label: abdi_ranaldo, corwin_schultz, tick, range_window


@dataclass(frozen=True)
class CostBreakdown:
    """What a fill paid, in money, the one form a cost takes from this model to the store.

    Decimal parts as the model computes them (six places, MONEY; the fee in cents, as
    market/fees.py charges it). `total` is their sum, derived rather than stored, so it
    cannot disagree with them. `as_text` is the form a trade's rationale has always kept
    (decimal text per part and the total), unchanged for readers of that JSON."""

    fees: Money = Decimal(0)
    spread: Money = Decimal(0)
    impact: Money = Decimal(0)

    @property
    def total(self) -> Money:
        return self.spread + self.impact + self.fees

    def __add__(self, other: CostBreakdown) -> CostBreakdown:
        return CostBreakdown(self.fees + other.fees, self.spread + other.spread, self.impact + other.impact)

    def as_text(self) -> CostsText:
        """The parts as decimal text: spread, impact, fees and their total (the rationale's form)."""
        return CostsText(spread=str(self.spread), impact=str(self.impact), fees=str(self.fees), total=str(self.total))


class CostsText(TypedDict):
    """A CostBreakdown as a document keeps it (`as_text`): money as decimal text. Its parts
    are money (a `spread` here is what a fill paid to the spread, not a fraction of a price)."""

    spread: Money
    impact: Money
    fees: Money
    total: Money


class FillJson(TypedDict):
    """A fill as its order's rationale records it (`Fill.as_dict`)."""

    requested: int
    filled: int
    lapsed: int
    lapse_reason: str | None
    touch: Money  # the ask or the bid the fill crossed at, to the cent
    touch_source: str
    impact: Fraction  # of the touch price
    costs: CostsText


@dataclass(frozen=True)
class Fill:
    side: str
    requested: int
    quantity: int
    price: Decimal  # per share, touch and impact included
    fee: Decimal
    spread_cost: Decimal
    impact_cost: Decimal
    touch: float
    touch_source: str  # quotes | abdi_ranaldo | corwin_schultz | tick | range_window | range | fallback | close
    impact: float  # the fraction of the touch price
    lapsed: int  # shares not filled (participation cap or no trades)
    lapse_reason: str | None

    @property
    def gross(self) -> Decimal:
        return (self.price * self.quantity).quantize(MONEY)

    @property
    def costs(self) -> CostBreakdown:
        """The parts in money: fees, spread and impact (and their total)."""
        return CostBreakdown(fees=self.fee, spread=self.spread_cost, impact=self.impact_cost)

    def as_dict(self) -> FillJson:
        return FillJson(
            requested=self.requested,
            filled=self.quantity,
            lapsed=self.lapsed,
            lapse_reason=self.lapse_reason,
            touch=round(self.touch, 6),
            touch_source=self.touch_source,
            impact=round(self.impact, 6),
            costs=self.costs.as_text(),
        )


def session_spread(session: Session) -> tuple[float, str]:
    """The spread a fill crosses (a fraction) and where it came from: the quotes, else the
    session's estimate, else the day's range, else FALLBACK_SPREAD."""
    spread, source = spread_fraction(
        session.bid,
        session.ask,
        session.high,
        session.low,
        session.close,
        (session.spread_estimate, session.spread_estimate_source),
        session.volume,
    )
    if spread is None:
        return FALLBACK_SPREAD, "fallback"
    return spread, source


def touch_price(side: str, session: Session) -> tuple[float, str]:
    """The price before impact: the ask (buy) or bid (sell) where quoted, else the close
    plus or minus half the estimated spread (or the day's range, or the fallback)."""
    spread, source = session_spread(session)
    if source == "quotes":
        return (float(session.ask) if side == "BUY" else float(session.bid)), source
    half = spread / 2
    return session.close * (1 + half if side == "BUY" else 1 - half), source


def daily_sigma(session: Session) -> float:
    """The name's daily volatility: volatility_20, else Parkinson on the day's range (or
    the quotes), else on FALLBACK_SPREAD; never below Parkinson's reading of a one-tick
    range (`sigma_floor`)."""
    if known(session.volatility) and session.volatility > 0:
        return max(float(session.volatility), sigma_floor(session.close))
    # Parkinson reads the day's range (or the quotes where the session has them), never
    # the spread estimate: a bid-ask estimate is not a volatility.
    spread, _ = spread_fraction(session.bid, session.ask, session.high, session.low, session.close)
    return max(PARKINSON * (FALLBACK_SPREAD if spread is None else spread), sigma_floor(session.close))


def sigma_floor(close: float) -> float:
    """The least daily volatility impact reads: Parkinson on a one-tick range (0.6 x tick /
    close). A price that printed the same close every session (high = low = close, a
    volatility of 0) still moves by a tick under an order, so impact is never zero."""
    return PARKINSON * float(tick_size(close)) / close if close > 0 else 0.0


def participation_base(session: Session) -> float:
    """The volume an order's share is measured against: the smaller of the session's
    volume and ADV_20 (the session's alone where ADV_20 is unknown)."""
    volumes = [float(session.volume)] + (
        [float(session.adv_20)] if known(session.adv_20) and session.adv_20 > 0 else []
    )
    return max(min(volumes), 0.0)


def impact_fraction(quantity: float, session: Session) -> float:
    base = participation_base(session)
    if quantity <= 0:
        return 0.0
    if base <= 0:
        return math.inf
    return IMPACT_Y * daily_sigma(session) * math.sqrt(quantity / base)


def max_fill(session: Session) -> int:
    """The most shares one session can fill: MAX_PARTICIPATION of its traded volume."""
    return int(math.floor(MAX_PARTICIPATION * max(session.volume, 0) + 1e-9))


def fill(
    side: str, quantity: int, session: Session, fees: FeeSchedule, realistic: bool = True, capped: bool = True
) -> Fill:
    """Fill `quantity` shares in `session`. `realistic=False` is the comparison switch:
    at the close, whole, without spread, impact or fees. `capped=False` prices the whole
    quantity past the participation cap (a plan's estimate: the fill applies the cap);
    impact still reads the session's volume, and a session without trades fills nothing."""
    if not realistic:
        price = Decimal(str(session.close)).quantize(MONEY)
        zero = Decimal(0)
        return Fill(side, quantity, quantity, price, zero, zero, zero, session.close, "close", 0.0, 0, None)
    cap = max_fill(session) if capped or session.volume <= 0 else quantity
    filled = max(min(quantity, cap), 0)
    reason = None
    if filled < quantity:
        reason = (
            "no trades in the session"
            if session.volume <= 0
            else f"capped at {MAX_PARTICIPATION:.0%} of the session's volume ({session.volume:,} shares)"
        )
    touch, source = touch_price(side, session)
    touch = float(_cents(touch, side))
    impact = impact_fraction(filled, session) if filled else 0.0
    sign = 1 if side == "BUY" else -1
    price = _cents(touch * (1 + sign * impact) if filled else touch, side)
    spread_cost = (Decimal(str(abs(touch - session.close))) * filled).quantize(MONEY)
    impact_cost = (abs(price - Decimal(str(touch))) * filled).quantize(MONEY)
    fee = fees.order_fee(price, filled) if filled else Decimal(0)
    return Fill(
        side, quantity, filled, price, fee, spread_cost, impact_cost, touch, source, impact, quantity - filled, reason
    )


def bounded(done: Fill, low: Decimal, high: Decimal, close: float, fees: FeeSchedule) -> Fill:
    """`done` with its price held within [`low`, `high`] (an exchange's daily price band: nothing
    trades outside it), its fee and costs taken at that price: spread and impact still add
    up to |price - close| x quantity, the spread never more than that. `done` itself where
    its price lies within (the impact fraction stays the model's, so a caller can say how far
    the walk went)."""
    price = min(max(done.price, low), high)
    if price == done.price:
        return done
    moved = (abs(price - Decimal(str(close))) * done.quantity).quantize(MONEY)
    spread = min(done.spread_cost, moved)
    fee = fees.order_fee(price, done.quantity) if done.quantity else Decimal(0)
    return replace(done, price=price, fee=fee, spread_cost=spread, impact_cost=moved - spread)


def _cents(value: float, side: str) -> Decimal:
    """A price per share to the cent against the order, up for a buy and down for a sell
    (never below zero), once read to MONEY's places (a float's last digits are no cent): a
    touch between two cents is never the nearer one in the trader's favour. Rounded half up,
    a spread under half a cent either side was no cost at all (a buy and a sell of a name at
    0.12 with a 6% spread both filled at 0.12), and a price under 1 paid a part of its spread
    or none."""
    exact = Decimal(str(max(value, 0.0))).quantize(MONEY, ROUND_HALF_UP)
    return exact.quantize(CENTS, ROUND_CEILING if side == "BUY" else ROUND_FLOOR)


def limit_price(side: str, price: Decimal) -> Decimal:
    """`price` taken to the instrument's tick (market/liquidity.py TICKS) against the
    order, up for a buy and down for a sell (never below one tick): the limit a morning
    suggestion offers, a price a broker accepts and at least as safe as the estimate."""
    step = Decimal(str(float(tick_size(float(price)))))
    steps = (Decimal(price) / step).to_integral_value(ROUND_CEILING if side == "BUY" else ROUND_FLOOR)
    return (max(steps, Decimal(1)) * step).quantize(CENTS)


def affordable(cash: Decimal, price: Decimal, fees: FeeSchedule) -> int:
    """The most whole shares whose value at `price` plus fee fits in `cash`."""
    if cash <= 0 or price <= 0:
        return 0
    quantity = int(
        min(cash / (price * (1 + fees.rate)), max(cash - fees.least, Decimal(0)) / price).to_integral_value(
            rounding=ROUND_DOWN
        )
    )
    while quantity > 0 and (price * quantity).quantize(MONEY) + fees.fee((price * quantity).quantize(MONEY)) > cash:
        quantity -= 1
    return quantity


def round_trip_cost(spread: float | None, fee_rate: float, impact: float = 0.0) -> float:
    """What buying and later selling costs, as a fraction: the spread (half each way; the
    fallback where unknown), two fees at the rate, twice the impact of the size."""
    crossed = FALLBACK_SPREAD if spread is None or not math.isfinite(spread) else spread
    return round(float(crossed + 2 * fee_rate + 2 * impact), SPREAD_DECIMALS)


def round_trip_costs(frame: pd.DataFrame, fee_rate: float, spread: pd.Series | None = None) -> pd.Series:
    """`round_trip_cost` over a frame with bid, ask, high, low and close (and the
    `spread_estimate` where the caller computed it), before impact; `spread`: the frame's
    `spread_series` where the caller has it already."""
    spread = (spread_series(frame) if spread is None else spread).fillna(FALLBACK_SPREAD)
    return (spread + 2 * fee_rate).round(SPREAD_DECIMALS)


def size_for_edge(edge: float, spread: float, fee_rate: float, session: Session) -> float:
    """The largest quantity whose round trip (spread, fees, twice the square-root impact)
    the `edge` still clears; 0 when even the smallest order does not."""
    room = edge - spread - 2 * fee_rate
    sigma = daily_sigma(session)
    if room <= 0:
        return 0.0
    if sigma <= 0:
        return math.inf
    return participation_base(session) * (room / (2 * IMPACT_Y * sigma)) ** 2


def exit_cost(spread: float | None, fee_rate: float) -> float:
    """Leaving a position: half the spread and one fee."""
    crossed = FALLBACK_SPREAD if spread is None or not math.isfinite(spread) else spread
    return float(crossed / 2 + fee_rate)


def fee_words(fees: FeeSchedule, currency: str | None = None) -> str:
    """What a fill pays in fees, as charged (`FeeSchedule.breakdown`): the proportional rate
    to its last digit (0.725%, never rounded to 0.73%) and the smallest charge a
    fill pays, where the schedule has one, in `currency` where given ("JMD 50.00")."""
    rate = (Decimal(str(fees.rate)) * 100).normalize()
    least = f"{currency + ' ' if currency else ''}{Decimal(str(fees.least)):,.2f}"
    floor = f", and at least {least} a fill" if fees.least > 0 else ""
    return f"fees of {rate:f}% of each fill's value{floor} (the market's fee schedule)"


def describe(fees: FeeSchedule | None = None, currency: str | None = None) -> str:
    """The cost model in plain words, built from this module's constants (and `fees`, the
    schedule charged, where given, its minimum in `currency`): the method text a report
    prints, so it cannot drift from what every fill does."""
    fee_text = fee_words(fees, currency) if fees is not None else "the market's fees on each fill's value"
    return (
        "Every fill (the AI portfolio's, the backtest's and the replayed validation record's) happens in the session "
        "after the close its order was decided from, never at that close: a buy pays the ask and a sell gets the bid "
        "where the session's quotes exist, else the close plus or minus half the estimated spread (half of "
        f"{FALLBACK_SPREAD:.0%} where nothing estimates it); plus square-root market impact, {IMPACT_Y:g} x the "
        "name's daily volatility x the square root of the order's share of the smaller of the session's volume and "
        f"its 20-day average; at most {MAX_PARTICIPATION:.0%} of the session's traded volume fills, the rest lapses, "
        f"and a session without trades fills nothing; plus {fee_text}."
    )
