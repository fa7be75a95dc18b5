"""The model monitor as GET /api/ai/performance, GraphQL, the CLI and the reports show it:
each check says what its figure is, which way its thresholds run and, in words, how it
reads; a check without a figure says why."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
from typer.testing import CliRunner

from api.graphql.types.model_performance import ModelPerformance
from api.schemas.portfolio import Performance
from cli.main import app, monitor_lines
from market.clock import default_calendar
from market.settings import Settings
from reports import KINDS, generate
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.reports.pdf import read
from views.performance import monitor_state, performance

DAY = date(2026, 11, 20)
ROWS = [
    # a drift figure, worse when higher: ALERT beyond 0.35
    ("input:rsi_14", "input_drift", "WATCH", "WATCH", 0.21, 0.2, 0.35, DAY, {"window_days": 20}),
    # a market-wide input's tail share, worse when lower
    ("input:market_breadth", "input_drift", "OK", "OK", 0.4, 0.05, 0.01, None, {"reference_days": 250}),
    # the Score's drift, over a window of live and validation-record Scores
    ("score", "score_drift", "OK", "OK", 0.0, 0.1, 0.25, None, {"window_days": 20, "current_rows": 1180}),
    # live accuracy, worse when lower; no figure yet
    ("live_accuracy", "live_accuracy", "OK", "OK", None, None, None, None, {"note": "not enough live outcomes"}),
    # the Brier score, worse when higher, against a band whose two worst chunks tie: WATCH on the ALERT line
    ("live_brier", "live_brier", "ALERT", "WATCH", 0.2612, 0.2575, 0.2575, DAY, {"validation_chunks": 10}),
]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_each_check_says_what_it_measures_and_which_way_is_worse(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.monitor_checks,
            [
                {
                    "trading_date": DAY,
                    "check_name": name,
                    "kind": kind,
                    "level": level,
                    "state": state,
                    "figure": figure,
                    "watch_threshold": watch,
                    "alert_threshold": alert,
                    "since": since,
                    "figures": figures,
                }
                for name, kind, level, state, figure, watch, alert, since, figures in ROWS
            ],
        )
    with engine.connect() as conn:
        state = monitor_state(conn)
        Performance.model_validate(performance(conn))  # the served schema takes it
    checks = {c["check"]: c for c in state["checks"]}
    drift, tail, live = checks["input:rsi_14"], checks["input:market_breadth"], checks["live_accuracy"]
    assert drift["measure"].startswith("psi_excess:") and "last 20 days" in drift["measure"]
    assert tail["measure"].startswith("tail_share:")
    assert live["measure"].startswith("accuracy: the binary accuracy")
    assert (drift["worse_when"], tail["worse_when"], live["worse_when"]) == ("above", "below", None)
    assert drift["measure"] == (
        "psi_excess: the population stability index (PSI) of the input's values over its last 20 days against the "
        "validation record's, less its sampling noise ((bins - 1) / rows), against thresholds from the "
        "validation record's own windows of that length"
    )
    assert checks["score"]["measure"] == (
        "psi_excess: the population stability index (PSI) of the Scores served over the last 20 days (live, else "
        "the validation record's) against the validation record's, less its sampling noise ((bins - 1) / rows), "
        "against thresholds from the validation record's own windows of that length"
    )
    assert drift["note"] == "0.21: WATCH above 0.2, ALERT above 0.35; level WATCH, state WATCH"
    # the direction is the check's, not its thresholds' order: equal thresholds still read "above"
    brier = checks["live_brier"]
    assert brier["worse_when"] == "above"
    assert brier["note"] == "0.2612: WATCH above 0.2575, ALERT above 0.2575; level ALERT, state WATCH"
    assert live["note"] == "not enough live outcomes"
    assert all(c["note"] for c in state["checks"]), "no check answers a null note"
    lines = monitor_lines(state)
    assert any(
        "input:market_breadth" in line and "tail_share 0.4000 (worse below: watch 0.0500" in line for line in lines
    )
    assert any("live_accuracy" in line and line.endswith("accuracy -  not enough live outcomes") for line in lines)


def _checks(day: date, state: str = "OK") -> list[dict]:
    return [
        {"trading_date": day, "check_name": "score", "kind": "score_drift", "level": state, "state": state}
        | {"figure": 0.01, "watch_threshold": 0.1, "alert_threshold": 0.25, "since": None, "figures": {}}
    ]


def _predicted(day: date) -> dict:
    return {"symbol": "AAA", "trading_date": day, "model_id": "m", "horizon_days": 5, "score": 50.0}


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_state_the_monitor_wrote_before_the_latest_predictions_says_how_far_behind(settings: Settings) -> None:
    """Predictions stored for two trading days after the monitor's last day (its stage failed
    or never ran): the state is that old, and every surface says so; `monitor --check` exits 2
    for a cron job, and 0 once the monitor has checked the latest day."""
    later = [DAY + timedelta(days=3), DAY + timedelta(days=4)]
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.predictions, [_predicted(d) for d in [DAY, *later]])
    with engine.connect() as conn:
        never = monitor_state(conn)
    assert (never["state"], never["unmonitored_days"], never["latest_predicted"]) == (None, 3, later[-1])
    with engine.begin() as conn:
        append_history(conn, tables.monitor_checks, _checks(DAY))
    with engine.connect() as conn:
        state = monitor_state(conn)
        served = Performance.model_validate(performance(conn))
        graph = ModelPerformance.from_record(performance(conn))
    assert (state["state"], state["unmonitored_days"], state["latest_predicted"]) == ("OK", 2, later[-1])
    assert served.monitor.unmonitored_days == 2 and served.monitor.latest_predicted == later[-1]
    assert graph.monitor.unmonitored_days == 2
    assert monitor_lines(state)[0] == "monitor 2026-11-20: OK; 2 predicted days not monitored, the latest 2026-11-24"
    assert CliRunner().invoke(app, ["monitor"]).exit_code == 0
    assert CliRunner().invoke(app, ["monitor", "--check"]).exit_code == 2
    behind = "Not monitored since 2026-11-20: the 2 predicted trading days after it were not checked"
    assert all(behind in _report_text(settings, kind) for kind in KINDS), "both reports' model-health panels say it"
    with engine.begin() as conn:
        append_history(conn, tables.monitor_checks, _checks(later[-1]))
    assert CliRunner().invoke(app, ["monitor", "--check"]).exit_code == 0
    assert "Not monitored since" not in _report_text(settings, "quant-briefing")


def _report_text(settings: Settings, kind: str) -> str:
    """Report `kind` read back as one line of words (a boxed note wraps)."""
    report = generate(
        kind, service_engine(settings), settings, default_calendar(), datetime(2026, 11, 25, 23, tzinfo=UTC)
    )
    return " ".join(read(report.pdf).text.split())


STUCK = (
    "stuck feed: one value (0.5) for 12 of the day's 12 traded names (100%; at most 8% on any day of the "
    "validation record)"
)


def _check(name: str, level: str, lines: tuple[float, float, float], since: date, figures: dict, kind: str) -> dict:
    """A `monitor_checks` row of DAY: `name` at `level` (its state too) since `since`,
    `lines` its figure, watch and alert thresholds."""
    figure, watch, alert = lines
    return {"trading_date": DAY, "check_name": name, "kind": kind, "level": level, "state": level} | {
        "figure": figure,
        "watch_threshold": watch,
        "alert_threshold": alert,
        "since": since,
        "figures": figures,
    }


def _stored(settings: Settings, *checks: dict) -> dict:
    """The monitor's state once `checks` are stored."""
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.monitor_checks, list(checks))
    with engine.connect() as conn:
        return monitor_state(conn)


