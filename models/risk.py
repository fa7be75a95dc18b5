"""Layer 2, the risk model: LightGBM on the 14 features. Its core booster (`classifier`,
the one whose raw score everything reads) learns one of two targets:

- `target="rank"`, the product's: a least-squares regression on each day's cross-sectional
  rank of the label (the label's percentile among the day's rows, minus one half: Qlib's
  CSRankNorm), so the raw score ranks names by what they are expected to earn relative to
  each other. On NSE 2008-2011 (the walk-forward, H = 5) it ranks better than a
  classifier of the label's sign: mean daily rank IC 0.087 against 0.080 on every row,
  0.108 against 0.098 on liquid names (docs/model.md gives the command).
- `target="sign"`, the next-day reference's: a binary classifier of the direction on the
  rows whose label moved, so P(up) means "up, given that it moves" (in a thin market half
  the days do not move at all, and "higher or not" would mostly predict "no trade").

Either way the raw score is turned into P(up), the class probabilities and the expected
return by the rolling out-of-sample calibration of models/calibration.py, in the
walk-forward and in the live stage alike.

The recipe (chosen on the NSE early span, docs/model.md): the classifier sees every moved
row (`CALIBRATION_SHARE` 0: no rows held out for an in-model Platt scaling) and no return
regressor is fitted (`REGRESSOR` False: the predicted return is read off the calibrated
probabilities). Both options remain for screening: a share > 0 fits the classifier on the
earlier rows and Platt-scales it on the most recent ones; `regressor=True` adds a Huber
regressor of the forward return on every row. `fit` can continue boosting from a previous
model (`warm_from`), or keep it as it is (`rounds=0`).

LightGBM is imported where a booster is trained or loaded, not with the module: importing
it pulls in scikit-learn and SciPy (over a second), and most importers of this module
(every stage notebook's kernel through the views, the API, the CLI) never touch a booster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import lightgbm as lgb

DEFAULT_PARAMS = {
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 200,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 10.0,
    "max_bin": 63,
    "verbose": -1,
    "seed": 7,
    "deterministic": True,
    "force_row_wise": True,
    # One thread: on a 2-core machine OpenMP threads that meet any other load spin and run
    # about 4x slower (measured); one thread is also the simplest way to stay deterministic.
    "num_threads": 1,
}
CALIBRATION_SHARE = 0.0  # share of the newest moved rows held out for an in-model Platt scaling
REGRESSOR = False  # whether a forward-return regressor is fitted beside the classifier
TARGETS = ("rank", "sign")
TARGET = "rank"  # what the core booster learns (module docstring)


@dataclass(frozen=True)
class FittedClassifier:
    """The core booster as one fit leaves it: `booster`, and the in-model Platt scaling of
    its raw score, (a, b) in P(up) = logistic(a x raw + b); (1, 0) where none was fitted."""

    booster: lgb.Booster
    platt: tuple[float, float] = (1.0, 0.0)


@dataclass(frozen=True)
class Training:
    """How `RiskModel.fit` trains: `rounds` of boosting (0 with `warm_from`: no boosting,
    the previous model's boosters and Platt scaling kept), the warm start's parent, the most
    recent share of the moved rows held out for the Platt calibration (0: the classifier
    sees every row and the caller calibrates out of sample, as the walk-forward does with
    models/calibration.py), whether a forward-return regressor is fitted beside the
    classifier, and the target the core booster learns."""

    rounds: int
    warm_from: RiskModel | None = None
    calibration_share: float = CALIBRATION_SHARE
    regressor: bool = REGRESSOR
    target: str = TARGET


@dataclass
class RiskModel:
    params: dict = field(default_factory=lambda: dict(DEFAULT_PARAMS))
    regressor: lgb.Booster | None = None
    classifier: lgb.Booster | None = None
    platt: tuple[float, float] = (1.0, 0.0)
    training_rows: int = 0

    def fit(
        self, X: np.ndarray, forward_return: np.ndarray, training: Training, days: np.ndarray | None = None
    ) -> RiskModel:
        """The model trained as `training` says (`Training`). The boosters keep no training
        data (keep_training_booster=False): a warm start continues from the model alone, and
        a kept model costs its trees, not its training set. Without the regressor the
        classifier is fitted alone (the walk-forward reads the predicted return off the
        calibrated class probabilities instead); `predict` then returns a zero return. The
        `rank` target needs `days` (each row's trading day, any sortable key): the label is
        ranked within each day. The regressor (where asked for) is trained before the
        classifier."""
        rounds, warm_from, calibration_share, regressor, target = (
            training.rounds,
            training.warm_from,
            training.calibration_share,
            training.regressor,
            training.target,
        )
        if target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
        if rounds == 0 and warm_from is not None:  # no boosting: keep the previous model's boosters as they are
            return self._keep(warm_from, regressor, len(X))
        if regressor:
            huber = {**self.params, "objective": "huber", "alpha": 0.02}
            self.regressor = _train(huber, X, forward_return, rounds, warm_from.regressor if warm_from else None)
        else:
            self.regressor = None
        init = warm_from.classifier if warm_from else None
        fitted = (
            _fit_rank(self.params, X, forward_return, days, rounds, init)
            if target == "rank"
            else _fit_sign(self.params, X, forward_return, calibration_share, rounds, init)
        )
        self.classifier, self.platt, self.training_rows = fitted.booster, fitted.platt, len(X)
        return self

    def _keep(self, previous: RiskModel, regressor: bool, rows: int) -> RiskModel:
        """No boosting (`rounds=0` with `warm_from`): the previous model's classifier and
        Platt scaling as they are, and its regressor where one is asked for; `rows` is
        recorded as the training rows."""
        self.regressor = previous.regressor if regressor else None
        self.classifier, self.platt = previous.classifier, previous.platt
        self.training_rows = rows
        return self

    def raw_score(self, X: np.ndarray) -> np.ndarray:
        """The core booster's uncalibrated output, what models/calibration.py recalibrates out
        of sample and models/reasons.py explains: under `target="rank"` the predicted daily
        rank of the label (its percentile among the day's rows minus one half, so about
        -0.5 to 0.5; a ranking, not a probability); under `target="sign"` the log-odds of
        up, given that the label moves."""
        return self.classifier.predict(X, raw_score=True)

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(predicted forward return, the booster's own P(up)): the regressor's return (zeros
        without one) and the logistic of the in-model Platt-scaled raw score. Under
        `target="sign"` that is the classifier's probability; under `target="rank"` (no
        Platt scaling) it is the logistic of a predicted rank, near one half and not a
        probability. The served P(up) comes from models/calibration.py; this one stands in
        only where no calibration exists yet."""
        a, b = self.platt
        raw = self.classifier.predict(X, raw_score=True)
        predicted = self.regressor.predict(X) if self.regressor is not None else np.zeros(len(X))
        return predicted, _sigmoid(a * raw + b)

    def importances(self, names: list[str]) -> dict[str, float]:
        gain = self.classifier.feature_importance("gain")
        total = gain.sum() or 1.0
        return {n: round(float(g / total), 4) for n, g in zip(names, gain)}


def daily_rank(label: np.ndarray, days: np.ndarray | None) -> np.ndarray:
    """Each row's label as its percentile among the rows of its day, minus one half (ties
    share their average rank); a day with one row reads 0."""
    if days is None:
        raise ValueError("target='rank' needs each row's day")
    frame = pd.DataFrame({"day": np.asarray(days), "label": np.asarray(label, float)})
    return (
        (frame.groupby("day")["label"].rank(pct=True) - 0.5)
        .where(frame.groupby("day")["label"].transform("size") > 1, 0.0)
        .to_numpy(float)
    )


def _train(params: dict, X: np.ndarray, label: np.ndarray, rounds: int, init: lgb.Booster | None) -> lgb.Booster:
    """`rounds` boosting rounds of LightGBM on (X, label), continuing from `init` where
    there is one."""
    import lightgbm as lgb

    return lgb.train(params, lgb.Dataset(X, label), rounds, init_model=init)


def _fit_rank(
    params: dict,
    X: np.ndarray,
    forward_return: np.ndarray,
    days: np.ndarray | None,
    rounds: int,
    init: lgb.Booster | None,
) -> FittedClassifier:
    """`target="rank"`: a least-squares regression on each day's rank of the label, on
    every row; no Platt scaling (the raw score is a rank, not log-odds)."""
    booster = _train({**params, "objective": "regression"}, X, daily_rank(forward_return, days), rounds, init)
    return FittedClassifier(booster)


def _fit_sign(
    params: dict,
    X: np.ndarray,
    forward_return: np.ndarray,
    calibration_share: float,
    rounds: int,
    init: lgb.Booster | None,
) -> FittedClassifier:
    """`target="sign"`: a binary classifier of up against down on the rows whose label
    moved. The rows are in time order, so the most recent `calibration_share` of them is
    held out and the Platt scaling is fitted there; with none held out it is (1, 0)."""
    moved = forward_return != 0
    Xm, up = X[moved], (forward_return[moved] > 0).astype(float)
    split = int(len(Xm) * (1 - calibration_share))  # rows are in time order: calibrate on the most recent share
    booster = _train({**params, "objective": "binary"}, Xm[:split], up[:split], rounds, init)
    if split >= len(Xm):
        return FittedClassifier(booster)
    return FittedClassifier(booster, _platt(booster.predict(Xm[split:], raw_score=True), up[split:]))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(z, -50, 50)))


