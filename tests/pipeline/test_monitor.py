"""The model monitor (T1's `t1_monitor`, models/monitor.py, docs/monitoring.md) on a seeded
simulated world: the stable world raises no ALERT; a broken layer-1 feed (one value for
every name) is ALERT after the persistence days, not before, and the signed MODEL_DRIFT
event reaches a webhook receiver on loopback once. Plus the PSI against hand-computed
values, the persistence rule and the live-record checks on planted outcomes. The broken
feed runs on SQLite and Postgres (migration 0016 on both)."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typer.testing import CliRunner

from api.graphql.types.model_performance import ModelPerformance
from api.schemas.portfolio import Performance
from cli.main import app as app_cli
from market.clock import default_calendar
from market.errors import StageFailedError
from market.settings import Settings
from models import monitor
from models.decisions import HORIZON
from models.monitor import ALERT, OK, WATCH, Check, Thresholds, live_checks, persist, psi
from pipeline import monitor_reads, scoring, validation
from pipeline.backfill import backfill
from pipeline.runner import run_stage
from pipeline.serving import serve_in_thread
from pipeline.validation import build_validation_record
from reports import KINDS, generate
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.conftest import migrated_copy
from tests.pipeline.test_analysis_and_notify import SECRET, Receiver
from tests.reports.pdf import read
from views.performance import monitor_state, performance

CAL = default_calendar()
FIRST_LIVE = date(2026, 11, 2)
LIVE = [FIRST_LIVE] + [CAL.add_trading_days(FIRST_LIVE, i) for i in range(1, 4)]


def test_psi_against_hand_computed_values() -> None:
    reference = np.arange(100)  # quartile bins (bins=4): 0-24, 25-49, 50-74, 75-99, a quarter each
    # shares 0.4, 0.3, 0.2, 0.1 against 0.25 each: sum of (c - r) ln(c / r)
    current = [0] * 40 + [30] * 30 + [60] * 20 + [90] * 10
    hand = 0.15 * math.log(1.6) + 0.05 * math.log(1.2) - 0.05 * math.log(0.8) - 0.15 * math.log(0.4)
    assert psi(reference, current, bins=4) == pytest.approx(hand, abs=1e-12) == pytest.approx(0.2282175, abs=1e-6)
    # empty bins count as 1e-4: two bins at 0.5, two empty
    empty = 2 * 0.25 * math.log(2) + 2 * (1e-4 - 0.25) * math.log(1e-4 / 0.25)
    assert psi(reference, [10] * 50 + [60] * 50, bins=4) == pytest.approx(empty, abs=1e-12)
    assert psi(reference, reference, bins=4) == 0.0


def _panel(days: list[date], names: int, rng: np.random.Generator, traded_share: float) -> pd.DataFrame:
    from models.features import FEATURE_NAMES

    rows = []
    for day in days:
        breadth = rng.normal(0, 0.2)  # market-wide: one value per day for every name
        for n in range(names):
            traded = rng.uniform() < traded_share
            values = {f: rng.normal() for f in FEATURE_NAMES}
            values["market_breadth"] = breadth
            values["volume_ratio_20"] = rng.lognormal() if traded else 0.0  # no trade: a value of its own
            rows.append({"symbol": f"S{n}", "date": day, "traded": traded, **values})
    return pd.DataFrame(rows)


def test_names_without_trades_are_left_out_and_market_wide_inputs_are_a_daily_series() -> None:
    rng = np.random.default_rng(5)
    days = list(pd.bdate_range("2026-01-01", periods=120).date)
    reference = _panel(days[:100], 60, rng, traded_share=0.8)
    thin = _panel(days[100:], 60, rng, traded_share=0.3)  # a thin month: most names do not trade
    t = Thresholds()
    checks = {c.check_name: c for c in monitor.input_checks(reference, thin, days[-1], t)}
    assert checks["input:volume_ratio_20"].level == OK  # untraded rows left out: no false drift
    assert checks["input:market_breadth"].figures["market_wide"] is True
    assert checks["input:rsi_14"].figures["market_wide"] is False
    with_untraded = {
        c.check_name: c
        for c in monitor.input_checks(reference.assign(traded=True), thin.assign(traded=True), days[-1], t)
    }
    assert with_untraded["input:volume_ratio_20"].level == ALERT  # the rule's reason: counted in, thin trading alarms
    far = thin.copy()
    far.loc[far["date"] == days[-1], "market_breadth"] = 5.0  # beyond any day of the reference
    assert {c.check_name: c for c in monitor.input_checks(reference, far, days[-1], t)}[
        "input:market_breadth"
    ].level == ALERT


def test_the_short_window_sees_a_sudden_shift_and_activity_is_a_check_of_its_own() -> None:
    rng = np.random.default_rng(8)
    days = list(pd.bdate_range("2026-01-01", periods=120).date)
    reference = _panel(days[:100], 60, rng, traded_share=0.8)
    current = _panel(days[100:], 60, rng, traded_share=0.8)
    t = Thresholds()
    calm = {c.check_name: c for c in monitor.input_checks(reference, current, days[-1], t)}
    assert calm["input:rsi_14"].level == OK and calm[monitor.ACTIVITY].level == OK
    last5 = current["date"].isin(days[-5:])
    shifted = current.copy()
    shifted.loc[last5, "rsi_14"] += 1.0  # one standard deviation, the last 5 days only
    shifted.loc[last5, "traded"] = True  # and every name trades on them
    checks = {c.check_name: c for c in monitor.input_checks(reference, shifted, days[-1], t)}
    rsi = checks["input:rsi_14"]
    assert rsi.level == ALERT and rsi.figures["window_days"] == 5
    assert rsi.figures["windows"]["20"]["level"] != ALERT  # the 20-day window alone would still wait
    assert checks[monitor.ACTIVITY].level == ALERT and checks[monitor.ACTIVITY].figures["value"] == 1.0
    # a market where every name always traded: one suspended name is no change of activity
    always = reference.assign(traded=True)
    one_out = current.assign(traded=True)
    one_out.loc[(one_out["date"] == days[-1]) & (one_out["symbol"] == "S0"), "traded"] = False
    activity = {c.check_name: c for c in monitor.input_checks(always, one_out, days[-1], t)}[monitor.ACTIVITY]
    assert activity.figure == 0.0 and activity.level == OK  # beyond the record's range, but by one name in 60


def test_alert_only_after_the_persistence_days() -> None:
    t = Thresholds(persistence=3)
    days = [date(2026, 11, d) for d in (2, 3, 4, 5)]
    history: dict[str, list] = {}
    states = []
    for day, level in zip(days, [ALERT, ALERT, ALERT, OK]):
        (check,) = persist([Check("input:x", "input_drift", level, 1.0, 0.1, 0.25)], history, t, day)
        states.append((check.state, check.since))
        history = {"input:x": [(day, level, check.since)] + history.get("input:x", [])}
    assert states == [(WATCH, days[0]), (WATCH, days[0]), (ALERT, days[0]), (OK, None)]


def test_live_checks_wait_for_enough_outcomes_and_alert_on_a_degraded_record() -> None:
    rng = np.random.default_rng(3)
    t = Thresholds(live_outcomes=200)
    p = rng.uniform(0.3, 0.7, 4000)
    reference = pd.DataFrame({"p_up": p, "up": (rng.uniform(size=4000) < p).astype(float)})  # calibrated
    few = live_checks(reference, reference.iloc[:150], t)
    assert {c.level for c in few} == {OK} and all(c.figures["note"] == monitor.NOT_ENOUGH for c in few)
    q = rng.uniform(0.3, 0.7, 400)
    inverted = pd.DataFrame({"p_up": q, "up": (rng.uniform(size=400) < 1 - q).astype(float)})  # wrong way round
    levels = {c.check_name: c.level for c in live_checks(reference, inverted, t)}
    assert levels == {"live_accuracy": ALERT, "live_brier": ALERT, "live_calibration": ALERT}
    fine = pd.DataFrame({"p_up": q, "up": (rng.uniform(size=400) < q).astype(float)})
    assert ALERT not in {c.level for c in live_checks(reference, fine, t)}


@pytest.fixture
def settings(unmade_settings: Settings) -> Settings:
    """This module's store is the monitor's world: 110 simulated days and a validation record
    of the 50 before the first live day, built once per test process and kind of database,
    each test's store a copy of it (made in one step, not over an empty migrated store)."""

    def seed(url: str) -> None:
        world = unmade_settings.model_copy(update={"database_url": url})
        engine = service_engine(world)
        backfill(engine, world, 110, LIVE[-1], with_text=False)
        with engine.begin() as conn:
            build_validation_record(conn, end=CAL.previous_trading_day(FIRST_LIVE), days=50, min_train_days=50)

    migrated_copy(unmade_settings.database_url, world="monitor", seed=seed)
    return unmade_settings


