"""Screen candidate inputs and settings of the walk-forward on an early span only.

Each variant is the registry's 14 inputs (models/features.py) with some slots swapped for
candidate columns, and/or WalkForwardConfig fields or LightGBM parameters changed; each
runs the project's walk-forward (models/walkforward.py, rolling calibration included) on
the same rows, and prints binary accuracy (calibrated P(up) > 0.5, and the raw score > 0
beside it), 3-class accuracy, movers, MAE beside zero, the ICs, per year, and the gain
share of each input. This is the tool for choosing; benchmarks/model_quality.py is the
tool for confirming, on a span the choice never saw (docs/model.md says which is which).

    python benchmarks/feature_screen.py                      # the third round's variants, NSE 2008-2011
    python benchmarks/feature_screen.py --round four --jobs 2  # the fourth round's
    python benchmarks/feature_screen.py --round nine --jobs 2  # a learned layer 1 (docs/model-appendix-rounds.md)
    python benchmarks/feature_screen.py --jobs 16 --variant 'mine momentum_20=r60 cfg:full_rounds=200'
    python benchmarks/feature_screen.py --round ten --jobs 2   # the product's label, H = 10 (tenth round)
    python benchmarks/feature_screen.py --label excess --horizon 5 --jobs 2 --variant core14-v4

`--label excess --horizon H` (the default from round ten on; H defaults to
models.decisions.HORIZON) screens for the product's label: the panel is
`build_panel(prices, horizon=H, label="excess")`, the walk-forward purges on its label_end
(`WalkForwardConfig(horizon=H + 1)`) and its booster learns the daily rank (target "rank"),
and each variant prints the rank IC of the raw score (mean daily Spearman with the label)
on all rows and on the liquid ones (entry gates pass, ordinary shares), overall and per
year, beside the figures below. Rounds three to nine keep the next-day label they chose on
(`--label next_day`, H = 1, target "sign"). Rounds' variants are written against the
registry they were screened on (core14-v3, `on_core14_v3`); `--variant` against today's.

A variant is `NAME SLOT=CANDIDATE ... +CANDIDATE ... cfg:FIELD=JSON ... p:PARAM=JSON`; swaps
apply to the registry's list at once (so two swaps can exchange inputs); `+CANDIDATE` adds
an input after the registry's 14. Candidates (CANDIDATES) are
computed per instrument from data dated on or before the row's day, or across instruments
from the same day only. Variants run in parallel processes (`--jobs`, one core each).
The last line is one JSON object with every variant's figures.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # one core per variant: BLAS threads would fight over them

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from datetime import date  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_quality import SHARED_DATA, daily_ic, three_class  # noqa: E402

# Round three (docs/model-appendix-rounds.md): where the market's move of the day goes, and what else the
# reference has that the registry has not.
DEFAULT_VARIANTS = [
    "core14-v3",
    "core14-v2 market_breadth=bollinger_bandwidth",
    "return-instead market_breadth=market_return",
    "breadth-for-momentum20 market_breadth=bollinger_bandwidth momentum_20=market_breadth",
    "breadth-for-rsi market_breadth=bollinger_bandwidth rsi_14=market_breadth",
    "breadth-for-pctb market_breadth=bollinger_bandwidth bollinger_pct_b=market_breadth",
    "plus-breadth-lag momentum_20=market_breadth_lag1",
    "r60-for-momentum20 momentum_20=r60",
    "r3-for-momentum5 momentum_5=r3",
    "r2-for-rsi rsi_14=r2",
    "r10-for-pctb bollinger_pct_b=r10",
    "logadv-for-zero-volume zero_volume_share_20=log_adv20",
    "refit-every-60 cfg:full_refit_every=60",
    "calibration-250-days cfg:calibration_days=250",
    "reference-capacity p:num_leaves=31 p:learning_rate=0.03 cfg:full_rounds=300",
    "leaves-7 p:num_leaves=7",
]


# Round four (docs/model-appendix-rounds.md): on price files the two sentiment slots are constant 0, so
# filling them is adding inputs: the reference's, and more of the market's move (the most
# liquid names', the last five days', the move a stale price has not followed yet).
ROUND_FOUR = [
    "core14-v3",
    "plus-r60-log-adv sentiment=r60 market_sentiment=log_adv20",
    "plus-r3-r10 sentiment=r3 market_sentiment=r10",
    "plus-liquid-return sentiment=liquid_return",
    "plus-liquid-breadth sentiment=liquid_breadth",
    "plus-market-return-5d sentiment=market_return_5d",
    "plus-stale-gap sentiment=stale_gap market_sentiment=days_since_change",
    "plus-last-move sentiment=last_move",
    "plus-breadth-lag sentiment=market_breadth_lag1",
    "refit-every-60 cfg:full_refit_every=60",
    "rounds-300 cfg:full_rounds=300",
    "rounds-100 cfg:full_rounds=100",
]

# Round five (docs/model-appendix-rounds.md): what the day's bar says beyond close_location and the range
# (where yesterday's close sits in today's range, the gap to the day's low and high, the
# price level that sets how large one tick is, yesterday's close location, a five-day
# stochastic, the last bar with trades for a day without), the move against its own
# volatility and against the market's, the weekday, and the move of the instrument's
# peers (a sector found in the returns, since the files name none); added in the empty
# sentiment slots.
ROUND_FIVE = [
    "core14-v3",
    "plus-log-close sentiment=log_close",
    "plus-previous-in-range sentiment=previous_in_range",
    "plus-gaps sentiment=gap_low market_sentiment=gap_high",
    "plus-location-lag sentiment=close_location_lag1",
    "plus-stochastic-5 sentiment=stochastic_5",
    "plus-z-return sentiment=z_return",
    "plus-idiosyncratic sentiment=idiosyncratic_return",
    "plus-weekday sentiment=weekday",
    "plus-up-share sentiment=up_share_20",
    "plus-peers-3 sentiment=peer_return_3 market_sentiment=peer_breadth_3",
    "plus-peers-5 sentiment=peer_return_5 market_sentiment=peer_breadth_5",
    "plus-peers-10 sentiment=peer_return_10 market_sentiment=peer_breadth_10",
    "plus-last-bar sentiment=last_bar_location market_sentiment=last_bar_range",
    "plus-last-location-days sentiment=last_bar_location market_sentiment=days_since_trade",
]
# Round six (docs/model-appendix-rounds.md): the earlier rounds' candidates one at a time were flat, each
# within one year's standard error; here the best of them go in together (the gaps, the
# liquid names' return, refit every 60 days). `+NAME` adds an input beyond the registry's
# 14 (the walk-forward takes any list), so the reference's inputs the registry lacks can
# all go in at once beside the market's move; the last three stay within the 14.
REFERENCE_EXTRAS = "+r2 +r3 +r10 +r60 +bollinger_bandwidth +log_adv20"
ROUND_SIX = [
    "core14-v3",
    "gaps-refit-60 sentiment=gap_low market_sentiment=gap_high cfg:full_refit_every=60",
    "gaps-liquid sentiment=gap_low market_sentiment=gap_high +liquid_return",
    "gaps-liquid-r60-adv sentiment=gap_low market_sentiment=gap_high +liquid_return +r60 +log_adv20",
    f"reference-superset {REFERENCE_EXTRAS}",
    f"superset-gaps-liquid sentiment=gap_low market_sentiment=gap_high +liquid_return {REFERENCE_EXTRAS}",
    f"superset-gaps-liquid-refit-60 sentiment=gap_low market_sentiment=gap_high +liquid_return {REFERENCE_EXTRAS} "
    "cfg:full_refit_every=60",
    f"superset-reference-capacity {REFERENCE_EXTRAS} p:num_leaves=31 p:learning_rate=0.03 cfg:full_rounds=300",
    # within the registry's 14 (the sentiment slots keep the news): the weakest inputs give way
    "liquid-for-zero-volume zero_volume_share_20=liquid_return",
    "liquid-gap-high-for-zv-m20 zero_volume_share_20=liquid_return momentum_20=gap_high",
    "liquid-gaps-for-zv-m20-vol zero_volume_share_20=liquid_return momentum_20=gap_low volatility_20=gap_high",
]
# Round seven (docs/model-appendix-rounds.md): the market indices the exchange's files carry beside the
# equities (NASI and the NSE 20 from the closes; FTSE NSE Kenya 15, from 2012, with an
# intraday range from 2014), in the sentiment slots. The FTSE index's return adds to a
# forecast of the next day's breadth what breadth does not say, so it is screened where
# it exists: 2014-03 to 2016 (`--from 2014-03-01 --to 2016-12-31`), leaving 2017-2021
# unseen.
ROUND_SEVEN = [
    "core14-v3",
    "plus-fnk15-return sentiment=index_return_FNK15",
    "plus-fnk15-return-location sentiment=index_return_FNK15 market_sentiment=index_location_FNK15",
    "plus-nasi-return sentiment=index_return_NASI",
]
# Round nine (docs/model-appendix-rounds.md): can layer 1 carry what the 14 inputs leave out? Layer 1 as a
# learned, pooled model of the instrument's own window (`learned_p_up_own`: every
# own-instrument candidate) or of its window and the market's (`learned_p_up_all`: every
# candidate), trained like the plain reference (`learned_layer1`), in layer 1's slot, so the
# risk model keeps its 14 inputs; beside them, every candidate as an input (the eighth look's
# kitchen sink) at the walk-forward's capacity and under the reference's recipe.
OWN_CANDIDATES = [
    "r2",
    "r3",
    "r10",
    "r60",
    "bollinger_bandwidth",
    "days_since_change",
    "last_move",
    "log_close",
    "z_return",
    "up_share_20",
    "log_adv20",
    "previous_in_range",
    "close_location_lag1",
    "stochastic_5",
    "last_bar_location",
    "last_bar_range",
    "days_since_trade",
    "weekday",
    "gap_low",
    "gap_high",
]
CROSS_CANDIDATES = [
    "market_return",
    "market_breadth_lag1",
    "market_return_5d",
    "liquid_return",
    "liquid_breadth",
    "stale_gap",
    "idiosyncratic_return",
    "peer_return_5",
    "peer_breadth_5",
]
SINK = " ".join(f"+{c}" for c in OWN_CANDIDATES + CROSS_CANDIDATES if c not in ("gap_low", "gap_high"))
PLAIN_RECIPE = "p:learning_rate=0.03 p:num_leaves=31 p:lambda_l2=0 p:max_bin=255 cfg:full_rounds=300"
ROUND_NINE = [
    "core14-v3",
    "learned-layer1-own layer1_p_up=learned_p_up_own",
    "learned-layer1-all layer1_p_up=learned_p_up_all",
    f"kitchen-sink sentiment=gap_low market_sentiment=gap_high {SINK}",
    f"kitchen-sink-plain-recipe sentiment=gap_low market_sentiment=gap_high {SINK} {PLAIN_RECIPE}",
]
# Round ten (docs/model-appendix-rounds.md): the label is now what a position can earn, the
# excess return from the close of t+1 to the close of t+1+H over the liquid universe's
# (issue 55), and what counts is the rank IC of the raw score on the liquid names. The
# registry was chosen for the next day's direction, read mostly from the bounce
# (close_location, return_1d, spread_pct, volume_ratio_20); greedy, on core14-v3: first
# close_location's slot takes each candidate for weeks (longer and skipping momentum, the
# distance from the year's high, slower volatility, liquidity and size, the spread
# estimate, momentum against the market and ranked), then with the best of them in, the
# other bounce slots take the best candidates, then once more. core14-v4 came out of it.
ROUND_TEN_CANDIDATES = [
    "r60",
    "r120",
    "r250",
    "r60_skip5",
    "r250_skip20",
    "high_250_distance",
    "volatility_60",
    "log_value_adv20",
    "log_amihud_20",
    "zero_volume_share_60",
    "spread_estimate",
    "r60_rel",
    "rank_r60",
    "rsi_50",
    "pct_b_60",
]
_VOL60 = "close_location=volatility_60"
_VOL60_ADV = "close_location=volatility_60 spread_pct=log_value_adv20"  # core14-v4
ROUND_TEN = [
    "core14-v3",
    *(f"location-{c} close_location={c}" for c in ROUND_TEN_CANDIDATES),
    # step 2: close_location is volatility_60; return_1d, volume_ratio_20, spread_pct in turn
    *(f"vol60-ret-{c} {_VOL60} return_1d={c}" for c in ("log_value_adv20", "r120", "high_250_distance")),
    f"vol60-ret-zero_volume_share_60 {_VOL60} return_1d=zero_volume_share_60",
    *(f"vol60-vr-{c} {_VOL60} volume_ratio_20={c}" for c in ("log_value_adv20", "r120")),
    f"vol60-spread-log_value_adv20 {_VOL60_ADV}",
    # once more, from there; and the second swap alone
    "adv-only spread_pct=log_value_adv20",
    f"v60adv-ret-r120 {_VOL60_ADV} return_1d=r120",
    f"v60adv-vr-r120 {_VOL60_ADV} volume_ratio_20=r120",
    f"v60adv-ret-high250 {_VOL60_ADV} return_1d=high_250_distance",
    f"v60adv-vr-r250skip20 {_VOL60_ADV} volume_ratio_20=r250_skip20",
    f"v60adv-ret-spread {_VOL60_ADV} return_1d=spread_pct",
    f"v60adv-vr-zv60 {_VOL60_ADV} volume_ratio_20=zero_volume_share_60",
]
# Rounds three to ten were screened on core14-v3: core14-v4 has volatility_60 where v3 had
# close_location and log_value_adv20 where it had spread_pct. `on_core14_v3` writes a
# round's variant against today's registry (`--variant` is always against today's).
CORE14_V3_SLOTS = {"volatility_60": "close_location", "log_value_adv20": "spread_pct"}


def on_core14_v3(variant: str) -> str:
    """`variant`, written against core14-v3, as a variant of today's registry: v3's inputs
    back in their slots, then the variant's own swaps (a swap of a v3 slot names the slot
    that slot became)."""
    name, *items = variant.split()
    slot_of = {old: new for new, old in CORE14_V3_SLOTS.items()}
    rewritten = []
    for item in items:
        key, sep, value = item.partition("=")
        rewritten.append(f"{slot_of[key]}={value}" if sep and key in slot_of else item)
    return " ".join([name, *(f"{slot}={v3}" for slot, v3 in CORE14_V3_SLOTS.items()), *rewritten])


ROUNDS = {
    "three": DEFAULT_VARIANTS,
    "four": ROUND_FOUR,
    "five": ROUND_FIVE,
    "six": ROUND_SIX,
    "seven": ROUND_SEVEN,
    "nine": ROUND_NINE,
    "ten": ROUND_TEN,
}
# The label each round chose on (`--label`'s default): three to nine the next day's move,
# from ten the product's excess return over HORIZON sessions.
ROUND_LABELS = {name: "next_day" for name in ("three", "four", "five", "six", "seven", "nine")} | {"ten": "excess"}
LEARNED = {
    "learned_p_up_own": OWN_CANDIDATES,
    "learned_p_up_all": OWN_CANDIDATES + CROSS_CANDIDATES + ["market_breadth"],
}


def index_candidates(panel: pd.DataFrame, indices: pd.DataFrame) -> pd.DataFrame:
    """`index_return_NAME` and `index_location_NAME` (the close in the day's low-high, NaN
    where the index has no range) of each index in `indices` (symbol `^NAME`), by day; NaN
    on a day the index has no row."""
    for symbol, rows in indices.sort_values("date").groupby("symbol"):
        rows = rows.set_index("date")
        close, high, low = (rows[c].astype(float) for c in ("close", "high", "low"))
        name = str(symbol).lstrip("^")
        panel[f"index_return_{name}"] = panel["date"].map(close.pct_change())
        panel[f"index_location_{name}"] = panel["date"].map(((close - low) / (high - low)).where(high > low))
    return panel


def candidates(panel: pd.DataFrame) -> pd.DataFrame:
    """Candidate columns beside the registry's, each from data dated on or before the row's
    day: the bandwidth, the reference's returns and log ADV20, the equal-weighted return of
    the instruments that traded (today, summed over five days, and of the ten with the
    largest ADV20), the breadth of those ten, yesterday's breadth, the trading days since
    the close last changed, the last non-zero move, and the market's summed return since
    then (the move a stale price has not followed yet); for round five, the day's bar
    against yesterday's close (`previous_in_range`, `gap_low`, `gap_high`), the price
    level (`log_close`), yesterday's close location, a five-day stochastic, the last bar
    with trades and its range carried over days without (`last_bar_location`,
    `last_bar_range`, `days_since_trade`), the move over its 20-day volatility and less
    the market's, the weekday, the share of rising moves in 20 days, and the peers' move
    (`peer_moves`)."""
    from models.features import bollinger_bandwidth

    panel = with_registry_inputs(panel.sort_values(["symbol", "date"]).reset_index(drop=True))
    by_symbol = panel.groupby("symbol", sort=False)
    close = panel["close"].astype(float)
    for k in (2, 3, 10, 60):
        panel[f"r{k}"] = close / by_symbol["close"].shift(k) - 1
    panel["log_adv20"] = np.log1p(panel["adv_20"])
    panel["bollinger_bandwidth"] = by_symbol[["close"]].apply(bollinger_bandwidth).reset_index(level=0, drop=True)
    traded = ~(panel["volume"].astype(float) == 0)
    panel["market_return"] = panel["date"].map(panel["return_1d"].where(traded).groupby(panel["date"]).mean())
    breadth = panel.groupby("date")["market_breadth"].first()
    panel["market_breadth_lag1"] = panel["date"].map(breadth.shift(1))
    market = panel["return_1d"].where(traded).groupby(panel["date"]).mean()
    panel["market_return_5d"] = panel["date"].map(market.rolling(5, min_periods=1).sum())
    liquid = (panel["adv_20"].fillna(0).groupby(panel["date"]).rank(ascending=False, method="first") <= 10) & panel[
        "return_1d"
    ].notna()
    panel["liquid_return"] = panel["date"].map(panel["return_1d"].where(liquid).groupby(panel["date"]).mean())
    direction = np.sign(panel["return_1d"].where(traded, 0.0)).where(liquid)
    panel["liquid_breadth"] = panel["date"].map(direction.groupby(panel["date"]).mean())
    previous = by_symbol["close"].shift(1)
    changed = (close != previous) & previous.notna()
    spell = changed.astype(int).groupby(panel["symbol"]).cumsum()  # a new spell starts at each change
    panel["days_since_change"] = panel.groupby([panel["symbol"], spell]).cumcount()
    panel["last_move"] = panel["return_1d"].where(changed).groupby(panel["symbol"]).ffill()
    unfollowed = panel["date"].map(market).fillna(0.0).where(~changed, 0.0)
    panel["stale_gap"] = unfollowed.groupby([panel["symbol"], spell]).cumsum()
    high, low = panel["high"].astype(float), panel["low"].astype(float)
    day_range = high - low
    panel["log_close"] = np.log(close)
    panel["previous_in_range"] = (
        ((previous - low) / day_range).where(day_range > 0, 0.5).where(day_range.notna() & previous.notna())
    )
    panel["gap_low"] = low / previous - 1
    panel["gap_high"] = high / previous - 1
    panel["close_location_lag1"] = by_symbol["close_location"].shift(1)
    low5 = by_symbol["low"].transform(lambda s: s.astype(float).rolling(5).min())
    high5 = by_symbol["high"].transform(lambda s: s.astype(float).rolling(5).max())
    panel["stochastic_5"] = (
        ((close - low5) / (high5 - low5)).where(high5 > low5, 0.5).where(high5.notna() & low5.notna())
    )
    panel["z_return"] = (panel["return_1d"] / panel["volatility_20"]).where(panel["volatility_20"] > 0, 0.0)
    panel["idiosyncratic_return"] = panel["return_1d"] - panel["market_return"]
    panel["weekday"] = pd.to_datetime(panel["date"]).dt.day_of_week.astype(float)
    moved = np.sign(panel["return_1d"]).where(panel["return_1d"] != 0)
    ups = (moved > 0).astype(float).groupby(panel["symbol"]).transform(lambda s: s.rolling(20, min_periods=1).sum())
    moves = moved.notna().astype(float).groupby(panel["symbol"]).transform(lambda s: s.rolling(20, min_periods=1).sum())
    panel["up_share_20"] = (ups / moves).where(moves > 0, 0.5)
    has_bar = traded & (day_range > 0)
    panel["last_bar_location"] = panel["close_location"].where(has_bar).groupby(panel["symbol"]).ffill()
    panel["last_bar_range"] = (day_range / close).where(has_bar).groupby(panel["symbol"]).ffill()
    trade_spell = traded.astype(int).groupby(panel["symbol"]).cumsum()
    panel["days_since_trade"] = panel.groupby([panel["symbol"], trade_spell]).cumcount().astype(float)
    for k in (3, 5, 10):
        panel[f"peer_return_{k}"], panel[f"peer_breadth_{k}"] = peer_moves(panel, traded, k)
    return horizon_candidates(panel)


# The registry's functions (models/features.py) that a panel may lack once they leave the
# 14: the candidates above read some of them, and a variant can swap them back in.
REGISTRY_FUNCTIONS = (
    "rsi_14",
    "bollinger_pct_b",
    "bollinger_bandwidth",
    "momentum_5",
    "momentum_20",
    "close_location",
    "return_1d",
    "volatility_20",
    "volume_ratio_20",
    "zero_volume_share_20",
    "spread_pct",
    "volatility_60",
    "log_value_adv20",
)


def with_registry_inputs(panel: pd.DataFrame) -> pd.DataFrame:
    """`panel` (sorted by symbol, date) with every REGISTRY_FUNCTIONS column it lacks,
    computed per instrument by the registry's own function."""
    import models.features as registry

    for name in REGISTRY_FUNCTIONS:
        if name not in panel:
            compute = getattr(registry, name)
            panel[name] = panel.groupby("symbol", sort=False, group_keys=False)[list(panel.columns)].apply(compute)
    return panel


