"""Out-of-sample metrics, always beside their base rates and two baselines.

On rows with a realised forward return:
- binary accuracy: up vs down, on rows whose close moved (unchanged rows are neither);
  prediction = P(up) > 0.5. Base rate: the share of the more common direction.
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
Baselines: always the majority class of the training data seen so far (here: of the
evaluation rows, which flatters it), and the sign of the last move (unchanged last move:
the majority class).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

FLAT_BAND = 0.005
MOVER = 0.02
MIN_DAY_ROWS = 5  # a day enters a rank IC or a tercile spread with at least this many rows
# The model's ranking: the expected excess, ties by P(up), then the raw score (the
# product's Terciles, models/decisions.py).
MODEL_ORDER = ["expected_return", "p_up", "raw_score"]


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
            "value": float(((moved["p_up"] > 0.5) == up).mean()) if len(moved) else None,
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
            "value": float(((movers["p_up"] > 0.5) == movers_up).mean()) if len(movers) else None,
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
    rows ranked by `order` (the first column, ties by the next) minus the bottom third's."""
    if order[0] not in f or label not in f:
        return pd.Series(dtype=float)
    d = f[["date", *[c for c in order if c in f], label]].dropna(subset=[order[0], label])
    d = d[d.groupby("date")["date"].transform("size").to_numpy() >= MIN_DAY_ROWS]
    if d.empty:
        return pd.Series(dtype=float)
    d = d.sort_values(["date", *[c for c in order if c in d]], kind="stable")
    by = d.groupby("date", sort=False)
    share = (by.cumcount() + 1) / by["date"].transform("size")
    top = d[label].where(share > 2 / 3).groupby(d["date"]).mean()
    bottom = d[label].where(share <= 1 / 3).groupby(d["date"]).mean()
    return (top - bottom).dropna()


def product_tercile_spread(f: pd.DataFrame, label: str = "forward_return") -> pd.Series:
    """Per day: the mean `label` of the rows the product put in its TOP Ranking Tercile
    minus the BOTTOM's (days with both)."""
    d = f[["date", "tercile", label]].dropna()
    means = d[d["tercile"].isin(["TOP", "BOTTOM"])].groupby(["date", "tercile"])[label].mean().unstack()
    if "TOP" not in means or "BOTTOM" not in means:
        return pd.Series(dtype=float)
    return (means["TOP"] - means["BOTTOM"]).dropna()
