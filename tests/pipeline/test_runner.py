"""The stage runner: one real stage (health), idempotent re-runs, failures that leave
no partial writes, and the attempt log."""

import uuid
from datetime import date

import pytest
from sqlalchemy import func, select

from market.errors import InvalidInputError, SchemaNotReadyError, StageFailedError
from market.settings import Settings, get_settings
from pipeline import registry
from pipeline.runner import StageResult, run_stage
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows

DAY = date(2026, 11, 20)


def _count(settings: Settings, table) -> int:
    with service_engine(settings).connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_health_reports_a_healthy_store_and_records_its_checks(settings: Settings) -> None:
    result = run_stage("health", DAY, settings=settings)
    assert result.status == "SUCCEEDED"
    assert result.summary["healthy"] is True
    assert {row["check"] for row in result.tables["checks"]} == {
        "database",
        "schema",
        "append_only",
        "calendar",
        "previous_day",
        "row_counts",
    }
    assert {"table": "eod_prices", "rows": 0} in result.tables["row_counts"]
    with service_engine(settings).connect() as conn:
        checks = {r["check_name"]: r for r in current_rows(conn, tables.health_checks)}
    assert checks["calendar"]["detail"]["next_trading_day"] == "2026-11-23"
    assert checks["append_only"]["detail"] == {"unguarded_tables": []}


def _ran(settings: Settings, day: date, outcomes: dict[str, str | None]) -> None:
    """`stage_runs` as the runner records them: each stage STARTED, then its outcome (None:
    it never finished)."""
    rows = []
    for stage, outcome in outcomes.items():
        run = {"run_id": uuid.uuid4().hex, "stage": stage, "trading_date": day, "trigger": "test", "detail": {}}
        rows += [{**run, "event": "STARTED"}] + ([{**run, "event": outcome}] if outcome else [])
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.stage_runs, rows)


def test_health_says_when_the_previous_trading_days_pipeline_did_not_finish(settings: Settings) -> None:
    """An adversarial run: the previous trading day's T1 failed at t1_predict and its later
    stages never ran, yet the next day's health read healthy; only Airflow's failure alert
    said anything, and nothing when a DAG run never started. It names each stage now."""
    from pipeline.health import PIPELINE_STAGES

    thursday, friday = date(2026, 11, 19), date(2026, 11, 20)
    _ran(settings, date(2026, 11, 18), dict.fromkeys(PIPELINE_STAGES, "SUCCEEDED"))
    _ran(settings, thursday, {"t0_scrape": "SUCCEEDED", "t1_preflight": "SUCCEEDED", "t1_ingest_text": "SKIPPED"})
    _ran(settings, thursday, {"t1_sentiment": "SUCCEEDED", "t1_features": None, "t1_predict": "FAILED"})
    result = run_stage("health", friday, settings=settings)
    assert result.status == "SUCCEEDED" and result.summary["healthy"] is False
    assert result.summary["failed_checks"] == ["previous_day"]
    with service_engine(settings).connect() as conn:
        check = {r["check_name"]: r for r in current_rows(conn, tables.health_checks)}["previous_day"]
    assert check["detail"] == {
        "trading_date": "2026-11-19",
        "failed": ["t1_predict"],
        "unfinished": ["t1_features"],
        "not_run": ["t1_monitor", "t1_analysis", "t1_trade", "t1_reports"],
        "failed_reruns": [],
    }
    _ran(settings, thursday, {"t1_features": "SUCCEEDED", "t1_predict": "SUCCEEDED"})  # the day rerun to the end
    _ran(settings, thursday, {s: "SUCCEEDED" for s in ("t1_monitor", "t1_analysis", "t1_trade", "t1_reports")})
    assert run_stage("health", friday, settings=settings).summary["healthy"] is True


