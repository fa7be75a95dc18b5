"""Rolling out-of-sample calibration of the risk model's scores.

The classifier's raw score ranks rows; what a probability means drifts with the market
(a bear year has fewer up days than the training window had). So before each walk-forward
block the scores are recalibrated on the most recent out-of-sample rows whose labels were
already known (`window` rows from the previous blocks, never the block itself):

"Up" is the label above zero: for the product's label (market/labels.py) the name beat
the equal-weighted liquid universe over the horizon; for the next-day reference, the close
rose.

- P(up | the label is not zero): logistic regression of "up" on the raw score, on the
  window's rows with a non-zero label (Platt scaling, refitted every block: it follows the
  recent base rate).
- Five parts of the label: down beyond the flat band, down within it, zero, up
  within it, up beyond it (band: FLAT_BAND, as in metrics.py): multinomial logistic
  regression on the calibrated log-odds and the liquidity inputs that say whether a close
  is likely to move at all (share of no-trade days, volatility, today's volume ratio,
  whether today's close moved). Class probabilities down / flat / up add the parts up;
  the 3-class prediction is the most probable class.
- Predicted return: the conditional median of that distribution (the number that
  minimises mean absolute error), 0 unless more than half of the probability lies on one
  side of zero, else read off the window's returns in the part where the median falls.
- Expected return (`expected_return`, what the decisions read: the expected excess over
  the holding horizon for the product's label): the conditional mean of the label given
  the standardised raw score, a least-squares line fitted on the window with the label
  winsorised at its 1st and 99th percentiles and the slope floored at zero. It is
  monotone in the raw score, so it ranks rows exactly as the model does; a window in which
  the scores did not rank the outcomes gives every row the window's mean (no edge is
  claimed), never an inverted ranking.

Both fitted maps are non-decreasing in the raw score: a window whose logistic slope comes
out negative gives P(up) the window's base rate for every row. The raw score is the
model's ranking; a recent stretch in which it ranked badly flattens what is claimed, it
never turns the ranking upside down.

The same rule serves the walk-forward (models/walkforward.py, one calibration per 5-day
block) and the live stage (models/scoring.py, one per day): `in_window` says which
out-of-sample scores may calibrate a block, and `score_rows` turns a model, its rows and
the calibration into the outputs both store.

scikit-learn does the fitting (LogisticRegression); the project's definitions of the
classes and moves (metrics.FLAT_BAND, "moved" = return != 0) are kept because they are
what every reported figure uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from models.metrics import FLAT_BAND

if TYPE_CHECKING:
    from models.risk import RiskModel

CLASS_INPUTS = ["zero_volume_share_20", "volatility_20", "volume_ratio_20", "return_1d"]
QUANTILE_LEVELS = np.linspace(0, 1, 21)
MIN_ROWS = 500  # fewer calibration rows than this: no recalibration (the model's own Platt is used)


def in_window(
    day_number: np.ndarray, label_day: np.ndarray, block_start: int, calibration_days: int, embargo_days: int
) -> np.ndarray:
    """Which earlier out-of-sample rows may calibrate the block that starts on trading day
    `block_start` (positions among the trading days): rows dated within the last
    `calibration_days` trading days whose label was known before the block, less the
    embargo (the purge training uses, models/walkforward.training_rows)."""
    cutoff = max(0, block_start - embargo_days)
    return (np.asarray(label_day) < cutoff) & (np.asarray(day_number) >= block_start - calibration_days)


def score_rows(
    model: RiskModel,
    X: np.ndarray,
    frame: pd.DataFrame,
    calibration: Calibration | None,
    explain: Sequence[str] | None = None,
) -> dict[str, np.ndarray]:
    """A risk model's outputs for rows `X` (`frame`: the same rows with the class inputs).
    Calibrated: P(up), the class probabilities, the 3-class prediction, the predicted
    return (conditional median) and the expected return (conditional mean) come from
    `calibration`. Without one (too few earlier out-of-sample rows): the booster's own
    probability, a predicted return of 0 and no expected return (NaN: no decision reads
    an expected excess that nothing calibrated) unless the model has its own regressor,
    and no class prediction. `raw_score` is always kept: it is what later
    calibrations are fitted on. `explain`: the inputs' names, to add `reasons` (the three
    largest contributions to each raw score and the base value, models/reasons.py)."""
    predicted_return, p_up = model.predict(X)
    raw = model.raw_score(X)
    out = {
        "predicted_return": predicted_return,
        # no calibration and no regressor: nothing says what a row is expected to earn
        "expected_return": predicted_return.copy() if model.regressor is not None else np.full(len(X), np.nan),
        "p_up": p_up,
        "raw_score": raw,
    }
    if explain is not None:
        from models.reasons import explain as reasons_of

        out["reasons"] = np.array(reasons_of(model, X, list(explain)) + [None], dtype=object)[:-1]  # one dict per row
    if calibration is not None:
        out.update(calibration.apply(raw, frame))
    return out


def mean_line(z: np.ndarray, label: np.ndarray) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line of the label, winsorised at its 1st
    and 99th percentiles, on the standardised score `z`; the slope floored at zero."""
    low, high = np.quantile(label, [0.01, 0.99])
    y = np.clip(label, low, high)
    centred = z - z.mean()
    variance = float(centred @ centred)
    slope = max(0.0, float(centred @ (y - y.mean())) / variance) if variance > 0 else 0.0
    return float(y.mean() - slope * z.mean()), slope


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def _class_design(logit_up: np.ndarray, frame: pd.DataFrame) -> np.ndarray:
    zero_share = frame["zero_volume_share_20"].to_numpy(float)
    vol = np.log(frame["volatility_20"].to_numpy(float) + 1e-4)
    ratio = np.log1p(frame["volume_ratio_20"].to_numpy(float).clip(min=0))
    moved_today = (frame["return_1d"].to_numpy(float) != 0).astype(float)
    design = np.column_stack([logit_up, np.abs(logit_up), zero_share, vol, ratio, moved_today])
    return np.where(np.isfinite(design), design, 0.0)


