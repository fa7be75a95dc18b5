"""The model's two out-of-sample records as the API and the reports show them, side by side.

- **validation**: the walk-forward over the history before the first live day
  (models/validation.py): every prediction out of sample, made by a model trained only on
  labels known before its 5-day block; stored once by bootstrapping.
- **live**: from the first live day on, `t1_predict` appends each day the metrics of every
  earlier served live prediction whose label is known (pipeline/scoring.py `track_record`,
  scope `live:<date>`): of a day a retrain re-scored, the later model's rows only; its
  model count is of the models that served the days it evaluates (`_served_model_count`).

Each record carries its label, period, prediction and model counts, layer-1 backend and
the same metrics on the model's label (the excess return over `horizon_days`,
market/labels.py; definitions in models/metrics.py): binary, 3-class and movers
accuracy, average error, rank IC (the expected excess's daily Spearman correlation with
the label; sample size in days) and tercile spread (the TOP Ranking Tercile's mean label
minus the BOTTOM's, a fraction of return over the horizon; sample size in days), each
beside its base rate, sample size and baselines, or a reason when it is empty. A record
stored before the rank IC and the tercile spread were measured shows them as null until
`marketintel bootstrap` or the next live day writes them. The top level names the model
that produced the latest live predictions and its layer-1 backend, saying so when that
backend is the fallback.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TypedDict

from sqlalchemy import Connection, func, select

from market.clock import TradingCalendar, default_calendar
from market.plain import JsonValue
from models.decisions import HORIZON
from models.metrics import BINARY_RULE
from models.monitor import noted, reading, worse_when
from models.validation import RECORD
from store import tables
from store.history import current_rows
from store.panels import MetricRow, ModelRun, latest_metrics, latest_model
from views.instrument import served_models

REPORTED = (
    "binary_accuracy",
    "three_class_accuracy",
    "movers_accuracy",
    "average_error",
    "rank_ic",
    "tercile_spread",
)
LABELS = {
    "validation": "Validation record (walk-forward, out of sample, before the first live day)",
    "live": "Live record (predictions made each trading day, from the first live day)",
}


class MonitorCheckRow(TypedDict):
    """A stored check of the model monitor (`monitor_checks`, pipeline/monitor_stage.py)."""

    id: int
    recorded_at: datetime
    trading_date: date
    check_name: str
    kind: str
    level: str
    state: str
    figure: float | None
    watch_threshold: float | None
    alert_threshold: float | None
    since: date | None
    figures: dict[str, JsonValue]


class Metric(TypedDict):
    """One metric of a record beside its base rate, sample size and baselines."""

    value: float | None
    base_rate: float | None
    sample_size: int
    baselines: dict[str, float]


class ModelRecord(TypedDict):
    """One of the two records (`validation`, `live`): what it covers and its metrics by
    name (None for one it has no row of), or the reason it is empty."""

    record: str
    label: str
    period_start: str | None
    period_end: str | None
    evaluated_through: str | None
    predictions: int
    models: int | None
    layer1_backend: str | None
    metrics: dict[str, Metric | None]
    reason: str | None


class MonitorCheck(TypedDict):
    check: str
    kind: str
    state: str
    level: str
    figure: float | None
    measure: str
    watch_threshold: float | None
    alert_threshold: float | None
    worse_when: str | None
    since: date | None
    note: str


class MonitorState(TypedDict):
    """The monitor's latest day: the overall state and each check, or why there is none."""

    state: str | None
    trading_date: date | None
    reason: str | None
    checks: list[MonitorCheck]
    latest_predicted: date | None
    unmonitored_days: int


class Performance(TypedDict):
    """The model that scores (its latest run) and its two records, with the monitor's state."""

    model_id: str | None
    trained_through: date | None
    training_rows: int | None
    horizon_days: int | None
    layer1_backend: str | None
    layer1_is_fallback: bool
    validation: ModelRecord
    live: ModelRecord
    monitor: MonitorState


