"""The spread and the per-instrument liquidity gates, defined once, as scalar and
vectorised twins side by side, and the estimator that stands in for quotes.

**The spread rule.** Spread = (ask - bid) / mid from the closing quotes, when both sides
are quoted (bid > 0, ask >= bid): quotes always win. Where a source has no usable quotes
(one side missing, crossed quotes, or the NSE files, which carry none) the spread is the
name's latest two-sided quote of its last QUOTE_CARRY (5) stored sessions (`recent_quotes`:
an observation beats an inference; on the demo's one-sided days the bars read a median
1.6% where the name's quotes of the days before read 5.1%), else the estimate from the
name's own recent bars (`estimate_spreads`, below, which applies both) wherever the caller
supplies it: a `spread_estimate` column (with its `spread_estimate_source`) in a frame,
or the `estimate` argument of `spread_fraction`. A caller without history (one stored day
and nothing before it) falls back to the day's range (high - low) / close, a wider,
conservative proxy (mostly the day's volatility: a median 2.55% for liquid NSE names
where the quoted spread is nearer 1.5%), on a traded day only: a day without trades
(volume 0 where the volume is known) repeats the last close as its high and low (the NSE
files, many exchange pages), a range of 0 that says nothing about the spread. With none
of these, the spread is unknown (NaN / None). Every spread carries its source: `quotes`, the estimator's label
(`recent_quotes`, `abdi_ranaldo`, `corwin_schultz`, `range_window`, `tick`), `range` (the day's range) or
`none`. Where the spread is compared with a threshold it is rounded to 6 decimals first
(0.01 basis point), so a quoted 5.00% is exactly at the threshold, not a float's width
above it.

**The estimator** (`estimate_spreads`, point in time: each day's figure reads only bars
dated on or before it). Per name, over its traded sessions only (volume > 0 where a
volume column exists, and close, high and low known with high >= low > 0: a day without
trades repeats the last close as high = low = close, which says nothing about the spread
and would pull the estimate toward zero), paired with the traded session before:

- Abdi-Ranaldo (2017): s2_t = 4 (c_{t-1} - eta_{t-1}) (c_{t-1} - eta_t), c the log close
  and eta the mean of the log high and log low; AR = sqrt(max(mean of s2 over the window,
  0)). The close sits at the bid or the ask around the mid-range, so the product measures
  the bid-ask bounce; the day's volatility cancels out in expectation.
- Corwin-Schultz (2012), the two-day high-low estimator with the overnight adjustment
  (as in the `bidask` package): mean of the two-day estimates over the window, floored at
  0. It reads mostly volatility (it ranks names as the range does), so it is not the
  primary estimate; it is the range-based fallback and is reported beside AR.
- The tick floor: one price step over the close (`tick_size`, the market's schedule
  TICKS: 0.01 below 10, 0.05 from 10, 0.25 from 100, 1 from 1,000, the finest steps the
  NSE files' prices take in each band, which the simulator's closes also use). No spread
  is narrower than one tick.

The rule, on each traded session with at least MIN_PAIRS (20) pairs in the window of
WINDOW (60) pairs: the AR estimate where it is at least the floor (`abdi_ranaldo`); else
(AR below one tick, its zero readings included: positive autocorrelation, price limits)
the larger of CS and the floor (`corwin_schultz` or `tick`). With fewer pairs (a new
listing, a name that rarely trades), the mean of the day's range (high - low) / close
over the traded sessions in the window, at least the floor (`range_window` or `tick`):
conservative until the history is there. A day without trades carries the last traded
session's estimate and source; before a name's first traded session the estimate is NaN
(`none`). WINDOW = 60 traded sessions (about three months): AR's daily terms are noisy
and a 20-session window reads zero or jumps far more often (on the NSE files the 60-day
median is close to the 20-day one, see docs/portfolio.md, "The one cost model").

Measured on the NSE files per liquidity tier (AR 20 and 60, CS, range, and the
simulator's figures beside them): `python benchmarks/stylised_facts.py`; the table is in
docs/portfolio.md.

The per-instrument entry gates (the liquidity rail's first three; the fourth, position
size, needs a quantity and lives with the rail in portfolio/rails.py):
- ADV_20 >= 5,000 shares;
- volume today > 0;
- spread known and <= 5%.

Readers: the feature registry (`models/features.spread_pct`, unrounded), the tercile
gating in `models/decisions.py`, the cost model (`market/costs.py`), the rail's scalar
checks (`portfolio/rails.py`), the instrument liquidity view (`views/instrument.py`) and
the T0 day table (`pipeline/t0.py`, in percent). `tests/market/test_liquidity.py` checks
both twins on one table; `tests/market/test_spread_estimator.py` the estimator.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

MIN_ADV = 5_000
MAX_ENTRY_SPREAD = 0.05
SPREAD_DECIMALS = 6
WINDOW = 60  # traded sessions (pairs of consecutive traded sessions) the estimator averages over
MIN_PAIRS = 20  # pairs needed before AR / CS are read; fewer: the window's mean range
# Price steps as (price below which the step applies, step): the NSE's, read from its
# files (every close and low from 10 to 100 is a multiple of 0.05, from 100 to 1,000 of
# 0.25), and the simulator's closes (ingest/simulator/market.py uses the same grid).
TICKS = ((10.0, 0.01), (100.0, 0.05), (1000.0, 0.25), (math.inf, 1.0))
QUOTE_CARRY = 5  # stored sessions a name's last two-sided quote stands in for days without one
RECENT_QUOTES = "recent_quotes"
ESTIMATE = "spread_estimate"
ESTIMATE_SOURCE = "spread_estimate_source"
# The columns `passes_entry_gates` reads of a row (with `spreads_with_source`'s quote inputs).
GATE_INPUTS = ("close", "volume", "adv_20", "bid", "ask", "high", "low", ESTIMATE, ESTIMATE_SOURCE)


def known(value: float | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def spread_fraction(
    bid: float | None,
    ask: float | None,
    high: float | None,
    low: float | None,
    close: float | None,
    estimate: tuple[float | None, str] | None = None,
    volume: float | None = None,
) -> tuple[float | None, str]:
    """(spread as a fraction rounded to 6 decimals, where it came from): the quotes
    ('quotes'); else `estimate` where the caller has one (`estimate_spreads` on the name's
    history, with its label); else the day's range ('range') unless `volume` says nothing
    traded; else (None, 'none')."""
    if known(bid) and known(ask) and bid > 0 and ask >= bid:
        return round((ask - bid) / ((ask + bid) / 2), SPREAD_DECIMALS), "quotes"
    value, label = estimate if estimate is not None else (None, "estimate")
    if known(value) and value >= 0:
        return round(float(value), SPREAD_DECIMALS), label
    traded = not known(volume) or volume > 0
    if traded and known(high) and known(low) and known(close) and close > 0 and high >= low:
        return round((high - low) / close, SPREAD_DECIMALS), "range"
    return None, "none"


def quoted_spreads(prices: pd.DataFrame) -> pd.Series:
    """(ask - bid) / mid on each row with both sides quoted (bid > 0, ask >= bid), else
    NaN (one side missing, crossed); all NaN without bid and ask columns. Not rounded."""
    if "bid" not in prices or "ask" not in prices:
        return pd.Series(np.nan, index=prices.index)
    bid = pd.to_numeric(prices["bid"], errors="coerce").astype(float)
    ask = pd.to_numeric(prices["ask"], errors="coerce").astype(float)
    return ((ask - bid) / ((ask + bid) / 2)).where((bid > 0) & (ask >= bid))


def spreads_with_source(frame: pd.DataFrame) -> pd.DataFrame:
    """`spread_fraction` over a frame with bid, ask, high, low and close columns (and,
    optionally, `volume`, and `spread_estimate` with `spread_estimate_source`), not
    rounded: columns `spread` (NaN where nothing is known) and `spread_source`, on the
    frame's index."""
    nan = pd.Series(np.nan, index=frame.index)
    quoted = quoted_spreads(frame)
    volume = pd.to_numeric(frame["volume"], errors="coerce") if "volume" in frame else nan
    traded = volume.isna() | (volume > 0)  # an unknown volume is no day without trades
    proxy = ((frame["high"] - frame["low"]) / frame["close"]).where(
        (frame["high"] >= frame["low"]) & (frame["close"] > 0) & traded
    )
    estimate = frame.get(ESTIMATE, nan)
    estimate = estimate.where(estimate >= 0)
    labels = frame[ESTIMATE_SOURCE] if ESTIMATE_SOURCE in frame else frame.get("spread_source")
    if labels is None:
        labels = pd.Series("estimate", index=frame.index)
    spread = quoted.where(quoted.notna(), estimate.where(estimate.notna(), proxy))
    source = np.select(
        [quoted.notna().to_numpy(), estimate.notna().to_numpy(), proxy.notna().to_numpy()],
        [np.full(len(frame), "quotes", dtype=object), labels.astype(object).to_numpy(), "range"],
        default="none",
    )
    return pd.DataFrame({"spread": spread.astype(float), "spread_source": source}, index=frame.index)


