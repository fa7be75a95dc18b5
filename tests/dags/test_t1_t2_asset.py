"""T1 -> T2 through an asset, as T0 -> T1: T1's last task updates `marketintel_t1_close`
with the day it closed; T2 runs on that update, for the next trading day's morning, as
well as at 07:00, and whichever of the two comes second skips (once per close)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from types import SimpleNamespace

import pytest

from market.settings import Settings
from tests.dags.test_dag_integrity import (  # noqa: F401 - dag_bag: the module's DagBag fixture
    _as_airflow_shows_it,
    dag_bag,
    record_stage_success,
)


def test_t1s_last_task_updates_the_close_asset_and_t2_runs_on_it_and_its_clock(dag_bag) -> None:  # noqa: F811
    from airflow.timetables.assets import AssetOrTimeSchedule

    from pipeline.airflow_plugin import T1_CLOSE

    t1 = dag_bag.dags["marketintel_t1"]
    assert t1.get_task("t1_trade").outlets == [T1_CLOSE]
    assert [t.task_id for t in t1.tasks if t.outlets] == ["t1_trade"], "only the day's last task closes it"
    t2 = _as_airflow_shows_it(dag_bag.dags["marketintel_t2"])
    assert isinstance(t2.timetable, AssetOrTimeSchedule)
    assert [(a.name, a.uri) for _, a in t2.timetable.asset_condition.iter_assets()] == [
        ("marketintel_t1_close", "marketintel://t1/close")
    ]
    assert t2.timetable.summary == "Asset or 0 7 * * 1-5 America/Jamaica"
    assert (
        t2.timetable.description
        == "Triggered by assets or At 07:00, Monday through Friday (America/Jamaica, exchange time)"
    )


def test_a_t2_run_started_by_t1s_close_is_for_the_next_trading_day() -> None:
    from pipeline.airflow_plugin import T0_DELIVERY, T1_CLOSE
    from pipeline.airflow_tasks import trading_date_from_context

    at = datetime(2026, 11, 20, 21, 40, tzinfo=UTC)
    friday = SimpleNamespace(timestamp=at, extra={"trading_date": "2026-11-20", "status": "SUCCEEDED"})
    # Friday's close: Monday's morning
    assert trading_date_from_context({"params": {}, "triggering_asset_events": {T1_CLOSE: [friday]}}) == date(
        2026, 11, 23
    )
    before_christmas = SimpleNamespace(timestamp=at, extra={"trading_date": "2026-12-24", "status": "SUCCEEDED"})
    # Christmas Day (Friday) is closed, then the weekend (Boxing Day is a Saturday)
    assert trading_date_from_context({"params": {}, "triggering_asset_events": {T1_CLOSE: [before_christmas]}}) == date(
        2026, 12, 28
    )
    # T0's delivery still names its own day, and run_date still wins over any event.
    assert trading_date_from_context({"params": {}, "triggering_asset_events": {T0_DELIVERY: [friday]}}) == date(
        2026, 11, 20
    )
    assert trading_date_from_context(
        {"params": {"run_date": "2026-11-19"}, "triggering_asset_events": {T1_CLOSE: [friday]}}
    ) == date(2026, 11, 19)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_t2_runs_once_per_t1_close(settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    """The asset run after Friday's close makes Monday's suggestions; Monday's 07:00 run
    finds them made after that close and skips; a new close of Friday (a re-run) makes the
    morning due again; a manual run always runs."""
    from pipeline.airflow_tasks import trading_day_gate

    friday, monday = date(2026, 11, 20), date(2026, 11, 23)
    at = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)

    def succeeded(stage: str, day: date, minutes: int) -> None:
        record_stage_success(settings, stage, day, at, minutes)

    def runs(run_type: str) -> bool:
        return trading_day_gate(
            {"params": {"run_date": monday.isoformat()}, "dag_run": SimpleNamespace(run_type=run_type)},
            current=("t2_suggestions", "t1_trade"),
            input_is_previous_day=True,
        )

    assert runs("scheduled") and runs("asset_triggered")  # nothing made yet
    succeeded("t1_trade", friday, 0)
    assert runs("asset_triggered")  # Friday closed: Monday's morning is due
    succeeded("t2_suggestions", monday, 5)  # the asset run made them
    with caplog.at_level("INFO", logger="pipeline.airflow_tasks"):
        assert not runs("scheduled")  # Monday 07:00 skips
    assert (
        "t2_suggestions already succeeded for this day" in caplog.text
        and "t1_trade's latest success for 2026-11-20" in caplog.text
    )
    assert not runs("asset_triggered") and runs("manual") and runs("backfill")
    succeeded("t1_trade", friday, 30)  # Friday closed again (a re-run of T1)
    assert runs("asset_triggered") and runs("scheduled")
    # A close of another day is not the input of Monday's morning.
    succeeded("t2_suggestions", monday, 40)
    succeeded("t1_trade", date(2026, 11, 19), 50)
    assert not runs("scheduled")