def performance(conn: Connection, calendar: TradingCalendar | None = None, as_of: date | None = None) -> Performance:
    """The records as they stand now; with `as_of`, as they stood at that day's close: the
    model of its time and the live metrics computed by that day (a day's analysis quotes
    these, so re-running it after later days writes the same facts)."""
    model = latest_model(conn, as_of)
    backend = model["layer1_backend"] if model else None
    return {
        "model_id": model["model_id"] if model else None,
        "trained_through": model["train_end"] if model else None,
        "training_rows": model["training_rows"] if model else None,
        "horizon_days": model["horizon_days"] if model else None,
        "layer1_backend": backend,
        "layer1_is_fallback": bool(backend and backend.startswith("fallback")),
        "validation": validation_record(conn),
        "live": live_record(conn, model, calendar, as_of),
        "monitor": monitor_state(conn),
    }


def _psi_excess(sample: str) -> str:
    """A PSI check's measure, as the monitor computes it (models/monitor.py
    `PsiReference.excess`, `psi_thresholds`): the PSI less what a sample of that many rows
    shows by chance, read against thresholds set by the validation record's own windows.
    The Score's window holds the Scores served on its days: live where the model served
    them, else the validation record's (pipeline/scoring.py `stored_scores`)."""
    return (
        f"psi_excess: the population stability index (PSI) of {sample} against the validation record's, less its "
        "sampling noise ((bins - 1) / rows), against thresholds from the validation record's own windows of that "
        "length"
    )


MEASURES = {  # by check kind; {window_days} is the check's window, from its figures (`_measure`)
    "score_drift": _psi_excess(
        "the Scores served over the last {window_days} days (live, else the validation record's)"
    ),
    "input_psi": _psi_excess("the input's values over its last {window_days} days"),
    "input_tail": "tail_share: the share of the validation record's days whose value was at least as far out "
    "as today's (a market-wide input, or the share of priced names that traded)",
    "live_accuracy": f"accuracy: the binary accuracy of the latest live outcomes ({BINARY_RULE})",
    "live_brier": "brier: the Brier score of the latest live outcomes' P(up)",
    "live_calibration": "ece: the expected calibration error of the latest live outcomes' P(up) (10 equal-width bins)",
}


def monitor_state(conn: Connection, as_of: date | None = None) -> MonitorState:
    """The model monitor's latest day (T1's `t1_monitor`, docs/monitoring.md): the overall
    state (the worst check's) and each check's state, figure, thresholds and since, with
    what the figure measures (`measure`), which way its thresholds run (`worse_when`:
    `above` when a higher figure is worse, `below` when a lower one is, from the check's
    kind, models/monitor.py `worse_when`)
    and a `note` that reads the check in words (or says why its figure is missing).
    With `as_of`, its latest day on or before that day and the predicted days up to it (the
    health stage re-run for an old day quotes the monitor of its time, not a later ALERT)."""
    m = tables.monitor_checks.c
    up_to = [] if as_of is None else [m.trading_date <= as_of]
    day = conn.execute(select(func.max(m.trading_date)).where(*up_to)).scalar()
    behind = _unmonitored(conn, day, as_of)
    if day is None:
        return {
            "state": None,
            "trading_date": None,
            "checks": [],
            "reason": "the monitor has not run yet: T1's t1_monitor stage checks each trading day",
            **behind,
        }
    order = ["input_drift", "score_drift", "live_accuracy", "live_brier", "live_calibration"]
    rows = sorted(
        current_rows(conn, tables.monitor_checks, where=[m.trading_date == day]),
        key=lambda r: (order.index(r["kind"]) if r["kind"] in order else len(order), r["check_name"]),
    )
    states = [r["state"] for r in rows]
    overall = "ALERT" if "ALERT" in states else "WATCH" if "WATCH" in states else "OK"
    return {
        "state": overall,
        "trading_date": day,
        "reason": None,
        "checks": [_check(r) for r in rows],
        **behind,
    }


