"""Every DAG imports cleanly, follows the house rules, and runs end to end with `dag.test()`."""

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from market.settings import PROJECT_ROOT, Settings

DAGS_FOLDER = PROJECT_ROOT / "dags"
AIRFLOW = str(Path(sys.executable).parent / "airflow")
# T1's tasks in order, pinned here (the contract); test_task_order_of_every_dag checks that
# pipeline/stage_lists.py's T1_STAGES, which the DAG and `marketintel run-day` read, says the same.
T1_TASKS = [
    "trading_day",
    "t1_preflight",
    "t1_ingest_text",
    "t1_sentiment",
    "t1_features",
    "t1_predict",
    "t1_monitor",
    "t1_analysis",
    "t1_trade",
    "t1_reports",
]


def record_stage_success(settings: Settings, stage: str, day: date, at: datetime, minutes: int) -> None:
    """A SUCCEEDED run of `stage` for `day`, recorded as Airflow's `minutes` after `at`
    (run id `<stage>-<minutes>`): what `trading_day_gate` reads to find a day done."""
    from store import tables
    from store.engine import service_engine
    from store.history import append_history

    with service_engine(settings).begin() as conn:
        append_history(
            conn,
            tables.stage_runs,
            [
                {
                    "run_id": f"{stage}-{minutes}",
                    "stage": stage,
                    "trading_date": day,
                    "event": "SUCCEEDED",
                    "trigger": "airflow",
                    "detail": {},
                }
            ],
            recorded_at=at + timedelta(minutes=minutes),
        )


@pytest.fixture(scope="module")
def dag_bag():
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAGS_FOLDER))


def test_every_dag_file_imports_without_errors(dag_bag) -> None:
    assert dag_bag.import_errors == {}
    dag_files = {p.stem for p in DAGS_FOLDER.glob("*.py")}
    assert {Path(d.fileloc).stem for d in dag_bag.dags.values()} == dag_files


def test_every_dag_has_tags_docs_owner_retries_and_one_active_run(dag_bag) -> None:
    for dag_id, dag in dag_bag.dags.items():
        assert dag.tags, dag_id
        assert dag.doc_md and len(dag.doc_md.strip()) > 40, dag_id
        assert dag.max_active_runs == 1, dag_id
        assert dag.catchup is False, dag_id
        for task in dag.tasks:
            assert task.retries >= 1, f"{dag_id}.{task.task_id}"
            assert task.execution_timeout is not None, f"{dag_id}.{task.task_id}"
            assert task.owner == "marketintel", f"{dag_id}.{task.task_id}"


SCHEDULES = {
    "marketintel_health": "45 15 * * 1-5",
    "marketintel_t0": "0 16 * * 1-5",
    "marketintel_t1": "15 16 * * 1-5",
    "marketintel_t2": "0 7 * * 1-5",
    "marketintel_t3": "0 9 * * 1",
}
UTC_TIMES = {
    "marketintel_health": "20:45 UTC",
    "marketintel_t0": "21:00 UTC",
    "marketintel_t1": "21:15 UTC",
    "marketintel_t2": "12:00 UTC",
    "marketintel_t3": "14:00 UTC",
}


def _as_airflow_shows_it(dag):
    """The DAG as the scheduler, the UI and the REST API hold it: serialised and read back
    (a timetable that is not registered fails here, as it would in the dag processor)."""
    from airflow.serialization.serialized_objects import DagSerialization

    return DagSerialization.from_dict(DagSerialization.to_dict(dag))


