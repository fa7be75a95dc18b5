"""Rolling out-of-sample calibration of the risk model's scores.

The classifier's raw score ranks rows; what a probability means drifts with the market
(a bear year has fewer up days than the training window had). So before each walk-forward
block the scores are recalibrated on the most recent out-of-sample rows whose labels were
already known (`window` rows from the previous blocks, never the block itself):

- P(up | the close moves): logistic regression of "up" on the raw score, on the window's
  moved rows (Platt scaling, refitted every block: it follows the recent base rate).
- Class probabilities down / flat / up (flat: |return| <= FLAT_BAND, as in metrics.py):
  multinomial logistic regression on the calibrated log-odds and the liquidity inputs that
  say whether a close is likely to move at all (share of no-trade days, volatility, today's
  volume ratio, whether today's close moved). The 3-class prediction is the most probable
  class.
- Predicted return: the conditional median of the calibrated distribution (the number
  that minimises mean absolute error): 0 unless one side holds more than half of the
  probability, then the point of that side's recent move sizes that splits the
  distribution in half (sizes taken as exponential with the window's mean move size on
  that side). `expected_return` (the conditional mean, P(up) x mean up move + P(down) x
  mean down move + P(flat) x mean flat move) is kept beside it: it ranks rows by the full
  distribution and is what the information coefficient is reported on as well.

scikit-learn does the fitting (LogisticRegression); the project's definitions of the
classes and moves (metrics.FLAT_BAND, "moved" = return != 0) are kept because they are
what every reported figure uses.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.metrics import FLAT_BAND

CLASS_INPUTS = ["zero_volume_share_20", "volatility_20", "volume_ratio_20", "return_1d"]
MIN_ROWS = 500  # fewer calibration rows than this: no recalibration (the model's own Platt is used)


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


@dataclass
class Calibration:
    """Fitted on one window; `apply` maps raw scores of new rows to calibrated outputs."""

    binary: object | None = None
    classes: object | None = None
    class_labels: np.ndarray | None = None
    scale: tuple[float, float] = (0.0, 1.0)
    up_size: float = 0.0
    down_size: float = 0.0
    class_means: dict | None = None

    @classmethod
    def fit(cls, raw: np.ndarray, frame: pd.DataFrame, forward_return: np.ndarray) -> "Calibration | None":
        from sklearn.linear_model import LogisticRegression

        moved = forward_return != 0
        if moved.sum() < MIN_ROWS:
            return None
        up = (forward_return[moved] > 0).astype(int)
        if up.min() == up.max():
            return None
        mean, sd = float(raw[moved].mean()), float(raw[moved].std() or 1.0)
        binary = LogisticRegression(C=1.0).fit(((raw[moved] - mean) / sd)[:, None], up)
        logit_up = binary.decision_function(((raw - mean) / sd)[:, None])
        labels = three_classes(forward_return)
        classes = None
        if len(np.unique(labels)) > 1:
            design = _class_design(logit_up, frame)
            classes = LogisticRegression(C=1.0, max_iter=300).fit(design, labels)
        ups, downs = forward_return[forward_return > 0], forward_return[forward_return < 0]
        class_means = {int(k): float(forward_return[labels == k].mean()) for k in np.unique(labels)}
        return cls(binary, classes, None if classes is None else classes.classes_, (mean, sd),
                   float(ups.mean()) if len(ups) else 0.0, float(-downs.mean()) if len(downs) else 0.0, class_means)

    def apply(self, raw: np.ndarray, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        """p_up (P(up | moves)), p_down3 / p_flat3 / p_up3 (3-class), predicted_class,
        predicted_return (conditional median) and expected_return (conditional mean)."""
        mean, sd = self.scale
        z = ((raw - mean) / sd)[:, None]
        p_up = self.binary.predict_proba(z)[:, 1]
        n = len(raw)
        probs = np.zeros((n, 3))
        if self.classes is not None:
            got = self.classes.predict_proba(_class_design(self.binary.decision_function(z), frame))
            for j, label in enumerate(self.class_labels):
                probs[:, int(label) + 1] = got[:, j]
        else:
            probs[:, 1] = 1.0
        p_down, p_flat, p_up3 = probs[:, 0], probs[:, 1], probs[:, 2]
        predicted_class = np.array([-1, 0, 1])[probs.argmax(axis=1)]
        means = self.class_means or {}
        expected = p_down * means.get(-1, 0.0) + p_flat * means.get(0, 0.0) + p_up3 * means.get(1, 0.0)
        # Conditional median with the flat class's mass at 0 and exponential tails beyond the band.
        up_tail = FLAT_BAND + max(self.up_size - FLAT_BAND, 1e-4) * np.log(2 * np.maximum(p_up3, 0.5))
        down_tail = FLAT_BAND + max(self.down_size - FLAT_BAND, 1e-4) * np.log(2 * np.maximum(p_down, 0.5))
        median = np.where(p_up3 > 0.5, up_tail, np.where(p_down > 0.5, -down_tail, 0.0))
        return {"p_up": p_up, "p_down3": p_down, "p_flat3": p_flat, "p_up3": p_up3, "predicted_class": predicted_class,
                "predicted_return": median, "expected_return": expected}