def _wilder_rsi(close: pd.Series, n: int) -> pd.Series:
    change = close.diff()
    gain = change.clip(lower=0).ewm(alpha=1 / n, adjust=False, min_periods=n).mean()
    loss = (-change.clip(upper=0)).ewm(alpha=1 / n, adjust=False, min_periods=n).mean()
    rsi = (100 - 100 / (1 + gain / loss)).where(loss > 0, 100.0).where(gain + loss > 0, 50.0)
    return rsi.where(change.notna().cumsum() >= n)


def horizon_candidates(panel: pd.DataFrame) -> pd.DataFrame:
    """Round ten's candidates, for a label over weeks (the excess return from t+1 to
    t+1+H), each from data dated on or before the row's day (per instrument) or from the
    same day across instruments: longer returns (`r120`, `r250`), returns that skip the
    latest days (`r60_skip5` = close[t-5] / close[t-60] - 1, `r120_skip20`,
    `r250_skip20`), the close against its highest close of 250 days (`high_250_distance`),
    each name's share of the market's 20-day traded value (`value_share_20`, the turnover
    the files allow: they hold no share counts), the
    Amihud illiquidity (`log_amihud_20`: log of the 20-day mean of |return| / traded value
    over the days with trades), the share of no-trade days in 60 (`zero_volume_share_60`),
    the momentum less the day's mean over the instruments that have one (`rN_rel`), its
    percentile rank that day (`rank_rN`), Wilder's RSI over 50 days (`rsi_50`), %B of the
    60-day, 2-standard-deviation Bollinger Bands (`pct_b_60`); the panel's Abdi-Ranaldo
    `spread_estimate` is a candidate as it is. Two of the round's candidates were chosen
    and are registry inputs now (models/features.py: `volatility_60`, `log_value_adv20`)."""
    by_symbol = panel.groupby("symbol", sort=False)
    close = panel["close"].astype(float)
    shifted = {k: by_symbol["close"].shift(k).astype(float) for k in (5, 20, 60, 120, 250)}
    panel["r120"] = close / shifted[120] - 1
    panel["r250"] = close / shifted[250] - 1
    panel["r60_skip5"] = shifted[5] / shifted[60] - 1
    panel["r120_skip20"] = shifted[20] / shifted[120] - 1
    panel["r250_skip20"] = shifted[20] / shifted[250] - 1
    panel["high_250_distance"] = close / by_symbol["close"].transform(lambda c: c.astype(float).rolling(250).max()) - 1
    log_return = np.log(close) - np.log(by_symbol["close"].shift(1).astype(float))
    value = close * panel["volume"].astype(float)
    value_adv = value.groupby(panel["symbol"]).transform(lambda v: v.rolling(20).mean())
    panel["value_share_20"] = value_adv / value_adv.groupby(panel["date"]).transform("sum")
    impact = (log_return.abs() / value).where(value > 0)
    amihud = impact.groupby(panel["symbol"]).transform(lambda a: a.rolling(20, min_periods=1).mean())
    panel["log_amihud_20"] = np.log(amihud.where(amihud > 0) * 1e6)
    no_trade = (panel["volume"].astype(float) == 0).astype(float)
    panel["zero_volume_share_60"] = no_trade.groupby(panel["symbol"]).transform(lambda z: z.rolling(60).mean())
    for k in (20, 60, 120, 250):
        column = panel["momentum_20"] if k == 20 else panel[f"r{k}"]
        by_day = column.groupby(panel["date"])
        panel[f"r{k}_rel"] = column - by_day.transform("mean")
        panel[f"rank_r{k}"] = by_day.rank(pct=True)
    panel["rsi_50"] = by_symbol["close"].transform(lambda c: _wilder_rsi(c.astype(float), 50))
    mean60 = by_symbol["close"].transform(lambda c: c.astype(float).rolling(60).mean())
    std60 = by_symbol["close"].transform(lambda c: c.astype(float).rolling(60).std(ddof=0))
    width = 4 * std60
    panel["pct_b_60"] = ((close - (mean60 - 2 * std60)) / width).where(width > 0, 0.5).where(width.notna())
    return panel