def test_schedules_are_the_tables_on_the_exchange_clock_and_say_so(dag_bag) -> None:
    """What an operator reads next to Airflow's UTC clock names the exchange's zone: the
    timetable summary and description (the UI's schedule column, `timetable_summary` and
    `timetable_description` in the REST API) and the first line of the DAG's docs."""
    shown = {dag_id: _as_airflow_shows_it(dag).timetable for dag_id, dag in dag_bag.dags.items()}
    clocks = {d: getattr(t, "timetable", t) for d, t in shown.items()}  # T1: its clock beside T0's delivery asset
    assert {d: t.summary for d, t in clocks.items()} == {d: f"{cron} America/Jamaica" for d, cron in SCHEDULES.items()}
    assert {str(t._timezone) for t in clocks.values()} == {"America/Jamaica"}
    assert shown["marketintel_t1"].summary == "Asset or 15 16 * * 1-5 America/Jamaica"
    assert (
        shown["marketintel_t1"].description
        == "Triggered by assets or At 16:15, Monday through Friday (America/Jamaica, exchange time)"
    )
    assert shown["marketintel_t3"].description == "At 09:00, only on Monday (America/Jamaica, exchange time)"
    for dag_id, dag in dag_bag.dags.items():
        assert shown[dag_id].description.endswith("(America/Jamaica, exchange time)"), dag_id
        header = dag.doc_md.strip().splitlines()[0]
        assert "America/Jamaica" in header and UTC_TIMES[dag_id] in header, header


def test_t1_at_1615_exchange_time_is_2115_utc(dag_bag) -> None:
    import pendulum
    from airflow.timetables.base import DataInterval, TimeRestriction

    timetable = _as_airflow_shows_it(dag_bag.dags["marketintel_t1"]).timetable.timetable
    friday = pendulum.datetime(2026, 11, 20, 21, 15, tz="UTC")
    info = timetable.next_dagrun_info(
        last_automated_data_interval=DataInterval(friday, friday),
        restriction=TimeRestriction(earliest=None, latest=None, catchup=True),
    )
    assert info.run_after == pendulum.datetime(2026, 11, 23, 21, 15, tz="UTC")  # Monday, not Saturday


def test_the_trigger_forms_date_is_the_exchange_day(dag_bag) -> None:
    """The trigger form's run_date is a date picker titled with the exchange's zone; a value
    that is not a date is refused before a run exists; given, it wins over a UTC logical
    date that would otherwise name the day before."""
    from datetime import date, datetime

    from airflow.sdk.exceptions import ParamValidationError

    from pipeline.airflow_tasks import trading_date_from_context

    for dag_id, dag in dag_bag.dags.items():
        param = _as_airflow_shows_it(dag).params.get_param("run_date")
        assert param.schema["format"] == "date" and param.schema["title"] == "Exchange day (America/Jamaica)", dag_id
        assert "00:00 UTC is 19:00 the day before" in param.description, dag_id
        with pytest.raises(ParamValidationError, match="is not a 'date'"):
            dag.params.get_param("run_date").resolve("2026-13-01")
    midnight_utc = datetime(2026, 11, 20, tzinfo=UTC)
    assert trading_date_from_context({"params": {"run_date": None}, "logical_date": midnight_utc}) == date(2026, 11, 19)
    assert trading_date_from_context({"params": {"run_date": "2026-11-20"}, "logical_date": midnight_utc}) == date(
        2026, 11, 20
    )


