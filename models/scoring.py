"""Scoring a trading day (T1 step 4), the computing part: the point-in-time panel from
what the store holds, the retraining rule, the live calibration, predictions and
decisions, and the live track record. Nothing here opens a connection: the stage's
shell (pipeline/scoring.py `score_day`) reads, calls these, and writes.

Point in time: the panel holds only rows dated on or before the day, in their versions as
stored when the stage runs. Layer 1 values are cached per (instrument, day, model id,
horizon) in `layer1_forecasts`, so a day is computed once; history days without a cached
value use the empirical fallback inside the panel.

The model is the one the benchmark measures (models/walkforward.py, docs/model.md): the
same recipe, the same training rows and the same calibration rule.

- Retraining (`retrain_plan`): a new model is trained when none exists, when the last one
  was trained on another feature list than the registry's or under another recipe (a full
  refit), or when at least 5 trading days have passed since the last one was trained:
  with the default `warm_rounds=0` the new model keeps its parent's boosters, with a full
  refit on all history every 120 trading days. Training rows are
  `walkforward.training_rows`: labels known before the day, less the embargo. Each model
  is registered in `model_runs` (`model_run`: train window, features, parameters and
  recipe, parent, layer-1 backend) and its boosters are kept under
  `<models_dir>/<model_id>/`.
- Calibration: before scoring, the classifier's raw scores are recalibrated
  (models/calibration.py) on the stored out-of-sample raw scores of the last 120 trading
  days whose labels are known (`calibration.in_window`): the live record's own
  predictions, and before it the validation record's (models/validation.py), whose
  walk-forward follows the same recipe. P(up), the Score, the 3-class prediction and the
  predicted return (conditional median) come from there. With fewer than 500 such moved
  rows (a store that has neither a validation record nor two weeks of live predictions)
  the day is scored uncalibrated, as the walk-forward's first blocks are: the booster's
  own P(up), a predicted return of 0, and `calibration_rows` 0 on every prediction, so
  the state is never hidden (`marketintel bootstrap` builds the validation record).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from market.clock import TradingCalendar
from market.contract import described
from market.money import Fraction
from models.calibration import Calibration, in_window, score_rows
from models.decisions import decide, prediction_columns
from models.features import FEATURE_NAMES, FEATURE_SET
from models.layer1 import WINDOW, Layer1Backend
from models.reasons import ServedReasons
from models.reasons import served as served_reasons
from models.risk import DEFAULT_PARAMS, RiskModel, Training
from models.sentiment.composite import MARKET
from models.walkforward import WalkForwardConfig, run_params, training_rows, with_day_numbers

MIN_TRAINING_ROWS = 500  # labelled rows a first (or any) training needs


@dataclass(frozen=True)
class DayScore:
    """What scoring a day gives the stage: the decided predictions, the model that made
    them (`trained`: its `model_runs` row when it was trained for this day, else None),
    its importances, the live track record up to the day and the calibration's rows."""

    predictions: pd.DataFrame
    model_id: str
    trained: dict | None
    importances: dict[str, float]
    track_record: dict
    calibration_rows: int = 0  # out-of-sample rows the day's calibration was fitted on (0: uncalibrated)


# --- the panel ---------------------------------------------------------------------------


