"""A deterministic simulated market: the same seed gives the same market, day after day.

Each trading day draws its randomness from `default_rng([seed, stream, day_index])`, so a
day's numbers do not depend on which days were asked for before it. State (the latent
value of each company, its last traded price, halts) is carried forward day by day from
SIM_START and cached.

The microstructure is that of a thin market, calibrated to stylised facts measured on the
NSE Kenya daily files (ingest/simulator/facts.py, stylised_facts.json): an instrument
trades on a given day with its own probability (liquid banks almost daily, junior stocks
a few days a week), the close stays at the last close on no-trade days, halts last a few
days, dividends drop the price on the ex-date. Trades print at the standing bid or ask
around a latent value (`_prints`): quotes stay put while the value is inside them, so on
a quiet day the same prices trade again; a print's side tends to repeat the previous
one's; prints sit on a tick grid and within the daily price limit. High and low are the
day's extreme prints; the close is their volume-weighted average (the NSE's closes lie
inside the day's range far more often than a last trade at the bid or ask would), so it
carries a damped bid-ask bounce: a close near the day's high tends to be followed by a
fall. Closing quotes run from about 1% to over 10% wide and are sometimes one-sided.
News and disclosures carry a tone in [-1, 1] and the market under-reacts
to them: the following days' returns drift with the recent tones (decayed with a
half-life of one trading day), a weak share of each day's move (`news_signal` scales it,
0 switches it off). That is the "true" signal the sentiment features should find.
Over weeks, names are predictable across the cross-section as the NSE's are (facts.py
`predictability_facts`): part of each day's move is a transient gap that reverts with a
half-life of GAP_HALF_LIFE days (its shocks come from a stream of their own,
`default_rng([seed, 4, day_index])`, so every other number is drawn as before), and each
company drifts with a constant premium for size and against volatility.

Regimes (`regime=`, a `Regime` or a name in REGIMES): markets the models were not tuned
on, for benchmarks/model_quality.py. The default, `nse`, is the calibrated market above
and draws exactly the same numbers as before regimes existed. `bear`: the market factor
drifts down (-0.5% a day), so down days dominate. `liquid`: every listed instrument
trades every day with no halts and many prints, and a close never equals the previous
one (a close that would is moved one tick toward the day's value): no zero-volume days
and no flat closes. `limit`: a 2% daily price limit, which most active days hit. Every
regime draws the same random numbers as the default; only what they are used for changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import TYPE_CHECKING

import numpy as np

from ingest.simulator.universe import SIM_START, Instrument, build_universe
from market.clock import TradingCalendar, default_calendar
from market.errors import InvalidInputError

if TYPE_CHECKING:
    import pandas as pd

SIM_END = date(2028, 12, 29)
REPORT_EVERY = 63  # trading days between quarterly reports
TONE_EFFECT = 1.2  # share of a day's volatility moved by a news tone of 1 (times news_signal); a VWAP
# close takes in about half of a day's move that day, so this is twice what it was with last-trade closes
DRIFT_DECAY = 0.5  # how much of the tone-driven drift is left a trading day later
PRICE_LIMIT = 0.15  # daily price limit around the previous close
# Microstructure, calibrated to the NSE Kenya daily files (ingest/simulator/stylised_facts.json;
# benchmarks/stylised_facts.py prints the comparison).
PRINTS_PER_DAY = 12  # trade prints simulated per instrument-day at most (more trades share these prices)
PRINT_SHARES = 2000.0  # shares per print on average: a day of v shares has 1 + Poisson(v / this) prints
SIDE_PERSISTENCE = 0.95  # chance the day's first print is on the side (bid/ask) of the previous day's last
INTRADAY_PERSISTENCE = 0.85  # chance a later print is on the side of the print before it
QUIET_SHARE = 0.4  # share of instrument-days on which the value barely moves (nothing new is learnt)
QUIET_SCALE = 0.15  # volatility on a quiet day, as a multiple of the instrument's
# volatility on the other days, so that the average day's variance is the instrument's
ACTIVE_SCALE = float(np.sqrt((1 - QUIET_SHARE * QUIET_SCALE**2) / (1 - QUIET_SHARE)))
ODD_LOT_SHARE = 0.3  # share of traded instrument-days with an odd-lot print away from the quotes
ODD_LOT_REACH = 1.3  # how far beyond the quotes an odd lot prints: |N(0, 1)| times this times the day's volatility
ODD_LOT_SIZE = 0.02  # an odd lot's size relative to an average print
INTRADAY_VOL = 1.5  # volatility of the value's path between prints, as a multiple of the day's
# Multi-week cross-sectional predictability, calibrated to the NSE Kenya files (2006-2022) as
# facts.predictability_facts measures it (stylised_facts.json "predictability"): the mean
# daily rank IC, over names with ADV_20 >= 5,000, of a signal known at t's close with the
# product's label (models.dataset.with_labels, H = 10). The NSE reads reversal (past 5
# sessions -0.059, past 20 -0.041, past 60 -0.010), a size premium (log 20-day traded value
# +0.046) and a low-volatility premium (60-day volatility -0.057), each with its sign in
# nearly every year. Two mechanisms produce them. A transient gap between the value prints
# trade around and the company's worth: an AR(1) per instrument whose shocks are a share of
# the day's move, so part of a run up or down reverts over the next weeks (sticky quotes and
# averaged closes alone read -0.04 at 5 sessions and -0.015 at 20). And a constant expected
# drift per company, loaded on cross-sectional z-scores of the log of its typical traded
# value (typical volume x listing price) and of its volatility: z-scores are zero on average
# across the universe, so the market as a whole drifts as before. The four constants were
# set together on the default market (60 names, 2024-2028) pooled over the seeds of
# facts.PREDICTABILITY_SEEDS, which then read -0.061, -0.039, -0.017, +0.047 and -0.056.
GAP_HALF_LIFE = 8.0  # trading days for half of a gap to close (longer: more reversal at 60 sessions)
GAP_PERSISTENCE = float(0.5 ** (1 / GAP_HALF_LIFE))  # share of the gap left a trading day later
GAP_SHARE = 0.45  # the gap's daily shock as a multiple of the day's volatility; the rest of
# the day's move is scaled by sqrt(1 - GAP_SHARE**2), so that a day's variance stays the instrument's
SIZE_PREMIUM = 0.0003  # daily log drift per cross-sectional standard deviation of log typical
# traded value (about 7.5% a year)
VOL_PREMIUM = -0.00045  # daily log drift per cross-sectional standard deviation of volatility
# Price grids as (price below which the step applies, step). TICKS: the NSE's ticks, where
# its closes (volume-weighted averages) sit: 0.01 below 10, 0.05 from 10, 0.25 from 100,
# 1 from 1,000. QUOTE_GRID: the round numbers where its trades print (its highs and lows):
# 74% of those between 10 and 100 are multiples of 0.25 and 42% whole shillings, 97% of
# those from 100 to 1,000 whole shillings; quotes and prints sit on it.
TICKS = ((10.0, 0.01), (100.0, 0.05), (1000.0, 0.25), (np.inf, 1.0))
QUOTE_GRID = ((10.0, 0.05), (100.0, 0.25), (1000.0, 1.0), (np.inf, 5.0))

POSITIVE = [
    "{name} reports record quarterly profit, beating expectations",
    "{name} wins major regional contract and raises guidance",
    "{name} ({symbol}) announces strong growth and expansion plans",
    "Analysts upgrade {name} after robust earnings improvement",
]
NEGATIVE = [
    "{name} warns of lower earnings amid weak demand",
    "{name} ({symbol}) faces regulatory probe over reporting failures",
    "{name} posts quarterly loss as costs surge",
    "Analysts downgrade {name} citing declining margins and litigation risk",
]
RESULTS = {
    1: "{name} ({symbol}) reports higher quarterly profit on strong revenue growth",
    -1: "{name} ({symbol}) reports lower quarterly profit as revenue declines",
    0: "{name} ({symbol}) reports quarterly results in line with last year",
}
NEUTRAL = [
    "{name} to hold annual general meeting next month",
    "{name} ({symbol}) appoints new company secretary",
    "{name} confirms board meeting date",
]


@dataclass(frozen=True)
class Regime:
    """What a regime changes; the defaults are the calibrated NSE-like market."""

    name: str = "nse"
    market_drift: float = 0.0002  # mean daily log move of the market factor
    price_limit: float = PRICE_LIMIT  # daily price limit around the previous close
    halt_rate: float = 0.0008  # chance a listed instrument starts a halt on a day
    always_trades: bool = False  # every listed, unhalted instrument trades every day
    min_prints: int = 1  # prints on a traded day at least
    no_flat_closes: bool = False  # a traded close equal to the previous close moves one tick


REGIMES = {
    "nse": Regime(),
    "bear": Regime("bear", market_drift=-0.005),
    "liquid": Regime("liquid", halt_rate=0.0, always_trades=True, min_prints=PRINTS_PER_DAY, no_flat_closes=True),
    "limit": Regime("limit", price_limit=0.02),
}


@dataclass(frozen=True)
class NewsEvent:
    event_id: str
    symbol: str
    day: date
    kind: str  # NEWS, RESULTS, DIVIDEND, DIRECTOR_TRADING, AGM
    tone: float
    title: str
    body: str


@dataclass
class SimulatedDay:
    day: date
    index: int
    bars: list[dict]
    notices: list[dict]
    fundamentals: list[dict]
    securities: list[dict]
    events: list[NewsEvent] = field(default_factory=list)
    indices: list[dict] = field(default_factory=list)  # the market's published index levels: symbol, level


@dataclass(frozen=True, eq=False)
class _DayState:
    """What a simulated day leaves, one value per instrument (`SimulatedMarket._computed[i]`):
    the day's views read it and the next day starts from it."""

    value: np.ndarray  # log value at the close
    close: np.ndarray
    prev_close: np.ndarray
    halt_left: np.ndarray  # halt days left, today included
    halted: np.ndarray
    listed: np.ndarray
    traded: np.ndarray
    volume: np.ndarray
    trades: np.ndarray
    open: np.ndarray  # NaN without a trade, as high and low
    high: np.ndarray
    low: np.ndarray
    bid: np.ndarray  # NaN where the closing quote is missing, as ask
    ask: np.ndarray
    tone: np.ndarray  # the day's news tone, 0 without news
    dividend: np.ndarray  # per share, on its ex-date
    drift: np.ndarray  # the news tones decayed by DRIFT_DECAY a day: what pushes the next day's value
    centre: np.ndarray  # the standing quotes' centre
    half: np.ndarray  # and half-width (a fraction of the centre)
    side: np.ndarray  # the side of the last print: +1 at the ask, -1 at the bid
    gap: np.ndarray  # the transient gap between the value and the company's worth