def _platt(raw: np.ndarray, y: np.ndarray, steps: int = 50) -> tuple[float, float]:
    """Logistic fit of y on the raw score (Newton's method, lightly regularised)."""
    if len(raw) < 50 or y.min() == y.max():
        return 1.0, 0.0
    a, b = 1.0, 0.0
    for _ in range(steps):
        p = _sigmoid(a * raw + b)
        w = p * (1 - p) + 1e-9
        grad = np.array([np.sum((p - y) * raw) + 1e-3 * (a - 1), np.sum(p - y)])
        hess = np.array([[np.sum(w * raw * raw) + 1e-3, np.sum(w * raw)], [np.sum(w * raw), np.sum(w)]])
        step = np.linalg.solve(hess, grad)
        a, b = a - step[0], b - step[1]
        if np.abs(step).max() < 1e-8:
            break
    return float(a), float(b)


def save_model(model: RiskModel, folder) -> None:  # noqa: ANN001
    """Write the boosters (the regressor only where the model has one) and the in-model
    Platt scaling to `folder` (created)."""
    import json
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if model.regressor is not None:
        model.regressor.save_model(str(folder / "regressor.txt"))
    model.classifier.save_model(str(folder / "classifier.txt"))
    (folder / "model.json").write_text(
        json.dumps(
            {"params": model.params, "platt": model.platt, "training_rows": model.training_rows}, indent=2, default=str
        )
    )


def load_model(folder) -> RiskModel:  # noqa: ANN001
    import json
    from pathlib import Path

    import lightgbm as lgb

    folder = Path(folder)
    meta = json.loads((folder / "model.json").read_text())
    regressor = folder / "regressor.txt"
    return RiskModel(
        params=meta["params"],
        regressor=lgb.Booster(model_file=str(regressor)) if regressor.exists() else None,
        classifier=lgb.Booster(model_file=str(folder / "classifier.txt")),
        platt=tuple(meta["platt"]),
        training_rows=meta["training_rows"],
    )