def sentiment_inputs(composites: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The stored composites (store/panels.py `sentiment_composites`) as the panel reads
    them: the names' rows (symbol, date, score) and the market's score by date."""
    market = composites[composites["symbol"] == MARKET].set_index("date")["score"]
    return composites[composites["symbol"] != MARKET][["symbol", "date", "score"]], market


def layer1_values(prices: pd.DataFrame, symbols: Sequence[str], backend: Layer1Backend, horizon: int) -> np.ndarray:
    """Layer 1's P(up) of `symbols` from their last WINDOW closes in `prices` (each a slice
    of one array of every close sorted by symbol and date, not a group looked up per name)."""
    ordered = prices.sort_values(["symbol", "date"], kind="stable")
    names, close = ordered["symbol"].to_numpy(), ordered["close"].to_numpy()
    starts = np.flatnonzero(np.r_[True, names[1:] != names[:-1]]) if len(names) else np.array([], dtype=int)
    runs = dict(zip(names[starts], zip(starts, [*starts[1:], len(names)])))
    windows = [close[max(start, end - WINDOW) : end] for start, end in (runs[s] for s in symbols)]
    return backend.p_up(windows, horizon)


def layer1_rows(
    symbols: Sequence[str], values: Iterable[float], day: date, backend: Layer1Backend, horizon: int
) -> list[dict]:
    """The `layer1_forecasts` rows of freshly computed values."""
    return [
        {
            "symbol": s,
            "trading_date": day,
            "model_id": backend.model_id,
            "horizon_days": horizon,
            "backend": backend.backend,
            "p_up": float(v),
        }
        for s, v in zip(symbols, values)
    ]


def feature_rows_of(panel: pd.DataFrame, day: date) -> list[dict]:
    """The `features` rows of `day`'s instruments: the 14 inputs, rounded to 10 places, a
    missing one as None."""
    today = panel[panel["date"] == day]
    return [
        {
            "symbol": r.symbol,
            "trading_date": day,
            "feature_set": FEATURE_SET,
            "feature_values": {
                n: (None if pd.isna(getattr(r, n)) else round(float(getattr(r, n)), 10)) for n in FEATURE_NAMES
            },
        }
        for r in today.itertuples()
    ]


# --- retraining --------------------------------------------------------------------------


@dataclass(frozen=True)
class RetrainPlan:
    """Whether `day` needs a new model (`due`), and whether it is a full refit (`full`,
    else a warm start from the current model)."""

    due: bool
    full: bool


def retrain_plan(
    current: dict | None, runs: dict[str, dict], day: date, calendar: TradingCalendar, config: WalkForwardConfig
) -> RetrainPlan:
    """The retraining rule. `current`: the latest risk model's `model_runs` row (None:
    none yet); `runs`: every registered run by model id (to find the last full refit).

    A model trained on another feature list (an upgrade changed the registry) would read
    today's columns with yesterday's meanings, and one trained under another recipe is not
    the model the benchmark measures: either is replaced by a full refit at once."""
    if current is None:
        return RetrainPlan(True, True)
    changed = list(current["feature_names"] or []) != FEATURE_NAMES or not _same_recipe(current["params"] or {}, config)
    if changed:
        return RetrainPlan(True, True)
    due = calendar.trading_days_between(current["train_end"], day) >= config.retrain_every
    full = due and calendar.trading_days_between(last_full_end(current, runs), day) >= config.full_refit_every
    return RetrainPlan(due, full)


def _same_recipe(stored: dict, config: WalkForwardConfig) -> bool:
    return (
        stored.get("calibration_share") == config.calibration_share
        and stored.get("regressor") == config.regressor
        and stored.get("target", "sign") == config.target
    )


def last_full_end(current: dict, runs: dict[str, dict]) -> date:
    """The train end of the full refit `current` descends from (warm starts followed to
    their first parent still registered)."""
    run = current
    while run["warm_start"] and run["parent_model_id"] in runs:
        run = runs[run["parent_model_id"]]
    return run["train_end"]


def training_set(panel: pd.DataFrame, day: date, full: bool, config: WalkForwardConfig) -> pd.DataFrame:
    """The rows a model for `day` trains on (`walkforward.training_rows`), a warm start's
    cut to its last `warm_window_days`; NotReadyError below MIN_TRAINING_ROWS."""
    dates = sorted(panel["date"].unique())
    train = training_rows(panel, dates, dates.index(day) if day in dates else len(dates), config.embargo_days)
    if len(train) < MIN_TRAINING_ROWS:
        raise_not_ready(len(train))
    if not full:
        recent = sorted(train["date"].unique())[-config.warm_window_days :]
        train = train[train["date"] >= recent[0]]
    return train


def fit_model(train: pd.DataFrame, config: WalkForwardConfig, parent: RiskModel | None) -> RiskModel:
    """The walk-forward's recipe on `train`: a full refit without `parent`, else a warm
    start from its boosters."""
    rounds = config.warm_rounds if parent is not None else config.full_rounds
    training = Training(rounds, parent, config.calibration_share, config.regressor, config.target)
    X, forward_return = train[FEATURE_NAMES].to_numpy(float), train["forward_return"].to_numpy(float)
    model = RiskModel(params={**DEFAULT_PARAMS, **config.params})
    return model.fit(X, forward_return, training, train["date"].to_numpy())


def model_id_for(day: date, horizon: int, full: bool) -> str:
    return f"risk-{day.isoformat()}-h{horizon}-{'full' if full else 'warm'}"


@dataclass(frozen=True)
class Trained:
    """A model trained for `day` on the rows `train`, a warm start from `parent_id` (None: a
    full refit), under the id `model_id`."""

    model_id: str
    model: RiskModel
    train: pd.DataFrame
    day: date
    parent_id: str | None


def model_run(trained: Trained, backend: Layer1Backend, config: WalkForwardConfig, folder: Path) -> dict:
    """The `model_runs` row of a model trained for its day (a warm start names its parent),
    its boosters saved in `folder`."""
    return {
        "model_id": trained.model_id,
        "kind": "risk",
        "parent_model_id": trained.parent_id,
        "train_start": trained.train["date"].min(),
        "train_end": trained.day,
        "horizon_days": config.horizon,
        "layer1_backend": backend.model_id,
        "warm_start": trained.parent_id is not None,
        "training_rows": len(trained.train),
        "feature_names": FEATURE_NAMES,
        "params": run_params(trained.model.params, config),
        "artifact_path": str(folder),
    }


def raise_not_ready(rows: int) -> None:
    from market.errors import NotReadyError

    raise NotReadyError(
        f"only {rows} labelled rows in the store; the risk model needs at least {MIN_TRAINING_ROWS} "
        "(backfill more history: `marketintel backfill --days 260`)"
    )


# --- calibration, decisions and the record ------------------------------------------------


def calibration_since(panel: pd.DataFrame, day: date, horizon: int) -> date | None:
    """The first day whose stored raw scores `day`'s calibration may read (its block's
    `calibration_days` before `day`); None when `day` is not in the panel."""
    config = WalkForwardConfig(horizon=horizon)
    dates = sorted(panel["date"].unique())
    if day not in dates:
        return None
    return dates[max(0, dates.index(day) - config.calibration_days)]


def fitted_calibration(panel: pd.DataFrame, scores: pd.DataFrame, day: date, horizon: int) -> Calibration | None:
    """The calibration for `day`'s scores: fitted on the stored out-of-sample raw scores
    (`scores`: symbol, date, raw_score) of the rows `calibration.in_window` admits for a
    block starting on `day`, with their labels and class inputs from the point-in-time
    panel; None below 500 moved rows or without any."""
    config = WalkForwardConfig(horizon=horizon)
    dates = sorted(panel["date"].unique())
    if day not in dates or scores.empty:
        return None
    block_start = dates.index(day)
    window = with_day_numbers(panel.merge(scores, on=["symbol", "date"]), dates)
    known = window["forward_return"].notna().to_numpy() & in_window(
        window["day_number"].to_numpy(),
        window["label_day"].to_numpy(),
        block_start,
        config.calibration_days,
        config.embargo_days,
    )
    window = window[known].sort_values(["day_number", "symbol"], kind="stable")  # the walk-forward's order
    if window.empty:
        return None
    return Calibration.fit(window["raw_score"].to_numpy(float), window, window["forward_return"].to_numpy(float))


def decide_day(
    panel: pd.DataFrame,
    day: date,
    model: RiskModel,
    calibration: Calibration | None,
    fee_rate: float,
    horizon: int,
) -> pd.DataFrame:
    """The pure decide step: `day`'s rows of the panel scored by `model` (recalibrated by
    `calibration`, uncalibrated without one), with the three largest contributions to each
    raw score (models/reasons.py), then the day's decision rules (models/decisions.py)."""
    today = panel[panel["date"] == day].copy()
    scored = score_rows(model, today[FEATURE_NAMES].to_numpy(float), today, calibration, explain=FEATURE_NAMES)
    for name in ("predicted_return", "expected_return", "p_up", "raw_score", "predicted_class"):
        today[name] = scored.get(name, np.full(len(today), np.nan))
    today["reasons"] = scored["reasons"]
    return decide(today, fee_rate=fee_rate, horizon=horizon)


