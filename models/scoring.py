"""Scoring a trading day from the store (T1 step 4): the point-in-time panel, layer 1 with
its per-day cache, retraining when due, predictions and decisions.

Point in time: the panel holds only rows dated on or before the day, in their versions as
stored when the stage runs. Layer 1 values are cached per (instrument, day, model id,
horizon) in `layer1_forecasts`, so a day is computed once; history days without a cached
value use the empirical fallback inside the panel.

The model is the one the benchmark measures (models/walkforward.py, docs/model.md): the
same recipe, the same training rows and the same calibration rule.

- Retraining: a new model is trained when none exists, when the last one was trained on
  another feature list than the registry's or under another recipe (a full refit), or when
  at least 5 trading days have passed since the last one was trained: with the default
  `warm_rounds=0` the new model keeps its parent's boosters, with a full refit on all
  history every 120 trading days. Training rows are `walkforward.training_rows`: labels
  known before the day, less the embargo. Each model is registered in `model_runs` (train
  window, features, parameters and recipe, parent, layer-1 backend) and its boosters are
  kept under `<models_dir>/<model_id>/`.
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

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import date
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Connection

from market.clock import TradingCalendar
from market.fees import fee_schedule
from market.instruments import is_ordinary
from market.labels import with_labels
from market.settings import Settings
from models.calibration import Calibration, in_window, score_rows
from models.dataset import build_panel
from models.decisions import HORIZON, decide, decision_columns
from models.features import FEATURE_NAMES, FEATURE_SET
from models.layer1 import WINDOW, Layer1Backend
from models.reasons import served as served_reasons
from models.risk import DEFAULT_PARAMS, RiskModel, load_model, save_model
from models.sentiment.composite import MARKET, METHOD
from models.walkforward import WalkForwardConfig, run_params, training_rows, with_day_numbers
from store import tables
from store.history import append_history, current_rows
from store.instruments import instrument_types
from store.splits import Split, stored_splits

log = logging.getLogger(__name__)


@dataclass
class DayScore:
    predictions: pd.DataFrame
    model_id: str
    trained: dict | None
    importances: dict[str, float]
    track_record: dict
    calibration_rows: int = 0  # out-of-sample rows the day's calibration was fitted on (0: uncalibrated)


def price_panel(conn: Connection, day: date, since: date | None = None) -> pd.DataFrame:
    """Every stored bar up to `day` (from `since`, when given), adjusted for the splits known
    by then, with `ordinary`: whether the instrument is an ordinary share (store/instruments.py;
    a bar of an instrument the store does not describe counts as one)."""
    c = tables.eod_prices.c
    rows = current_rows(
        conn, tables.eod_prices, where=[c.trading_date <= day] + ([c.trading_date >= since] if since else [])
    )
    frame = pd.DataFrame(rows, columns=[c.name for c in tables.eod_prices.c])
    frame = frame.rename(columns={"trading_date": "date"})[
        ["symbol", "date", "close", "volume", "bid", "ask", "high", "low"]
    ]
    types = instrument_types(conn)
    frame["ordinary"] = [is_ordinary(types[s]) if s in types else True for s in frame["symbol"]]
    return split_adjusted(frame, stored_splits(conn, day))


PRICE_COLUMNS = ("close", "bid", "ask", "high", "low")


def split_adjusted(prices: pd.DataFrame, splits: list[Split]) -> pd.DataFrame:
    """The bars before each split's ex-date on the new count: prices divided by the factor,
    volumes multiplied by it, so the ex-date's return, the momentum, RSI, bands and
    volatility read no loss (or gain) where there was only a new share count. The
    stored bars are unchanged (what the API serves is what traded)."""
    if not splits:
        return prices
    adjusted = prices.copy()
    for column in ("volume", *PRICE_COLUMNS):
        if column in adjusted:
            adjusted[column] = pd.to_numeric(adjusted[column], errors="coerce")  # a missing quote is NaN, not None
    for split in splits:
        before = (adjusted["symbol"] == split.symbol) & (adjusted["date"] < split.ex_date)
        for column in PRICE_COLUMNS:
            if column in adjusted:
                adjusted.loc[before, column] = adjusted.loc[before, column] / split.factor
        adjusted.loc[before, "volume"] = adjusted.loc[before, "volume"] * split.factor
    return adjusted


def sentiment_inputs(conn: Connection, day: date) -> tuple[pd.DataFrame, pd.Series]:
    c = tables.sentiment_composites.c
    rows = pd.DataFrame(
        current_rows(conn, tables.sentiment_composites, where=[c.trading_date <= day, c.method == METHOD]),
        columns=[x.name for x in tables.sentiment_composites.c],
    ).rename(columns={"trading_date": "date"})
    market = rows[rows["symbol"] == MARKET].set_index("date")["score"]
    return rows[rows["symbol"] != MARKET][["symbol", "date", "score"]], market


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
    today = prices[prices["date"] == day]["symbol"].tolist()
    missing = [s for s in today if s not in cached]
    if missing:
        history = prices.sort_values("date").groupby("symbol")["close"]
        windows = [history.get_group(s).to_numpy()[-WINDOW:] for s in missing]
        values = backend.p_up(windows, horizon)
        append_history(
            conn,
            tables.layer1_forecasts,
            [
                {
                    "symbol": s,
                    "trading_date": day,
                    "model_id": backend.model_id,
                    "horizon_days": horizon,
                    "backend": backend.backend,
                    "p_up": float(v),
                }
                for s, v in zip(missing, values)
            ],
        )
        cached.update(zip(missing, map(float, values)))
    return pd.DataFrame({"symbol": list(cached), "date": day, "p_up": list(cached.values())})


def feature_rows(conn: Connection, day: date, backend: Layer1Backend, horizon: int) -> pd.DataFrame:
    prices = price_panel(conn, day)
    sentiment, market = sentiment_inputs(conn, day)
    layer1 = layer1_for_day(conn, prices, day, backend, horizon)
    return build_panel(prices, horizon, sentiment, market, layer1)


def store_features(conn: Connection, panel: pd.DataFrame, day: date) -> int:
    today = panel[panel["date"] == day]
    return append_history(
        conn,
        tables.features,
        [
            {
                "symbol": r.symbol,
                "trading_date": day,
                "feature_set": FEATURE_SET,
                "feature_values": {
                    n: (None if pd.isna(getattr(r, n)) else round(float(getattr(r, n)), 10)) for n in FEATURE_NAMES
                },
            }
            for r in today.itertuples()
        ],
        scope=[tables.features.c.trading_date == day],
    ).inserted


def latest_model(conn: Connection) -> dict | None:
    runs = current_rows(conn, tables.model_runs, where=[tables.model_runs.c.kind == "risk"])
    return max(runs, key=lambda r: (r["train_end"], r["recorded_at"])) if runs else None


def ensure_model(
    conn: Connection,
    settings: Settings,
    panel: pd.DataFrame,
    day: date,
    calendar: TradingCalendar,
    backend: Layer1Backend,
    horizon: int,
) -> tuple[str, RiskModel, dict | None]:
    """The model to score `day` with, training a new one first when it is due."""
    config = WalkForwardConfig(horizon=horizon)
    current = latest_model(conn)
    # A model trained on another feature list (an upgrade changed the registry) would read
    # today's columns with yesterday's meanings, and one trained under another recipe is not
    # the model the benchmark measures: either is replaced by a full refit at once.
    changed = current is not None and (
        list(current["feature_names"] or []) != FEATURE_NAMES or not _same_recipe(current["params"] or {}, config)
    )
    due = current is None or changed or calendar.trading_days_between(current["train_end"], day) >= config.retrain_every
    if not due:
        return current["model_id"], load_model(current["artifact_path"]), None
    dates = sorted(panel["date"].unique())
    train = training_rows(panel, dates, dates.index(day) if day in dates else len(dates), config.embargo_days)
    if len(train) < 500:
        raise_not_ready(len(train))
    full = (
        current is None
        or changed
        or calendar.trading_days_between(_last_full_end(conn, current), day) >= config.full_refit_every
    )
    parent = None if full else load_model(current["artifact_path"])
    if not full:
        recent = sorted(train["date"].unique())[-config.warm_window_days :]
        train = train[train["date"] >= recent[0]]
    model = RiskModel(params={**DEFAULT_PARAMS, **config.params}).fit(
        train[FEATURE_NAMES].to_numpy(float),
        train["forward_return"].to_numpy(float),
        config.full_rounds if full else config.warm_rounds,
        warm_from=parent,
        calibration_share=config.calibration_share,
        regressor=config.regressor,
        days=train["date"].to_numpy(),
        target=config.target,
    )
    model_id = f"risk-{day.isoformat()}-h{horizon}-{'full' if full else 'warm'}"
    folder = settings.models_dir / model_id
    save_model(model, folder)
    run = {
        "model_id": model_id,
        "kind": "risk",
        "parent_model_id": None if full else current["model_id"],
        "train_start": train["date"].min(),
        "train_end": day,
        "horizon_days": horizon,
        "layer1_backend": backend.model_id,
        "warm_start": not full,
        "training_rows": len(train),
        "feature_names": FEATURE_NAMES,
        "params": run_params(model.params, config),
        "artifact_path": str(folder),
    }
    append_history(conn, tables.model_runs, [run])
    return model_id, model, run


def _same_recipe(stored: dict, config: WalkForwardConfig) -> bool:
    return (
        stored.get("calibration_share") == config.calibration_share
        and stored.get("regressor") == config.regressor
        and stored.get("target", "sign") == config.target
    )


def _last_full_end(conn: Connection, current: dict) -> date:
    runs = {r["model_id"]: r for r in current_rows(conn, tables.model_runs)}
    run = current
    while run["warm_start"] and run["parent_model_id"] in runs:
        run = runs[run["parent_model_id"]]
    return run["train_end"]


def raise_not_ready(rows: int) -> None:
    from market.errors import NotReadyError

    raise NotReadyError(
        f"only {rows} labelled rows in the store; the risk model needs at least 500 "
        "(backfill more history: `marketintel backfill --days 260`)"
    )


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
    its reasons in their served form (models/reasons.py `served`). `served_predictions`
    still answers the stored rows: the AI executor, T2, the monitor and the live
    calibration read those. Frozen, as the API caches it between requests (its `reasons`
    dict is never written to once built)."""

    symbol: str
    trading_date: date
    model_id: str
    horizon_days: int
    score: float | None  # 0-100
    action: str | None  # LONG, HOLD, AVOID
    weight: float | None
    tercile: str | None  # TOP, MIDDLE, BOTTOM, ILLIQUID
    predicted_return: float | None  # a fraction
    p_up: float | None  # layer 2's P(up)
    layer1_p_up: float | None
    layer1_backend: str | None
    held_edge: float | None  # since 0014 (models/decisions.py)
    round_trip_cost: float | None
    decision_reason: str | None
    reasons: dict[str, Any] | None  # since 0015, served form: {"base_value", "inputs": [{"input", "contribution"}]}

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ServedPrediction:
        """A stored prediction row as served: its columns of the same names (those added by
        later migrations absent from older rows: None), the reasons in their served form."""
        named = {f.name: row.get(f.name) for f in fields(cls)}
        return cls(**{**named, "reasons": served_reasons(row.get("reasons"))})