def peer_moves(panel: pd.DataFrame, traded: pd.Series, k: int, window: int = 250) -> tuple[pd.Series, pd.Series]:
    """The day's mean return and net breadth of the instrument's `k` peers: the instruments
    whose daily returns correlated most with its own over the `window` trading days before
    the month began (at least 60 days in common), chosen afresh each month from data dated
    before it; NaN where no peer traded that day."""
    returns = panel.pivot(index="date", columns="symbol", values="return_1d").sort_index()
    moved = (
        panel.assign(r=panel["return_1d"].where(traded)).pivot(index="date", columns="symbol", values="r").sort_index()
    )
    days = returns.index
    months = pd.Series(pd.to_datetime(days).to_period("M"), index=days)
    peer_return = pd.DataFrame(np.nan, index=days, columns=returns.columns)
    peer_breadth = peer_return.copy()
    for _, month_days in months.groupby(months):
        first = days.get_loc(month_days.index[0])
        history = returns.iloc[max(0, first - window) : first]
        if len(history) < 60:
            continue
        corr = history.corr(min_periods=60).to_numpy().copy()
        np.fill_diagonal(corr, np.nan)
        block = moved.loc[month_days.index].to_numpy()
        for j, symbol in enumerate(returns.columns):
            row = corr[j]
            ok = ~np.isnan(row)
            if ok.sum() < k:
                continue
            peers = np.argsort(-np.where(ok, row, -np.inf))[:k]
            values = block[:, peers]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a day no peer traded: NaN
                peer_return.loc[month_days.index, symbol] = np.nanmean(values, axis=1)
                peer_breadth.loc[month_days.index, symbol] = np.nanmean(np.sign(values), axis=1)
    key = pd.MultiIndex.from_arrays([panel["date"], panel["symbol"]])
    return (
        pd.Series(peer_return.stack().reindex(key).to_numpy(), index=panel.index),
        pd.Series(peer_breadth.stack().reindex(key).to_numpy(), index=panel.index),
    )


