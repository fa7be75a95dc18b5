"""T1 step 4's shell around models/scoring.py: the reads and writes of scoring a day.

`score_day` is three steps: `prepare_day` reads the point-in-time panel (caching layer
1's new values), stores the day's features, picks the model (training and registering
one when `models.scoring.retrain_plan` says it is due) and reads the stored raw scores
the calibration is fitted on; `models.scoring.decide_day` scores and decides without a
connection; `store_day` writes the predictions and the live track record's metrics.
Every read and write of the store here runs on the stage's one connection (its
transaction), so a day is written whole or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import pandas as pd
from sqlalchemy import Connection, func, select

from market.clock import TradingCalendar
from market.errors import InvalidInputError
from market.fees import fee_schedule
from market.settings import Settings
from models.calibration import Calibration
from models.dataset import build_panel
from models.decisions import HORIZON
from models.features import FEATURE_NAMES
from models.layer1 import Layer1Backend
from models.risk import RiskModel, load_model, save_model
from models.scoring import (
    DayScore,
    Trained,
    calibration_since,
    decide_day,
    feature_rows_of,
    fit_model,
    fitted_calibration,
    layer1_rows,
    layer1_values,
    metric_rows,
    model_id_for,
    model_run,
    prediction_rows,
    retrain_plan,
    sentiment_inputs,
    served_rows,
    served_scores,
    track_record_of,
    training_set,
)
from models.sentiment.composite import METHOD
from models.walkforward import WalkForwardConfig
from store import tables
from store.history import append_history, current_rows
from store.panels import latest_model, on_series, price_panel, risk_models, rows_on_series, sentiment_composites


@dataclass(frozen=True)
class DayInputs:
    """What the decide step needs of the store: the panel, the model (and its new
    `model_runs` row when it was trained for the day) and the calibration."""

    panel: pd.DataFrame
    model_id: str
    model: RiskModel
    trained: dict | None
    calibration: Calibration | None

    @property
    def calibration_rows(self) -> int:
        """The rows the day's calibration read (0: the day is scored uncalibrated)."""
        return self.calibration.rows if self.calibration is not None else 0


def score_day(
    conn: Connection,
    settings: Settings,
    day: date,
    calendar: TradingCalendar,
    backend: Layer1Backend,
    horizon: int = HORIZON,
) -> DayScore:
    """Read, decide, write: the day's predictions and the live track record up to it."""
    inputs = prepare_day(conn, settings, day, calendar, backend, horizon)
    fee_rate = float(fee_schedule(settings).rate)
    decided = decide_day(inputs.panel, day, inputs.model, inputs.calibration, fee_rate, horizon)
    record = store_day(conn, decided, inputs, ScoredDay(day, horizon, backend))
    importances = inputs.model.importances(FEATURE_NAMES)
    return DayScore(decided, inputs.model_id, inputs.trained, importances, record, inputs.calibration_rows)


def prepare_day(
    conn: Connection,
    settings: Settings,
    day: date,
    calendar: TradingCalendar,
    backend: Layer1Backend,
    horizon: int,
) -> DayInputs:
    """The read step (which stores the day's features and registers a model it trains).
    A day the validation record covers is refused: the live record starts after it, and a
    live prediction there would move its start back over the validation record's days."""
    validated = conn.execute(select(func.max(tables.validation_predictions.c.trading_date))).scalar()
    if validated is not None and day <= validated:
        raise InvalidInputError(
            f"{day.isoformat()} is in the validation record (through {validated.isoformat()}); "
            "the live record scores the days after it"
        )
    panel = feature_rows(conn, day, backend, horizon)
    store_features(conn, panel, day)
    model_id, model, trained = ensure_model(conn, settings, panel, day, calendar, backend, horizon)
    return DayInputs(panel, model_id, model, trained, live_calibration(conn, panel, day, horizon))


@dataclass(frozen=True)
class ScoredDay:
    """The day a model scored, the horizon its predictions look ahead and the layer-1 backend
    behind them: what the day's stored predictions are stamped with."""

    day: date
    horizon: int
    backend: Layer1Backend


def store_day(conn: Connection, decided: pd.DataFrame, inputs: DayInputs, scored: ScoredDay) -> dict:
    """The write step: the day's predictions by `inputs`' model (replacing the day's earlier
    rows, each with the rows its calibration read), then the live track record up to the
    day (its labels read off `inputs`' panel, built at the horizon) and its metrics.
    Returns the record."""
    day, horizon = scored.day, scored.horizon
    rows = prediction_rows(decided, day, inputs.model_id, horizon, scored.backend, inputs.calibration_rows)
    append_history(conn, tables.predictions, rows, scope=[tables.predictions.c.trading_date == day])
    record = track_record(conn, day, horizon, inputs.panel)
    if record:
        append_history(conn, tables.model_metrics, metric_rows(record, day))
    return record