def served_predictions(rows: Iterable[dict[str, Any]]) -> dict[date, dict[str, dict[str, Any]]]:
    """trading date -> symbol -> the served prediction: when a day was scored by more than
    one model (a retrain re-scored it), the rows of the model recorded last for that date.
    The API, the AI executor, T2 and the live calibration all read this rule; the views
    hand the rows on to the API as `ServedPrediction`s."""
    by_day: dict[date, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_day[row["trading_date"]].append(row)
    served = {}
    for day, day_rows in by_day.items():
        model_id = max(day_rows, key=lambda r: (r["recorded_at"], r["id"]))["model_id"]
        served[day] = {r["symbol"]: r for r in day_rows if r["model_id"] == model_id}
    return served


def stored_raw_scores(conn: Connection, since: date, day: date, horizon: int) -> pd.DataFrame:
    """symbol, date, raw_score: the out-of-sample raw score of each served prediction from
    `since` to before `day`: the live record's days, and the validation record's for the
    days the live record has not scored. Predictions stored before 0013 have none."""
    scores = stored_scores(conn, since, day, horizon)
    return scores[scores["raw_score"].notna()][["symbol", "date", "raw_score"]].reset_index(drop=True)


def stored_scores(conn: Connection, since: date, day: date, horizon: int) -> pd.DataFrame:
    """symbol, date, raw_score, score of every served out-of-sample prediction from `since`
    to before `day` (the live record's days, else the validation record's)."""
    served: dict[date, dict[str, dict[str, Any]]] = {}
    for table in (tables.predictions, tables.validation_predictions):
        c = table.c
        rows = current_rows(
            conn, table, where=[c.trading_date >= since, c.trading_date < day, c.horizon_days == horizon]
        )
        for scored_day, by_symbol in served_predictions(rows).items():
            served.setdefault(scored_day, by_symbol)
    scores = [
        (symbol, scored_day, row["raw_score"], row["score"])
        for scored_day, by_symbol in served.items()
        for symbol, row in by_symbol.items()
    ]
    return pd.DataFrame(scores, columns=["symbol", "date", "raw_score", "score"])


def live_calibration(conn: Connection, panel: pd.DataFrame, day: date, horizon: int) -> Calibration | None:
    """The calibration for `day`'s scores: fitted on the stored out-of-sample raw scores
    of the rows `calibration.in_window` admits for a block starting on `day`, with their
    labels and class inputs from the point-in-time panel; None below 500 moved rows."""
    config = WalkForwardConfig(horizon=horizon)
    dates = sorted(panel["date"].unique())
    if day not in dates:
        return None
    block_start = dates.index(day)
    scores = stored_raw_scores(conn, dates[max(0, block_start - config.calibration_days)], day, horizon)
    if scores.empty:
        return None
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


def score_day(
    conn: Connection,
    settings: Settings,
    day: date,
    calendar: TradingCalendar,
    backend: Layer1Backend,
    horizon: int = HORIZON,
) -> DayScore:
    panel = feature_rows(conn, day, backend, horizon)
    store_features(conn, panel, day)
    model_id, model, trained = ensure_model(conn, settings, panel, day, calendar, backend, horizon)
    calibration = live_calibration(conn, panel, day, horizon)
    today = panel[panel["date"] == day].copy()
    scored = score_rows(model, today[FEATURE_NAMES].to_numpy(float), today, calibration, explain=FEATURE_NAMES)
    for name in ("predicted_return", "expected_return", "p_up", "raw_score", "predicted_class"):
        today[name] = scored.get(name, np.full(len(today), np.nan))
    today["reasons"] = scored["reasons"]  # the three largest contributions to each raw score (models/reasons.py)
    rows_used = calibration.rows if calibration is not None else 0
    decided = decide(today, fee_rate=float(fee_schedule(settings).rate), horizon=horizon)
    append_history(
        conn,
        tables.predictions,
        [
            {
                "symbol": r.symbol,
                "trading_date": day,
                "model_id": model_id,
                "horizon_days": horizon,
                "predicted_return": float(r.predicted_return),
                "p_up": float(r.p_up),
                "score": float(r.score),
                "action": r.action,
                "weight": float(r.weight),
                "tercile": r.tercile,
                "layer1_p_up": float(r.layer1_p_up),
                "layer1_backend": backend.model_id,
                "raw_score": float(r.raw_score),
                "expected_return": None if pd.isna(r.expected_return) else float(r.expected_return),
                "predicted_class": None if pd.isna(r.predicted_class) else int(r.predicted_class),
                "calibration_rows": rows_used,
                "reasons": r.reasons,
                **decision_columns(r),
            }
            for r in decided.itertuples()
        ],
        scope=[tables.predictions.c.trading_date == day],
    )
    record = track_record(conn, day, horizon)
    if record:
        append_history(
            conn,
            tables.model_metrics,
            [
                {
                    "model_id": "live",
                    "scope": f"live:{day.isoformat()}",
                    "metric": name,
                    "value": m["value"],
                    "base_rate": m["base_rate"],
                    "sample_size": m["sample_size"],
                    "detail": {"baselines": m["baselines"]},
                }
                for name, m in record["metrics"].items()
            ],
        )
    return DayScore(decided, model_id, trained, model.importances(FEATURE_NAMES), record, rows_used)


def track_record(conn: Connection, day: date, horizon: int) -> dict:
    """Out-of-sample record of every stored prediction whose label is known by `day`:
    the metrics (with base rates and baselines) and a calibration table by Score decile."""
    from models.metrics import evaluate

    c = tables.predictions.c
    preds = pd.DataFrame(
        current_rows(conn, tables.predictions, where=[c.trading_date < day, c.horizon_days == horizon]),
        columns=[x.name for x in tables.predictions.c],
    )
    if preds.empty:
        return {}
    prices = with_labels(price_panel(conn, day), horizon)
    prices["last_return"] = prices.groupby("symbol")["close"].pct_change()
    joined = (
        preds.rename(columns={"trading_date": "date"})
        .merge(prices[["symbol", "date", "forward_return", "last_return"]], on=["symbol", "date"])
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