def learned_layer1(
    panel: pd.DataFrame, columns: list[str], every: int = 60, embargo: int = 10, min_rows: int = 5000
) -> pd.Series:
    """A learned layer 1 for round nine: one LightGBM classifier of the next move's
    direction (the plain reference's parameters and 300 trees, model_quality.py), pooled
    over every instrument, on the registry's own-instrument inputs (layer 1's empirical
    fallback among them) and `columns`, refitted every `every` trading days on the moved
    rows whose label was known `embargo` trading days before the first day it predicts;
    its P(up) for those days. Point in time: a row's value comes from a model trained on
    labels known before its day; NaN before `min_rows` moved rows are known."""
    import lightgbm as lgb
    from model_quality import REFERENCE_PARAMS, REFERENCE_TREES

    own = [
        "rsi_14",
        "bollinger_pct_b",
        "momentum_5",
        "momentum_20",
        "close_location",
        "return_1d",
        "volatility_20",
        "volume_ratio_20",
        "zero_volume_share_20",
        "spread_pct",
        "layer1_p_up",
    ]
    dates = sorted(panel["date"].unique())
    position = {d: i for i, d in enumerate(dates)}
    day = panel["date"].map(position).to_numpy()
    known = panel["label_end"].map(position).fillna(len(dates) + 1).to_numpy()
    y = panel["forward_return"].to_numpy(float)
    X = panel[own + list(columns)].to_numpy(float)
    learned = np.full(len(panel), np.nan)
    for start in range(0, len(dates), every):
        train = ~np.isnan(y) & (y != 0) & (known < start - embargo)
        if train.sum() < min_rows:
            continue
        booster = lgb.train(REFERENCE_PARAMS, lgb.Dataset(X[train], (y[train] > 0).astype(float)), REFERENCE_TREES)
        rows = (day >= start) & (day < start + every)
        learned[rows] = booster.predict(X[rows])
    return pd.Series(learned, index=panel.index)