def three_classes(returns: np.ndarray) -> np.ndarray:
    """-1 down, 0 flat (|r| <= FLAT_BAND), 1 up: the classes of models/metrics.py."""
    return np.where(np.abs(returns) > FLAT_BAND, np.sign(returns), 0.0).astype(int)


def five_parts(returns: np.ndarray) -> np.ndarray:
    """-2 down beyond the band, -1 down within it, 0 unchanged, 1 up within the band, 2 up
    beyond it: the parts the class model is fitted on (the 3 classes are -2, -1..1, 2)."""
    small = np.abs(returns) <= FLAT_BAND
    return np.where(returns == 0, 0, np.where(small, np.sign(returns), 2 * np.sign(returns))).astype(int)


@dataclass
class Calibration:
    """Fitted on one window; `apply` maps raw scores of new rows to calibrated outputs."""

    binary: object | None = None
    parts: object | None = None
    part_labels: np.ndarray | None = None
    scale: tuple[float, float] = (0.0, 1.0)
    part_means: dict | None = None
    part_quantiles: dict | None = None  # each part's returns at QUANTILE_LEVELS
    mean_line: tuple[float, float] = (0.0, 0.0)  # expected return = intercept + slope x standardised raw score

    rows: int = 0  # the window's rows (labelled, moved or not)

    @classmethod
    def fit(cls, raw: np.ndarray, frame: pd.DataFrame, forward_return: np.ndarray) -> Calibration | None:
        from sklearn.linear_model import LogisticRegression

        moved = forward_return != 0
        if moved.sum() < MIN_ROWS:
            return None
        up = (forward_return[moved] > 0).astype(int)
        if up.min() == up.max():
            return None
        mean, sd = float(raw[moved].mean()), float(raw[moved].std() or 1.0)
        binary = LogisticRegression(C=1.0).fit(((raw[moved] - mean) / sd)[:, None], up)
        if binary.coef_[0, 0] < 0:  # the window's scores ranked the wrong way: claim its base rate only
            binary.coef_[0, 0] = 0.0
            binary.intercept_[0] = float(np.log(up.mean() / (1 - up.mean())))
        logit_up = binary.decision_function(((raw - mean) / sd)[:, None])
        labels = five_parts(forward_return)
        parts = None
        if len(np.unique(labels)) > 1:
            parts = LogisticRegression(C=1.0, max_iter=300).fit(_class_design(logit_up, frame), labels)
        means, quantiles = {}, {}
        for k in np.unique(labels):
            values = forward_return[labels == k]
            means[int(k)] = float(values.mean())
            quantiles[int(k)] = np.quantile(values, QUANTILE_LEVELS)
        line = mean_line((raw - mean) / sd, forward_return)
        return cls(
            binary, parts, None if parts is None else parts.classes_, (mean, sd), means, quantiles, line, len(raw)
        )

    def apply(self, raw: np.ndarray, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        """p_up (P(label > 0 | label != 0)), p_down3 / p_flat3 / p_up3 (3-class), predicted_class,
        predicted_return (conditional median) and expected_return (conditional mean)."""
        mean, sd = self.scale
        z = ((raw - mean) / sd)[:, None]
        p_up = self.binary.predict_proba(z)[:, 1]
        n = len(raw)
        probs = np.zeros((n, 5))  # columns: parts -2..2
        if self.parts is not None:
            got = self.parts.predict_proba(_class_design(self.binary.decision_function(z), frame))
            for j, label in enumerate(self.part_labels):
                probs[:, int(label) + 2] = got[:, j]
        else:
            probs[:, 2] = 1.0
        three = np.column_stack([probs[:, 0], probs[:, 1:4].sum(axis=1), probs[:, 4]])
        predicted_class = np.array([-1, 0, 1])[three.argmax(axis=1)]
        intercept, slope = self.mean_line
        expected = intercept + slope * z[:, 0]
        return {
            "p_up": p_up,
            "p_down3": three[:, 0],
            "p_flat3": three[:, 1],
            "p_up3": three[:, 2],
            "predicted_class": predicted_class,
            "predicted_return": self._median(probs),
            "expected_return": expected,
        }

    def _median(self, probs: np.ndarray) -> np.ndarray:
        """The conditional median: 0 unless the parts above (or below) zero hold more than
        half of the probability; then the return inside the part where the cumulative
        probability from that side reaches one half, read off the window's returns in that
        part (linear between their quantiles)."""
        out = np.zeros(len(probs))
        quantiles = self.part_quantiles or {}
        for sign in (1, -1):
            outer, inner = probs[:, 2 + 2 * sign], probs[:, 2 + sign]
            # In the outer part (beyond the band): the share of it beyond the median.
            in_outer = outer > 0.5
            in_inner = ~in_outer & (outer + inner > 0.5)
            for mask, part, beyond in (
                (in_outer, 2 * sign, 0.5 / np.maximum(outer, 1e-9)),
                (in_inner, sign, (0.5 - outer) / np.maximum(inner, 1e-9)),
            ):
                if mask.any() and part in quantiles:
                    level = 1 - beyond[mask] if sign > 0 else beyond[mask]  # quantile level inside the part
                    out[mask] = np.interp(level, QUANTILE_LEVELS, quantiles[part])
        return out
