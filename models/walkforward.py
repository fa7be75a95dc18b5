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
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from models.features import FEATURE_NAMES
from models.risk import CALIBRATION_SHARE, DEFAULT_PARAMS, REGRESSOR, TARGET, RiskModel, Training

if TYPE_CHECKING:
    from models.calibration import Calibration

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


@dataclass(frozen=True)
class PanelArrays:
    """The panel in time order (trading day, then symbol) with each row's day numbers, and
    the arrays every block reads: the inputs `X` (columns `names`), the label `y`, whether
    it is known (`labelled`), and where each day's rows start (the rows of day d are
    `day_start[d]:day_start[d + 1]`)."""

    data: pd.DataFrame
    dates: list
    names: list[str]
    X: np.ndarray
    y: np.ndarray
    labelled: np.ndarray
    day_number: np.ndarray
    label_day: np.ndarray
    day_start: np.ndarray

    @classmethod
    def of(cls, data: pd.DataFrame, names: list[str]) -> PanelArrays:
        dates = sorted(data["date"].unique())
        data = with_day_numbers(data, dates).sort_values(["day_number", "symbol"], kind="stable").reset_index(drop=True)
        day_number = data["day_number"].to_numpy()
        return cls(
            data=data,
            dates=dates,
            names=names,
            X=data[names].to_numpy(float),
            y=data["forward_return"].to_numpy(float),
            labelled=data["forward_return"].notna().to_numpy(),
            day_number=day_number,
            label_day=data["label_day"].to_numpy(),
            day_start=np.searchsorted(day_number, np.arange(len(dates) + 1)),
        )

    def rows(self, first_day: int, end_day: int) -> np.ndarray:
        """Positions of the rows dated from trading day `first_day` up to, not including,
        `end_day` (or the last day)."""
        return np.arange(self.day_start[first_day], self.day_start[min(end_day, len(self.dates))])


@dataclass(frozen=True)
class Schedule:
    """Where the blocks start, as positions among the trading days: the first scored day is
    `first_test_date` (or `min_train_days` if later), and with the rolling calibration the
    blocks start `calibration_days` earlier (never before `min_train_days`), so that the
    first scored block is already calibrated; the blocks before it are warm-up blocks."""

    first_block: int
    first_scored: int

    @classmethod
    def of(cls, dates: list, config: WalkForwardConfig) -> Schedule:
        first_scored = config.min_train_days
        if config.first_test_date is not None:
            first = config.first_test_date
            day = np.datetime64(first) if isinstance(dates[0], np.datetime64) else first
            first_scored = max(first_scored, int(np.searchsorted(dates, day)))
        warmup = config.calibration_days if config.calibrate else 0
        return cls(max(config.min_train_days, first_scored - warmup), first_scored)

    def scores(self, block_start: int, retrain_every: int) -> bool:
        """Whether the block holds a scored day (else it is a warm-up block)."""
        return block_start + retrain_every > self.first_scored


@dataclass(frozen=True)
class BlockModel:
    """The model that predicts a block and what is recorded of it: whether it is a full
    refit, the block start of the latest full refit (`last_full`), the LightGBM parameters
    in force (tuned at full refits), and its training rows and the day its latest training
    label ended. A kept model (no warm start) records those of the model it is."""

    model: RiskModel
    full: bool
    last_full: int
    params: dict
    training_rows: int
    train_end: date

    def record(self, block_start: date, calibrated: bool, names: list[str]) -> TrainedModel:
        """What is kept of the model that scores the block starting on `block_start`."""
        trees = self.model.classifier.num_trees()
        return TrainedModel(
            block_start,
            self.train_end,
            self.training_rows,
            not self.full,
            dict(self.params),
            trees,
            calibrated,
            self.model.importances(names),
        )


def block_model(
    panel: PanelArrays, config: WalkForwardConfig, block_start: int, previous: BlockModel | None
) -> BlockModel | None:
    """The model that predicts the block starting on trading day `block_start`, or None
    while fewer than 500 rows may train it. Training rows are those whose label is known
    before the block, less the embargo: their label ends before the trading day
    `embargo_days` before the block's first day (so no training label overlaps the days
    predicted). A full refit (the first model, then every `full_refit_every` trading days)
    trains `full_rounds` on every such row, after Optuna tuning where `tune_trials` asks
    for it. Between full refits, `warm_rounds` > 0 continues boosting from the previous
    booster on the latest `warm_window_days` trading days of those rows; `warm_rounds` 0
    keeps the previous booster as it is."""
    cutoff = max(0, block_start - config.embargo_days)
    end = panel.day_start[cutoff]
    train_mask = panel.labelled[:end] & (panel.label_day[:end] < cutoff)
    if train_mask.sum() < 500:
        return None
    full = previous is None or block_start - previous.last_full >= config.full_refit_every
    params = previous.params if previous is not None else {**DEFAULT_PARAMS, **config.params}
    if full and config.tune_trials:
        from models.tuning import tune

        params = tune(training_rows(panel.data, panel.dates, block_start, config.embargo_days), config, params)
    if not full and config.warm_rounds == 0:  # no warm start: the previous booster predicts this block too
        return replace(previous, full=False, params=params)
    if not full:
        train_mask &= panel.day_number[:end] >= block_start - config.warm_window_days
    train_index = np.flatnonzero(train_mask)
    model = _fit(panel, config, train_index, params, None if full else previous.model)
    train_end = panel.dates[int(panel.label_day[train_index].max())]
    last_full = block_start if full else previous.last_full
    return BlockModel(model, full, last_full, params, len(train_index), train_end)