def _one_alert(settings: Settings, name: str, lines: tuple[float, float, float], figures: dict) -> dict:
    """The monitor's state after one input-drift check `name` in ALERT since two days before DAY."""
    return _stored(settings, _check(name, "ALERT", lines, DAY - timedelta(days=2), figures, "input_drift"))


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_feed_alert_says_why_where_its_figure_reads_stable(settings: Settings) -> None:
    """A stuck feed is ALERT with a PSI far below its ALERT line (models/monitor.py
    `stuck_note`): the CLI's line and both reports' model-health panels printed only the
    figure against its thresholds, "0.0123 (worse above: watch 0.1, alert 0.25)" beside
    ALERT, and never what moved; each now carries the check's note. A check whose note is
    only its reading in words adds nothing to the line."""
    stuck = {"window_days": 20, "stuck": True, "note": STUCK}
    alert = _check("input:layer1_p_up", "ALERT", (0.0123, 0.1, 0.25), DAY - timedelta(days=2), stuck, "input_drift")
    watch = _check("input:rsi_14", "WATCH", (0.21, 0.2, 0.35), DAY, {"window_days": 20}, "input_drift")
    lines = monitor_lines(_stored(settings, alert, watch))
    (layer1,) = [line for line in lines if "input:layer1_p_up" in line]
    assert layer1.endswith(f"since 2026-11-18  {STUCK}"), layer1
    (rsi,) = [line for line in lines if "input:rsi_14" in line]
    assert rsi.endswith("since 2026-11-20"), "a reading in words repeats the line: not printed"
    for kind in KINDS:
        shown = _report_text(settings, kind)
        assert f"input:layer1_p_up: {STUCK}" in shown, kind
        assert "input:rsi_14: 0.21" not in shown, kind


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_figure_just_past_its_line_reads_past_it_in_the_reports(settings: Settings) -> None:
    """The model-health table printed the figure to 4 decimals and its lines to 3: a live
    accuracy of 0.5124 WATCH below 0.51245 read "0.5124 ... below 0.512 / 0.490", a figure
    on the safe side of its own line. Both now print to the figure's decimals, so rounding
    can make them level, never swap them."""
    figures = {"validation_chunks": 12, "live_outcomes": 300}
    _stored(settings, _check("live_accuracy", "WATCH", (0.5124, 0.51245, 0.49), DAY, figures, "live_accuracy"))
    for kind in KINDS:
        shown = _report_text(settings, kind)
        (figure, watch, alert) = re.search(r"live_accuracy WATCH (\S+) below (\S+) / (\S+) ", shown).groups()
        assert float(figure) <= float(watch) and float(alert) <= float(watch), (kind, figure, watch, alert)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_market_wide_alert_says_the_days_value_against_the_records_days(settings: Settings) -> None:
    """A market-wide check's figure is a tail share: "0.0000 (worse below: watch 0.05, alert
    0.01)" said the day was beyond the record, not what the market did (12% of names traded,
    where the record's days ran 45% to 78%; breadth far up or far down). The API's note, the
    CLI's line and the reports' panel now give the day's value beside the record's range."""
    figures = {"market_wide": True, "value": 0.12, "reference_days": 250, "reference_range": [0.45, 0.78]}
    state = _one_alert(settings, "activity:traded_share", (0.0, 0.05, 0.01), figures)
    said = "the day's value 0.12, the validation record's 250 days 0.45 to 0.78"
    (check,) = state["checks"]
    assert check["note"] == f"0: WATCH below 0.05, ALERT below 0.01; level ALERT, state ALERT; {said}"
    (line,) = [line for line in monitor_lines(state) if "activity:traded_share" in line]
    assert line.endswith(f"since 2026-11-18  {said}"), "the day's value, not the reading again"
    for kind in KINDS:
        assert f"activity:traded_share: {said}." in _report_text(settings, kind), kind


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_an_input_drift_says_which_window_moved_and_which_way(settings: Settings) -> None:
    """A per-name input's figure is a PSI: "0.8123 (worse above: watch 0.24, alert 0.78)"
    said its values moved, not over which of the two windows nor which way (RSI up in a
    rally, down in a fall). The note adds the window that decided and the mean beside the
    record's, on the CLI line, under the reports' table and in the API's note; the CLI adds it
    to a check in breach only (an OK line says nothing moved)."""
    windows = {"5": {"psi": 0.8123, "level": "ALERT"}, "20": {"psi": 0.31, "level": "WATCH"}}
    figures = {"market_wide": False, "window_days": 5, "windows": windows}
    figures |= {"current_mean": 62.14, "reference_mean": 50.3, "stuck": False}
    state = _one_alert(settings, "input:rsi_14", (0.8123, 0.24, 0.78), figures)
    said = "the 5-day window's PSI; the 20 days' mean 62.14, the validation record's 50.3"
    (check,) = state["checks"]
    assert check["note"].endswith(f"level ALERT, state ALERT; {said}")
    (line,) = [line for line in monitor_lines(state) if "input:rsi_14" in line]
    assert line.endswith(f"since 2026-11-18  {said}"), line
    for kind in KINDS:
        assert f"input:rsi_14: {said}." in _report_text(settings, kind), kind
    quiet = monitor_lines({**state, "checks": [{**check, "state": "OK", "level": "OK", "since": None}]})
    assert quiet[-1].endswith("alert 0.7800)"), "an OK line adds nothing"