def _unmonitored(conn: Connection, day: date | None, as_of: date | None = None) -> dict:
    """`latest_predicted` (the latest trading day with stored predictions, up to `as_of`) and
    `unmonitored_days` (the days with predictions after the monitor's latest day, `day`;
    every predicted day when it never ran): a state the monitor last wrote weeks ago is that
    old, not today's."""
    p = tables.predictions.c
    up_to = [] if as_of is None else [p.trading_date <= as_of]
    where = up_to if day is None else [*up_to, p.trading_date > day]
    count, latest = conn.execute(
        select(func.count(func.distinct(p.trading_date)), func.max(p.trading_date)).where(*where)
    ).one()
    if latest is None and day is not None:
        latest = conn.execute(select(func.max(p.trading_date)).where(*up_to)).scalar()
    return {"latest_predicted": latest, "unmonitored_days": int(count)}


def _check(row: MonitorCheckRow) -> MonitorCheck:
    figures = row["figures"] or {}
    worse = _worse_when(row, figures)
    return {
        "check": row["check_name"],
        "kind": row["kind"],
        "state": row["state"],
        "level": row["level"],
        "figure": row["figure"],
        "measure": _measure(row["kind"], figures),
        "watch_threshold": row["watch_threshold"],
        "alert_threshold": row["alert_threshold"],
        "worse_when": worse,
        "since": row["since"],
        "note": noted(figures, _reading(row, worse)),
    }


def _measure(kind: str, figures: dict[str, JsonValue]) -> str:
    """What a check's figure is (MEASURES), its window's days from its figures (a score
    check stored before it kept `window_days`: the days its Scores covered)."""
    if kind == "input_drift":
        kind = "input_tail" if "reference_days" in figures else "input_psi"
    window_days = figures.get("window_days", figures.get("current_days", "N"))
    return MEASURES.get(kind, kind).format(window_days=window_days)


def _worse_when(row: MonitorCheckRow, figures: dict[str, JsonValue]) -> str | None:
    """Which way the check's figure is worse (models/monitor.py `worse_when`); None without
    thresholds. A tail share is told from a PSI as `_measure` tells it."""
    if row["watch_threshold"] is None or row["alert_threshold"] is None:
        return None
    return worse_when(row["kind"], tail="reference_days" in figures)


def _reading(row: MonitorCheckRow | MonitorCheck, worse: str | None) -> str:
    """The check in words: its figure against its thresholds and the day's level (models/monitor.py `reading`)."""
    shown = (row["figure"], row["watch_threshold"], row["alert_threshold"], worse, row["level"], row["state"])
    return reading(*shown)


def said_apart(check: MonitorCheck) -> str | None:
    """A served check's note where it says what its figure and thresholds do not (a stuck,
    missing or frozen feed, ALERT whatever its figure reads; why it has no figure), None
    where the note is only its reading in words: what the CLI's line and the reports'
    model-health panels print beside the figure; of a note that begins with the reading, what
    follows it (a market-wide check's day in the market's terms: `models.monitor.value_said`)."""
    read = _reading(check, check["worse_when"])
    return None if check["note"] == read else check["note"].removeprefix(f"{read}; ")


def shown_record(perf: Performance) -> ModelRecord:
    """The record a one-box summary shows: the live record once it has metrics, else the
    validation record (the reports' rule, written once)."""
    live = perf["live"]
    return live if any(live["metrics"].values()) else perf["validation"]


def validation_record(conn: Connection) -> ModelRecord:
    scope, latest = latest_metrics(conn, RECORD)
    any_row = next(iter(latest.values()), None)
    detail = any_row["detail"] if any_row else {}
    end = detail.get("period_end")
    span = _Span(
        detail.get("period_start"),
        end,
        _labelled_through(conn, date.fromisoformat(end), detail.get("horizon_days") or HORIZON, RECORD)
        if end
        else None,
        detail.get("models"),
        detail.get("layer1_backend"),
        None
        if scope
        else "no validation record yet: `marketintel bootstrap` (the demo runs it) builds it from the stored history",
    )
    return _record("validation", latest, span)