def test_t1_runs_on_t0s_delivery_asset_as_well_as_its_clock(dag_bag) -> None:
    from airflow.timetables.assets import AssetOrTimeSchedule

    from pipeline.airflow_plugin import T0_DELIVERY

    assert dag_bag.dags["marketintel_t0"].get_task("t0_scrape").outlets == [T0_DELIVERY]
    t1 = _as_airflow_shows_it(dag_bag.dags["marketintel_t1"])
    assert isinstance(t1.timetable, AssetOrTimeSchedule)
    assets = [(a.name, a.uri) for _, a in t1.timetable.asset_condition.iter_assets()]
    assert assets == [("marketintel_t0_delivery", "marketintel://t0/delivery")]
    # T2: tests/dags/test_t1_t2_asset.py
    others = [d for d in dag_bag.dags if d not in ("marketintel_t1", "marketintel_t2")]
    assert not any(isinstance(_as_airflow_shows_it(dag_bag.dags[d]).timetable, AssetOrTimeSchedule) for d in others)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_t1_runs_once_per_t0_delivery_and_for_the_day_delivered(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """T1 starts on T0's delivery and again at 16:15: the second finds the day done for that
    delivery and skips; a new delivery (a correction) makes the day due again; a manual
    run always runs; an asset-started run takes the day the delivery names."""
    from types import SimpleNamespace

    from pipeline.airflow_plugin import T0_DELIVERY
    from pipeline.airflow_tasks import trading_date_from_context, trading_day_gate

    day, at = date(2026, 11, 19), datetime(2026, 11, 19, 21, 5, tzinfo=UTC)

    def succeeded(stage: str, minutes: int) -> None:
        record_stage_success(settings, stage, day, at, minutes)

    def runs(run_type: str) -> bool:
        return trading_day_gate(
            {"params": {"run_date": day.isoformat()}, "dag_run": SimpleNamespace(run_type=run_type)},
            current=(T1_TASKS[-1], "t0_scrape"),
        )

    succeeded("t0_scrape", 0)
    assert runs("asset_triggered") and runs("scheduled")  # T1 not done yet for this delivery
    succeeded("t1_reports", 8)  # the asset-started run finished
    with caplog.at_level("INFO", logger="pipeline.airflow_tasks"):
        assert not runs("scheduled")  # the 16:15 clock run skips
    assert "t1_reports already succeeded for this day" in caplog.text
    assert not runs("asset_triggered") and runs("manual") and runs("backfill")
    succeeded("t0_scrape", 30)  # T0 re-delivered a corrected day
    assert runs("asset_triggered")

    event = SimpleNamespace(timestamp=at, extra={"trading_date": "2026-11-19", "status": "SUCCEEDED"})
    monday_run = SimpleNamespace(run_after=datetime(2026, 11, 23, 21, 0, tzinfo=UTC))
    assert (
        trading_date_from_context(
            {"params": {}, "triggering_asset_events": {T0_DELIVERY: [event]}, "dag_run": monday_run}
        )
        == day
    )
    assert trading_date_from_context({"params": {}, "triggering_asset_events": {}, "dag_run": monday_run}) == date(
        2026, 11, 23
    )


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_failed_t1_reports_is_retried_by_the_clock_run_without_trading_the_day_again(
    dag_bag,
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The gate counted the day done once t1_trade had succeeded, so a t1_reports that failed
    after it was never retried by the 16:15 run. The gate looks at T1's last stage; the run
    it lets through passes over the stages already done for the delivery, t1_trade among
    them (no second trade, no second close of the day for T2), and runs the rest."""
    from types import SimpleNamespace

    from sqlalchemy import func, select

    from store import tables
    from store.engine import service_engine

    t1 = dag_bag.dags["marketintel_t1"]
    day, at = date(2026, 11, 19), datetime(2026, 11, 19, 21, 5, tzinfo=UTC)
    for stage, minutes in (("t0_scrape", 0), *((s, 1 + i) for i, s in enumerate(T1_TASKS[1:-1]))):
        record_stage_success(settings, stage, day, at, minutes)  # the asset run got as far as t1_trade
    context = {"params": {"run_date": day.isoformat()}, "dag_run": SimpleNamespace(run_type="scheduled")}

    def t1_rows() -> int:
        with service_engine(settings).connect() as conn:
            return conn.execute(select(func.count()).select_from(tables.stage_runs)).scalar_one()

    assert t1.get_task("trading_day").python_callable(**context) is True  # t1_reports never succeeded
    before = t1_rows()
    with caplog.at_level("INFO", logger="pipeline.airflow_tasks"):
        summary = t1.get_task("t1_trade").python_callable(**context)
    assert summary["status"] == "SUCCEEDED" and "t1_trade already succeeded for this day" in summary["not_run_again"]
    assert "stage summary: t1_trade for 2026-11-19 SUCCEEDED earlier, not run again" in caplog.text
    assert t1_rows() == before and not (settings.runs_dir / day.isoformat()).exists()  # nothing ran
    record_stage_success(settings, "t1_reports", day, at, 20)  # the clock run's t1_reports succeeded
    assert t1.get_task("trading_day").python_callable(**context) is False
    assert t1.get_task("trading_day").python_callable(**{**context, "dag_run": SimpleNamespace(run_type="manual")})


def test_every_task_alerts_the_webhook_when_it_fails_its_last_retry(dag_bag) -> None:
    from pipeline.airflow_plugin import on_task_failure

    for dag_id, dag in dag_bag.dags.items():
        shown = _as_airflow_shows_it(dag)
        for task in dag.tasks:
            assert task.on_failure_callback == [on_task_failure], f"{dag_id}.{task.task_id}"
            assert not task.on_retry_callback, f"{dag_id}.{task.task_id}: a retry is not an incident"
            assert shown.get_task(task.task_id).has_on_failure_callback, f"{dag_id}.{task.task_id}"


def _chain(dag) -> list[str]:
    (first,) = [t for t in dag.tasks if not t.upstream_list]
    order = [first.task_id]
    while first.downstream_list:
        (first,) = first.downstream_list
        order.append(first.task_id)
    assert len(order) == len(dag.tasks), "one straight line of tasks"
    return order


def test_task_order_of_every_dag(dag_bag) -> None:
    from pipeline.stage_lists import T0_STAGES, T1_STAGES

    assert _chain(dag_bag.dags["marketintel_t0"]) == ["trading_day", *T0_STAGES]
    assert _chain(dag_bag.dags["marketintel_t1"]) == ["trading_day", *T1_STAGES] == T1_TASKS
    assert _chain(dag_bag.dags["marketintel_t2"]) == ["trading_day", "t2_suggestions"]
    assert _chain(dag_bag.dags["marketintel_t3"]) == ["t3_macro"]


def test_preflight_retries_within_a_bounded_window(dag_bag) -> None:
    from datetime import timedelta

    preflight = dag_bag.dags["marketintel_t1"].get_task("t1_preflight")
    assert preflight.retries == 6 and preflight.retry_delay == timedelta(minutes=5)
    assert preflight.retry_exponential_backoff in (False, 0)


def _last_try(dag, task_id: str, first: datetime) -> datetime:
    """When Airflow starts the last retry of `task_id` (the DAG as the scheduler holds it)
    whose first try began at `first` and each try failed at once: Airflow's own
    `next_retry_datetime`, jitter and backoff included."""
    import uuid

    from airflow.models.taskinstance import TaskInstance

    task = _as_airflow_shows_it(dag).get_task(task_id)
    ti = TaskInstance(task=task, run_id="scheduled__2026-11-20T21:00:00+00:00", dag_version_id=uuid.uuid4())
    moment = first
    for try_number in range(1, task.retries + 1):
        ti.try_number, ti.end_date = try_number, moment
        moment = ti.next_retry_datetime()
    return moment


def test_t0_keeps_trying_a_late_exchange_while_the_preflight_waits_for_it(dag_bag) -> None:
    """The exchange not published at 16:00 (a 404 "not published yet"): the pre-flight waits
    for T0 until its last try at 16:45, but T0's three retries, growing from a minute, gave
    up by 16:09, so a day published at 16:15 was never delivered; the pre-flight waited
    for nothing and the day needed an operator. T0 now tries every 5 minutes until the
    pre-flight's last interval, so what it delivers is there for the pre-flight's last try."""
    t0_first = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)  # 16:00 America/Jamaica
    t1_first = datetime(2026, 11, 20, 21, 15, tzinfo=UTC)
    t0_last = _last_try(dag_bag.dags["marketintel_t0"], "t0_scrape", t0_first)
    preflight_last = _last_try(dag_bag.dags["marketintel_t1"], "t1_preflight", t1_first)
    assert preflight_last == datetime(2026, 11, 20, 21, 45, tzinfo=UTC)
    gives_up = f"T0 gives up at {t0_last:%H:%M} UTC, the pre-flight waits until 21:45 UTC"
    assert preflight_last - timedelta(minutes=5) <= t0_last < preflight_last, gives_up


@pytest.mark.parametrize(
    "run_date, runs", [("2026-11-20", True), ("2026-12-25", False), ("2026-11-21", False), ("2026-08-06", False)]
)
def test_the_trading_day_gate_skips_weekends_and_holidays(
    run_date: str, runs: bool, caplog: pytest.LogCaptureFixture
) -> None:
    from pipeline.airflow_tasks import trading_day_gate

    with caplog.at_level("INFO"):
        assert trading_day_gate({"params": {"run_date": run_date}}) is runs
    if not runs:
        assert f"no run for {run_date}: the exchange is closed" in caplog.text


def _weeks_ahead(weeks: int) -> str:
    """A trading day `weeks` weeks after today's exchange date (none is published yet)."""
    from market.clock import default_calendar, exchange_date, utc_now

    return default_calendar().latest_trading_day(exchange_date(utc_now()) + timedelta(weeks=weeks)).isoformat()


@pytest.mark.parametrize("dag_id", ["marketintel_t0", "marketintel_t1"])
@pytest.mark.parametrize("run_date, said", [("2026-11-3O", "is not a date in YYYY-MM-DD form"), (None, "is after")])
def test_a_run_date_no_retry_can_help_fails_the_task_at_once(dag_bag, dag_id: str, run_date: str, said: str) -> None:
    """An operator's typo ("2026-11-3O") or a day weeks ahead as T0's or T1's `run_date`: the
    `trading_day` task raised InvalidInputError and Airflow retried it (T0: eight times, 5
    minutes apart), so the failure alert came 40 minutes later for something no retry
    changes. It fails at once now, AirflowFailException (Airflow does not retry it; the
    failure callback still alerts), naming the date and what to do."""
    from airflow.sdk.exceptions import AirflowFailException

    trading_day = dag_bag.dags[dag_id].get_task("trading_day")
    with pytest.raises(AirflowFailException, match=said):
        trading_day.python_callable(params={"run_date": run_date or _weeks_ahead(3)})


def test_dag_files_read_nothing_at_parse_time() -> None:
    """The DAG files import only the parse-light `pipeline.airflow_plugin` and
    `pipeline.stage_lists` from the project at parse time (tests/test_layers.py checks the
    import statements), and parsing them loads no settings, database, pandas or model code."""
    probe = (
        "import sys; from airflow.dag_processing.dagbag import DagBag; bag = DagBag(dag_folder=sys.argv[1]); "
        "assert len(bag.dags) == 5, bag.import_errors; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('market', 'store', 'ingest', 'models', 'portfolio', 'views', 'analysis', 'cli', 'api', 'pandas', "
        "'lightgbm', 'torch')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe, str(DAGS_FOLDER)], capture_output=True, text=True, timeout=300
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert loaded.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_stage_tasks_log_ends_with_its_stage_summary(settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    """What the task logs last and returns (Airflow's "Returned value was: ..." and the
    XCom): status, rows written per table, duration and the executed notebook; a failed
    stage's summary too, with the reason, before the failure propagates."""
    from market.errors import InvalidInputError, StageFailedError
    from pipeline.airflow_tasks import run_notebook_task

    with caplog.at_level("INFO", logger="pipeline.airflow_tasks"):
        summary = run_notebook_task("health", {"params": {"run_date": "2026-11-20"}})
    notebook = settings.runs_dir / "2026-11-20" / "health.ipynb"
    assert summary["status"] == "SUCCEEDED" and summary["notebook"] == str(notebook) and notebook.is_file()
    assert summary["rows_written"]["health_checks"] > 0 and summary["duration_seconds"] > 0
    last = [r for r in caplog.records if r.name == "pipeline.airflow_tasks"][-1].getMessage()
    assert last.startswith("stage summary: health for 2026-11-20 SUCCEEDED in ")
    assert f"rows written: health_checks {summary['rows_written']['health_checks']}" in last
    assert last.endswith(f"; notebook: {notebook}")

    caplog.clear()
    with caplog.at_level("INFO", logger="pipeline.airflow_tasks"), pytest.raises(StageFailedError):
        run_notebook_task("t1_preflight", {"params": {"run_date": "2026-11-20"}})
    last = [r for r in caplog.records if r.name == "pipeline.airflow_tasks"][-1].getMessage()
    assert last.startswith("stage summary: t1_preflight for 2026-11-20 FAILED in ")
    assert "rows written: none" in last and "reason: " in last and "no T0 delivery for 2026-11-20" in last
    assert f"notebook: {settings.runs_dir / '2026-11-20' / 't1_preflight.ipynb'}" in last

    # refused before its notebook (a day not closed): the summary named a notebook that does
    # not exist and gave no reason
    caplog.clear()
    with caplog.at_level("INFO", logger="pipeline.airflow_tasks"), pytest.raises(InvalidInputError):
        run_notebook_task("t1_preflight", {"params": {"run_date": "2099-01-05"}})
    last = [r for r in caplog.records if r.name == "pipeline.airflow_tasks"][-1].getMessage()
    assert "FAILED" in last and "notebook: none (not started); reason: 2099-01-05 has not closed yet" in last
    assert not (settings.runs_dir / "2099-01-05").exists()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_health_task_fails_on_an_unhealthy_store(settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    """An adversarial run: the health task was green the day after a half-run day (its
    summary said `healthy: false`), so its on_failure_callback never alerted. It logs its
    summary, then fails with the failed checks, which the failure alert carries."""
    from market.errors import StageAlarmError
    from pipeline.airflow_tasks import run_notebook_task
    from pipeline.health import PIPELINE_STAGES
    from tests.pipeline.test_runner import _ran

    _ran(settings, date(2026, 11, 18), dict.fromkeys(PIPELINE_STAGES, "SUCCEEDED"))
    _ran(settings, date(2026, 11, 19), {"t0_scrape": "FAILED"})
    with caplog.at_level("INFO", logger="pipeline.airflow_tasks"), pytest.raises(StageAlarmError) as failed:
        run_notebook_task("health", {"params": {"run_date": "2026-11-20"}})
    assert failed.value.detail.startswith("health for 2026-11-20: the store is not healthy on 2026-11-20: ")
    said = [r.getMessage() for r in caplog.records if r.name == "pipeline.airflow_tasks"]
    assert said[-2].startswith("stage summary: health for 2026-11-20 SUCCEEDED in ")
    assert said[-1].startswith("stage health for 2026-11-20 found a problem: the store is not healthy")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_failure_callback_sends_a_signed_task_failed_alert(
    settings: Settings, dag_bag, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The callback Airflow calls after a task's last retry: a TASK_FAILED alert, signed,
    naming the DAG, task, run, try and reason, stored once per run, task and try."""
    from types import SimpleNamespace

    from market.errors import SourceUnavailableError
    from market.settings import get_settings
    from pipeline.airflow_plugin import on_task_failure
    from pipeline.serving import serve_in_thread
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows
    from tests.pipeline.test_analysis_and_notify import SECRET, Receiver

    dag = dag_bag.dags["marketintel_t0"]
    context = {
        "dag": dag,
        "task": dag.get_task("t0_scrape"),
        "params": {"run_date": "2026-11-20"},
        "dag_run": SimpleNamespace(run_id="manual__2026-11-20"),
        "exception": SourceUnavailableError("exchange down"),
        "ti": SimpleNamespace(dag_id=dag.dag_id, task_id="t0_scrape", try_number=4, log_url="http://airflow/log"),
    }
    receiver = Receiver()
    with serve_in_thread(receiver.app()) as base:
        monkeypatch.setenv("MARKETINTEL_WEBHOOK_URL", f"{base}/hook")
        monkeypatch.setenv("MARKETINTEL_WEBHOOK_SECRET", SECRET)
        get_settings.cache_clear()
        on_task_failure(context)
        on_task_failure(context)  # a callback fired twice sends once
    (sent,) = receiver.received
    assert sent["valid"] and sent["body"]["kind"] == "TASK_FAILED" and sent["body"]["severity"] == "CRITICAL"
    body = json.dumps(sent["body"])
    for part in (
        "marketintel_t0.t0_scrape failed for 2026-11-20 after 4 tries",
        "exchange down",
        "manual__2026-11-20",
        "http://airflow/log",
    ):
        assert part in body, body
    with service_engine(get_settings()).connect() as conn:
        (note,) = current_rows(conn, tables.notifications)
    assert note["notification_id"] == "2026-11-20:task-failed:marketintel_t0.t0_scrape:manual__2026-11-20:4"


@pytest.fixture(scope="module")
def migrated_airflow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Airflow metadata database `airflow db migrate` made once for this module's runs."""
    home = tmp_path_factory.mktemp("airflow-template")
    env = {**os.environ, "AIRFLOW_HOME": str(home)}
    migrate = subprocess.run([AIRFLOW, "db", "migrate"], env=env, capture_output=True, text=True, timeout=300)
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    return home / "airflow.db"


def _airflow_home(migrated: Path, home: Path) -> dict[str, str]:
    """A private AIRFLOW_HOME holding a copy of the migrated metadata database (Airflow
    writes its own airflow.cfg there, pointing at that copy)."""
    home.mkdir(parents=True)
    shutil.copyfile(migrated, home / "airflow.db")
    return {**os.environ, "AIRFLOW_HOME": str(home)}


_RUN_DAYS = """
import json, sys
from airflow.dag_processing.dagbag import DagBag
from sqlalchemy import func, select
from market.settings import get_settings
from store.engine import service_engine
from store.tables import HISTORY_TABLES
bag = DagBag(dag_folder=sys.argv[1])

def counts():
    with service_engine(get_settings()).connect() as conn:
        return {name: conn.execute(select(func.count()).select_from(t)).scalar() for name, t in HISTORY_TABLES.items()}

def run(dag_id, day):
    dag_run = bag.get_dag(dag_id).test(run_conf={"run_date": day})
    states = {ti.task_id: str(ti.state) for ti in dag_run.get_task_instances()}
    return {"state": str(dag_run.state), "tasks": states}

result = {"health": run("marketintel_health", "2026-11-20")}
result["t0"] = run("marketintel_t0", "2026-11-20")
result["t1"] = run("marketintel_t1", "2026-11-20")
result["counts_once"] = counts()
result["t1_again"] = run("marketintel_t1", "2026-11-20")
result["counts_twice"] = counts()
result["t2"] = run("marketintel_t2", "2026-11-23")
result["t3"] = run("marketintel_t3", "2026-11-16")
result["t1_holiday"] = run("marketintel_t1", "2026-12-25")
print("RESULT " + json.dumps(result))
"""


@pytest.mark.slow
@pytest.mark.airflow
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_dag_runs_end_to_end_with_dag_test_and_t1_twice_changes_nothing(
    settings: Settings, tmp_path: Path, migrated_airflow: Path
) -> None:
    """On a store holding 30 earlier days, in one Airflow metadata database: the health
    DAG checks the store and its task log ends with the stage summary; T0 scrapes
    2026-11-20 from the session's simulator over HTTP, T1 scores and trades it (twice, the
    second run changing nothing), T2 suggests for Monday, T3 runs the macro week of
    2026-11-16, and T1 on Christmas Day skips every stage. Every stage run is recorded as
    Airflow's."""
    from datetime import date

    from sqlalchemy import select

    from pipeline.backfill import backfill
    from store import tables
    from store.engine import service_engine

    backfill(service_engine(settings), settings, 40, date(2026, 11, 19), with_text=False)
    env = _airflow_home(migrated_airflow, tmp_path / "airflow")
    run = subprocess.run(
        [sys.executable, "-c", _RUN_DAYS, str(DAGS_FOLDER)], env=env, capture_output=True, text=True, timeout=900
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, run.stdout[-3000:] + run.stderr[-5000:]
    result = json.loads(lines[0][7:])
    for name in ("health", "t0", "t1", "t1_again", "t2", "t3"):
        assert result[name]["state"].endswith("success"), (name, result[name])
        assert all(state.endswith("success") for state in result[name]["tasks"].values()), (name, result[name])
    assert set(result["t1"]["tasks"]) == set(T1_TASKS)
    once, twice = result["counts_once"], result["counts_twice"]
    assert once["eod_prices"] > 0 and once["predictions"] > 0 and once["analyses"] == 1 and once["portfolio_days"] == 1
    assert {k: v for k, v in twice.items() if k != "stage_runs"} == {k: v for k, v in once.items() if k != "stage_runs"}
    holiday = result["t1_holiday"]["tasks"]
    assert holiday["trading_day"].endswith("success")
    assert all(state.endswith("skipped") for task, state in holiday.items() if task != "trading_day"), holiday
    assert not (settings.runs_dir / "2026-12-25").exists()
    for day, stage in [
        ("2026-11-20", "health"),
        ("2026-11-20", "t0_scrape"),
        ("2026-11-20", "t1_trade"),
        ("2026-11-23", "t2_suggestions"),
        ("2026-11-16", "t3_macro"),
    ]:
        assert (settings.runs_dir / day / f"{stage}.ipynb").is_file(), (day, stage)
    index = (settings.runs_dir / "index.md").read_text()
    assert "| 2026-11-20 | t1_analysis | SUCCEEDED |" in index and "| 2026-11-16 | t3_macro | SUCCEEDED |" in index
    health_log = [
        line
        for line in (run.stdout + run.stderr).splitlines()
        if "stage summary: health " in line or "Returned value was: {'stage': 'health'" in line
    ]
    assert len(health_log) == 2, health_log  # the summary, then Airflow's closing line: the summary again
    output = settings.runs_dir / "2026-11-20" / "health.ipynb"
    assert "stage summary: health for 2026-11-20 SUCCEEDED in " in health_log[0]
    assert f"notebook: {output}" in health_log[0]
    assert (
        "Returned value was: {'stage': 'health', 'trading_date': '2026-11-20', 'status': 'SUCCEEDED'" in health_log[1]
    )
    with service_engine(settings).connect() as conn:
        triggers = {t for (t,) in conn.execute(select(tables.stage_runs.c.trigger))}
    assert triggers == {"airflow"}


@pytest.mark.airflow
def test_the_documented_backfill_command_runs_every_exchange_day_and_the_trap_is_real(
    tmp_path: Path, migrated_airflow: Path
) -> None:
    """docs/airflow.md, "Airflow: re-running and backfilling": its `--to-date` (the day after the last
    exchange day) gives T1 one run per exchange day 2026-11-16..20, each on its exchange
    day; `--to-date` at the last day itself loses that day's 16:15 run."""
    import re
    from datetime import date, datetime

    from market.clock import exchange_date

    page = (PROJECT_ROOT / "docs" / "airflow.md").read_text()
    ((from_date, to_date),) = re.findall(
        r"airflow backfill create --dag-id \$dag --from-date (\S+) --to-date (\S+)", page
    )
    env = {
        **_airflow_home(migrated_airflow, tmp_path / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    }
    done = subprocess.run([AIRFLOW, "dags", "reserialize"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

    def exchange_days(last: str) -> list[date]:
        run = subprocess.run(
            [
                AIRFLOW,
                "backfill",
                "create",
                "--dag-id",
                "marketintel_t1",
                "--from-date",
                from_date,
                "--to-date",
                last,
                "--dry-run",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        moments = re.findall(r"\| (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00:00) \|", run.stdout)
        assert all(m.endswith("21:15:00+00:00") for m in moments), moments
        return [exchange_date(datetime.fromisoformat(m)) for m in moments]

    assert exchange_days(to_date) == [date(2026, 11, d) for d in range(16, 21)]
    assert exchange_days("2026-11-20") == [date(2026, 11, d) for d in range(16, 20)]