def prediction_rows(
    decided: pd.DataFrame, day: date, model_id: str, horizon: int, backend: Layer1Backend, calibration_rows: int
) -> list[dict]:
    """The `predictions` rows of the decided day."""
    return [
        {
            "symbol": r.symbol,
            "trading_date": day,
            "model_id": model_id,
            "horizon_days": horizon,
            "layer1_p_up": float(r.layer1_p_up),
            "layer1_backend": backend.model_id,
            "predicted_class": None if pd.isna(r.predicted_class) else int(r.predicted_class),
            "calibration_rows": calibration_rows,
            "reasons": r.reasons,
            **prediction_columns(r),
        }
        for r in decided.itertuples()
    ]


def track_record_of(predictions: pd.DataFrame, labelled: pd.DataFrame) -> dict:
    """Out-of-sample record of the stored predictions (`predictions`: rows of the table)
    whose label is known in `labelled` (the day's point-in-time panel, models/dataset.py
    `build_panel`: every bar up to the day with its label, `forward_return`, and the day's
    move, `last_return`): the metrics (with base rates and baselines) and a calibration
    table by Score decile; {} without any."""
    from models.metrics import evaluate

    joined = (
        predictions.rename(columns={"trading_date": "date"})
        .merge(labelled[["symbol", "date", "forward_return", "last_return"]], on=["symbol", "date"])
        .dropna(subset=["forward_return"])
    )
    if joined.empty:
        return {}
    joined["predicted_class"] = pd.to_numeric(joined["predicted_class"])  # null before 0013 or uncalibrated
    moved = joined[joined["forward_return"] != 0]
    buckets = (
        moved.assign(bucket=(moved["score"] // 10 * 10).clip(0, 90))
        .groupby("bucket")
        .agg(
            predictions=("score", "size"),
            mean_score=("score", "mean"),
            up_rate=("forward_return", lambda r: float((r > 0).mean())),
        )
        .reset_index()
    )
    return {"metrics": evaluate(joined), "calibration": buckets.to_dict("records")}


def metric_rows(record: dict, day: date) -> list[dict]:
    """The `model_metrics` rows of the live record as of `day` (model_id `live`)."""
    return [
        {
            "model_id": "live",
            "scope": f"live:{day.isoformat()}",
            "metric": name,
            "value": m["value"],
            "base_rate": m["base_rate"],
            "sample_size": m["sample_size"],
            "detail": {"baselines": m["baselines"]},
        }
        for name, m in record.get("metrics", {}).items()
    ]


# --- the served record -------------------------------------------------------------------


@dataclass(frozen=True)
class ServedPrediction:
    """One instrument's served prediction for a trading day, the one declaration of that
        record: what views/instrument.py `latest_predictions` and `predictions_between` hand to
        the API (GraphQL's `Prediction`), and what views/market.py builds the latest quotes'
        prediction fields (`latest_market`, REST's `LatestQuote` and GraphQL's `Quote`) and
        the latest reasons of GET /api/market/symbol (`latest_reasons`) from. GraphQL's
        `Prediction` shows exactly these fields (`p_up` as `probabilityUp`, `layer1_p_up` as
        `layer1Probability`), a quote the ones views/market.py `QUOTED` names;
        tests/api/test_shapes.py holds them together.

        A stored row (of `predictions` or `validation_predictions`) less what only the model
        reads (raw score, expected return, 3-class prediction, calibration window, ids), with
        its reasons in their served form (models/reasons.py `served`, which carries the raw score
    that the reasons add up to). `served_predictions`
        still answers the stored rows: the AI executor, T2, the monitor and the live
        calibration read those. Frozen, as the API caches it between requests (its `reasons`
        dict is never written to once built). GraphQL's `Prediction` is derived from it, and a
        quote's prediction fields (REST's `LatestQuote`, GraphQL's `Quote`) show its
        descriptions, written here; the label is the return from the next session's close over
        the horizon minus the equal-weighted liquid universe's (market/labels.py)."""

    symbol: str
    trading_date: date
    model_id: str
    horizon_days: int = described("Trading days the prediction looks ahead.")
    score: float | None = described(
        "0-100 calibrated conviction that the name beats the equal-weighted liquid universe over the horizon "
        "(from the next session's close)."
    )
    action: str | None  # LONG, HOLD, AVOID
    weight: Fraction | None = described(
        "The slot a book starting from cash today would give a LONG name (target exposure over the book's names), "
        "a share of equity; 0 else. Not what the AI book holds: it keeps names bought earlier (some now HOLD) and "
        "may not have filled a LONG; its positions (GET /api/ai-portfolio/positions) say that."
    )
    tercile: str | None  # TOP, MIDDLE, BOTTOM, ILLIQUID
    predicted_return: Fraction | None = described(
        "The calibrated median of the excess return over the horizon (from the next session's close, minus the "
        "equal-weighted liquid universe's), a fraction (0.012 = 1.2%); 0 unless beating or trailing the universe "
        "is more likely than not."
    )
    p_up: Fraction | None = described(
        "Layer 2's calibrated probability that the name beats the equal-weighted liquid universe over the horizon "
        "(the Score over 100)."
    )
    layer1_p_up: Fraction | None = described(
        "The foundation model's P(close rises over the horizon), one of the 14 inputs."
    )
    layer1_backend: str | None = described("Foundation-model backend; `fallback-...` names the labelled fallback.")
    held_edge: Fraction | None = described(  # since 0014 (models/decisions.py)
        "The calibrated expected excess return over the horizon (from the next session's close, minus the "
        "equal-weighted liquid universe's), a fraction; what the Action, the book and the suggestions read; null "
        "before enough out-of-sample history to calibrate (models/decisions.py)."
    )
    round_trip_cost: Fraction | None = described("The name's spread and two brokerage fees, a fraction.")
    decision_reason: str | None = described(
        "Why the Action is what it is, e.g. 'expected excess +0.40% over 5 sessions (Score 55.1), rank 22 of the "
        "liquid names: the book holds the 15 best'."
    )
    # since 0015, served form (models/reasons.py `served`)
    reasons: ServedReasons | None = described(
        "The three inputs that moved this prediction most, with their contributions to the raw score, the base "
        "value, the raw score and the other inputs' contributions together: base value + the three + other inputs "
        "= raw score; null when the prediction has none (stored before migration 0015)."
    )

    record: str = described(
        "The record the prediction is from: 'live' (scored by t1_predict), or 'validation' (the walk-forward's "
        "out-of-sample score of a day before the first live day, GET /api/ai/performance `validation`; "
        "`model_id` names its walk-forward model).",
        default="live",
    )

    @classmethod
    def from_row(cls, row: Mapping[str, object], record: str = "live") -> ServedPrediction:
        """A stored prediction row of `record` as served: its columns of the same names (those
        added by later migrations absent from older rows: None), the reasons in their served form."""
        named = {f.name: row.get(f.name) for f in fields(cls)}
        return cls(**{**named, "reasons": served_reasons(row.get("reasons"), row.get("raw_score")), "record": record})


SERVED_ORDER = ("recorded_at", "id")
"""The columns that pick a day's served model (`served_model`): the model of the day's row
that is largest by them, the one recorded last (ties by id)."""


def served_model(day_rows: Iterable[Mapping[str, object]]) -> str:
    """The model served on a day, given the day's stored rows (every symbol's): the
    `model_id` of the row largest by `SERVED_ORDER`, the model recorded last, so a retrain
    that re-scored the day wins for every symbol of the day, and a symbol the later model
    did not score has no served prediction that day (the earlier model's row is not served).

    The same over the day's current rows (store/history.py `current_rows`) or over every
    stored version of them: the row largest by (recorded_at, id) among all versions is the
    current version of its key (no version of that key is later), so it is also the largest
    current row. views/instrument.py `served_models` asks the database for this per day, by
    `SERVED_ORDER`, rather than reading every symbol's rows (tests/views hold the two equal)."""
    return max(day_rows, key=lambda r: tuple(r[name] for name in SERVED_ORDER))["model_id"]


StoredRow = dict[str, Any]
"""A stored prediction row (its columns by name)."""

# trading date -> symbol -> a stored prediction row: what `served_predictions` answers
ServedDays = dict[date, dict[str, StoredRow]]


def served_predictions(rows: Iterable[StoredRow]) -> ServedDays:
    """trading date -> symbol -> the served prediction: when a day was scored by more than
    one model (a retrain re-scored it), the rows of the model recorded last for that date
    (`served_model`). The API, the AI executor, T2 and the live calibration all read this
    rule; the views hand the rows on to the API as `ServedPrediction`s."""
    by_day: dict[date, list[StoredRow]] = defaultdict(list)
    for row in rows:
        by_day[row["trading_date"]].append(row)
    served = {}
    for day, day_rows in by_day.items():
        model_id = served_model(day_rows)
        served[day] = {r["symbol"]: r for r in day_rows if r["model_id"] == model_id}
    return served


def served_rows(rows: Iterable[StoredRow]) -> list[StoredRow]:
    """The served ones among stored prediction rows (`served_predictions`), flat: what the
    live record's metrics count, so a day a retrain re-scored counts once, as served."""
    return [row for by_symbol in served_predictions(rows).values() for row in by_symbol.values()]


def served_scores(rows_by_table: Iterable[Iterable[StoredRow]]) -> pd.DataFrame:
    """symbol, date, raw_score, score of every served prediction among the stored rows of
    each table in turn (`rows_by_table`: the live record's first): a day served by an
    earlier table is not read from a later one."""
    served: ServedDays = {}
    for rows in rows_by_table:
        for scored_day, by_symbol in served_predictions(rows).items():
            served.setdefault(scored_day, by_symbol)
    scores = [
        (symbol, scored_day, row["raw_score"], row["score"])
        for scored_day, by_symbol in served.items()
        for symbol, row in by_symbol.items()
    ]
    return pd.DataFrame(scores, columns=["symbol", "date", "raw_score", "score"])