def _fit(
    panel: PanelArrays, config: WalkForwardConfig, train_index: np.ndarray, params: dict, warm_from: RiskModel | None
) -> RiskModel:
    """A risk model fitted on the rows `train_index` (in time order): `full_rounds` from
    scratch, or `warm_rounds` more from `warm_from`."""
    rounds = config.full_rounds if warm_from is None else config.warm_rounds
    training = Training(rounds, warm_from, config.calibration_share, config.regressor, config.target)
    return RiskModel(params=dict(params)).fit(
        panel.X[train_index], panel.y[train_index], training, days=panel.day_number[train_index]
    )


@dataclass(frozen=True)
class CalibrationWindow:
    """The rolling calibration's window: the row positions and raw scores of the latest
    earlier blocks (only these are carried from block to block)."""

    rows: tuple[np.ndarray, ...] = ()
    raw: tuple[np.ndarray, ...] = ()

    def calibration(self, panel: PanelArrays, block_start: int, config: WalkForwardConfig) -> Calibration | None:
        """The block's calibration, fitted on the window's rows dated within the last
        `calibration_days` trading days whose labels are known before the block (the same
        purge and embargo as training); None with fewer than 500 such rows."""
        if not self.rows:
            return None
        from models.calibration import Calibration, in_window

        rows, raw = np.concatenate(self.rows), np.concatenate(self.raw)
        known = panel.labelled[rows] & in_window(
            panel.day_number[rows], panel.label_day[rows], block_start, config.calibration_days, config.embargo_days
        )
        if known.sum() < 500:
            return None
        return Calibration.fit(raw[known], panel.data.iloc[rows[known]], panel.y[rows[known]])

    def after(
        self, block: ScoredBlock, block_start: int, config: WalkForwardConfig, day_number: np.ndarray
    ) -> CalibrationWindow:
        """The window with `block` added and the blocks that can no longer calibrate a
        later block (their last day before the next calibration window, with the label's
        horizon to spare) dropped."""
        rows, raw = [*self.rows, block.rows], [*self.raw, block.outputs["raw_score"]]
        oldest = block_start - config.calibration_days - config.retrain_every - config.horizon
        while rows and day_number[rows[0][-1]] < oldest:
            rows.pop(0)
            raw.pop(0)
        return CalibrationWindow(tuple(rows), tuple(raw))


@dataclass(frozen=True)
class ScoredBlock:
    """A block's rows (`rows` positions, `frame` the panel's rows), the model's outputs for
    them (models/calibration.score_rows, and `calibration_rows`), the calibration used
    (None: the booster's own probability) and whether the block holds a scored day."""

    rows: np.ndarray
    frame: pd.DataFrame
    outputs: dict[str, np.ndarray]
    calibration: Calibration | None
    scored: bool

    def predictions(self, day_number: np.ndarray, first_scored: int, model_index: int) -> pd.DataFrame:
        """The block's rows with their outputs and `model_index`, less the warm-up days."""
        scored = day_number[self.rows] >= first_scored
        part = self.frame.assign(**self.outputs, model_index=model_index)
        return part[scored] if not scored.all() else part


def score_block(
    panel: PanelArrays,
    config: WalkForwardConfig,
    block_start: int,
    model: RiskModel,
    window: CalibrationWindow,
    scored: bool,
) -> ScoredBlock:
    """The `retrain_every` trading days from `block_start` scored by `model`, calibrated on
    `window`; the reasons are kept for scored blocks where `explain` asks for them."""
    from models.calibration import score_rows

    rows = panel.rows(block_start, block_start + config.retrain_every)
    frame = panel.data.iloc[rows]
    calibration = window.calibration(panel, block_start, config) if config.calibrate else None
    explain = panel.names if config.explain and scored else None
    out = score_rows(model, panel.X[rows], frame, calibration, explain)
    out["calibration_rows"] = np.full(len(rows), calibration.rows if calibration is not None else 0)
    return ScoredBlock(rows, frame, out, calibration, scored)


def walk_forward(data: pd.DataFrame, config: WalkForwardConfig) -> WalkForwardResult:
    """Predictions for every row from `first_test_date` (or `min_train_days`) on. Memory:
    only the previous model (for the warm start) and the calibration window's scores are
    carried from block to block (boosters keep no training data)."""
    started = time.perf_counter()
    panel = PanelArrays.of(data, list(config.features or FEATURE_NAMES))
    schedule = Schedule.of(panel.dates, config)
    current: BlockModel | None = None
    window = CalibrationWindow()
    outputs, models, warmup = [], [], 0
    for block_start in range(schedule.first_block, len(panel.dates), config.retrain_every):
        trained = block_model(panel, config, block_start, current)
        if trained is None:
            continue
        current = trained
        scored = schedule.scores(block_start, config.retrain_every)
        block = score_block(panel, config, block_start, current.model, window, scored)
        if config.calibrate:
            window = window.after(block, block_start, config, panel.day_number)
        if not scored:  # warm-up models (calibration history only) are counted, not listed
            warmup += 1
            continue
        models.append(current.record(panel.dates[block_start], block.calibration is not None, panel.names))
        outputs.append(block.predictions(panel.day_number, schedule.first_scored, len(models) - 1))
        if len(models) % 50 == 0:
            elapsed = time.perf_counter() - started
            log.info(
                "walk-forward: %d models, predicted up to %s, %.0fs", len(models), panel.dates[block_start], elapsed
            )
    predictions = pd.concat(outputs, ignore_index=True) if outputs else pd.DataFrame()
    latest = current.model if current is not None else None
    return WalkForwardResult(predictions, models, time.perf_counter() - started, latest, warmup)
