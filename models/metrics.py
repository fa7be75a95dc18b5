"""Out-of-sample metrics, always beside their base rates and two baselines.

On rows with a realised forward return:
- binary accuracy: up vs down, on rows whose close moved (unchanged rows are neither);
  prediction = P(up) > 0.5 (`binary_accuracy`, the monitor's rule too). Base rate: the
  share of the more common direction.
- 3-class accuracy: down / flat / up with a flat band of +-0.5%; the prediction is the
  most probable class of the calibrated class probabilities (`predicted_class`, from
  models/calibration.py) where there is one, else the class of the predicted return.
  Base rate: the share of the most common class.
- movers accuracy: binary accuracy on rows that moved more than 2% either way.
- average error: mean absolute error of the predicted return.
- rank IC: the mean over days (at least MIN_DAY_ROWS labelled rows) of the Spearman
  correlation of the model's ranking (the expected excess, `expected_return`) with the
  label; a day on which the expected excess is the same for every row counts 0 (the
  calibration claimed no edge; leaving the day out would flatter it); rows without an
  expected excess (an uncalibrated window) are left out. Base rate 0; baseline: the rank
  IC of the last move (the reversal a bounce-reader would find). Sample size: days.
- tercile spread: per day, the mean label of the TOP Ranking Tercile minus the BOTTOM's
  (the liquid names the product ranks; days with both), averaged over days: what the
  Terciles separate, in return units over the label's horizon (0.004 = 0.4%). Base rate 0.
  Without a `tercile` column: the top third minus the bottom third of the rows by
  MODEL_ORDER.
- hit rate by tercile: share of up moves in each Ranking Tercile.
- persistence: the rank IC of a day's expected excess against the excess return over
  later windows after the fill (PERSISTENCE_WINDOWS: sessions 1-5, 6-10, 11-20, 21-40,
  41-60), each from the close of t+a to the close of t+1+b, minus the equal-weighted
  liquid universe's over the same span (market/labels.py's label and universe; window
  1-5 is the label at H = 5): how long a ranking keeps paying (Grinold and Kahn's IC
  decay). Each day's IC per window carries the date it is known (t+1+b), so a rule can
  read the persistence point in time (`Persistence.mean(known_by=...)`).
Baselines: always the majority class of the training data seen so far (here: of the
evaluation rows, which flatters it), and the sign of the last move (unchanged last move:
the majority class).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd

from market.labels import held_return, universe_held_return, with_labels
from market.liquidity import passes_entry_gates

FLAT_BAND = 0.005
MOVER = 0.02
MIN_DAY_ROWS = 5  # a day enters a rank IC or a tercile spread with at least this many rows
# The model's ranking: the expected excess, ties by P(up), then the raw score (the
# product's Terciles, models/decisions.py).
MODEL_ORDER = ["expected_return", "p_up", "raw_score"]


# The binary accuracy's rule, one for the records' metrics and the monitor's live check:
# a row counts as predicted up when its P(up) is above one half (0.5 exactly is not up).
BINARY_RULE = "P(up) > 0.5 against the label above zero (the held excess over the horizon from the next close)"


def binary_accuracy(p_up: np.ndarray | pd.Series, up: np.ndarray | pd.Series) -> float:
    """The share of rows whose predicted direction (`BINARY_RULE`: P(up) > 0.5) is the
    label's (`up`: true or 1 where the label is above zero)."""
    return float(np.mean((np.asarray(p_up, dtype=float) > 0.5) == (np.asarray(up, dtype=float) == 1)))


def _classes(returns: pd.Series) -> pd.Series:
    return np.sign(returns.where(returns.abs() > FLAT_BAND, 0.0))