def live_record(
    conn: Connection, model: ModelRun | None, calendar: TradingCalendar | None = None, as_of: date | None = None
) -> ModelRecord:
    """The live record's latest metrics (with `as_of`, the latest computed by that day:
    scope `live:<date>` up to it); without any, the reason (when its first outcome is known:
    a prediction of day t is labelled at the close `horizon` + 1 sessions after t, on
    `calendar`, the service's calendar by default)."""
    rows = current_rows(conn, tables.model_metrics, where=[tables.model_metrics.c.model_id == "live"])
    if as_of is not None:
        rows = [r for r in rows if r["scope"] <= f"live:{as_of.isoformat()}"]
    scope = max((r["scope"] for r in rows), default=None)
    latest = {r["metric"]: r for r in rows if r["scope"] == scope}
    p = tables.predictions.c
    first = conn.execute(select(func.min(p.trading_date))).scalar()
    reason = None
    if model is None:
        reason = "no model has been trained yet (t1_predict trains the first one)"
    horizon = (model or {}).get("horizon_days") or HORIZON
    if model is not None and not latest:
        reason = "no prediction has a realised outcome yet" + (
            f": the first, of {first.isoformat()}, is known at the close of "
            f"{(calendar or default_calendar()).add_trading_days(first, horizon + 1).isoformat()} "
            f"({horizon} + 1 sessions later)"
            if first
            else ""
        )
    start, through = first.isoformat() if first else None, scope.split(":", 1)[1] if scope else None
    backend = model["layer1_backend"] if model else None
    evaluated = _labelled_through(conn, date.fromisoformat(through), horizon) if through else None
    models = _served_model_count(conn, date.fromisoformat(evaluated) if evaluated else None)
    return _record("live", latest, _Span(start, through, evaluated, models, backend, reason))


def _served_model_count(conn: Connection, evaluated: date | None) -> int | None:
    """How many models made the live record's predictions: the models that served a day
    (views/instrument.py `served_models`, the model recorded last for the day) through
    `evaluated`, the last day the record's metrics count; every predicted day before any is
    evaluated. A model whose every row a retrain replaced made none of them."""
    p = tables.predictions.c
    days = select(p.trading_date).distinct()
    served = served_models(tables.predictions, days if evaluated is None else days.where(p.trading_date <= evaluated))
    return conn.execute(select(func.count(func.distinct(served.subquery().c.model_id)))).scalar() or None


def _labelled_through(conn: Connection, day: date, horizon: int, record: str = "live") -> str | None:
    """The last predicted day of `record` whose outcome is known at `day`'s close: a
    prediction of day t is labelled by the close `horizon` sessions after t's next session,
    so the metrics computed on `day` (the live record's day, the validation record's last,
    beyond which its walk-forward read no bar) cover the predictions of the days up to the
    (horizon + 1)-th stored session before it."""
    c = tables.eod_prices.c
    p = (tables.validation_predictions if record == RECORD else tables.predictions).c
    sessions = conn.execute(
        select(c.trading_date)
        .where(c.trading_date <= day)
        .distinct()
        .order_by(c.trading_date.desc())
        .limit(horizon + 2)
    ).scalars()
    sessions = list(sessions)
    if len(sessions) < horizon + 2:
        return None
    last = conn.execute(select(func.max(p.trading_date)).where(p.trading_date <= sessions[horizon + 1])).scalar()
    return None if last is None else str(last)


@dataclass(frozen=True)
class _Span:
    """What a record says of itself beside its metrics: its period, how far its labels are
    evaluated, its models and layer-1 backend, and why it is empty (shown only then)."""

    period_start: str | None
    period_end: str | None
    evaluated_through: str | None
    models: int | None
    layer1_backend: str | None
    reason: str | None


def _record(kind: str, latest: dict[str, MetricRow], span: _Span) -> ModelRecord:
    metrics = {name: _metric(latest[name]) if name in latest else None for name in REPORTED}
    three = latest.get("three_class_accuracy")
    return {
        "record": kind,
        "label": LABELS[kind],
        "period_start": span.period_start,
        "period_end": span.period_end,
        "evaluated_through": span.evaluated_through,
        "predictions": int(three["sample_size"]) if three else 0,
        "models": span.models,
        "layer1_backend": span.layer1_backend,
        "metrics": metrics,
        "reason": span.reason if not latest else None,
    }


def _metric(row: MetricRow) -> Metric:
    baselines = (row.get("detail") or {}).get("baselines") or {}
    return {
        "value": row["value"],
        "base_rate": row["base_rate"],
        "sample_size": row["sample_size"],
        "baselines": {k: v for k, v in baselines.items() if v is not None},
    }