@dataclass(frozen=True, eq=False)
class _Quotes:
    """Standing quotes: centre, half-width (a fraction of the centre) and the side of the last print."""

    centre: np.ndarray
    half: np.ndarray
    side: np.ndarray


@dataclass(frozen=True, eq=False)
class _Start:
    """What a day starts from (`SimulatedMarket._start`)."""

    value: np.ndarray  # log value at the previous close
    last_close: np.ndarray
    halt_left: np.ndarray  # one fewer than the day before
    drift: np.ndarray  # the previous day's tone drift
    quotes: _Quotes
    gap: np.ndarray


@dataclass(frozen=True, eq=False)
class _Move:
    """The day's move of the value (`SimulatedMarket._move`)."""

    dividend: np.ndarray
    opening: np.ndarray  # log value at the open: the previous close's, less any dividend
    value: np.ndarray  # log value at the close
    day_vol: np.ndarray  # the day's volatility (quiet or active)
    gap: np.ndarray  # the gap at the close


@dataclass(frozen=True, eq=False)
class _Trading:
    """Who trades and how much (`SimulatedMarket._trading`)."""

    traded: np.ndarray
    volume: np.ndarray
    trades: np.ndarray
    fresh_half: np.ndarray  # the half-width of quotes set afresh today
    prints: np.ndarray  # prints simulated (0: no trade)