def test_health_counts_a_day_marketintel_backfill_delivered_as_delivered(settings: Settings) -> None:
    """T0 missed Thursday; the operator delivered it with `marketintel backfill` (as
    docs/airflow.md says the pre-flight accepts) and ran T1 on it. Friday's health said
    "not run t0_scrape" and failed the health task: a day delivered COMPLETE, by whoever,
    is T0 done, as the pre-flight counts it."""
    from pipeline.backfill import backfill
    from pipeline.health import PIPELINE_STAGES
    from pipeline.stage_lists import T1_STAGES

    thursday, friday = date(2026, 11, 19), date(2026, 11, 20)
    backfill(service_engine(settings), settings, 2, thursday, with_text=False)
    _ran(settings, date(2026, 11, 18), dict.fromkeys(PIPELINE_STAGES, "SUCCEEDED"))
    _ran(settings, thursday, dict.fromkeys(T1_STAGES, "SUCCEEDED"))
    result = run_stage("health", friday, settings=settings)
    assert result.summary["healthy"] is True and result.alarm is None, result.alarm
    with service_engine(settings).connect() as conn:
        check = {r["check_name"]: r for r in current_rows(conn, tables.health_checks)}["previous_day"]
    assert check["ok"] and check["detail"]["not_run"] == []


def test_rerunning_a_date_writes_no_duplicate_rows(settings: Settings) -> None:
    run_stage("health", DAY, settings=settings)
    after_first = _count(settings, tables.health_checks)
    run_stage("health", DAY, settings=settings)
    assert _count(settings, tables.health_checks) == after_first == 6
    assert _count(settings, tables.stage_runs) == 4  # STARTED + SUCCEEDED, twice
    with service_engine(settings).connect() as conn:
        done = (
            conn.execute(
                select(tables.stage_runs.c.detail)
                .where(tables.stage_runs.c.event == "SUCCEEDED")
                .order_by(tables.stage_runs.c.id)
            )
            .scalars()
            .all()
        )
    assert [d["rows_written"] for d in done] == [{"health_checks": 6}, {}]  # what each run inserted, per table


def test_a_changed_store_becomes_a_new_version_of_one_check(settings: Settings) -> None:
    run_stage("health", DAY, settings=settings)
    with service_engine(settings).begin() as conn:
        append_history(
            conn, tables.instruments, [{"symbol": "GK", "name": "GraceKennedy", "board": "MAIN", "source": "t"}]
        )
    result = run_stage("health", DAY, settings=settings)
    assert result.summary["health_rows_written"] == 1
    assert _count(settings, tables.health_checks) == 7  # six checks, then row_counts again


def test_the_attempt_log_names_trigger_and_outcome(settings: Settings) -> None:
    result = run_stage("health", "2026-11-20", settings=settings, trigger="airflow")
    with service_engine(settings).connect() as conn:
        events = current_rows(conn, tables.stage_runs, where=[tables.stage_runs.c.run_id == result.run_id])
    assert sorted(e["event"] for e in events) == ["STARTED", "SUCCEEDED"]
    assert {e["trigger"] for e in events} == {"airflow"}


def _failing_stage(ctx: StageContext) -> StageOutcome:
    with ctx.transaction() as conn:
        append_history(
            conn, tables.instruments, [{"symbol": "HALF", "name": "Half written", "board": "MAIN", "source": "t"}]
        )
        raise RuntimeError("exchange page truncated")


def _weekday_stage(ctx: StageContext) -> StageOutcome:
    return StageOutcome(summary={"ran_on": ctx.trading_date.isoformat()})


@pytest.fixture
def extra_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    stages = dict(registry.STAGES)
    stages["explodes"] = Stage("explodes", _failing_stage, "fails after writing")
    stages["weekday"] = Stage("weekday", _weekday_stage, "trading days only")
    monkeypatch.setattr(registry, "STAGES", stages)


