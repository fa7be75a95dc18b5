"""A deterministic simulated market: the same seed gives the same market, day after day.

Each trading day draws its randomness from `default_rng([seed, stream, day_index])`, so a
day's numbers do not depend on which days were asked for before it. State (the latent
value of each company, its last traded price, halts) is carried forward day by day from
SIM_START and cached.

The microstructure is that of a thin market: an instrument trades on a given day with
its own probability (liquid banks almost daily, junior stocks about once a week), the
close stays at the last traded price on no-trade days, closing quotes are wide (under 1%
to over 10%) and sometimes one-sided, halts last a few days, dividends drop the price on
the ex-date. News and disclosures carry a tone in [-1, 1] and the market under-reacts
to them: the following days' returns drift with the recent tones (decayed with a
half-life of one trading day), a weak share of each day's move (`news_signal` scales it,
0 switches it off). That is the "true" signal the sentiment features should find.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property

import numpy as np

from market.clock import TradingCalendar, default_calendar
from ingest.simulator.universe import SIM_START, Instrument, build_universe

SIM_END = date(2028, 12, 29)
REPORT_EVERY = 63  # trading days between quarterly reports
TONE_EFFECT = 0.6  # share of a day's volatility moved by a news tone of 1 (times news_signal)
DRIFT_DECAY = 0.5  # how much of the tone-driven drift is left a trading day later
PRICE_LIMIT = 0.15  # daily price limit around the previous close

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


class SimulatedMarket:
    def __init__(
        self,
        seed: int = 7,
        size: int = 60,
        news_signal: float = 1.0,
        calendar: TradingCalendar | None = None,
    ) -> None:
        self.seed = seed
        self.size = size
        self.news_signal = news_signal
        self.calendar = calendar or default_calendar()
        self.days: list[date] = self.calendar.trading_days(SIM_START, SIM_END)
        self._index = {d: i for i, d in enumerate(self.days)}
        self.universe: list[Instrument] = build_universe(size, seed, len(self.days))
        self._computed: list[dict[str, np.ndarray]] = []
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

    def _listed(self, i: int) -> np.ndarray:
        return (self._listed_day <= i) & (self._delisted_day > i)

    def _extend_to(self, target: int) -> None:
        while len(self._computed) <= target:
            self._step(len(self._computed))

    def _step(self, i: int) -> None:
        n = self.size
        rng = np.random.default_rng([self.seed, 2, i])
        listed = self._listed(i)
        if i == 0:
            value = np.log(np.array([x.initial_price for x in self.universe]))
            last_close = np.exp(value).round(2)
            halt_left = np.zeros(n, dtype=int)
            drift = np.zeros(n)
        else:
            prev = self._computed[i - 1]
            value, last_close = prev["value"].copy(), prev["close"].copy()
            halt_left = np.maximum(prev["halt_left"] - 1, 0)
            drift = prev["drift"]
        newly_listed = listed & (self._listed_day == i) & (i > 0)
        last_close = np.where(newly_listed, np.exp(value).round(2), last_close)

        market = rng.normal(0.0002, 0.006)
        noise = rng.normal(0, 1, n)
        dividend_today = listed & (self._div_yield > 0) & ((i + self._dividend_phase) % 126 == 0) & (i > 0)
        dividend = np.where(dividend_today, (self._div_yield / 2 * last_close).round(2), 0.0)
        tone_push = self.news_signal * TONE_EFFECT * self._vol * drift
        value = value + self._beta * market + self._vol * noise + tone_push
        value = value + np.log(np.clip(1 - dividend / np.maximum(last_close, 0.01), 0.5, 1.0))

        starts_halt = listed & (halt_left == 0) & (rng.random(n) < 0.0008)
        halt_left = np.where(starts_halt, rng.integers(1, 5, n), halt_left)
        halted = listed & (halt_left > 0)

        tone, events = self._news(i, rng, listed)
        news_today = np.abs(tone) > 0
        p_trade = np.clip(self._p_trade + 0.3 * news_today, 0, 0.99)
        traded = listed & ~halted & (rng.random(n) < p_trade)
        prev_close = last_close.copy()
        fair = np.exp(value)
        # The exchange's daily price limit: a trade prints at most 15% from the previous
        # close, so a name untraded for weeks catches up with its value over several days.
        limited = np.clip(fair, last_close * (1 - PRICE_LIMIT), last_close * (1 + PRICE_LIMIT))
        close = np.where(traded, np.maximum(limited.round(2), 0.01), last_close)
        volume = np.where(
            traded,
            np.maximum(1, np.round(self._volume * rng.lognormal(0, 0.8, n) * (1 + 2 * np.abs(tone)), -1)),
            0,
        ).astype(np.int64)
        trades = np.where(traded, 1 + rng.poisson(np.minimum(volume / 3000.0, 150)), 0)
        open_ = np.where(traded, (prev_close * np.exp(rng.normal(0, self._vol / 2))).round(2), np.nan)
        high = np.where(traded, (np.maximum(open_, close) * (1 + np.abs(rng.normal(0, self._vol / 3)))).round(2), np.nan)
        low = np.where(traded, (np.minimum(open_, close) * (1 - np.abs(rng.normal(0, self._vol / 3)))).round(2), np.nan)
        half = self._spread * rng.lognormal(0, 0.3, n) / 2
        bid = np.maximum((fair * (1 - half)).round(2), 0.01)
        ask = np.maximum((fair * (1 + half)).round(2), bid + 0.01).round(2)
        one_sided = rng.random(n)
        bid = np.where(halted | (~traded & (one_sided < 0.03)), np.nan, bid)
        ask = np.where(halted | (~traded & (one_sided > 0.98)), np.nan, ask)
        self._computed.append({
            "value": value, "close": close, "prev_close": prev_close, "halt_left": halt_left,
            "halted": halted, "listed": listed, "traded": traded, "volume": volume, "trades": trades,
            "open": open_, "high": high, "low": low, "bid": bid, "ask": ask, "tone": tone,
            "dividend": dividend, "drift": DRIFT_DECAY * drift + tone,
        })
        self._events.append(events)

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
            events.append(NewsEvent(f"{self.days[i]:%Y%m%d}-{instrument.symbol}-{kind.lower()}", instrument.symbol,
                                    self.days[i], kind, value, title, body))
            tone[k] = value
        return tone, events

    # ---- views --------------------------------------------------------------------
    def _bars(self, i: int, s: dict[str, np.ndarray]) -> list[dict]:
        rows = []
        for k in np.flatnonzero(s["listed"]):
            x = self.universe[k]
            rows.append({
                "symbol": x.symbol, "name": x.name, "board": x.board, "sector": x.sector,
                "open": _num(s["open"][k]), "high": _num(s["high"][k]), "low": _num(s["low"][k]),
                "close": float(s["close"][k]), "prev_close": float(s["prev_close"][k]),
                "volume": int(s["volume"][k]), "trades": int(s["trades"][k]),
                "value_traded": round(float(s["volume"][k] * s["close"][k]), 2),
                "bid": _num(s["bid"][k]), "ask": _num(s["ask"][k]),
                "status": "HALTED" if s["halted"][k] else ("NEW LISTING" if x.listed_day == i and i > 0 else ""),
            })
        return rows

    def _notices(self, i: int, s: dict[str, np.ndarray]) -> list[dict]:
        day = self.days[i]
        notices = []
        for k in np.flatnonzero(s["dividend"] > 0):
            notices.append({"symbol": self.universe[k].symbol, "kind": "DIVIDEND", "amount": float(s["dividend"][k]),
                            "detail": f"ex-date {day.isoformat()}, payment {(day + timedelta(days=21)).isoformat()}"})
        for x in self.universe:
            if x.listed_day == i and i > 0:
                notices.append({"symbol": x.symbol, "kind": "LISTING", "amount": None, "detail": f"{x.board} board"})
            if x.delisted_day == i:
                notices.append({"symbol": x.symbol, "kind": "DELISTING", "amount": None, "detail": "last trading day was the previous session"})
        if i > 0:
            prev = self._computed[i - 1]["halted"]
            for k in np.flatnonzero(s["halted"] & ~prev):
                notices.append({"symbol": self.universe[k].symbol, "kind": "HALT", "amount": None, "detail": "trading halted pending announcement"})
            for k in np.flatnonzero(~s["halted"] & prev & s["listed"]):
                notices.append({"symbol": self.universe[k].symbol, "kind": "RESUME", "amount": None, "detail": "trading resumed"})
        return notices

    def _fundamentals(self, i: int) -> list[dict]:
        rows = []
        listed = self._computed[i]["listed"]
        for k in np.flatnonzero(listed):
            x = self.universe[k]
            since = (i + self._report_phase[k]) % REPORT_EVERY
            report = max(i - since, x.listed_day)
            price = float(self._computed[report]["close"][k])
            rows.append({
                "symbol": x.symbol, "report_date": self.days[report],
                "period_end": self.days[report] - timedelta(days=45),
                "eps": round(float(price / self._pe[k]), 3), "book_value_per_share": round(float(price / self._pb[k]), 2),
                "dividend_yield": round(float(self._div_yield[k]) * 100, 2),
                "shares_outstanding": x.shares_outstanding, "market_cap": float(round(price * x.shares_outstanding)),
            })
        return rows

    def _securities(self, i: int) -> list[dict]:
        rows = []
        for x in self.universe:
            if x.listed_day > i:
                continue
            delisted = x.delisted_day is not None and x.delisted_day <= i
            rows.append({
                "symbol": x.symbol, "name": x.name, "board": x.board, "sector": x.sector,
                "listed_on": self.listing_date(x),
                "delisted_on": self.days[x.delisted_day] if delisted else None,
                "status": "DELISTED" if delisted else "ACTIVE",
            })
        return rows


def _num(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _body(instrument: Instrument, kind: str, tone: float, day: date) -> str:
    if tone > 0.2:
        mood = ("Revenue grew strongly and profit improved, reflecting robust demand and gains in market share. "
                "The board is confident and expects continued growth.")
    elif tone < -0.2:
        mood = ("Revenue declined and the company reported a loss, reflecting weak demand, higher costs and "
                "impairment charges. The board warned that challenges and uncertainty persist.")
    else:
        mood = "The company reported results in line with the prior period. No further matters were noted."
    return (f"{instrument.name} ({instrument.symbol}) - {kind.replace('_', ' ').title()} notice dated "
            f"{day.isoformat()}. {mood}")


def price_history(market: SimulatedMarket, end: date, days: int) -> "pd.DataFrame":
    """The `days` simulated trading days ending at `end` as one frame (symbol, date, close,
    volume, bid, ask, high, low), for research notebooks and backtests without a store."""
    import pandas as pd

    wanted = [d for d in market.days if d <= end][-days:]
    columns = ["symbol", "close", "volume", "bid", "ask", "high", "low"]
    rows = [{"date": d, **{c: bar[c] for c in columns}} for d in wanted for bar in market.day(d).bars]
    return pd.DataFrame(rows, columns=["date", *columns])