def parse(variant: str) -> tuple[str, dict, dict, dict, list]:
    name, *items = variant.split()
    swaps, config, params, extras = {}, {}, {}, []
    for item in items:
        if item.startswith("+"):
            extras.append(item[1:])
            continue
        key, value = item.split("=", 1)
        if key.startswith("cfg:"):
            config[key[4:]] = json.loads(value)
        elif key.startswith("p:"):
            params[key[2:]] = json.loads(value)
        else:
            swaps[key] = value
    return name, swaps, config, params, extras


_PANEL: pd.DataFrame | None = None  # the worker's copy (inherited on fork)
# WalkForwardConfig fields the label sets (a variant's cfg: overrides them): the purge's
# horizon (1 for the next-day label, H + 1 for the excess label, whose label_end is t+1+H)
# and the booster's target (the sign for the next-day rounds, the daily rank for excess).
_LABEL_CONFIG: dict = {"horizon": 1, "target": "sign"}


def liquid_rows(frame: pd.DataFrame) -> pd.Series:
    """The rows a position could be opened on: the entry gates pass
    (market.liquidity.passes_entry_gates) and the instrument is an ordinary share (the
    `ordinary` column, where the frame has one)."""
    from market.liquidity import passes_entry_gates

    liquid = passes_entry_gates(frame).fillna(False).astype(bool)
    if "ordinary" in frame:
        liquid &= frame["ordinary"].fillna(True).astype(bool)
    return liquid