def _t1(day: date, settings: Settings) -> dict:
    for stage in ("t1_features", "t1_predict"):
        run_stage(stage, day, settings=settings)
    return run_stage("t1_monitor", day, settings=settings).summary


def _notifications(settings: Settings) -> list[dict]:
    with service_engine(settings).connect() as conn:
        return current_rows(
            conn, tables.notifications, where=[tables.notifications.c.kind.in_(["MODEL_DRIFT", "MODEL_DEGRADED"])]
        )


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_stable_world_raises_no_alert(settings: Settings) -> None:
    summaries = [_t1(day, settings) for day in LIVE]
    assert [s["alerts"] for s in summaries] == [[]] * len(LIVE)
    assert {s["state"] for s in summaries} <= {OK, WATCH}
    assert not _notifications(settings)
    with service_engine(settings).connect() as conn:
        rows = current_rows(conn, tables.monitor_checks, where=[tables.monitor_checks.c.trading_date == LIVE[-1]])
    assert len(rows) == 1 + 14 + 1 + 3 and {r["state"] for r in rows} <= {OK, WATCH}
    live = {r["check_name"]: r for r in rows if r["kind"].startswith("live_")}
    # 3 live days < 300 outcomes, and the record's 50 days hold fewer than LIVE_MIN_CHUNKS chunks of 300:
    # the note names the reason that lasts (the record is there: not "no validation record")
    notes = {r["figures"]["note"] for r in live.values()}
    assert len(notes) == 1 and notes.pop().startswith("validation record too short: ")
    assert _t1(LIVE[-1], settings)["monitor_rows_written"] == 0  # a re-run writes nothing


