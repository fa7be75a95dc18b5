"""Walk-forward training and out-of-sample prediction.

Expanding window, predicted in blocks of `retrain_every` trading days (5). At each full
refit a model is trained on every row whose label was known strictly before the block's
first day, less an embargo of `embargo_days` trading days (so no training label overlaps
the days being predicted), and it predicts the block. Between full refits (every
`full_refit_every` trading days) the model can be warm-started: boosting continues from
the previous booster for `warm_rounds` more rounds on the most recent `warm_window_days`
trading days of the window. The default is `warm_rounds=0`: between full refits the
booster is kept as it is and only the rolling calibration below follows the newest days
(on the NSE early span the warm starts, 20 rounds every 5 days, over-fitted the latest
250 days: binary 59.09% with them, 59.85% without, and the walk-forward costs less;
docs/model-appendix-rounds.md). At each full refit Optuna can tune the hyperparameters
on inner walk-forward folds of the training window, within a trial and time budget.
Everything is seeded and single-threaded per fit, so a run is repeatable bit for bit.

Calibration (models/calibration.py): before each block, the classifier's raw scores are
recalibrated on the out-of-sample scores of the previous `calibration_days` trading days
whose labels are known before the block (the same purge and embargo as training): P(up),
the down / flat / up probabilities, the 3-class prediction and the predicted return (the
conditional median) come from there. The walk-forward starts `calibration_days` before the
first scored day so the first scored block is calibrated; those warm-up models are counted
(`warmup_models`), not returned. Memory: only the previous model and the calibration
window's scores are carried from block to block.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from models.features import FEATURE_NAMES
from models.risk import CALIBRATION_SHARE, DEFAULT_PARAMS, REGRESSOR, TARGET, RiskModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WalkForwardConfig:
    horizon: int = 1
    retrain_every: int = 5
    full_refit_every: int = 120
    min_train_days: int = 250
    embargo_days: int = 1
    full_rounds: int = 150
    # 0: no warm start, the booster is kept until the next full refit (chosen on the NSE
    # early span, docs/model-appendix-rounds.md: 20 rounds every 5 days over-fitted the latest days).
    warm_rounds: int = 0
    warm_window_days: int = 250
    tune_trials: int = 0
    tune_timeout_seconds: float = 120.0
    first_test_date: date | None = None
    # Rolling out-of-sample calibration (models/calibration.py): the scores of the last
    # `calibration_days` trading days of earlier blocks whose labels are known before the
    # block. The walk-forward starts that many days before `first_test_date` so the first
    # scored block is already calibrated; those warm-up predictions are not returned.
    calibration_days: int = 120
    calibrate: bool = True
    # Share of the newest moved training rows the booster's own Platt scaling holds out,
    # and whether to fit the return regressor. Chosen on the NSE early span (scored
    # 2008-2011, docs/model-appendix-rounds.md): the classifier sees every moved row (0: binary 58.84%
    # against 57.93% with a 20% hold-out) and no regressor (the predicted return comes
    # from the calibrated probabilities; blocks before any calibration predict 0 and use
    # the booster's uncalibrated probability).
    calibration_share: float = CALIBRATION_SHARE
    regressor: bool = REGRESSOR
    # What the booster learns (models/risk.py): "rank", the label's cross-sectional rank
    # within each day (the product's), or "sign", its direction (the next-day reference).
    target: str = TARGET
    params: dict = field(default_factory=dict)  # LightGBM parameters over DEFAULT_PARAMS
    # The model's inputs, columns of the panel: None is the registry (models/features.py).
    # Another list is for screening candidate inputs on an early span only
    # (benchmarks/feature_screen.py); the live pipeline always uses the registry.
    features: tuple[str, ...] | None = None
    # Keep the reasons of each scored prediction (models/reasons.py: the three largest
    # contributions to its raw score): the validation record stores them; the benchmarks
    # and the tuning folds do not need them.
    explain: bool = False


def run_params(params: dict, config: WalkForwardConfig) -> dict:
    """What is stored of a model's recipe with each model run (`model_runs.params`): its
    LightGBM parameters, the classifier's hold-out share and whether a regressor was fitted.
    The live stage refits in full when its stored model was trained under another hold-out
    share or regressor setting (models/scoring.retrain_plan)."""
    return {
        **params,
        "calibration_share": config.calibration_share,
        "regressor": config.regressor,
        "target": config.target,
    }


@dataclass
class TrainedModel:
    """What is kept of each model: its window and settings (the boosters are not kept,
    a re-run rebuilds them bit for bit); `trees` counts the classifier's trees and
    `importances` is each feature's share of its gain (14 numbers, for the research
    notebook's feature importance over time)."""

    block_start: date
    train_end: date
    training_rows: int
    warm_start: bool
    params: dict
    trees: int = 0
    calibrated: bool = False
    importances: dict[str, float] = field(default_factory=dict)


@dataclass
class WalkForwardResult:
    predictions: pd.DataFrame
    models: list[TrainedModel] = field(default_factory=list)
    seconds: float = 0.0
    latest: RiskModel | None = None  # the last model trained (the only booster kept)
    warmup_models: int = 0  # models trained before the first scored day, for calibration history only


def with_day_numbers(data: pd.DataFrame, dates: list) -> pd.DataFrame:
    """Add integer positions of `date` and `label_end` among the trading days, so that the
    per-block filters compare integers instead of date objects."""
    position = {d: i for i, d in enumerate(dates)}
    return data.assign(
        day_number=data["date"].map(position).astype("int64"),
        label_day=data["label_end"].map(position).fillna(len(dates) + 1).astype("int64"),
    )