def evaluate(frame: pd.DataFrame) -> dict:
    """`frame` has columns date, forward_return, predicted_return, p_up, last_return and
    optionally tercile. Returns metric -> {value, base_rate, sample_size, baselines}."""
    f = frame.dropna(subset=["forward_return", "p_up"])
    moved = f[f["forward_return"] != 0]
    up = moved["forward_return"] > 0
    majority_up = up.mean() >= 0.5
    last_sign = np.sign(moved["last_return"].fillna(0.0))
    last_move_pred = np.where(last_sign == 0, majority_up, last_sign > 0)
    movers = moved[moved["forward_return"].abs() > MOVER]
    movers_up = movers["forward_return"] > 0
    three_true, three_pred = _classes(f["forward_return"]), _classes(f["predicted_return"])
    if "predicted_class" in f:
        three_pred = f["predicted_class"].where(f["predicted_class"].notna(), three_pred)
    result = {
        "binary_accuracy": {
            "value": binary_accuracy(moved["p_up"], up) if len(moved) else None,
            "base_rate": float(max(up.mean(), 1 - up.mean())) if len(moved) else None,
            "sample_size": int(len(moved)),
            "baselines": {
                "majority": float((up == majority_up).mean()) if len(moved) else None,
                "last_move_sign": float((last_move_pred == up).mean()) if len(moved) else None,
            },
        },
        "three_class_accuracy": {
            "value": float((three_pred == three_true).mean()) if len(f) else None,
            "base_rate": float(three_true.value_counts(normalize=True).max()) if len(f) else None,
            "sample_size": int(len(f)),
            "baselines": {"majority": float(three_true.value_counts(normalize=True).max()) if len(f) else None},
        },
        "movers_accuracy": {
            "value": binary_accuracy(movers["p_up"], movers_up) if len(movers) else None,
            "base_rate": float(max(movers_up.mean(), 1 - movers_up.mean())) if len(movers) else None,
            "sample_size": int(len(movers)),
            "baselines": {},
        },
        "average_error": {
            "value": float((f["predicted_return"] - f["forward_return"]).abs().mean()) if len(f) else None,
            "base_rate": float(f["forward_return"].abs().mean()) if len(f) else None,  # error of always predicting 0
            "sample_size": int(len(f)),
            "baselines": {"predict_zero": float(f["forward_return"].abs().mean()) if len(f) else None},
        },
        "rank_ic": _rank_ic(f),
        "tercile_spread": _tercile_spread(f),
    }
    if "tercile" in f:
        for tercile in ("TOP", "MIDDLE", "BOTTOM", "ILLIQUID"):
            part = moved[moved["tercile"] == tercile]
            result[f"hit_rate_{tercile.lower()}"] = {
                "value": float((part["forward_return"] > 0).mean()) if len(part) else None,
                "base_rate": float(up.mean()) if len(moved) else None,
                "sample_size": int(len(part)),
                "baselines": {},
            }
    return result


def _rank_ic(f: pd.DataFrame) -> dict:
    days = daily_rank_ic(f, "expected_return", constant_as_zero=True)
    last = daily_ic(f, "last_return")
    return {
        "value": float(days.mean()) if len(days) else None,
        "base_rate": 0.0,
        "sample_size": int(len(days)),
        "baselines": {"last_move": last} if last is not None else {},
    }


def _tercile_spread(f: pd.DataFrame) -> dict:
    days = product_tercile_spread(f) if "tercile" in f else daily_tercile_spread(f, MODEL_ORDER)
    return {
        "value": float(days.mean()) if len(days) else None,
        "base_rate": 0.0,
        "sample_size": int(len(days)),
        "baselines": {},
    }


def daily_rank_ic(
    f: pd.DataFrame, column: str, label: str = "forward_return", constant_as_zero: bool = False
) -> pd.Series:
    """The Spearman correlation of `column` with `label` on each day with at least
    MIN_DAY_ROWS rows that have both, indexed by date. Days on which the label is constant
    are left out; so are days on which `column` is, unless `constant_as_zero` (a score
    that ranks nothing that day counts 0: it claimed no edge, and leaving the day out
    would flatter it)."""
    if column not in f or label not in f:
        return pd.Series(dtype=float)
    d = f[["date", column, label]].dropna()
    d = d[d.groupby("date")["date"].transform("size").to_numpy() >= MIN_DAY_ROWS]
    if d.empty:
        return pd.Series(dtype=float)
    by = d.groupby("date")
    rx, ry = by[column].rank(), by[label].rank()
    cx = rx - rx.groupby(d["date"]).transform("mean")
    cy = ry - ry.groupby(d["date"]).transform("mean")
    num = (cx * cy).groupby(d["date"]).sum()
    var_x, var_y = (cx * cx).groupby(d["date"]).sum(), (cy * cy).groupby(d["date"]).sum()
    ic = num / np.sqrt(var_x * var_y).where((var_x > 0) & (var_y > 0))
    if constant_as_zero:
        ic = ic.where(~((var_x <= 0) & (var_y > 0)), 0.0)
    return ic.dropna()


def daily_ic(
    f: pd.DataFrame, column: str, label: str = "forward_return", constant_as_zero: bool = False
) -> float | None:
    """The rank IC: the mean over days of `daily_rank_ic` (None without a day)."""
    values = daily_rank_ic(f, column, label, constant_as_zero)
    return float(values.mean()) if len(values) else None