def layer1_for_day(
    conn: Connection, prices: pd.DataFrame, day: date, backend: Layer1Backend, horizon: int
) -> pd.DataFrame:
    """Cached P(up) of every instrument priced on `day`; computes and stores what is missing."""
    c = tables.layer1_forecasts.c
    cached = {
        r["symbol"]: r["p_up"]
        for r in current_rows(
            conn,
            tables.layer1_forecasts,
            where=[c.trading_date == day, c.model_id == backend.model_id, c.horizon_days == horizon],
        )
    }
    missing = [s for s in prices[prices["date"] == day]["symbol"].tolist() if s not in cached]
    if missing:
        values = layer1_values(prices, missing, backend, horizon)
        append_history(conn, tables.layer1_forecasts, layer1_rows(missing, values, day, backend, horizon))
        cached.update(zip(missing, map(float, values)))
    return pd.DataFrame({"symbol": list(cached), "date": day, "p_up": list(cached.values())})


def feature_rows(conn: Connection, day: date, backend: Layer1Backend, horizon: int) -> pd.DataFrame:
    """The point-in-time modelling panel of every stored day up to `day`, layer 1 for `day`."""
    prices = price_panel(conn, day)
    sentiment, market = sentiment_inputs(sentiment_composites(conn, day, METHOD))
    layer1 = layer1_for_day(conn, prices, day, backend, horizon)
    return build_panel(prices, horizon, sentiment, market, layer1)


def store_features(conn: Connection, panel: pd.DataFrame, day: date) -> int:
    """Stores `day`'s 14 inputs per instrument (replacing the day's earlier rows)."""
    rows = feature_rows_of(panel, day)
    return append_history(conn, tables.features, rows, scope=[tables.features.c.trading_date == day]).inserted


def ensure_model(
    conn: Connection,
    settings: Settings,
    panel: pd.DataFrame,
    day: date,
    calendar: TradingCalendar,
    backend: Layer1Backend,
    horizon: int,
) -> tuple[str, RiskModel, dict | None]:
    """The model to score `day` with, training a new one first when it is due
    (`models.scoring.retrain_plan`): its boosters saved under `<models_dir>/<model_id>/`,
    its run registered in `model_runs`. The model is the day's own (`latest_model`
    through `day`): a day scored again after a later retrain keeps its predictions, and a
    day scored late never reads a model trained on what came after it."""
    config = WalkForwardConfig(horizon=horizon)
    current = latest_model(conn, through=day)
    runs = {r["model_id"]: r for r in risk_models(conn)} if current is not None else {}
    plan = retrain_plan(current, runs, day, calendar, config)
    if not plan.due:
        return current["model_id"], load_model(current["artifact_path"]), None
    train = training_set(panel, day, plan.full, config)
    parent = None if plan.full else load_model(current["artifact_path"])
    model = fit_model(train, config, parent)
    model_id = model_id_for(day, horizon, plan.full)
    folder = settings.models_dir / model_id
    save_model(model, folder)
    trained = Trained(model_id, model, train, day, None if plan.full else current["model_id"])
    run = model_run(trained, backend, config, folder)
    append_history(conn, tables.model_runs, [run])
    return model_id, model, run


SCORE_COLUMNS = ("id", "recorded_at", "symbol", "trading_date", "model_id", "raw_score", "score")


def stored_scores(conn: Connection, since: date, day: date, horizon: int) -> pd.DataFrame:
    """symbol, date, raw_score, score of every served out-of-sample prediction from `since`
    to before `day` (the live record's days, else the validation record's). Reads the
    columns that say which rows are served and their scores only (SCORE_COLUMNS), not the
    reasons' documents."""
    reads = []
    for table in (tables.predictions, tables.validation_predictions):
        c = table.c
        where = [c.trading_date >= since, c.trading_date < day, c.horizon_days == horizon]
        reads.append(current_rows(conn, table, where=where, columns=SCORE_COLUMNS))
    return on_series(conn, served_scores(reads), day)


def stored_raw_scores(conn: Connection, since: date, day: date, horizon: int) -> pd.DataFrame:
    """symbol, date, raw_score: the out-of-sample raw score of each served prediction from
    `since` to before `day` (`stored_scores`). Predictions stored before 0013 have none."""
    scores = stored_scores(conn, since, day, horizon)
    return scores[scores["raw_score"].notna()][["symbol", "date", "raw_score"]].reset_index(drop=True)


def live_calibration(conn: Connection, panel: pd.DataFrame, day: date, horizon: int) -> Calibration | None:
    """`day`'s calibration (`models.scoring.fitted_calibration`) on the stored raw scores of
    its window; None when the panel lacks the day or too few rows moved."""
    since = calibration_since(panel, day, horizon)
    if since is None:
        return None
    return fitted_calibration(panel, stored_raw_scores(conn, since, day, horizon), day, horizon)


def track_record(conn: Connection, day: date, horizon: int, panel: pd.DataFrame) -> dict:
    """The live record (`models.scoring.track_record_of`) of every served prediction before
    `day` (`models.scoring.served_rows`: of a day a retrain re-scored, the later model's
    rows only, as the API served them) whose label is known by `day` (in `panel`, the day's
    point-in-time panel at `horizon`: `feature_rows`); {} without any."""
    c = tables.predictions.c
    columns = [x.name for x in tables.predictions.c if x.name != "reasons"]  # the record reads no reasons
    where = [c.trading_date < day, c.horizon_days == horizon]
    served = rows_on_series(
        conn, served_rows(current_rows(conn, tables.predictions, where=where, columns=columns)), day
    )
    predictions = pd.DataFrame(served, columns=columns)
    if predictions.empty:
        return {}
    return track_record_of(predictions, panel)