def test_a_failed_stage_leaves_no_partial_day_and_says_why(settings: Settings, extra_stages: None) -> None:
    with pytest.raises(
        StageFailedError, match="stage 'explodes' for 2026-11-20 failed: RuntimeError: exchange page truncated"
    ):
        run_stage("explodes", DAY, settings=settings)
    assert _count(settings, tables.instruments) == 0
    with service_engine(settings).connect() as conn:
        failed = current_rows(conn, tables.stage_runs, where=[tables.stage_runs.c.event == "FAILED"])
    # its rolled-back write not counted
    assert failed[0]["detail"] == {"error": "RuntimeError: exchange page truncated"}


def test_trading_day_stages_skip_holidays_with_the_reason(settings: Settings, extra_stages: None) -> None:
    skipped = run_stage("weekday", date(2026, 4, 3), settings=settings)
    assert skipped.status == "SKIPPED"
    assert skipped.summary["skipped_reason"] == "2026-04-03 is a public holiday (Good Friday)"
    assert run_stage("weekday", DAY, settings=settings).summary == {"ran_on": "2026-11-20"}
    assert run_stage("health", date(2026, 4, 3), settings=settings).status == "SUCCEEDED"


def test_unknown_stage_and_bad_date_are_clear_errors(settings: Settings) -> None:
    with pytest.raises(InvalidInputError, match="unknown stage 'nope'; known stages: health"):
        run_stage("nope", DAY, settings=settings)
    with pytest.raises(InvalidInputError, match="YYYY-MM-DD"):
        run_stage("health", "20/11/2026", settings=settings)