def test_a_broken_input_feed_alerts_after_the_persistence_days_and_signs_its_webhook(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = scoring.layer1_for_day

    def broken(conn, prices, day, backend, horizon):
        frame = real(conn, prices, day, backend, horizon)
        return frame.assign(p_up=0.5) if day >= LIVE[1] else frame

    monkeypatch.setattr(scoring, "layer1_for_day", broken)
    receiver = Receiver()
    app = receiver.app()
    messages: list[dict] = []

    async def operator(request: Request) -> Response:  # apprise's json:// service posts here
        messages.append(await request.json())
        return Response(status_code=200)

    app.router.routes.append(Route("/operator", operator, methods=["POST"]))
    with serve_in_thread(app) as base:
        hooked = settings.model_copy(
            update={
                "webhook_url": f"{base}/hook",
                "webhook_secret": SecretStr(SECRET),
                "webhook_backoff_seconds": 0.01,
                "notify_urls": [base.replace("http://", "json://") + "/operator"],
            }
        )
        summaries = [_t1(day, hooked) for day in LIVE]
        again = run_stage("t1_monitor", LIVE[-1], settings=hooked).summary
    assert [("input:layer1_p_up" in s["alerts"]) for s in summaries] == [False, False, False, True]
    assert "input:layer1_p_up" in summaries[2]["watch"]  # breached, not yet persistent
    with service_engine(settings).connect() as conn:
        rows = {(r["trading_date"], r["check_name"]): r for r in current_rows(conn, tables.monitor_checks)}
    layer1 = [rows[(day, "input:layer1_p_up")] for day in LIVE]
    assert [r["level"] for r in layer1] == [OK, ALERT, ALERT, ALERT]
    assert [r["state"] for r in layer1] == [OK, WATCH, WATCH, ALERT]
    assert layer1[-1]["since"] == LIVE[1] and layer1[-1]["figures"]["stuck"] is True
    (note,) = [n for n in _notifications(settings) if n["payload"]["check"] == "input:layer1_p_up"]
    assert (
        note["kind"] == "MODEL_DRIFT"
        and note["notification_id"] == f"{LIVE[1].isoformat()}:model-drift:input:layer1_p_up"
    )
    sent = [r for r in receiver.received if r["body"]["kind"] == "MODEL_DRIFT"]
    assert len(sent) == 1 and sent[0]["valid"], "signed, and sent once however often the stage runs"
    assert sent[0]["body"]["payload"]["since"] == LIVE[1].isoformat() and again["new_alerts"] == 0
    assert [m["title"] for m in messages] == [note["payload"]["title"]] and summaries[-1]["apprise"] == "sent 1 of 1"

    # where it shows: GET /api/ai/performance and GraphQL modelPerformance, the CLI, the health stage
    with service_engine(settings).connect() as conn:
        perf = performance(conn)
    assert perf["monitor"]["state"] == ALERT and perf["monitor"]["trading_date"] == LIVE[-1]
    shown = {c["check"]: c for c in perf["monitor"]["checks"]}
    assert shown["input:layer1_p_up"]["state"] == ALERT and shown["input:layer1_p_up"]["since"] == LIVE[1]
    Performance.model_validate(perf)
    graph = ModelPerformance.from_record(perf)
    assert graph.monitor.state == ALERT and any(
        c.check == "input:layer1_p_up" and c.state == ALERT for c in graph.monitor.checks
    )
    cli = CliRunner().invoke(app_cli, ["monitor"])
    assert cli.exit_code == 0, cli.output
    lines = cli.output.splitlines()
    assert lines[0] == f"monitor {LIVE[-1].isoformat()}: ALERT" and len(lines) == 1 + 19
    assert CliRunner().invoke(app_cli, ["monitor", "--check"]).exit_code == 2  # ALERT: a cron job hears it
    assert any(line.startswith("ALERT  input:layer1_p_up") and f"since {LIVE[1].isoformat()}" in line for line in lines)
    health = run_stage("health", LIVE[-1], settings=settings).summary
    assert health["model_monitor"] == ALERT and "input:layer1_p_up" in health["model_monitor_alerts"]
    for kind in KINDS:  # the model-health panel of both PDF reports
        shown = read(
            generate(kind, service_engine(settings), settings, CAL, datetime(2026, 11, 6, 23, tzinfo=UTC)).pdf
        ).text
        assert "Model health" in shown and "input:layer1_p_up ALERT" in shown, kind


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_reference_is_read_from_its_cache_until_the_record_changes(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import pipeline.validation

    run_stage("t1_features", LIVE[0], settings=settings)  # the day's inputs, as T1 stores them before its monitor
    cache = tmp_path / "monitor"
    t = Thresholds()
    with service_engine(settings).connect() as conn:
        built, _ = monitor_reads.day_checks(conn, LIVE[0], t, cache_dir=cache)
    (kept,) = cache.glob("monitor-reference-*.pkl")

    def no_panel(*args, **kwargs):
        raise AssertionError("the reference was rebuilt")

    monkeypatch.setattr(pipeline.validation, "history_panel", no_panel)
    with service_engine(settings).connect() as conn:
        again, _ = monitor_reads.day_checks(conn, LIVE[0], t, cache_dir=cache)
    assert [(c.check_name, c.level, c.figure) for c in again] == [(c.check_name, c.level, c.figure) for c in built]
    monkeypatch.undo()
    kept.write_bytes(b"not a pickle")  # a damaged file is built again, not a failing stage
    with service_engine(settings).connect() as conn:
        assert [c.figure for c in monitor_reads.day_checks(conn, LIVE[0], t, cache_dir=cache)[0]] == [
            c.figure for c in built
        ]
    assert kept.read_bytes() != b"not a pickle"
    # a correction of a price inside the record changes the reference: it is rebuilt, the old file replaced
    with service_engine(settings).begin() as conn:
        e = tables.eod_prices.c
        old = (
            conn.execute(
                tables.eod_prices.select().where(e.trading_date == CAL.previous_trading_day(FIRST_LIVE)).limit(1)
            )
            .mappings()
            .one()
        )
        row = {k: v for k, v in old.items() if k not in ("id", "recorded_at")}
        assert append_history(conn, tables.eod_prices, [{**row, "close": old["close"] * 1.5}]).inserted == 1
    with service_engine(settings).connect() as conn:
        monitor_reads.day_checks(conn, LIVE[0], t, cache_dir=cache)
    (rebuilt,) = cache.glob("monitor-reference-*.pkl")
    assert rebuilt.name != kept.name


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_score_reference_leaves_out_the_record_s_uncalibrated_days(settings: Settings) -> None:
    """The record's first blocks are scored before enough history exists to calibrate: their
    Scores (the booster's raw logistic, far narrower) would make the record's first window
    its largest drift, and the ALERT line too high for a shifted window to reach."""
    with service_engine(settings).connect() as conn:
        reference = monitor_reads.build_reference(conn, HORIZON)
        rows = current_rows(conn, tables.validation_predictions)
    uncalibrated = {r["trading_date"] for r in rows if not r["calibration_rows"]}
    assert uncalibrated and min(uncalibrated) == reference.first  # the world's record has such days
    assert not uncalibrated & (set(reference.scores["date"]) | set(reference.outcomes["date"]))
    t = Thresholds()
    days = sorted(set(reference.scores["date"]))
    last = reference.scores[reference.scores["date"].isin(days[-t.window_days :])]["score"].to_numpy(float)
    own = monitor.score_check(reference.scores, last, t.window_days, t)
    shifted = monitor.score_check(reference.scores, last + 8, t.window_days, t)
    band = monitor.own_band(reference.scores, "score", t.window_days)
    # the record's own last weeks lie inside its own band: at most WATCH (its top tenth), never ALERT
    assert own.figure <= band.max() + 1e-6 and own.level != ALERT and own.alert_threshold < 1.0, own
    assert shifted.level == ALERT, shifted  # every Score 8 points higher is drift
    assert own.figures["window_days"] == t.window_days, "what the measure names: the Scores of the last N days"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_record_s_outcomes_are_labelled_as_the_model_s_panel_labels_them(settings: Settings) -> None:
    """The live checks' band reads the validation record's outcomes: each must be the label the
    model's panel gives the row (market/labels.py over the whole stored history). Prices cut at
    the record's first day know no name's 20-day traded value or spread estimate on its first
    weeks, so those days would be labelled against every share instead of the liquid universe."""
    with service_engine(settings).connect() as conn:
        reference = monitor_reads.build_reference(conn, HORIZON)
        end = monitor_reads.outcomes_end(conn, reference.last, HORIZON)
        panel = validation.history_panel(conn, end, HORIZON)
    early = sorted(d for d in set(panel["date"]) if d >= reference.first)[:20]
    assert set(reference.outcomes["date"]) & set(early)  # the world's record has outcomes in its first weeks
    joined = reference.outcomes.merge(panel[["symbol", "date", "forward_return"]], on=["symbol", "date"], how="left")
    assert len(joined) == len(reference.outcomes) and joined["forward_return"].notna().all()
    wrong = joined[joined["up"] != (joined["forward_return"] > 0).astype(float)]
    assert wrong.empty, wrong.head()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_past_day_s_live_band_reads_only_the_outcomes_known_that_day(settings: Settings) -> None:
    """A re-run of a day inside the validation record: the live checks' band reads the
    record's outcomes whose label closed by that day's close, not those of its last
    HORIZON + 1 sessions, whose labels close after it (read later, the re-run would not be
    what the day itself could see)."""
    with service_engine(settings).connect() as conn:
        reference = monitor_reads.build_reference(conn, HORIZON)
        days = sorted(set(reference.outcomes["date"]))
        day = days[len(days) // 2]
        t = Thresholds(live_outcomes=10)
        checks, _ = monitor_reads.day_checks(conn, day, t)
        priced = monitor_reads.priced_days(conn, day, 1000)
    closed = priced[-(HORIZON + 2)]  # the last day whose label (next close + HORIZON sessions) closed by `day`
    known = reference.outcomes[reference.outcomes["date"] <= closed]
    assert len(known) < len(reference.outcomes[reference.outcomes["date"] < day])  # the record has later ones
    (accuracy,) = [c for c in checks if c.check_name == "live_accuracy"]
    assert accuracy.figures["validation_chunks"] == len(known) // t.live_outcomes, accuracy.figures


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_day_before_any_price_says_so_not_that_the_record_is_missing(settings: Settings) -> None:
    """The store has a validation record; a day before its first price has no inputs or
    Scores to compare: the drift checks say that, and none says there is no record."""
    early = CAL.add_trading_days(FIRST_LIVE, -300)
    with service_engine(settings).connect() as conn:
        assert not monitor_reads.priced_days(conn, early, 1)
    checks = run_stage("t1_monitor", early, settings=settings).tables["checks"]
    notes = {c["check"]: c["note"] for c in checks}
    assert monitor.NO_RECORD not in notes.values(), notes
    assert {notes[c] for c in notes if not c.startswith("live_")} == {monitor.NO_PRICED_DAYS}
    assert {c["state"] for c in checks} == {OK}


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_health_stage_says_how_many_predicted_days_the_monitor_has_not_seen(settings: Settings) -> None:
    """A day predicted but never monitored (t1_monitor did not run): health's model-monitor
    line says so, as `marketintel monitor` and the API do, instead of only a missing state."""
    for stage in ("t1_features", "t1_predict"):
        run_stage(stage, LIVE[0], settings=settings)
    health = run_stage("health", LIVE[0], settings=settings).summary
    assert health["model_monitor"] is None
    assert health["model_monitor_unmonitored_days"] == 1
    assert health["model_monitor_latest_predicted"] == LIVE[0].isoformat()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_day_t0_has_not_delivered_is_refused_not_monitored_on_earlier_days(settings: Settings) -> None:
    """An adversarial run: `stage run t1_monitor` for a trading day whose closes T0 has not
    delivered wrote a full day of checks read off the earlier days (every market-wide
    and activity check OK: nothing on the day to read), as that day's. It became the
    monitor's latest day, so a predicted day before it that was never monitored no longer
    counted as behind (`unmonitored_days` 0, `marketintel monitor --check` exit 0). The day
    is refused as t1_features refuses it, and nothing is written."""
    _t1(LIVE[0], settings)
    for stage in ("t1_features", "t1_predict"):
        run_stage(stage, LIVE[1], settings=settings)  # predicted, not monitored
    missing = CAL.next_trading_day(LIVE[-1])
    with service_engine(settings).connect() as conn:
        assert monitor_reads.priced_days(conn, missing, 1) == [LIVE[-1]]  # the store's latest priced day is before it
    with pytest.raises(StageFailedError, match=f"no closes are stored for {missing.isoformat()}: T0 has not"):
        run_stage("t1_monitor", missing, settings=settings)
    with service_engine(settings).connect() as conn:
        state = monitor_state(conn)
        assert not current_rows(conn, tables.monitor_checks, where=[tables.monitor_checks.c.trading_date == missing])
    assert state["trading_date"] == LIVE[0] and state["unmonitored_days"] == 1
    assert CliRunner().invoke(app_cli, ["monitor", "--check"]).exit_code == 2  # behind: a cron job hears it