@dataclass(frozen=True, eq=False)
class _PrintDraws:
    """The random parts of the day's prints (`_draw_print_parts`), PRINTS_PER_DAY rows by instrument."""

    flip: np.ndarray  # the print's side is drawn afresh (else it repeats the previous one)
    coin: np.ndarray  # the fresh side, +1 or -1
    sizes: np.ndarray
    odd_lot: np.ndarray  # per instrument: an odd lot prints today
    odd_side: np.ndarray
    odd_reach: np.ndarray  # how far beyond the quotes, in log price


@dataclass(frozen=True, eq=False)
class _QuotePath:
    """The quotes at each print (`centres`, `halves`: PRINTS_PER_DAY rows) and after the last."""

    centres: np.ndarray
    halves: np.ndarray
    centre: np.ndarray
    half: np.ndarray


@dataclass(frozen=True, eq=False)
class _Bar:
    """The day's prices from its prints, and the quotes they leave."""

    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    quotes: _Quotes


@dataclass(frozen=True, eq=False)
class _ClosingQuotes:
    centre: np.ndarray
    half: np.ndarray
    bid: np.ndarray
    ask: np.ndarray


class SimulatedMarket:
    def __init__(
        self,
        seed: int = 7,
        size: int = 60,
        news_signal: float = 1.0,
        calendar: TradingCalendar | None = None,
        regime: Regime | str = "nse",
        end: date = SIM_END,
    ) -> None:
        """`end`: the last simulated day. SIM_END is the market everything else uses; a
        later end (benchmarks/model_quality.py --sim-days) is a longer market whose
        universe (listing and delisting days) is drawn for its own length."""
        if not math.isfinite(news_signal):
            raise InvalidInputError(f"news_signal must be a finite number, not {news_signal}")
        self.regime = REGIMES[regime] if isinstance(regime, str) else regime
        self.seed = seed
        self.size = size
        self.news_signal = news_signal
        self.calendar = calendar or default_calendar()
        self.days: list[date] = self.calendar.trading_days(SIM_START, end)
        self._index = {d: i for i, d in enumerate(self.days)}
        self.universe: list[Instrument] = build_universe(size, seed, len(self.days))
        self._computed: list[_DayState] = []
        self._events: list[list[NewsEvent]] = []
        self._static()

    # ---- public -------------------------------------------------------------------
    def is_simulated(self, day: date) -> bool:
        return day in self._index

    def day(self, day: date) -> SimulatedDay:
        if day not in self._index:
            raise KeyError(f"{day.isoformat()} is not a simulated trading day")
        i = self._index[day]
        self._extend_to(i)
        state = self._computed[i]
        return SimulatedDay(
            day=day,
            index=i,
            bars=self._bars(i, state),
            notices=self._notices(i, state),
            fundamentals=self._fundamentals(i),
            securities=self._securities(i),
            events=list(self._events[i]),
        )

    def listing_date(self, instrument: Instrument) -> date:
        if instrument.listed_day:
            return self.days[instrument.listed_day]
        return date(1995 + instrument.index % 25, 1 + instrument.index % 12, 15)

    # ---- simulation ---------------------------------------------------------------
    def _static(self) -> None:
        u = self.universe
        self._p_trade = np.array([x.p_trade for x in u])
        self._volume = np.array([x.typical_volume for x in u])
        self._spread = np.array([x.base_spread for x in u])
        self._vol = np.array([x.volatility for x in u])
        self._beta = np.array([x.beta for x in u])
        self._news_rate = np.array([x.news_rate for x in u])
        self._tier = np.array([x.tier for x in u])
        self._listed_day = np.array([x.listed_day for x in u])
        self._delisted_day = np.array([x.delisted_day if x.delisted_day is not None else 10**9 for x in u])
        rng = np.random.default_rng([self.seed, 3])
        self._pe = rng.uniform(7, 22, self.size)
        self._pb = rng.uniform(0.7, 3.0, self.size)
        self._div_yield = np.where(rng.random(self.size) < 0.7, rng.uniform(0.01, 0.06, self.size), 0.0)
        self._report_phase = rng.integers(0, REPORT_EVERY, self.size)
        self._dividend_phase = rng.integers(0, 126, self.size)
        size = np.log(self._volume * np.array([x.initial_price for x in u]))
        self._premium = SIZE_PREMIUM * _zscore(size) + VOL_PREMIUM * _zscore(self._vol)

    def _listed(self, i: int) -> np.ndarray:
        return (self._listed_day <= i) & (self._delisted_day > i)

    def _extend_to(self, target: int) -> None:
        while len(self._computed) <= target:
            self._step(len(self._computed))

    def _step(self, i: int) -> None:
        """Simulate trading day `i` from day i - 1's state and cache it with its news.

        Every number of the day is drawn from `default_rng([seed, 2, i])` in the order of
        the calls below (the value's move, halts, news, trading, prints, closing quotes):
        reordering them changes the market. The gap's shocks have their own stream,
        `default_rng([seed, 4, i])`, so every other number is drawn as before it.
        """
        rng = np.random.default_rng([self.seed, 2, i])
        gap_rng = np.random.default_rng([self.seed, 4, i])
        gap_shock = gap_rng.normal(0, 1, self.size)
        listed = self._listed(i)
        start = self._start(i, listed, gap_rng)
        move = self._move(i, rng, listed, start, gap_shock)
        halt_left, halted = self._halts(rng, listed, start.halt_left)
        tone, events = self._news(i, rng, listed)
        trading = self._trading(rng, listed, halted, tone)
        bar = self._closes(self._prints(rng, start, move, trading), trading.traded, move.value, start.last_close)
        quotes = _closing_quotes(rng, move.value, bar.quotes, trading, halted)
        self._computed.append(
            _DayState(
                value=move.value,
                close=bar.close,
                prev_close=start.last_close.copy(),
                halt_left=halt_left,
                halted=halted,
                listed=listed,
                traded=trading.traded,
                volume=trading.volume,
                trades=trading.trades,
                open=bar.open,
                high=bar.high,
                low=bar.low,
                bid=quotes.bid,
                ask=quotes.ask,
                tone=tone,
                dividend=move.dividend,
                drift=DRIFT_DECAY * start.drift + tone,
                centre=quotes.centre,
                half=quotes.half,
                side=bar.quotes.side,
                gap=move.gap,
            )
        )
        self._events.append(events)

    def _start(self, i: int, listed: np.ndarray, gap_rng: np.random.Generator) -> _Start:
        """What day `i` starts from: day i - 1's state, or on day 0 every company at its
        initial price with quotes of its base width and the gap drawn from its long-run
        distribution (the second draw of `gap_rng`). A name listed today starts at its value."""
        n = self.size
        if i == 0:
            value = np.log(np.array([x.initial_price for x in self.universe]))
            last_close = _to_tick(np.exp(value))
            halt_left = np.zeros(n, dtype=int)
            drift = np.zeros(n)
            centre, half, side = np.exp(value), self._spread / 2, np.ones(n)
            gap = GAP_SHARE * self._vol / np.sqrt(1 - GAP_PERSISTENCE**2) * gap_rng.normal(0, 1, n)
        else:
            prev = self._computed[i - 1]
            value, last_close = prev.value.copy(), prev.close.copy()
            halt_left = np.maximum(prev.halt_left - 1, 0)
            drift = prev.drift
            centre, half, side = prev.centre, prev.half, prev.side
            gap = prev.gap
        newly_listed = listed & (self._listed_day == i) & (i > 0)
        last_close = np.where(newly_listed, _to_tick(np.exp(value)), last_close)
        centre = np.where(newly_listed, np.exp(value), centre)
        return _Start(value, last_close, halt_left, drift, _Quotes(centre, half, side), gap)

    def _move(
        self, i: int, rng: np.random.Generator, listed: np.ndarray, start: _Start, gap_shock: np.ndarray
    ) -> _Move:
        """The day's move of each company's log value: the market factor (with the
        regime's drift) times its beta, its own noise, its constant premium, the change of
        its gap and the push of the recent news tones, from an opening that drops by the
        dividend on an ex-date. On a quiet day (QUIET_SHARE of instrument-days) the value
        barely moves, with the market or alone. Draws the market, the noise and the quiet days."""
        n = self.size
        market = rng.normal(self.regime.market_drift, 0.006)
        noise = rng.normal(0, 1, n)
        dividend_today = listed & (self._div_yield > 0) & ((i + self._dividend_phase) % 126 == 0) & (i > 0)
        dividend = np.where(dividend_today, (self._div_yield / 2 * start.last_close).round(2), 0.0)
        tone_push = self.news_signal * TONE_EFFECT * self._vol * start.drift
        opening = start.value + np.log(np.clip(1 - dividend / np.maximum(start.last_close, 0.01), 0.5, 1.0))
        activity = np.where(rng.random(n) < QUIET_SHARE, QUIET_SCALE, ACTIVE_SCALE)
        day_vol = self._vol * activity
        gap = GAP_PERSISTENCE * start.gap + GAP_SHARE * day_vol * gap_shock
        worth = day_vol * np.sqrt(1 - GAP_SHARE**2) * noise + self._premium
        value = opening + activity * self._beta * market + worth + (gap - start.gap) + tone_push
        return _Move(dividend, opening, value, day_vol, gap)

    def _halts(
        self, rng: np.random.Generator, listed: np.ndarray, halt_left: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Halt days left and whether each name is halted: a listed name not halted starts
        a halt of 1 to 4 days with the regime's halt rate."""
        n = self.size
        starts_halt = listed & (halt_left == 0) & (rng.random(n) < self.regime.halt_rate)
        halt_left = np.where(starts_halt, rng.integers(1, 5, n), halt_left)
        return halt_left, listed & (halt_left > 0)

    def _trading(self, rng: np.random.Generator, listed: np.ndarray, halted: np.ndarray, tone: np.ndarray) -> _Trading:
        """Who trades (a listed, unhalted name with its own probability, 0.3 more on a day
        with news; every one in an `always_trades` regime), how much (more on strong news),
        in how many trades and prints, and the width of quotes set afresh today."""
        n = self.size
        p_trade = np.clip(self._p_trade + 0.3 * (np.abs(tone) > 0), 0, 0.99)
        traded = listed & ~halted & ((rng.random(n) < p_trade) | self.regime.always_trades)
        volume = np.where(
            traded,
            np.maximum(1, np.round(self._volume * rng.lognormal(0, 0.8, n) * (1 + 2 * np.abs(tone)), -1)),
            0,
        ).astype(np.int64)
        trades = np.where(traded, 1 + rng.poisson(np.minimum(volume / 3000.0, 150)), 0)
        fresh_half = self._spread * rng.lognormal(0, 0.3, n) / 2
        prints = np.where(
            traded, np.clip(1 + rng.poisson(volume / PRINT_SHARES), self.regime.min_prints, PRINTS_PER_DAY), 0
        )
        return _Trading(traded, volume, trades, fresh_half, prints)

    def _prints(self, rng: np.random.Generator, start: _Start, move: _Move, trading: _Trading) -> _Bar:
        """The day's trade prints of every instrument, `trading.prints[k]` of them (0: no trade).

        The value moves from `move.opening` (the previous close's value, after any
        dividend) to `move.value` along a Brownian bridge with the day's volatility times
        INTRADAY_VOL; the prints happen at sorted uniform times. A print is at the standing
        bid or ask: the quotes stay where they are while the value is inside them and are
        set afresh around it (with a new width) once it leaves. Its side repeats the
        previous print's with probability SIDE_PERSISTENCE for the day's first print (the
        previous day's last print) and INTRADAY_PERSISTENCE for the others, and is a fair
        coin otherwise: order flow in a thin market comes in runs, the same standing order
        is hit again. Prints sit on QUOTE_GRID within the daily price limit around the
        previous close, with sizes drawn from an exponential distribution. Returns open,
        high, low, the close (the volume-weighted average price on the TICKS grid; NaN
        without a print) and the quotes' centre, half-width and last side.
        """
        level = _value_path(rng, move.opening, move.value, move.day_vol)
        draws = _draw_print_parts(rng, trading.prints, move.day_vol)
        active = np.arange(PRINTS_PER_DAY)[:, None] < trading.prints
        sides = _print_sides(draws, start.quotes.side)
        path = _requote_along(level, active, start.quotes, trading.fresh_half)
        floor = _to_tick(start.last_close * (1 - self.regime.price_limit), np.ceil)
        cap = _to_tick(start.last_close * (1 + self.regime.price_limit), np.floor)
        price = np.maximum(
            np.clip(_to_tick(path.centres * (1 + sides * path.halves), np.round, QUOTE_GRID), floor, cap), 0.01
        )
        # An odd lot: a small trade away from the quotes (beyond them by a random share of the
        # day's volatility) that sets the day's high or low and hardly moves the close.
        odd_price = path.centre * np.exp(draws.odd_side * (path.half + draws.odd_reach))
        odd_price = np.maximum(np.clip(_to_tick(odd_price, np.round, QUOTE_GRID), floor, cap), 0.01)
        last = np.take_along_axis(sides, np.maximum(trading.prints - 1, 0)[None, :], axis=0)[0]
        quotes = _Quotes(path.centre, path.half, np.where(trading.prints > 0, last, start.quotes.side))
        return _bar_of_prints(price, active, draws, odd_price, quotes)

    def _closes(self, bar: _Bar, traded: np.ndarray, value: np.ndarray, last_close: np.ndarray) -> _Bar:
        """The day's bar with the close of an untraded name at the previous close; in a
        `no_flat_closes` regime a traded close equal to the previous one moves one tick
        toward the day's value (and widens the day's range if it has to)."""
        close = np.where(traded, bar.close, last_close)
        high, low = bar.high, bar.low
        if self.regime.no_flat_closes:
            flat = traded & (close == last_close)
            step = np.where(value >= np.log(last_close), 1.0, -1.0) * _tick(last_close)
            close = np.where(flat, np.maximum((last_close + step).round(2), 0.01), close)
            high, low = np.where(traded, np.fmax(high, close), high), np.where(traded, np.fmin(low, close), low)
        return replace(bar, close=close, high=high, low=low)

    def _news(self, i: int, rng: np.random.Generator, listed: np.ndarray) -> tuple[np.ndarray, list[NewsEvent]]:
        n = self.size
        tone = np.zeros(n)
        events: list[NewsEvent] = []
        draws = rng.random(n)
        tones = np.clip(rng.normal(0, 0.6, n), -1, 1)
        results_day = listed & ((i + self._report_phase) % REPORT_EVERY == 0)
        for k in np.flatnonzero(listed & ((draws < self._news_rate) | results_day)):
            instrument = self.universe[k]
            value = float(round(tones[k], 3))
            kind = "RESULTS" if results_day[k] else "NEWS"
            direction = 1 if value > 0.2 else -1 if value < -0.2 else 0
            if kind == "RESULTS":
                template = RESULTS[direction]
            else:
                templates = {1: POSITIVE, -1: NEGATIVE, 0: NEUTRAL}[direction]
                template = templates[int(abs(value) * 1000) % len(templates)]
            title = template.format(name=instrument.name, symbol=instrument.symbol)
            body = _body(instrument, kind, value, self.days[i])
            events.append(
                NewsEvent(
                    f"{self.days[i]:%Y%m%d}-{instrument.symbol}-{kind.lower()}",
                    instrument.symbol,
                    self.days[i],
                    kind,
                    value,
                    title,
                    body,
                )
            )
            tone[k] = value
        return tone, events

    # ---- views --------------------------------------------------------------------
    def _bars(self, i: int, s: _DayState) -> list[dict]:
        rows = []
        for k in np.flatnonzero(s.listed):
            x = self.universe[k]
            rows.append(
                {
                    "symbol": x.symbol,
                    "name": x.name,
                    "board": x.board,
                    "sector": x.sector,
                    "open": _num(s.open[k]),
                    "high": _num(s.high[k]),
                    "low": _num(s.low[k]),
                    "close": float(s.close[k]),
                    "prev_close": float(s.prev_close[k]),
                    "volume": int(s.volume[k]),
                    "trades": int(s.trades[k]),
                    "value_traded": round(float(s.volume[k] * s.close[k]), 2),
                    "bid": _num(s.bid[k]),
                    "ask": _num(s.ask[k]),
                    "status": "HALTED" if s.halted[k] else ("NEW LISTING" if x.listed_day == i and i > 0 else ""),
                }
            )
        return rows

    def _notices(self, i: int, s: _DayState) -> list[dict]:
        day = self.days[i]
        notices = []
        for k in np.flatnonzero(s.dividend > 0):
            notices.append(
                {
                    "symbol": self.universe[k].symbol,
                    "kind": "DIVIDEND",
                    "amount": float(s.dividend[k]),
                    "detail": f"ex-date {day.isoformat()}, payment {(day + timedelta(days=21)).isoformat()}",
                }
            )
        for x in self.universe:
            if x.listed_day == i and i > 0:
                notices.append({"symbol": x.symbol, "kind": "LISTING", "amount": None, "detail": f"{x.board} board"})
            if x.delisted_day == i:
                notices.append(
                    {
                        "symbol": x.symbol,
                        "kind": "DELISTING",
                        "amount": None,
                        "detail": "last trading day was the previous session",
                    }
                )
        if i > 0:
            prev = self._computed[i - 1].halted
            for k in np.flatnonzero(s.halted & ~prev):
                notices.append(
                    {
                        "symbol": self.universe[k].symbol,
                        "kind": "HALT",
                        "amount": None,
                        "detail": "trading halted pending announcement",
                    }
                )
            for k in np.flatnonzero(~s.halted & prev & s.listed):
                notices.append(
                    {"symbol": self.universe[k].symbol, "kind": "RESUME", "amount": None, "detail": "trading resumed"}
                )
        return notices

    def _fundamentals(self, i: int) -> list[dict]:
        rows = []
        listed = self._computed[i].listed
        for k in np.flatnonzero(listed):
            x = self.universe[k]
            since = (i + self._report_phase[k]) % REPORT_EVERY
            report = max(i - since, x.listed_day)
            price = float(self._computed[report].close[k])
            rows.append(
                {
                    "symbol": x.symbol,
                    "report_date": self.days[report],
                    "period_end": self.days[report] - timedelta(days=45),
                    "eps": round(float(price / self._pe[k]), 3),
                    "book_value_per_share": round(float(price / self._pb[k]), 2),
                    "dividend_yield": round(float(self._div_yield[k]) * 100, 2),
                    "shares_outstanding": x.shares_outstanding,
                    "market_cap": float(round(price * x.shares_outstanding)),
                }
            )
        return rows

    def _securities(self, i: int) -> list[dict]:
        rows = []
        for x in self.universe:
            if x.listed_day > i:
                continue
            delisted = x.delisted_day is not None and x.delisted_day <= i
            rows.append(
                {
                    "symbol": x.symbol,
                    "name": x.name,
                    "board": x.board,
                    "sector": x.sector,
                    "listed_on": self.listing_date(x),
                    "delisted_on": self.days[x.delisted_day] if delisted else None,
                    "status": "DELISTED" if delisted else "ACTIVE",
                }
            )
        return rows


def _zscore(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / x.std() if x.std() > 0 else np.zeros_like(x)


def _tick(price: np.ndarray, grid: tuple = TICKS) -> np.ndarray:
    """The step of `grid` (TICKS or QUOTE_GRID) at each price."""
    limits = np.array([limit for limit, _ in grid])
    sizes = np.array([size for _, size in grid])
    return sizes[np.searchsorted(limits, price, side="right").clip(max=len(sizes) - 1)]


def _to_tick(price: np.ndarray, rounding=np.round, grid: tuple = TICKS) -> np.ndarray:  # noqa: ANN001
    """`price` on `grid` (to the nearest step, or down/up with `rounding` np.floor/np.ceil),
    rounded to cents so the float prints as the exchange would write it."""
    tick = _tick(price, grid)
    return (rounding((price / tick).round(6)) * tick).round(2)


def _value_path(rng: np.random.Generator, opening: np.ndarray, value: np.ndarray, vol: np.ndarray) -> np.ndarray:
    """The log value at each print (PRINTS_PER_DAY rows): a Brownian bridge from `opening`
    to `value` with volatility `vol` times INTRADAY_VOL, at sorted uniform times. Draws
    the times and the walk."""
    n, p = len(value), PRINTS_PER_DAY
    times = np.sort(rng.random((p, n)), axis=0)
    walk = np.cumsum(np.sqrt(np.diff(times, axis=0, prepend=0.0)) * rng.normal(0, 1, (p, n)), axis=0)
    walk_end = walk[-1] + np.sqrt(1 - times[-1]) * rng.normal(0, 1, n)
    return opening + times * (value - opening) + INTRADAY_VOL * vol * (walk - times * walk_end)


def _draw_print_parts(rng: np.random.Generator, prints: np.ndarray, vol: np.ndarray) -> _PrintDraws:
    """Draws the prints' side changes (a first print keeps the previous day's last side
    with probability SIDE_PERSISTENCE, a later one its predecessor's with
    INTRADAY_PERSISTENCE, else a fair coin), their sizes (exponential) and the odd lots
    (on ODD_LOT_SHARE of traded instrument-days, |N(0, 1)| * ODD_LOT_REACH * `vol` beyond the quotes)."""
    n, p = len(prints), PRINTS_PER_DAY
    persistence = np.where(np.arange(p) == 0, SIDE_PERSISTENCE, INTRADAY_PERSISTENCE)[:, None]
    flip = rng.random((p, n)) >= persistence
    coin = np.where(rng.random((p, n)) < 0.5, 1.0, -1.0)
    sizes = rng.exponential(1.0, (p, n))
    odd_lot = (rng.random(n) < ODD_LOT_SHARE) & (prints > 0)
    odd_side = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    odd_reach = np.abs(rng.normal(0, 1, n)) * ODD_LOT_REACH * vol
    return _PrintDraws(flip, coin, sizes, odd_lot, odd_side, odd_reach)


def _print_sides(draws: _PrintDraws, side: np.ndarray) -> np.ndarray:
    """Each print's side: the coin of the latest flip at or before it, or the standing `side`."""
    latest = np.maximum.accumulate(np.where(draws.flip, np.arange(PRINTS_PER_DAY)[:, None], -1), axis=0)
    return np.where(latest >= 0, np.take_along_axis(draws.coin, np.maximum(latest, 0), axis=0), side)


def _requote_along(level: np.ndarray, active: np.ndarray, quotes: _Quotes, fresh_half: np.ndarray) -> _QuotePath:
    """The quotes through the day's prints: they stay put while the value is inside them
    and are set afresh around it (half-width `fresh_half`) once it leaves; they move only
    when the value leaves them, so print after print (sequential)."""
    centre, half = quotes.centre, quotes.half
    centres, halves = np.empty(level.shape), np.empty(level.shape)
    for j in range(len(level)):
        requote = active[j] & (np.abs(level[j] - np.log(centre)) > half)
        centre = np.where(requote, np.exp(level[j]), centre)
        half = np.where(requote, fresh_half, half)
        centres[j], halves[j] = centre, half
    return _QuotePath(centres, halves, centre, half)


def _bar_of_prints(
    price: np.ndarray, active: np.ndarray, draws: _PrintDraws, odd_price: np.ndarray, quotes: _Quotes
) -> _Bar:
    """Open (the first print), high and low (the extreme prints, an odd lot's included)
    and the close (the volume-weighted average price on the TICKS grid), NaN on an
    instrument without an active print."""
    traded = active[0]  # at least one print
    weight = np.where(active, draws.sizes, 0.0)
    odd_weight = np.where(draws.odd_lot, ODD_LOT_SIZE, 0.0)
    turnover = (weight * price).sum(axis=0) + odd_weight * odd_price
    close = np.where(traded, _to_tick(turnover / np.maximum(weight.sum(axis=0) + odd_weight, 1e-12)), np.nan)
    high = np.where(traded, np.where(active, price, -np.inf).max(axis=0), np.nan)
    low = np.where(traded, np.where(active, price, np.inf).min(axis=0), np.nan)
    high = np.where(draws.odd_lot, np.maximum(high, odd_price), high)
    low = np.where(draws.odd_lot, np.minimum(low, odd_price), low)
    open_ = np.where(traded, price[0], np.nan)
    return _Bar(open_, high, low, close, quotes)


def _closing_quotes(
    rng: np.random.Generator, value: np.ndarray, quotes: _Quotes, trading: _Trading, halted: np.ndarray
) -> _ClosingQuotes:
    """Closing quotes: the standing ones while the value stays inside them, new ones
    around the value once it has left them (also on a day without a trade), on
    QUOTE_GRID with the ask at least a step above the bid. A halted name has none; an
    untraded one has no bid on 3% of days and no ask on 2% (one-sided quotes: the day's
    last draw)."""
    requote = np.abs(value - np.log(quotes.centre)) > quotes.half
    centre = np.where(requote, np.exp(value), quotes.centre)
    half = np.where(requote, trading.fresh_half, quotes.half)
    bid = np.maximum(_to_tick(centre * (1 - half), np.floor, QUOTE_GRID), 0.01)
    ask = np.maximum(_to_tick(centre * (1 + half), np.ceil, QUOTE_GRID), (bid + _tick(bid, QUOTE_GRID)).round(2))
    one_sided = rng.random(len(value))
    bid = np.where(halted | (~trading.traded & (one_sided < 0.03)), np.nan, bid)
    ask = np.where(halted | (~trading.traded & (one_sided > 0.98)), np.nan, ask)
    return _ClosingQuotes(centre, half, bid, ask)


def _num(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _body(instrument: Instrument, kind: str, tone: float, day: date) -> str:
    if tone > 0.2:
        mood = (
            "Revenue grew strongly and profit improved, reflecting robust demand and gains in market share. "
            "The board is confident and expects continued growth."
        )
    elif tone < -0.2:
        mood = (
            "Revenue declined and the company reported a loss, reflecting weak demand, higher costs and "
            "impairment charges. The board warned that challenges and uncertainty persist."
        )
    else:
        mood = "The company reported results in line with the prior period. No further matters were noted."
    return (
        f"{instrument.name} ({instrument.symbol}) - {kind.replace('_', ' ').title()} notice dated "
        f"{day.isoformat()}. {mood}"
    )


def price_history(market: SimulatedMarket, end: date, days: int) -> pd.DataFrame:
    """The `days` simulated trading days ending at `end` as one frame (symbol, date, close,
    volume, bid, ask, high, low), for research notebooks and backtests without a store."""
    import pandas as pd

    wanted = [d for d in market.days if d <= end][-days:]
    columns = ["symbol", "close", "volume", "bid", "ask", "high", "low"]
    rows = [{"date": d, **{c: bar[c] for c in columns}} for d in wanted for bar in market.day(d).bars]
    return pd.DataFrame(rows, columns=["date", *columns])