def test_a_store_that_was_never_upgraded_is_refused(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty.db").touch()  # an empty SQLite file; a missing one is refused as missing
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", f"sqlite:///{tmp_path / 'empty.db'}")
    get_settings.cache_clear()
    try:
        with pytest.raises(SchemaNotReadyError, match="run `marketintel db upgrade`"):
            run_stage("health", DAY)
    finally:
        get_settings.cache_clear()


def _writes_then_reads_back(ctx: StageContext) -> StageOutcome:
    with ctx.transaction() as conn:
        append_history(
            conn, tables.instruments, [{"symbol": "PRV", "name": "Preview Co", "board": "MAIN", "source": "t"}]
        )
    with ctx.engine.begin() as conn:  # a second transaction, as stages that write in steps do
        append_history(
            conn, tables.instruments, [{"symbol": "PRW", "name": "Preview Two", "board": "MAIN", "source": "t"}]
        )
    with ctx.engine.connect() as conn:
        seen = sorted(r["symbol"] for r in current_rows(conn, tables.instruments))
    return StageOutcome(summary={"seen": seen}, tables={"seen": [{"symbol": s} for s in seen], "orders": []})


def test_a_preview_runs_the_stage_and_stores_nothing(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        registry, "STAGES", {**registry.STAGES, "writer": Stage("writer", _writes_then_reads_back, "writes")}
    )
    preview = run_stage("writer", DAY, settings=settings, write=False)
    assert preview.summary == {"seen": ["PRV", "PRW"]}  # the stage saw its own writes
    assert preview.written is False and "as a preview: nothing was stored" in preview._repr_markdown_()
    assert _count(settings, tables.instruments) == 0 and _count(settings, tables.stage_runs) == 0
    stored = run_stage("writer", DAY, settings=settings)  # the store is not left locked
    assert stored.written is True and _count(settings, tables.instruments) == 2


def test_an_empty_table_is_a_sentence_and_a_skipped_stage_says_why(
    settings: Settings, extra_stages: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        registry, "STAGES", {**registry.STAGES, "writer": Stage("writer", _writes_then_reads_back, "writes")}
    )
    result = run_stage("writer", DAY, settings=settings, write=False)
    assert (
        result.show("orders", empty="No order was executed at this close.").data
        == "No order was executed at this close."
    )
    assert result.show("fills").data == "No fills for 2026-11-20."
    assert list(result.show("seen").data["symbol"]) == ["PRV", "PRW"] and result.frame("orders").empty
    skipped = run_stage("weekday", date(2026, 4, 3), settings=settings)
    assert (
        skipped.show("orders", empty="No order.").data
        == "No orders: weekday was skipped, 2026-04-03 is a public holiday (Good Friday)."
    )


def test_summaries_and_tables_read_as_formatted_numbers() -> None:
    result = StageResult(
        "t1_trade",
        DAY,
        "r",
        "SUCCEEDED",
        True,
        {"cash": "6460855.833050", "orders": 12000, "rerun": False, "market_score": 0.254452},
        {
            "orders": [
                {
                    "symbol": "CLM",
                    "weight": 0.0957,
                    "price": 81.25,
                    "quantity": 1482,
                    "fees": "602.062500",
                    "change_pct": 1.5,
                    "predicted_return": -0.0171,
                }
            ]
        },
    )
    summary = result._repr_markdown_()
    for row in ("| cash | 6,460,855.83 |", "| orders | 12,000 |", "| rerun | no |", "| market score | 0.25 |"):
        assert row in summary, summary
    html = result.show("orders").to_html()
    for shown in (">CLM<", ">9.57%<", ">81.25<", ">1,482<", ">1.50%<", ">-1.71%<", ">602.06<"):
        assert shown in html, shown
    assert "0.0957" not in html and "-0.0171" not in html


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_stage_waits_for_another_writer_instead_of_failing(settings: Settings) -> None:
    """A stage started while another connection holds the store's write lock waits for
    it (the runner's `stage_runs` records take the lock up front, `write_transaction`)
    and runs; an adversarial run of two run-days on one store saw one fail with
    "database is locked" on that record (not reproduced here: the race needs the other
    writer to commit between the record's read and its insert)."""
    import threading
    import time

    from sqlalchemy import text

    engine = service_engine(settings)
    held, release = threading.Event(), threading.Event()

    def writer() -> None:
        with engine.connect() as conn:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            conn.execute(
                text(
                    'INSERT INTO stage_runs (run_id, stage, trading_date, event, "trigger", detail) '
                    "VALUES ('other', 'other', '2026-11-20', 'STARTED', 'cli', '{}')"
                )
            )
            held.set()
            release.wait(5)
            time.sleep(2)  # the stage starts meanwhile: its record has to wait for this commit
            conn.exec_driver_sql("COMMIT")

    thread = threading.Thread(target=writer)
    thread.start()
    held.wait(5)
    release.set()
    try:
        result = run_stage("health", DAY, settings=settings)
    finally:
        thread.join()
    assert result.status == "SUCCEEDED"
    with engine.connect() as conn:
        events = [r["event"] for r in current_rows(conn, tables.stage_runs) if r["stage"] == "health"]
    assert events == ["STARTED", "SUCCEEDED"]


def test_a_runs_outcome_is_read_back_by_its_own_id(settings: Settings) -> None:
    """An adversarial run: two run-days at once on one store, and each one's table showed
    the other's outcomes (the latest record of the stage and day). A caller that passes a
    run id (run-day, Airflow's task) reads its own run's records."""
    from datetime import UTC, datetime

    from pipeline.runner import recorded_outcome

    since = datetime.now(UTC)
    run_stage("health", DAY, settings=settings, run_id="mine")
    with service_engine(settings).begin() as conn:
        other = {"stage": "health", "trading_date": DAY, "trigger": "cli", "detail": {"error": "another process"}}
        append_history(conn, tables.stage_runs, [{**other, "run_id": "theirs", "event": "FAILED"}])
    engine = service_engine(settings)
    assert recorded_outcome(engine, "health", DAY, since, "mine")["status"] == "SUCCEEDED"
    assert recorded_outcome(engine, "health", DAY, since)["status"] == "FAILED"  # without an id: the latest


def test_a_failed_rerun_of_a_stage_that_succeeded_leaves_the_day_done(settings: Settings) -> None:
    """An adversarial run: T0 re-run for a day whose COMPLETE delivery stood failed (the
    exchange refused), and the next day's health read `previous_day` failed although T1 had
    run on that delivery. A stage that succeeded for the day is done (each is one
    transaction: the failed re-run left what the success stored); the re-run is named."""
    from pipeline.health import PIPELINE_STAGES

    thursday, friday = date(2026, 11, 19), date(2026, 11, 20)
    _ran(settings, date(2026, 11, 18), dict.fromkeys(PIPELINE_STAGES, "SUCCEEDED"))
    _ran(settings, thursday, dict.fromkeys(PIPELINE_STAGES, "SUCCEEDED"))
    _ran(settings, thursday, {"t0_scrape": "FAILED"})
    result = run_stage("health", friday, settings=settings)
    assert result.summary["healthy"] is True and result.alarm is None
    with service_engine(settings).connect() as conn:
        check = {r["check_name"]: r for r in current_rows(conn, tables.health_checks)}["previous_day"]
    assert check["ok"] is True
    assert check["detail"]["failed"] == [] and check["detail"]["failed_reruns"] == ["t0_scrape"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("ended", [True, False])
def test_an_interrupt_says_what_the_stage_recorded(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, ended: bool
) -> None:
    """SIGTERM after a stage recorded SUCCEEDED: run-day's table showed it SUCCEEDED while the
    one-line error said it was interrupted and to run the day again "to finish it". The
    error matches the table now; one cut short before its end still says so."""
    from pipeline import day as run_day
    from pipeline.day import Terminated, notebook_stage

    def interrupted(stage: str, day: date, *, settings: Settings, trigger: str, run_id: str) -> None:
        if ended:  # the stage ran to its end and recorded it; the signal came as its notebook closed
            run_stage(stage, day, settings=settings, trigger=trigger, run_id=run_id)
        raise Terminated("SIGTERM")

    monkeypatch.setattr(run_day, "run_stage_notebook", interrupted)
    ran = notebook_stage("health", DAY, settings)
    assert ran.error is not None
    if ended:
        assert ran.status == "SUCCEEDED"
        assert ran.error.detail == (
            "interrupted by SIGTERM after stage 'health' for 2026-11-20 recorded SUCCEEDED; run the day again to "
            "run the stages after it (each stage is a transaction)"
        )
    else:
        assert ran.status == "FAILED" and ran.reason == "interrupted by SIGTERM before it recorded an end"
        assert ran.error.detail == (
            "stage 'health' for 2026-11-20 interrupted by SIGTERM; run the day again to finish it "
            "(each stage is a transaction)"
        )


def test_a_stage_without_a_date_runs_for_its_own_day(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """`stage run` without --date took the latest closed trading day for every stage: T2
    suggested for a session already closed (expired on arrival) and T3 on a Monday fetched
    the week before. Each stage's day rule gives its default now."""
    from datetime import UTC, datetime

    from typer.testing import CliRunner

    from cli.main import app
    from market.clock import default_calendar
    from pipeline import runner
    from pipeline.registry import day_rule
    from pipeline.runner import default_day

    def at(moment: datetime) -> None:
        monkeypatch.setattr(runner, "utc_now", lambda: moment)

    at(datetime(2026, 11, 30, 15, 0, tzinfo=UTC))  # Monday 10:00 on the exchange, before the close
    days = {
        name: default_day(day_rule(name), default_calendar()) for name in ("t1_trade", "t2_suggestions", "t3_macro")
    }
    assert days == {
        "t1_trade": date(2026, 11, 27),
        "t2_suggestions": date(2026, 11, 30),
        "t3_macro": date(2026, 11, 30),
    }
    at(datetime(2026, 11, 30, 21, 30, tzinfo=UTC))  # 16:30, after Monday's close: T2 is Tuesday's
    assert default_day(day_rule("t2_suggestions"), default_calendar()) == date(2026, 12, 1)
    ran = CliRunner().invoke(app, ["stage", "run", "t2_suggestions"])  # an empty store: nothing to plan from
    assert ran.stderr.startswith("error: stage 't2_suggestions' for 2026-12-01 failed: no predictions"), ran.output