def daily_tercile_spread(f: pd.DataFrame, order: list[str], label: str = "forward_return") -> pd.Series:
    """Per day with at least MIN_DAY_ROWS rows: the mean `label` of the top third of the
    rows ranked by `order` (the first column, ties by the next) minus the bottom third's.
    Rows tied on every column of `order` share the places they take between them: each
    counts in a third for the share of those places that lie in it, so the spread is the
    mean over every order of the tied rows, the same whatever order the rows came in."""
    if order[0] not in f or label not in f:
        return pd.Series(dtype=float)
    keys = [c for c in order if c in f]
    d = f[["date", *keys, label]].dropna(subset=[order[0], label])
    d = d[d.groupby("date")["date"].transform("size").to_numpy() >= MIN_DAY_ROWS]
    if d.empty:
        return pd.Series(dtype=float)
    d = d.sort_values(["date", *keys], kind="stable")
    top, bottom = (
        (d[label] * w).groupby(d["date"]).sum() / w.groupby(d["date"]).sum() for w in _tercile_shares(d, keys)
    )
    return (top - bottom).dropna()


def _tercile_shares(d: pd.DataFrame, keys: list[str]) -> tuple[pd.Series, pd.Series]:
    """Each row's share in its day's top third and in its bottom third (`d` sorted by date
    and `keys`): of the places (1 to n) that its block of rows tied on `keys` takes, the
    share above 2n/3 and the share at most n/3 (a row tied with none: 1 or 0)."""
    place = d.groupby("date", sort=False).cumcount() + 1
    n = d.groupby("date", sort=False)["date"].transform("size")
    block = place.groupby(d.groupby(["date", *keys], sort=False, dropna=False).ngroup())
    first, last = block.transform("min"), block.transform("max")
    size = last - first + 1
    top = (last - np.maximum(first, (2 * n) // 3 + 1) + 1).clip(lower=0) / size
    bottom = (np.minimum(last, n // 3) - first + 1).clip(lower=0) / size
    return top, bottom


def product_tercile_spread(f: pd.DataFrame, label: str = "forward_return") -> pd.Series:
    """Per day: the mean `label` of the rows the product put in its TOP Ranking Tercile
    minus the BOTTOM's (days with both)."""
    d = f[["date", "tercile", label]].dropna()
    means = d[d["tercile"].isin(["TOP", "BOTTOM"])].groupby(["date", "tercile"])[label].mean().unstack()
    if "TOP" not in means or "BOTTOM" not in means:
        return pd.Series(dtype=float)
    return (means["TOP"] - means["BOTTOM"]).dropna()


# Sessions after the fill (the fill is at the close of t+1): window (a, b) runs from the
# close of t+a to the close of t+1+b; (1, 5) is the product's label at H = 5.
PERSISTENCE_WINDOWS = ((1, 5), (6, 10), (11, 20), (21, 40), (41, 60))


def window_name(window: tuple[int, int]) -> str:
    return f"{window[0]}-{window[1]}"


def window_excess(prices: pd.DataFrame, windows: tuple[tuple[int, int], ...] = PERSISTENCE_WINDOWS) -> pd.DataFrame:
    """Per row of `prices` (every instrument of the market: symbol, date, close, volume
    and the gate inputs, as market.labels.with_labels reads them), for each window (a, b):
    `excess_a-b`, the return from the close of t+a to the close of t+1+b minus the
    equal-weighted liquid universe's over the same span (the universe of day t,
    market.labels.universe_held_return), and `known_a-b`, the date it is known (t+1+b).
    Built from the label itself: the held return to t+1+b over the held return to t+a.
    The rows' entry gates read no held return, so they are worked out once for every window."""
    frame = with_labels(prices, 1)  # adds the spread estimates and ADV_20 once, sorted by symbol and date
    gates = passes_entry_gates(frame).to_numpy(bool)
    held = {
        horizon: held_return(frame, horizon)
        for horizon in sorted({b for _, b in windows} | {a - 1 for a, _ in windows if a > 1})
    }
    out = frame[["symbol", "date"]].copy()
    for a, b in windows:
        start = held[a - 1][0] if a > 1 else 0.0
        panel = frame.assign(held_return=(1 + held[b][0]) / (1 + start) - 1)
        name = window_name((a, b))
        out[f"excess_{name}"] = panel["held_return"] - universe_held_return(panel, gates)
        out[f"known_{name}"] = held[b][1]
    return out


@dataclass(frozen=True)
class Persistence:
    """The rank IC of a ranking against the excess over each window after the fill, per
    day (`daily`: index date, a column per window name, NaN where the day has too few
    rows or the window is not known), and the date each day's IC is known (`known`: the
    last of its rows' window ends, same shape)."""

    windows: tuple[tuple[int, int], ...]
    daily: pd.DataFrame
    known: pd.DataFrame

    def mean(self, known_by: date | None = None) -> dict[str, float | None]:
        """The mean daily IC per window over the days whose IC is known by `known_by`
        (every day: None): what a rule deciding on that day may read."""
        out = {}
        for name in self.daily:
            values = self.daily[name]
            if known_by is not None:
                values = values[(self.known[name] <= known_by).to_numpy()]
            values = values.dropna()
            out[name] = float(values.mean()) if len(values) else None
        return out

    def days(self) -> dict[str, int]:
        return {name: int(self.daily[name].notna().sum()) for name in self.daily}

    def means_known_by(self, days: list[date]) -> dict[date, dict[str, float | None]]:
        """`mean(known_by=day)` for each of `days` at once: per window, the running mean of
        the daily ICs in the order they become known, read at each day."""
        out: dict[date, dict[str, float | None]] = {d: {} for d in days}
        asked = pd.to_datetime(pd.Series(days)).to_numpy()
        for name in self.daily:
            frame = pd.DataFrame({"ic": self.daily[name], "known": self.known[name]}).dropna().sort_values("known")
            sums = np.concatenate([[0.0], np.cumsum(frame["ic"].to_numpy(float))])
            counts = np.searchsorted(pd.to_datetime(frame["known"]).to_numpy(), asked, side="right")
            for day, count in zip(days, counts, strict=True):
                out[day][name] = float(sums[count] / count) if count else None
        return out

    def by_year(self) -> dict[int, dict[str, float | None]]:
        """The mean daily IC per window, per calendar year of the decision day."""
        years = pd.to_datetime(pd.Index(self.daily.index)).year
        return {
            int(year): {name: _mean_or_none(self.daily.loc[years == year, name]) for name in self.daily}
            for year in sorted(set(years))
        }


def edge_multiplier(
    ics: Mapping[str, float | None], hold: int, windows: tuple[tuple[int, int], ...] = PERSISTENCE_WINDOWS
) -> float:
    """How many times the expected excess over the first window (the label's) a position
    held `hold` sessions after its fill is expected to earn, from the rank IC per window
    (`Persistence.mean`, point in time). A calibrated expected excess e is the label's
    conditional mean (slope 1 on it); a later window w of L_w sessions then pays
    e x (IC_w / IC_first) x sqrt(L_w / L_first) (the slope is the correlation times the
    ratio of the returns' spreads, and an excess return's cross-sectional spread grows with
    the square root of its span), a window the hold covers in part pro rata, a window whose
    IC is not positive nothing, and one not yet measured nothing either. 1 (the label's
    horizon alone) while the first window's IC is unknown or not positive; never less."""
    first = windows[0]
    base, first_ic = first[1] - first[0] + 1, ics.get(window_name(first))
    if first_ic is None or not first_ic > 0:
        return 1.0
    total = 0.0
    for a, b in windows:
        ic = ics.get(window_name((a, b)))
        if a > hold or ic is None:
            break
        length = b - a + 1
        covered = (min(b, hold) - a + 1) / length
        total += max(ic, 0.0) / first_ic * math.sqrt(length / base) * covered
    return max(total, 1.0)


def _mean_or_none(values: pd.Series) -> float | None:
    values = values.dropna()
    return float(values.mean()) if len(values) else None


def persistence(
    scored: pd.DataFrame,
    excess: pd.DataFrame,
    column: str = "expected_return",
    windows: tuple[tuple[int, int], ...] = PERSISTENCE_WINDOWS,
) -> Persistence:
    """The Persistence of `column` on the `scored` rows (symbol, date, `column`; a day on
    which it is the same for every row counts 0, as the rank IC does) against `excess`
    (`window_excess`' columns for the same windows)."""
    names = [window_name(w) for w in windows]
    wanted = ["symbol", "date", *(f"excess_{n}" for n in names), *(f"known_{n}" for n in names)]
    rows = scored[["symbol", "date", column]].merge(excess[wanted], on=["symbol", "date"], how="left")
    daily, known = {}, {}
    for name in names:
        daily[name] = daily_rank_ic(rows, column, f"excess_{name}", constant_as_zero=True)
        ends = rows.dropna(subset=[f"excess_{name}"]).groupby("date")[f"known_{name}"].max()
        known[name] = ends
    days = sorted(set().union(*(d.index for d in daily.values())))
    return Persistence(
        tuple(windows),
        pd.DataFrame(daily).reindex(days),
        pd.DataFrame(known).reindex(days),
    )