def test_the_cli_prints_a_checks_lines_to_its_figures_decimals() -> None:
    """`marketintel monitor` printed the figure to 4 decimals and its lines to 6 significant
    figures: a PSI of 0.248549 WATCH above 0.248548 read "0.2485 (... watch 0.248548", on the
    safe side of its own line. Both print to 4 decimals: level at worst, never swapped."""
    check = {"check": "input:rsi_14", "kind": "input_drift", "state": "WATCH", "level": "WATCH"}
    check |= {"figure": 0.248549, "watch_threshold": 0.248548, "alert_threshold": 0.31, "worse_when": "above"}
    check |= {"measure": "psi_excess: ...", "since": DAY, "note": "n/a"}
    state = {"state": "WATCH", "trading_date": DAY, "checks": [check], "unmonitored_days": 0}
    (line,) = monitor_lines(state)[1:]
    figure, watch = re.search(r"psi_excess (\S+) \(worse above: watch ([^,]+),", line).groups()
    assert float(figure) >= float(watch), line


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_health_of_an_old_day_shows_the_monitor_as_it_stood_then(settings: Settings) -> None:
    """The monitor checked 2026-11-20 (OK) and, later, 2026-11-24 (ALERT). The health stage
    re-run for 2026-11-20, as its notebook shows it, quotes the monitor of that day, not the
    ALERT of a day after it (nor the later predictions as "not monitored")."""
    from pipeline.runner import run_stage

    later = DAY + timedelta(days=4)
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.predictions, [_predicted(DAY), _predicted(later)])
        append_history(conn, tables.monitor_checks, _checks(DAY) + _checks(later, "ALERT"))
    summary = run_stage("health", DAY, settings=settings, write=False).summary
    shown = {k: summary[k] for k in ("model_monitor", "model_monitor_date", "model_monitor_alerts")}
    assert shown == {"model_monitor": "OK", "model_monitor_date": "2026-11-20", "model_monitor_alerts": []}
    assert (summary["model_monitor_unmonitored_days"], summary["model_monitor_latest_predicted"]) == (0, "2026-11-20")
    assert run_stage("health", later, settings=settings, write=False).summary["model_monitor"] == "ALERT"