def training_rows(data: pd.DataFrame, dates: list, block_start: int, embargo_days: int) -> pd.DataFrame:
    """Rows whose label is known before the block, with the embargo: label_end must be
    earlier than the trading day `embargo_days` before the block's first day."""
    if "label_day" not in data:
        data = with_day_numbers(data, dates)
    cutoff = max(0, block_start - embargo_days)
    rows = data[data["forward_return"].notna().to_numpy() & (data["label_day"].to_numpy() < cutoff)]
    return rows.sort_values(["day_number", "symbol"], kind="stable")  # time order: calibration uses the latest rows


def walk_forward(data: pd.DataFrame, config: WalkForwardConfig) -> WalkForwardResult:
    """Predictions for every row from `first_test_date` (or `min_train_days`) on. Memory:
    only the previous model (for the warm start) and the calibration window's scores are
    carried from block to block (boosters keep no training data)."""
    from models.calibration import Calibration, in_window, score_rows

    started = time.perf_counter()
    dates = sorted(data["date"].unique())
    first_scored = config.min_train_days
    if config.first_test_date is not None:
        first_scored = max(
            first_scored,
            int(
                np.searchsorted(
                    dates,
                    np.datetime64(config.first_test_date)
                    if isinstance(dates[0], np.datetime64)
                    else config.first_test_date,
                )
            ),
        )
    first = max(config.min_train_days, first_scored - (config.calibration_days if config.calibrate else 0))
    data = with_day_numbers(data, dates).sort_values(["day_number", "symbol"], kind="stable").reset_index(drop=True)
    day_number = data["day_number"].to_numpy()
    label_day = data["label_day"].to_numpy()
    labelled = data["forward_return"].notna().to_numpy()
    names = list(config.features or FEATURE_NAMES)
    X_all = data[names].to_numpy(float)
    y_all = data["forward_return"].to_numpy(float)
    day_start = np.searchsorted(day_number, np.arange(len(dates) + 1))  # rows of day d: day_start[d]:day_start[d+1]
    outputs, models = [], []
    previous: RiskModel | None = None
    params = {**DEFAULT_PARAMS, **config.params}
    last_full = None
    warmup = 0
    recent_raw: list[np.ndarray] = []  # the calibration window: raw scores and row positions of earlier blocks
    recent_rows: list[np.ndarray] = []
    for block_start in range(first, len(dates), config.retrain_every):
        cutoff = max(0, block_start - config.embargo_days)
        train_mask = labelled[: day_start[cutoff]] & (label_day[: day_start[cutoff]] < cutoff)
        if train_mask.sum() < 500:
            continue
        full = previous is None or last_full is None or block_start - last_full >= config.full_refit_every
        if full and config.tune_trials:
            from models.tuning import tune

            params = tune(training_rows(data, dates, block_start, config.embargo_days), config, params)
        kept = not full and config.warm_rounds == 0  # no warm start: the previous booster predicts this block too
        if kept:
            model = previous  # its training window and end are those of the model it is (kept_rows, kept_end)
        else:
            if not full:
                train_mask &= day_number[: day_start[cutoff]] >= block_start - config.warm_window_days
            train_index = np.flatnonzero(train_mask)
            X, y = X_all[train_index], y_all[train_index]
            model = RiskModel(params=dict(params)).fit(
                X,
                y,
                config.full_rounds if full else config.warm_rounds,
                warm_from=None if full else previous,
                calibration_share=config.calibration_share,
                regressor=config.regressor,
                days=day_number[train_index],
                target=config.target,
            )
            del X, y
            kept_rows, kept_end = len(train_index), dates[int(label_day[train_index].max())]
        training_count, train_end = kept_rows, kept_end
        if full:
            last_full = block_start
        previous = model
        rows = np.arange(day_start[block_start], day_start[min(block_start + config.retrain_every, len(dates))])
        block = data.iloc[rows]
        calibration = None
        if config.calibrate and recent_rows:
            window_rows = np.concatenate(recent_rows)
            window_raw = np.concatenate(recent_raw)
            known = labelled[window_rows] & in_window(
                day_number[window_rows],
                label_day[window_rows],
                block_start,
                config.calibration_days,
                config.embargo_days,
            )
            if known.sum() >= 500:
                frame = data.iloc[window_rows[known]]
                calibration = Calibration.fit(window_raw[known], frame, y_all[window_rows[known]])
        scored_block = block_start + config.retrain_every > first_scored
        out = score_rows(model, X_all[rows], block, calibration, names if config.explain and scored_block else None)
        out["calibration_rows"] = np.full(len(rows), calibration.rows if calibration is not None else 0)
        raw = out["raw_score"]
        if scored_block:  # warm-up models (calibration history only) are counted, not listed
            models.append(
                TrainedModel(
                    dates[block_start],
                    train_end,
                    training_count,
                    not full,
                    dict(params),
                    model.classifier.num_trees(),
                    calibration is not None,
                    model.importances(names),
                )
            )
        else:
            warmup += 1
        if config.calibrate:
            recent_rows.append(rows)
            recent_raw.append(raw)
            while (
                recent_rows
                and day_number[recent_rows[0][-1]]
                < block_start - config.calibration_days - config.retrain_every - config.horizon
            ):
                recent_rows.pop(0)
                recent_raw.pop(0)
        if scored_block:
            scored = day_number[rows] >= first_scored
            part = block.assign(**out, model_index=len(models) - 1)
            outputs.append(part[scored] if not scored.all() else part)
        if scored_block and len(models) % 50 == 0:
            log.info(
                "walk-forward: %d models, predicted up to %s, %.0fs",
                len(models),
                dates[block_start],
                time.perf_counter() - started,
            )
    predictions = pd.concat(outputs, ignore_index=True) if outputs else pd.DataFrame()
    return WalkForwardResult(predictions, models, time.perf_counter() - started, previous, warmup)
