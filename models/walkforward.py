"""Walk-forward training and out-of-sample prediction.

Expanding window. Every `retrain_every` trading days (5) a model is trained on every row
whose label was known strictly before the block's first day, less an embargo of
`embargo_days` trading days (so no training label overlaps the days being predicted),
and it predicts the block. Between full refits (every `full_refit_every` trading days)
the model is warm-started: boosting continues from the previous booster for
`warm_rounds` more rounds on the most recent `warm_window_days` trading days of the
window (the newest information, at a fraction of the cost of the whole window; the full
refits keep the whole expanding window). At each full refit Optuna can tune the
hyperparameters on inner walk-forward folds of the training window, within a trial and
time budget. Everything is seeded and single-threaded per fit, so a run is repeatable
bit for bit.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from models.features import FEATURE_NAMES
from models.risk import DEFAULT_PARAMS, RiskModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WalkForwardConfig:
    horizon: int = 1
    retrain_every: int = 5
    full_refit_every: int = 120
    min_train_days: int = 250
    embargo_days: int = 1
    full_rounds: int = 150
    warm_rounds: int = 20
    warm_window_days: int = 250
    tune_trials: int = 0
    tune_timeout_seconds: float = 120.0
    first_test_date: date | None = None


@dataclass
class TrainedModel:
    block_start: date
    train_end: date
    training_rows: int
    warm_start: bool
    params: dict
    model: RiskModel


@dataclass
class WalkForwardResult:
    predictions: pd.DataFrame
    models: list[TrainedModel] = field(default_factory=list)
    seconds: float = 0.0


def with_day_numbers(data: pd.DataFrame, dates: list) -> pd.DataFrame:
    """Add integer positions of `date` and `label_end` among the trading days, so that the
    per-block filters compare integers instead of date objects."""
    position = {d: i for i, d in enumerate(dates)}
    return data.assign(day_number=data["date"].map(position).astype("int64"),
                       label_day=data["label_end"].map(position).fillna(len(dates) + 1).astype("int64"))


def training_rows(data: pd.DataFrame, dates: list, block_start: int, embargo_days: int) -> pd.DataFrame:
    """Rows whose label is known before the block, with the embargo: label_end must be
    earlier than the trading day `embargo_days` before the block's first day."""
    if "label_day" not in data:
        data = with_day_numbers(data, dates)
    cutoff = max(0, block_start - embargo_days)
    rows = data[data["forward_return"].notna().to_numpy() & (data["label_day"].to_numpy() < cutoff)]
    return rows.sort_values(["day_number", "symbol"], kind="stable")  # time order: calibration uses the latest rows


def walk_forward(data: pd.DataFrame, config: WalkForwardConfig) -> WalkForwardResult:
    started = time.perf_counter()
    dates = sorted(data["date"].unique())
    first = config.min_train_days
    if config.first_test_date is not None:
        first = max(first, int(np.searchsorted(dates, np.datetime64(config.first_test_date) if isinstance(dates[0], np.datetime64) else config.first_test_date)))
    data = with_day_numbers(data, dates)
    by_date = {d: part for d, part in data.groupby("date")}
    outputs, models = [], []
    previous: RiskModel | None = None
    params = dict(DEFAULT_PARAMS)
    last_full = None
    for block_start in range(first, len(dates), config.retrain_every):
        train = training_rows(data, dates, block_start, config.embargo_days)
        if len(train) < 500:
            continue
        full = previous is None or last_full is None or block_start - last_full >= config.full_refit_every
        if full and config.tune_trials:
            from models.tuning import tune

            params = tune(train, config, params)
        fit_rows = train if full else train[train["day_number"].to_numpy() >= block_start - config.warm_window_days]
        X, y = fit_rows[FEATURE_NAMES].to_numpy(float), fit_rows["forward_return"].to_numpy(float)
        model = RiskModel(params=dict(params)).fit(X, y, config.full_rounds if full else config.warm_rounds,
                                                   warm_from=None if full else previous)
        models.append(TrainedModel(dates[block_start], train["label_end"].max(), len(train), not full, dict(params), model))
        if full:
            last_full = block_start
        previous = model
        block = pd.concat([by_date[d] for d in dates[block_start:block_start + config.retrain_every]])
        predicted_return, p_up = model.predict(block[FEATURE_NAMES].to_numpy(float))
        outputs.append(block.assign(predicted_return=predicted_return, p_up=p_up, model_index=len(models) - 1))
        if len(models) % 50 == 0:
            log.info("walk-forward: %d models, predicted up to %s, %.0fs", len(models), dates[block_start],
                     time.perf_counter() - started)
    predictions = pd.concat(outputs, ignore_index=True) if outputs else pd.DataFrame()
    return WalkForwardResult(predictions, models, time.perf_counter() - started)
