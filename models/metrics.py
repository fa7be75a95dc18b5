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
- IC: the mean over days of the Spearman rank correlation of predicted and realised
  returns (days with at least 5 instruments).
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
        "information_coefficient": {
            "value": _daily_ic(f),
            "base_rate": 0.0,
            "sample_size": int(f["date"].nunique()),
            "baselines": {},
        },
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


def _daily_ic(f: pd.DataFrame) -> float | None:
    values = []
    for _, day in f.groupby("date"):
        if len(day) >= 5 and day["predicted_return"].nunique() > 1 and day["forward_return"].nunique() > 1:
            values.append(day["predicted_return"].rank().corr(day["forward_return"].rank()))
    return float(np.nanmean(values)) if values else None
