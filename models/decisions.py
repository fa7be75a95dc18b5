"""From model outputs to what a user acts on: Score, Action, Position Weight, Tercile.

- Score = 100 x calibrated P(up | the close moves), rounded to 0.1 (50 is a coin toss);
  the thresholds below apply to the rounded Score, the number users see.
- Action: LONG when Score >= 55 and the predicted return is positive; AVOID when
  Score <= 45 or the predicted return is below -0.5%; HOLD otherwise. The predicted
  return is the median of the calibrated distribution of the next move
  (models/calibration.py), so "positive" means the close is more likely than not to end
  higher, counting the days it does not move: a LONG needs a name that is likely to move
  at all, as well as up when it moves. The conditional mean (`expected_return`,
  `gain="expected_return"`) would admit nearly every Score >= 55; on the NSE early span
  that doubled the executor's turnover and halved its return after fees (docs/model.md,
  "Which return decides the Action").
- Position Weight (LONG only, else 0): edge over volatility, (P(up) - 0.5) / volatility_20,
  each capped at 15%, then scaled down if needed so the weights sum to at most 1.
- Tercile: instruments that pass the entry liquidity gates are ranked by Score (ties by
  predicted return) into TOP, MIDDLE and BOTTOM thirds; the rest are ILLIQUID.

The entry gates used here are the liquidity rail's per-instrument gates, defined once in
market/liquidity.py with the spread and its no-quotes proxy: ADV_20 >= 5,000 shares,
volume today > 0 and a spread <= 5%.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from market.liquidity import passes_entry_gates

LONG_SCORE, AVOID_SCORE, AVOID_RETURN = 55.0, 45.0, -0.005
MAX_WEIGHT = 0.15


def decide(day: pd.DataFrame, liquidity_gates: bool = True, gain: str = "predicted_return") -> pd.DataFrame:
    """One trading day's rows (predicted_return, p_up, volatility_20 and the gate inputs)
    in, with score, action, weight and tercile added. `liquidity_gates=False` ranks every
    instrument into terciles (the backtest's no-rails comparison); nothing is ILLIQUID.
    `gain`: the column whose sign the Action reads (benchmarks/backtest.py --gain compares
    the two; the product uses the predicted return)."""
    out = day.copy()
    out["score"] = (100 * out["p_up"]).round(1)
    long_ = (out["score"] >= LONG_SCORE) & (out[gain] > 0)
    avoid = (out["score"] <= AVOID_SCORE) | (out[gain] < AVOID_RETURN)
    out["action"] = np.where(long_, "LONG", np.where(avoid, "AVOID", "HOLD"))
    vol = out["volatility_20"].fillna(out["volatility_20"].median()).clip(lower=0.005)
    raw = np.where(long_, (out["p_up"] - 0.5) / vol, 0.0)
    weight = np.minimum(np.maximum(raw, 0.0) / 100, MAX_WEIGHT)
    if weight.sum() > 1:
        weight = weight / weight.sum()
    out["weight"] = np.round(weight, 4)
    liquid = passes_entry_gates(out) if liquidity_gates else pd.Series(True, index=out.index)
    out["tercile"] = "ILLIQUID"
    if liquid.any():
        # Rank by Score, ties broken by the predicted return: a model with little
        # discrimination calibrates many names to the same Score.
        ordered = out.loc[liquid].sort_values(["score", "predicted_return"], kind="stable").index
        share = pd.Series(np.arange(1, len(ordered) + 1) / len(ordered), index=ordered)
        out.loc[ordered, "tercile"] = np.where(share > 2 / 3, "TOP", np.where(share > 1 / 3, "MIDDLE", "BOTTOM"))
    return out
