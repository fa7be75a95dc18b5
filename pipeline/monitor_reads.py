"""The model monitor's reads of the store (T1's `t1_monitor`, docs/monitoring.md): what a
day's checks compare, handed to the pure checks of models/monitor.py, and the validation
record's reference kept in a file cache under its version.

The reference is the validation record: its days' inputs as the record computed them
(`history_panel`), its served Scores and its outcomes, kept in `cache_dir` under the
record's version (`reference_version`) so a day reads them without rebuilding the
history's panel. The current window is the last `max(t.windows)` priced days up to
`day`: each day's inputs as stored by `t1_features` (what the model got), else, for a
day T1 did not score (before the first live day), as the validation record computed
them; each day's Scores as served (the live record's, else the validation record's).
The live checks read the latest outcomes of the live predictions of the last
LIVE_LOOKBACK_DAYS priced days, or of the whole live record where those hold fewer
than `t.live_outcomes`. Every outcome, live or the record's, is labelled on the whole
stored history (`labelled_prices`), as the model's panel labels it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
from datetime import date, timedelta
from pathlib import Path

import pandas as pd
from sqlalchemy import Connection, func, select

from models.decisions import HORIZON
from models.features import FEATURE_NAMES, FEATURE_SET
from models.monitor import (
    NO_PRICED_DAYS,
    NO_RECORD,
    Check,
    DayContext,
    Reference,
    Thresholds,
    current_inputs,
    drift_checks,
    known_by,
    live_checks,
    live_inputs,
    outcomes,
    unchecked_drift,
    unrecorded_days,
)
from models.scoring import ServedDays, served_predictions
from pipeline import validation
from pipeline.scoring import stored_scores
from store import tables
from store.history import current_rows
from store.panels import price_panel, rows_on_series

log = logging.getLogger(__name__)

# What the live outcomes read of a prediction: which rows are served (models/scoring.py
# `served_predictions`) and their P(up); not the reasons' documents.
OUTCOME_COLUMNS = ("id", "recorded_at", "symbol", "trading_date", "model_id", "p_up")
LIVE_LOOKBACK_DAYS = 60  # priced days of live predictions the live checks read their latest outcomes from
REFERENCE_FORMAT = 7  # bumped when what `reference_data` keeps changes (7: each outcome's label_end)


def day_checks(
    conn: Connection, day: date, t: Thresholds, horizon: int = HORIZON, cache_dir: Path | None = None
) -> tuple[list[Check], DayContext]:
    """Every check of `day` (levels only; `persist` sets the states) and what they read."""
    priced = priced_days(conn, day, max(max(t.windows), LIVE_LOOKBACK_DAYS))
    window = priced[-max(t.windows) :]
    reference = reference_data(conn, horizon, cache_dir)
    prices = traded_prices(conn, day, priced)
    if reference is not None and window:
        live = live_inputs(stored_inputs(conn, window[0], day), prices)
        current = current_inputs(window_inputs(conn, reference, live, window, day, horizon), live, window)
        scores = stored_scores(conn, window[0], day + timedelta(days=1), horizon)
        checks = drift_checks(reference, current, scores, day, t)
        context = DayContext.of(window, reference, len(set(live["date"])))
    else:
        checks = unchecked_drift(NO_RECORD if reference is None else NO_PRICED_DAYS)
        context = DayContext.of(window, reference, None)
    reference_outcomes = None if reference is None else known_by(reference.outcomes, day)
    live_record = live_outcomes(conn, day, priced, t, horizon)
    return checks + live_checks(reference_outcomes, live_record, t), context


def priced_days(conn: Connection, day: date, count: int) -> list[date]:
    """The last `count` priced days up to `day`, oldest first."""
    e = tables.eod_prices.c
    query = select(e.trading_date).where(e.trading_date <= day).distinct().order_by(e.trading_date.desc()).limit(count)
    return [d for (d,) in conn.execute(query)][::-1]


def traded_prices(conn: Connection, day: date, priced: list[date]) -> pd.DataFrame:
    """Every bar from the first of `priced` to `day` (store/panels.py `price_panel`) with
    `traded`: a volume above zero."""
    if priced:
        prices = price_panel(conn, day, since=priced[0])
    else:
        prices = pd.DataFrame(columns=["symbol", "date", "close", "volume"])
    return prices.assign(traded=prices["volume"].fillna(0) > 0)


def stored_inputs(conn: Connection, first: date, day: date) -> list[dict]:
    """The `features` rows T1 stored from `first` to `day` (the registry's feature set)."""
    f = tables.features.c
    where = [f.trading_date >= first, f.trading_date <= day, f.feature_set == FEATURE_SET]
    return current_rows(conn, tables.features, where=where)


def window_inputs(
    conn: Connection, reference: Reference, live: pd.DataFrame, window: list[date], day: date, horizon: int
) -> pd.DataFrame:
    """The record's inputs for the window's days T1 did not score: the reference's, or,
    where a window day is neither scored live nor in the record, the history's panel
    over the window (as the record computes them)."""
    if not unrecorded_days(window, live, reference):
        return reference.inputs
    panel = validation.history_panel(conn, day, horizon)
    return panel[panel["date"].isin(window)].assign(traded=lambda x: x["volume"].fillna(0) > 0)


def live_outcomes(conn: Connection, day: date, priced: list[date], t: Thresholds, horizon: int) -> pd.DataFrame:
    """The outcomes of the live predictions before `day` of the priced days read; in a
    thin market, with fewer than `t.live_outcomes` there and older predictions stored,
    those of the whole live record. Labelled on every stored bar up to `day`, as the live
    record labels them (`labelled_prices`)."""
    p = tables.predictions.c
    where = [p.trading_date < day, p.horizon_days == horizon]
    recent = where + ([p.trading_date >= priced[0]] if priced else [])
    read = current_rows(conn, tables.predictions, where=recent, columns=OUTCOME_COLUMNS)
    prices = labelled_prices(conn, day)
    live = outcomes(served_predictions(rows_on_series(conn, read, day)), prices, horizon)
    if len(live) >= t.live_outcomes or not priced:
        return live
    if not conn.execute(select(p.id).where(*where, p.trading_date < priced[0]).limit(1)).first():
        return live
    every = current_rows(conn, tables.predictions, where=where, columns=OUTCOME_COLUMNS)
    return outcomes(served_predictions(rows_on_series(conn, every, day)), prices, horizon)


def labelled_prices(conn: Connection, day: date) -> pd.DataFrame:
    """Every stored bar up to `day`, from the first: what an outcome's label is read off
    (models/monitor.py `outcomes`). The label's liquid universe reads each name's 20-session
    average traded value and its spread estimate over 60 pairs of sessions, which a panel
    cut at the window's first day does not know on its first weeks: a cut panel labels
    those days against another universe than the model's panel, the live record's and the
    validation record's."""
    return price_panel(conn, day)


# --- the reference and its cache ------------------------------------------------------------


def reference_version(conn: Connection, horizon: int) -> tuple | None:
    """What the validation record's reference is made of: its rows (count, newest id, first
    and last day), the newest stored price up to the day its last outcome closes
    (`outcomes_end`) and the newest split and sentiment row up to its last day (a
    correction there changes the inputs it computed). None without a record."""
    v = tables.validation_predictions.c
    count, newest, first, last = conn.execute(
        select(func.count(), func.max(v.id), func.min(v.trading_date), func.max(v.trading_date)).where(
            v.horizon_days == horizon
        )
    ).one()
    if not count:
        return None
    e, a, m = tables.eod_prices.c, tables.corporate_actions.c, tables.sentiment_composites.c
    prices = conn.execute(select(func.max(e.id)).where(e.trading_date <= outcomes_end(conn, last, horizon))).scalar()
    actions = conn.execute(select(func.max(a.id)).where(a.action_date <= last)).scalar()
    sentiment = conn.execute(select(func.max(m.id)).where(m.trading_date <= last)).scalar()
    record = (count, newest, first.isoformat(), last.isoformat())
    return (REFERENCE_FORMAT, FEATURE_SET, horizon, *record, prices, actions, sentiment)


def outcomes_end(conn: Connection, last: date, horizon: int) -> date:
    """The priced day `horizon` + 1 days after `last` (what the record's last outcome, the
    held excess from the next close over `horizon` sessions, closes on), else `last` while
    that day is not priced yet."""
    e = tables.eod_prices.c
    query = select(e.trading_date).where(e.trading_date > last).distinct().order_by(e.trading_date).limit(horizon + 1)
    later = [d for (d,) in conn.execute(query)]
    return later[-1] if len(later) == horizon + 1 else last


def cache_prefix(conn: Connection, horizon: int) -> str:
    """The reference files of one store and horizon share this name prefix (the store's
    URL without its password, hashed), so stores that share a models folder keep theirs."""
    url = conn.engine.url.render_as_string(hide_password=True)
    return f"monitor-reference-{hashlib.sha256(url.encode()).hexdigest()[:12]}-h{horizon}-"


def reference_data(conn: Connection, horizon: int, cache_dir: Path | None) -> Reference | None:
    """The validation record's `Reference`: read from `cache_dir` when a file of the same
    `reference_version` is there, else built (`build_reference`) and written there,
    replacing older versions. None without a record."""
    version = reference_version(conn, horizon)
    if version is None:
        return None
    prefix = cache_prefix(conn, horizon)
    name = f"{prefix}{hashlib.sha256(repr(version).encode()).hexdigest()[:16]}.pkl"
    cached = read_cached(cache_dir / name) if cache_dir is not None else None
    if cached is not None:
        return cached
    reference = build_reference(conn, horizon)
    if cache_dir is not None:
        write_cached(reference, cache_dir, name, prefix)
    return reference


def build_reference(conn: Connection, horizon: int) -> Reference:
    """The record's inputs (the history's panel up to its last day, from its first),
    and the Scores and outcomes of its calibrated served predictions (`calibrated`)."""
    v = tables.validation_predictions.c
    stored = current_rows(conn, tables.validation_predictions, where=[v.horizon_days == horizon])
    first, last = min(r["trading_date"] for r in stored), max(r["trading_date"] for r in stored)
    panel = validation.history_panel(conn, last, horizon)
    panel = panel.assign(traded=panel["volume"].fillna(0) > 0)
    end = outcomes_end(conn, last, horizon)
    closes = labelled_prices(conn, end)
    served = served_predictions(rows_on_series(conn, stored, end))
    inputs = panel[(panel["date"] >= first)][["symbol", "date", "traded", *FEATURE_NAMES]].reset_index(drop=True)
    scored = calibrated(served)
    scores = pd.DataFrame(
        [(d, r["score"]) for d, by in scored.items() for r in by.values() if r["score"] is not None],
        columns=["date", "score"],
    )
    return Reference(first, last, inputs, scores, outcomes(scored, closes, horizon))


def calibrated(served: ServedDays) -> ServedDays:
    """The served predictions scored with a calibration (`calibration_rows` above 0). The
    record's first blocks are scored before enough history exists to calibrate
    (models/scoring.py): their Score is the booster's raw logistic, far narrower than a
    calibrated day's, so their Scores and outcomes would set the drift band and the live
    band from another distribution than the one the live model serves."""
    kept = {d: {s: r for s, r in by.items() if (r.get("calibration_rows") or 0) > 0} for d, by in served.items()}
    return {d: by for d, by in kept.items() if by}


def read_cached(path: Path) -> Reference | None:
    """The reference kept in `path`; None when there is none, or it cannot be read (a
    truncated or outdated file is built again)."""
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as handle:
            kept = pickle.load(handle)
    except Exception:  # noqa: BLE001 - a truncated or outdated file: built again
        log.warning("model monitor: the cached reference %s could not be read; building it again", path.name)
        return None
    return kept if isinstance(kept, Reference) else None


def write_cached(reference: Reference, cache_dir: Path, name: str, prefix: str) -> None:
    """Writes the reference to `cache_dir/name` atomically and removes the store's older
    versions (the other files of `prefix`)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=cache_dir, prefix=f".{name}.")
    with os.fdopen(handle, "wb") as out:
        pickle.dump(reference, out, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(partial, cache_dir / name)
    for old in cache_dir.glob(f"{prefix}*.pkl"):
        if old.name != name:
            old.unlink(missing_ok=True)
