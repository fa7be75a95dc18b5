"""The reasons behind each prediction: LightGBM's own per-prediction contributions of the
risk model's classifier (`Booster.predict(X, pred_contrib=True)`, TreeSHAP), one signed
contribution per input and the base value (the booster's expected raw score, the last
column); per row they add up to the prediction's raw score. Units: the raw score
(models/risk.py `RiskModel.raw_score`) before the calibration of models/calibration.py.
Under the product's target ("rank") that is the booster's prediction of the name's daily
rank of the label, its percentile among the day's names minus one half: a contribution of
+0.01 moves the name up about one percentile point of the day's ranking. Under "sign" (the
next-day reference) it is the log-odds of "up, given that the label moves" (+0.10 moves the
uncalibrated odds by a factor e^0.10). They explain the ranking, not the calibrated Score
or the expected excess point by point.

Each prediction keeps the three inputs with the largest absolute contribution, largest
first, with their signs (fewer where fewer moved it: a contribution that rounds to zero
is no reason and is not listed), the base value, and the inputs it had no value for (`missing`: a
new listing's first weeks lack the windowed inputs; the trees send a missing input down
their missing branch, so a prediction with several missing leans on the few it had): the
JSON column `reasons` on `predictions` and `validation_predictions` (migration 0015),
rounded to six decimals: `{"base_value": b, "top": [{"feature": name, "contribution": c},
...], "missing": [name, ...]}`. `served` turns
it into what the API, the rationales and the suggestions show: each input by its label
(models/features.py `feature_label`: a prediction stored under an earlier feature set names
its retired inputs by the label they had); the API's also carry the raw score and the contribution
of the inputs not listed (`other_inputs`), so base value + listed + other_inputs = raw score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np

from models.features import feature_label

if TYPE_CHECKING:
    from models.risk import RiskModel

TOP = 3  # inputs kept per prediction
DIGITS = 6


class StoredReason(TypedDict):
    """One input's stored contribution (its registry name)."""

    feature: str
    contribution: float


class StoredReasons(TypedDict):
    """The JSON document in the `reasons` column: the base value, the top inputs and the
    inputs the row had no value for (`missing`, registry names; absent on rows stored
    before the model recorded them)."""

    base_value: float
    top: list[StoredReason]
    missing: NotRequired[list[str]]


class ServedReason(TypedDict):
    """One input's contribution as served (its label)."""

    input: str
    contribution: float


class ServedReasons(TypedDict):
    """The reasons as the API, the rationales and the suggestions show them (a JSON
    document: it is stored inside a trade's rationale and a suggestion's reason). Served
    with its prediction's raw score (`served(stored, raw_score)`, the API's), also the raw
    score and the sum of the inputs not listed (`other_inputs`): base_value + the listed
    contributions + other_inputs = raw_score."""

    base_value: float
    inputs: list[ServedReason]
    raw_score: NotRequired[float]
    other_inputs: NotRequired[float]
    missing_inputs: NotRequired[list[str]]


def contributions(model: RiskModel, X: np.ndarray) -> np.ndarray:
    """(rows, inputs + 1): each input's contribution to the classifier's raw score, the
    base value last (LightGBM's pred_contrib)."""
    return np.asarray(model.classifier.predict(X, pred_contrib=True), dtype=float).reshape(len(X), -1)


def moved(contribution: float) -> bool:
    """Whether an input's contribution, rounded as stored, moved the prediction at all: one
    that rounds to zero is no reason and is never listed."""
    return round(float(contribution), DIGITS) != 0


def top_reasons(contrib: np.ndarray, names: Sequence[str], top: int = TOP) -> list[StoredReasons]:
    """Per row of `contrib` (`contributions`): the `top` inputs by absolute contribution,
    largest first (ties: the registry's order), with their signed contributions, and the
    base value. An input whose contribution rounds to zero is left out (`moved`), so a
    row the trees split on fewer inputs lists fewer."""
    values = contrib[:, :-1]
    if values.shape[1] != len(names):
        raise ValueError(f"{values.shape[1]} contributions for {len(names)} inputs")
    order = np.argsort(-np.abs(values), axis=1, kind="stable")[:, :top]
    return [
        {
            "base_value": round(float(row[-1]), DIGITS),
            "top": [
                {"feature": names[j], "contribution": round(float(row[j]), DIGITS)} for j in picked if moved(row[j])
            ],
        }
        for row, picked in zip(contrib, order)
    ]


def explain(model: RiskModel, X: np.ndarray, names: Sequence[str]) -> list[StoredReasons]:
    """The stored reasons of each row of `X` (see the module docstring), with the inputs
    the row has no value for (NaN in `X`) as `missing`, in the registry's order."""
    if len(X) == 0:
        return []
    reasons = top_reasons(contributions(model, X), names)
    for stored, absent in zip(reasons, np.isnan(np.asarray(X, dtype=float)), strict=True):
        stored["missing"] = [names[j] for j in np.flatnonzero(absent)]
    return reasons


def served(stored: StoredReasons | None, raw_score: float | None = None) -> ServedReasons | None:
    """Stored reasons as served: `{"base_value": b, "inputs": [{"input": label,
    "contribution": c}, ...]}`, largest first, an input that rounds to zero left out
    (`moved`: a row stored with one lists it); with the prediction's `raw_score`, also
    `raw_score` and `other_inputs`, the remaining inputs' contributions together (the raw
    score less the base value and the listed contributions, rounded as they are), so the
    served figures add up; and `missing_inputs`, the labels of the inputs the model had
    no value for, where the stored reasons recorded them. None when the prediction has none
    (stored before migration 0015)."""
    if not stored:
        return None
    reasons: ServedReasons = {
        "base_value": stored["base_value"],
        "inputs": [
            {"input": feature_label(r["feature"]), "contribution": r["contribution"]}
            for r in stored["top"]
            if moved(r["contribution"])
        ],
    }
    if raw_score is not None:
        listed = stored["base_value"] + sum(r["contribution"] for r in stored["top"])
        reasons["raw_score"] = round(float(raw_score), DIGITS)
        reasons["other_inputs"] = round(float(raw_score) - listed, DIGITS)
    if "missing" in stored:
        reasons["missing_inputs"] = [feature_label(name) for name in stored["missing"]]
    return reasons