def spread_series(frame: pd.DataFrame) -> pd.Series:
    """The spread column of `spreads_with_source`: quotes, else the frame's
    `spread_estimate` where it has one, else the day's range; NaN where none is known. Not
    rounded (the model feature keeps full precision)."""
    return spreads_with_source(frame)["spread"]


def effective_spread(frame: pd.DataFrame) -> pd.Series:
    """The spread as the gates compare it: `spread_series` rounded to 6 decimals."""
    return spread_series(frame).round(SPREAD_DECIMALS)


def tick_size(price: np.ndarray | pd.Series | float, ticks: tuple = TICKS) -> np.ndarray:
    """The price step of `ticks` at each price."""
    price = np.asarray(price, dtype=float)
    bounds = np.array([b for b, _ in ticks])
    steps = np.array([s for _, s in ticks])
    return steps[np.minimum(np.searchsorted(bounds, price, side="right"), len(steps) - 1)]


def _rolling_mean(values: np.ndarray, group_start: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and count of the non-NaN `values` over the last `window` rows of each row's
    group (rows sorted by group, then date; `group_start` the position of each row's
    group's first row)."""
    n = len(values)
    ok = ~np.isnan(values)
    sums = np.concatenate([[0.0], np.cumsum(np.where(ok, values, 0.0))])
    counts = np.concatenate([[0], np.cumsum(ok)])
    end = np.arange(n) + 1
    begin = np.maximum(end - window, group_start)
    total, count = sums[end] - sums[begin], counts[end] - counts[begin]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan), count


def _traded_sessions(prices: pd.DataFrame) -> pd.DataFrame:
    """The rows the estimator reads, sorted by symbol and date, with the previous traded
    session's close, high and low beside each (NaN on a name's first)."""
    close, high, low = (prices[c].astype(float) for c in ("close", "high", "low"))
    traded = (close > 0) & (low > 0) & (high >= low)
    if "volume" in prices:
        traded &= prices["volume"].astype(float) > 0
    t = pd.DataFrame({"symbol": prices["symbol"], "date": prices["date"], "close": close, "high": high, "low": low})[
        traded.to_numpy()
    ]
    t = t.sort_values(["symbol", "date"], kind="stable")
    first = (t["symbol"] != t["symbol"].shift()).to_numpy()
    for column in ("close", "high", "low"):
        t["prev_" + column] = t[column].shift().where(~first)
    t["group_start"] = np.maximum.accumulate(np.where(first, np.arange(len(t)), 0))
    return t


def _ar_terms(t: pd.DataFrame) -> np.ndarray:
    """Abdi-Ranaldo's daily terms 4 (c_{t-1} - eta_{t-1}) (c_{t-1} - eta_t)."""
    c1 = np.log(t["prev_close"].to_numpy())
    eta1 = (np.log(t["prev_high"].to_numpy()) + np.log(t["prev_low"].to_numpy())) / 2
    eta = (np.log(t["high"].to_numpy()) + np.log(t["low"].to_numpy())) / 2
    return 4 * (c1 - eta1) * (c1 - eta)


def _cs_terms(t: pd.DataFrame) -> np.ndarray:
    """Corwin-Schultz's two-day estimates, the second day's high and low moved by the
    overnight gap (the previous close outside the day's range), as the `bidask` package."""
    h, lo, c1 = t["high"].to_numpy(), t["low"].to_numpy(), t["prev_close"].to_numpy()
    h1, l1 = t["prev_high"].to_numpy(), t["prev_low"].to_numpy()
    gap = np.maximum(0.0, c1 - h) + np.minimum(0.0, c1 - lo)
    beta = np.log(h / lo) ** 2 + np.log(h1 / l1) ** 2
    gamma = np.log(np.maximum(h + gap, h1) / np.minimum(lo + gap, l1)) ** 2
    k = 3 - 2 * math.sqrt(2)
    alpha = (math.sqrt(2) - 1) * np.sqrt(beta) / k - np.sqrt(gamma / k)
    return 2 * (np.exp(alpha) - 1) / (1 + np.exp(alpha))


def _on_frame(prices: pd.DataFrame, t: pd.DataFrame, columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """Columns computed on the traded sessions `t`, on every row of `prices`: a day without
    trades carries its name's last traded session's values (NaN before the first)."""
    out = pd.DataFrame({"symbol": prices["symbol"], "date": prices["date"]})
    for name, values in columns.items():
        out[name] = pd.Series(values, index=t.index)
    untraded = ~out.index.isin(t.index)
    if untraded.any() and len(t):
        order = out.sort_values(["symbol", "date"], kind="stable")
        # a traded session sorts before an untraded row of the same name and date
        order = order.assign(_traded=~untraded[out.index.get_indexer(order.index)])
        order = order.sort_values(["symbol", "date", "_traded"], ascending=[True, True, False], kind="stable")
        filled = order.groupby("symbol", sort=False)[list(columns)].ffill()
        out.loc[filled.index, list(columns)] = filled
    return out[list(columns)]


def corwin_schultz(prices: pd.DataFrame, window: int = WINDOW) -> pd.Series:
    """Corwin-Schultz (2012) over the last `window` pairs of traded sessions, point in
    time, on `prices`' index (NaN with fewer than MIN_PAIRS pairs or before any trade):
    the benchmark beside AR (docs/portfolio.md) and the rule's range-based fallback."""
    t = _traded_sessions(prices)
    cs, count = _rolling_mean(_cs_terms(t), t["group_start"].to_numpy(), window)
    cs = np.where(count >= min(MIN_PAIRS, window), np.maximum(cs, 0.0), np.nan)
    return _on_frame(prices, t, {"cs": cs})["cs"].astype(float)


def abdi_ranaldo(prices: pd.DataFrame, window: int = WINDOW) -> pd.Series:
    """Abdi-Ranaldo (2017) over the last `window` pairs of traded sessions, point in time,
    sqrt(max(mean, 0)), unfloored (NaN with fewer than MIN_PAIRS pairs)."""
    t = _traded_sessions(prices)
    ar, count = _rolling_mean(_ar_terms(t), t["group_start"].to_numpy(), window)
    ar = np.where(count >= min(MIN_PAIRS, window), np.sqrt(np.maximum(ar, 0.0)), np.nan)
    return _on_frame(prices, t, {"ar": ar})["ar"].astype(float)


def recent_quotes(prices: pd.DataFrame, carry: int = QUOTE_CARRY) -> pd.Series:
    """On each row of `prices` without its own two-sided quote, its name's latest
    two-sided quoted spread among its last `carry` stored rows, this one included; NaN
    elsewhere (a row with its own quote: that quote wins where the spread is read, and
    the estimate beside it stays the bars'), on `prices`' index. Point in time: only rows
    dated on or before each row are read."""
    quoted = quoted_spreads(prices)
    if quoted.isna().all():
        return quoted
    order = pd.DataFrame({"symbol": prices["symbol"], "date": prices["date"], "q": quoted})
    order = order.sort_values(["symbol", "date"], kind="stable")
    carried = order.groupby("symbol", sort=False)["q"].ffill(limit=carry - 1) if carry > 1 else order["q"]
    return carried.reindex(prices.index).astype(float).where(quoted.isna())


def _quotes_first(out: pd.DataFrame, recent: pd.Series) -> pd.DataFrame:
    """`out` (spread_estimate, spread_source) with the recent quote in place of the bars'
    estimate wherever there is one (`recent_quotes`)."""
    use = recent.notna()
    if use.any():
        out.loc[use, "spread_estimate"] = recent[use]
        out.loc[use, "spread_source"] = RECENT_QUOTES
    return out


def estimate_spreads(prices: pd.DataFrame, window: int = WINDOW, ticks: tuple = TICKS) -> pd.DataFrame:
    """The spread each name's own bars say it had, for every row of `prices` (columns
    symbol, date, close, high, low; volume, bid and ask optional, any row order): a frame on
    the same index with `spread_estimate` (a fraction) and `spread_source`.

    Point in time: a row's figure reads only its name's bars dated on or before it. The
    rule (module docstring): on a row without its own two-sided quote, the name's latest
    two-sided quote among its last QUOTE_CARRY stored rows where it has one
    (`recent_quotes`, source `recent_quotes`); else, over the last `window` pairs of
    consecutive traded sessions, with at least MIN_PAIRS of them, Abdi-Ranaldo where it
    is at least one tick over the close (`abdi_ranaldo`), else max(Corwin-Schultz, tick / close) (`corwin_schultz` or
    `tick`); with fewer pairs, max(mean of (high - low) / close over the traded sessions in
    the window, tick / close) (`range_window` or `tick`). Days without trades (volume 0, or
    no usable high/low) are not read; they carry the name's last traded estimate; before
    its first traded session: NaN and `none`. The day's own two-sided quote still wins in
    `spread_series` / `spread_fraction` (labelled `quotes` there)."""
    t = _traded_sessions(prices)
    estimate, source = _estimated(t, window, ticks)
    out = _on_frame(prices, t, {"spread_estimate": estimate, "spread_source": source})
    out["spread_estimate"] = out["spread_estimate"].astype(float)
    out["spread_source"] = out["spread_source"].where(out["spread_source"].notna(), "none").astype(object)
    return _quotes_first(out, recent_quotes(prices)).astype({"spread_source": str})


def latest_estimates(prices: pd.DataFrame, window: int = WINDOW, ticks: tuple = TICKS) -> dict[str, tuple[float, str]]:
    """symbol -> (spread estimate, its source) on each name's latest row of `prices`: what
    `estimate_spreads` gives there (a recent two-sided quote first; else the bars' estimate,
    which a day without trades carries from the last traded session); a name with neither
    a recent quote nor a traded session is absent."""
    t = _traded_sessions(prices)
    found: dict[str, tuple[float, str]] = {}
    if not t.empty:
        estimate, source = _estimated(t, window, ticks)
        last = np.flatnonzero(np.r_[t["symbol"].to_numpy()[1:] != t["symbol"].to_numpy()[:-1], True])
        symbols = t["symbol"].to_numpy()[last]
        found = {s: (float(e), str(src)) for s, e, src in zip(symbols, estimate[last], source[last], strict=True)}
    return found | _latest_recent_quotes(prices)


def _latest_recent_quotes(prices: pd.DataFrame) -> dict[str, tuple[float, str]]:
    """symbol -> (recent quoted spread, `recent_quotes`) on each name's latest row of
    `prices` where `recent_quotes` has one."""
    recent = recent_quotes(prices)
    if recent.isna().all():
        return {}
    latest = pd.DataFrame({"symbol": prices["symbol"], "date": prices["date"], "q": recent})
    latest = latest.sort_values(["symbol", "date"], kind="stable").groupby("symbol", sort=False).tail(1)
    latest = latest[latest["q"].notna()]
    return {str(s): (float(q), RECENT_QUOTES) for s, q in zip(latest["symbol"], latest["q"], strict=True)}


def _estimated(t: pd.DataFrame, window: int, ticks: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The estimate and its source on each of the traded sessions `t` (`estimate_spreads`' rule)."""
    start = t["group_start"].to_numpy()
    ar, count = _rolling_mean(_ar_terms(t), start, window)
    cs, _ = _rolling_mean(_cs_terms(t), start, window)
    day_range = ((t["high"] - t["low"]) / t["close"]).to_numpy()
    mean_range, _ = _rolling_mean(day_range, start, window)
    close = t["close"].to_numpy()
    floor = tick_size(close, ticks) / close
    ready = count >= min(MIN_PAIRS, window)
    ar = np.sqrt(np.maximum(ar, 0.0))
    cs = np.maximum(np.nan_to_num(cs, nan=0.0), 0.0)
    use_ar = ready & (ar >= floor)
    use_cs = ready & ~use_ar & (cs > floor)
    use_range = ~ready & (mean_range > floor)
    estimate = np.select([use_ar, use_cs, use_range], [ar, cs, mean_range], default=floor)
    source = np.select(
        [use_ar, use_cs, use_range], ["abdi_ranaldo", "corwin_schultz", "range_window"], default="tick"
    ).astype(object)
    return estimate, source


def with_spread_estimates(prices: pd.DataFrame, window: int = WINDOW, ticks: tuple = TICKS) -> pd.DataFrame:
    """`prices` with the estimate beside each row as `spread_series` reads it
    (`spread_estimate`, `spread_estimate_source`)."""
    estimated = estimate_spreads(prices, window, ticks)
    return prices.assign(**{ESTIMATE: estimated["spread_estimate"], ESTIMATE_SOURCE: estimated["spread_source"]})


def entry_gates(adv_20: float | None, volume: float | None, spread: float | None) -> dict[str, bool]:
    """The three per-instrument entry gates for one instrument-day, by name."""
    return {
        "adv_20": known(adv_20) and adv_20 >= MIN_ADV,
        "volume_today": known(volume) and volume > 0,
        "spread": known(spread) and spread <= MAX_ENTRY_SPREAD,
    }


def passes_entry_gates(frame: pd.DataFrame, spread: pd.Series | None = None) -> pd.Series:
    """`entry_gates` over a frame with adv_20, volume and the spread inputs: True where all
    three pass; `spread`: the frame's `spread_series` where the caller has it already."""
    spread = effective_spread(frame) if spread is None else spread.round(SPREAD_DECIMALS)
    return (frame["adv_20"] >= MIN_ADV) & (frame["volume"] > 0) & spread.notna() & (spread <= MAX_ENTRY_SPREAD)