def rank_ic_by_year(f: pd.DataFrame, column: str = "raw_score") -> tuple[float | None, dict[int, float]]:
    """The rank IC of `column` (model_quality.daily_ic: the mean over days with at least 5
    rows of the Spearman correlation with forward_return), over the rows and per year."""
    years = {
        int(y): round(daily_ic(g, column), 4)
        for y, g in f.groupby(pd.to_datetime(f["date"]).dt.year)
        if daily_ic(g, column) is not None
    }
    overall = daily_ic(f, column)
    return (None if overall is None else round(overall, 4)), years


def run(variant: str, start: date, end: date) -> dict:
    from models.features import FEATURE_NAMES
    from models.walkforward import WalkForwardConfig, walk_forward

    name, swaps, config, params, extras = parse(variant)
    unknown = [s for s in swaps if s not in FEATURE_NAMES] + [c for c in [*swaps.values(), *extras] if c not in _PANEL]
    if unknown:
        raise SystemExit(f"error: variant {name}: unknown slot or candidate {unknown}")
    names = tuple(swaps.get(n, n) for n in FEATURE_NAMES) + tuple(extras)
    started = time.perf_counter()
    config = {**_LABEL_CONFIG, **config}
    result = walk_forward(_PANEL, WalkForwardConfig(first_test_date=start, features=names, params=params, **config))
    p = result.predictions
    p = p[(p["date"] >= start) & (p["date"] <= end) & p["forward_return"].notna()]
    moved = p[p["forward_return"] != 0]
    up = moved["forward_return"] > 0
    movers = moved[moved["forward_return"].abs() > 0.02]
    years = {
        int(y): round(100 * float(((g["p_up"] > 0.5) == (g["forward_return"] > 0)).mean()), 2)
        for y, g in moved.groupby(pd.to_datetime(moved["date"]).dt.year)
    }
    gain = pd.DataFrame([m.importances for m in result.models]).mean().round(3).to_dict()
    rank_ic, rank_ic_years = rank_ic_by_year(p)
    rank_ic_liquid, rank_ic_liquid_years = rank_ic_by_year(p[liquid_rows(p).to_numpy()])
    return {
        "variant": variant,
        "name": name,
        "rows": int(len(p)),
        "rank_ic": rank_ic,
        "rank_ic_liquid": rank_ic_liquid,
        "rank_ic_by_year": rank_ic_years,
        "rank_ic_liquid_by_year": rank_ic_liquid_years,
        "moved_rows": int(len(moved)),
        "binary": round(100 * float(((moved["p_up"] > 0.5) == up).mean()), 2),
        "binary_raw_score": round(100 * float(((moved["raw_score"] > 0) == up).mean()), 2),
        "three_class": round(100 * float((p["predicted_class"] == three_class(p["forward_return"])).mean()), 2),
        "movers": round(100 * float(((movers["p_up"] > 0.5) == (movers["forward_return"] > 0)).mean()), 2),
        "mae": round(float((p["predicted_return"] - p["forward_return"]).abs().mean()), 6),
        "mae_zero": round(float(p["forward_return"].abs().mean()), 6),
        "ic_p_up": round(daily_ic(p, "p_up"), 4),
        "ic_expected": round(daily_ic(p, "expected_return"), 4),
        "binary_by_year": years,
        "gain_share": gain,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    global _PANEL, _LABEL_CONFIG
    from models.dataset import build_panel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nse", default=None, help="folder of NSE daily files")
    parser.add_argument("--from", dest="start", default="2008-01-01", help="first scored day (early span: 2008-01-01)")
    parser.add_argument("--to", dest="end", default="2011-12-31", help="last scored day (early span: 2011-12-31)")
    parser.add_argument("--variant", action="append", default=None, help="a variant (repeatable); default: --round's")
    parser.add_argument("--round", choices=sorted(ROUNDS), default="three", help="a round's variants (docs/model.md)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="variants run at once")
    parser.add_argument(
        "--label",
        choices=["excess", "next_day"],
        default=None,
        help="the label (models/dataset.py); default: --round's (three to nine next_day, ten excess)",
    )
    parser.add_argument(
        "--horizon",
        type=int,
        default=None,
        help="label horizon H in sessions; default: models.decisions.HORIZON for excess, 1 for next_day",
    )
    args = parser.parse_args()
    from models.decisions import HORIZON

    label = args.label or ROUND_LABELS[args.round]
    horizon = args.horizon or (HORIZON if label == "excess" else 1)
    _LABEL_CONFIG = {
        "horizon": horizon + 1 if label == "excess" else horizon,  # the purge's reach: label_end = t+1+H
        "target": "rank" if label == "excess" else "sign",
    }
    folder = Path(args.nse or SHARED_DATA / "nse-kenya" / "daily")
    if not folder.is_dir():
        raise SystemExit(f"error: no NSE daily files at {folder} (set --nse or MARKETINTEL_SHARED_DATA)")
    start, end = date.fromisoformat(args.start), date.fromisoformat(args.end)
    if end.year >= 2012:
        print(
            "warning: 2012 and later are the confirmation span (docs/model.md): choosing there flatters",
            file=sys.stderr,
        )
    started = time.perf_counter()
    from ingest.importers.formats import nse_daily_frame

    # round seven reads the indices' levels; `ordinary` keeps preference shares and funds out
    # of the excess label's universe and of the liquid rows, as model_quality.load_nse does
    frame = nse_daily_frame(folder, indices=True, ordinary=True)
    index_rows = frame["symbol"].isin(frame.attrs["indices"])  # the rows `is_index_row` judged an index's
    prices = frame[~index_rows]  # the equities, as model_quality.py's load_nse
    dates = sorted(prices["date"].unique())
    after = [d for d in dates if d > end]
    reach = horizon + 1 if label == "excess" else horizon  # sessions after the last scored day its label reads
    label_cut = after[min(reach, len(after)) - 1] if after else end
    prices = prices[prices["date"] <= label_cut]  # nothing after the last scored day's label is read
    indices = frame[index_rows & (frame["date"] <= label_cut)]
    _PANEL = index_candidates(candidates(build_panel(prices, horizon=horizon, label=label)), indices)
    variants = args.variant or [on_core14_v3(v) for v in ROUNDS[args.round]]
    learned_alone = {}
    for column, inputs in LEARNED.items():  # trained only when a variant reads them
        if any(column in [*parse(v)[1].values(), *parse(v)[4]] for v in variants):
            _PANEL[column] = learned_layer1(_PANEL, inputs)
            scored = _PANEL[
                (_PANEL["date"] >= start) & (_PANEL["date"] <= end) & (_PANEL["forward_return"].fillna(0) != 0)
            ]
            learned_alone[column] = round(
                100 * float(((scored[column] > 0.5) == (scored["forward_return"] > 0)).mean()), 2
            )
            print(f"{column} alone (P(up) > 0.5, uncalibrated): binary {learned_alone[column]:.2f}")
    with ProcessPoolExecutor(
        max_workers=min(args.jobs, len(variants)), mp_context=multiprocessing.get_context("fork")
    ) as pool:
        results = list(pool.map(run, variants, [start] * len(variants), [end] * len(variants)))
    print(
        f"label {label}, horizon {horizon} sessions (walk-forward horizon {_LABEL_CONFIG['horizon']}, "
        f"target {_LABEL_CONFIG['target']})"
    )
    print(f"NSE scored {start} to {end}, {results[0]['moved_rows']} moved rows; binary = calibrated P(up) > 0.5")
    print(
        f"{'variant':<26}{'binary':>8}{'raw':>8}{'3-cl':>8}{'movers':>8}{'MAE':>10}"
        f"{'zero':>10}{'IC p':>8}{'IC e':>8}  by year"
    )
    for r in results:
        print(
            f"{r['name']:<26}{r['binary']:>8.2f}{r['binary_raw_score']:>8.2f}{r['three_class']:>8.2f}{r['movers']:>8.2f}"
            f"{r['mae']:>10.5f}{r['mae_zero']:>10.5f}{r['ic_p_up']:>8.3f}{r['ic_expected']:>8.3f}  "
            + " ".join(f"{v:.2f}" for v in r["binary_by_year"].values())
        )
    print("rank IC of the raw score (mean daily Spearman with forward_return); liquid: entry gates pass, ordinary")
    print(f"{'variant':<26}{'all':>8}{'liquid':>8}  all by year{'':<21}liquid by year")
    for r in results:
        print(
            f"{r['name']:<26}{_ic(r['rank_ic']):>8}{_ic(r['rank_ic_liquid']):>8}  "
            + " ".join(f"{v:.3f}" for v in r["rank_ic_by_year"].values()).ljust(32)
            + " ".join(f"{v:.3f}" for v in r["rank_ic_liquid_by_year"].values())
        )
    print(
        json.dumps(
            {
                "benchmark": "feature_screen",
                "label": label,
                "horizon": horizon,
                "from": start.isoformat(),
                "to": end.isoformat(),
                "variants": results,
                "learned_alone": learned_alone,
                "wall_seconds": round(time.perf_counter() - started, 1),
            }
        )
    )


def _ic(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    main()
