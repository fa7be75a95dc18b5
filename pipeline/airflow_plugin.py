"""What the DAG files take from the project at parse time, and the Airflow plugin that
registers it. Imports Airflow and nothing of the project beyond this module, so parsing
a DAG reads no settings, opens no database and loads no model code.

`ExchangeTimetable` is Airflow's `CronTriggerTimetable` on the exchange clock
(America/Jamaica) whose description and summary carry the zone, because the Airflow UI
and REST API show a DAG's schedule next to a UTC clock: "At 16:15, Monday through Friday
(America/Jamaica, exchange time)" and "15 16 * * 1-5 America/Jamaica" instead of a bare
cron string. A custom timetable must be registered with the scheduler, dag processor and
API server to be serialised; `MarketintelPlugin` does that through the `airflow.plugins`
entry point in pyproject.toml, so installing the package is all it takes (no
plugins folder to copy).

`exchange_day_param` is every DAG's `run_date` param: in the trigger form a date picker
titled "Exchange day (America/Jamaica)" whose value wins over the form's logical date,
which Airflow fills in UTC (2026-11-20 00:00 UTC is 19:00 on 11-19 in Kingston, so a
logical date alone can name the day before). A value that is not a date is refused by the
form, before any run is created.

`T0_DELIVERY` links T0 to T1: T0's scrape task updates it with the trading date it
stored, and T1 runs on that update as well as on its clock, once per delivery (the
second of the two finds the day done, its last stage succeeded since the delivery, and
skips: `pipeline.airflow_tasks.trading_day_gate`; when the first failed on the way, the
second runs only the stages not done since the delivery, so the day is never traded twice).
`T1_CLOSE` links T1 to T2 the same way: T1's `t1_trade` (which closes the day; only
`t1_reports` follows it) updates it with the day it closed, and T2 runs on that update
for the next trading day's morning as well as at 07:00, once per close.

`on_task_failure` is every task's `on_failure_callback`; it imports the alerting code
only when a task has failed (`pipeline.airflow_tasks.alert_task_failure`).

`DAG_TERMS` is every DAG's operating terms in one table, a DAG a line: its clock, the
assets that also start it, its tags, retries, first retry delay and time limit per try, so
an operator reads every schedule and retry policy in one place. `marketintel_dag` is what
every DAG of the project shares, written once: the exchange's start date, no catch-up, one
active run, the `run_date` param, the failure alert and exponential retries, its row of
`DAG_TERMS`, and the closing paragraph of its docs (`EVERY_DAG_DOC`: the alert, the stage
summary, where re-running is told); each DAG file names its id and its docs. `stage_task`
and `trading_day_task` are the two kinds of task the DAGs are made of: a stage notebook,
and the gate that skips a closed exchange day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pendulum
from airflow.plugins_manager import AirflowPlugin
from airflow.sdk import Asset, AssetOrTimeSchedule, Param, XComArg, task
from airflow.timetables.trigger import CronTriggerTimetable

EXCHANGE_TIMEZONE = "America/Jamaica"
# Updated by T0's t0_scrape each time it stores a day (the event's extra names the
# trading date); T1 is scheduled on it as well as on its 16:15 clock.
T0_DELIVERY = Asset(name="marketintel_t0_delivery", uri="marketintel://t0/delivery", group="marketintel")
# Updated by T1's t1_trade (which closes the day; t1_reports follows it) each time T1 closes a
# day (the extra names that day); T2 is scheduled on it as well as on its 07:00 clock, for the
# next trading day.
# pipeline.airflow_tasks.NEXT_MORNING_ASSETS names it too (that module imports no Airflow).
T1_CLOSE = Asset(name="marketintel_t1_close", uri="marketintel://t1/close", group="marketintel")
# The last paragraph of every DAG's docs (the Airflow UI shows them as the DAG's doc_md).
EVERY_DAG_DOC = """A failure after the last retry sends the signed webhook alert (TASK_FAILED; PREFLIGHT_FAILED
for T1's pre-flight). Every stage task's log ends with its stage summary: status, rows
written per table, duration and the executed notebook. Re-running and backfilling past
exchange days: docs/airflow.md, "Airflow: re-running and backfilling".
"""


class ExchangeTimetable(CronTriggerTimetable):
    """A cron schedule on the exchange clock, named as such wherever Airflow shows it."""

    def __init__(self, cron: str, *, timezone: Any = EXCHANGE_TIMEZONE, **kwargs: Any) -> None:
        super().__init__(cron, timezone=timezone, **kwargs)
        zone = getattr(self._timezone, "name", str(self._timezone))
        self.description = f"{self.description} ({zone}, exchange time)" if self.description else f"{zone} time"
        self._zone_name = zone

    @property
    def summary(self) -> str:
        return f"{self._expression} {self._zone_name}"


def exchange_day_param(which: str = "The exchange day to run") -> Param:
    """The `run_date` param: an exchange day YYYY-MM-DD, or empty for the run's own date."""
    return Param(
        None,
        type=["null", "string"],
        format="date",
        title=f"Exchange day ({EXCHANGE_TIMEZONE})",
        description=f"{which}, YYYY-MM-DD on the exchange's calendar; it wins over the logical date, which "
        f"Airflow gives in UTC (00:00 UTC is 19:00 the day before in Kingston). Empty: the "
        f"run's own date on the exchange clock.",
    )


@dataclass(frozen=True)
class DagTerms:
    """One DAG's operating terms, in the order a row of `DAG_TERMS` gives them: its clock
    (a cron on the exchange clock), its tags beside `marketintel`, how many times a task is
    retried, the first retry's delay (minutes; each next one grows exponentially, or with
    `backoff` False each is the same), each try's time limit (minutes), the assets whose
    update also starts it, and what its `run_date` param asks for."""

    cron: str
    tags: tuple[str, ...]
    retries: int
    retry_minutes: int
    timeout_minutes: int
    after: tuple[Asset, ...] = ()
    run_date: str = "The exchange day to run"
    backoff: bool = True

    def schedule(self) -> ExchangeTimetable | AssetOrTimeSchedule:
        """The DAG's schedule: its clock, or, with `after`, its clock or an update of those
        assets, whichever comes (Airflow's `AssetOrTimeSchedule`)."""
        clock = ExchangeTimetable(self.cron)
        return AssetOrTimeSchedule(timetable=clock, assets=list(self.after)) if self.after else clock


# Every DAG's operating terms: DAG id: (cron, tags, retries, first retry delay (min), time limit per try (min),
# assets that also start it, what `run_date` asks for, whether the delays grow). The DAGs' docs say the same in
# words. T1's stage tasks each run under a time limit of their own instead (pipeline/stage_lists.py
# T1_TIMEOUT_MINUTES). T0 waits for a late exchange: it tries every 5 minutes until 16:40, so a day the exchange
# publishes late is delivered while T1's pre-flight (every 5 minutes from 16:15 to 16:45) waits for it, before
# the pre-flight's last try; growing from 1 minute, its 3 retries gave up by about 16:09.
DAG_TERMS: dict[str, DagTerms] = {
    "marketintel_health": DagTerms("45 15 * * 1-5", ("health",), 2, 1, 15),
    "marketintel_t0": DagTerms("0 16 * * 1-5", ("t0", "ingest"), 8, 5, 20, backoff=False),
    "marketintel_t1": DagTerms("15 16 * * 1-5", ("t1", "close"), 2, 2, 20, after=(T0_DELIVERY,)),
    "marketintel_t2": DagTerms("0 7 * * 1-5", ("t2", "morning"), 2, 2, 15, after=(T1_CLOSE,)),
    "marketintel_t3": DagTerms("0 9 * * 1", ("t3", "macro"), 3, 5, 30, run_date="The Monday of the macro week to run"),
}


def marketintel_dag(dag_id: str, doc_md: str | None) -> dict[str, Any]:
    """The `@dag(...)` keyword arguments of the project DAG `dag_id`, on its terms in
    `DAG_TERMS`: its schedule, each task retried `retries` times, `retry_minutes` apart at
    first and growing exponentially (Airflow's multiplier 2; with `backoff` False, every
    `retry_minutes`), each try at most `timeout_minutes`; tagged
    `marketintel` and its tags; documented by `doc_md` (the DAG file's docstring) followed
    by `EVERY_DAG_DOC`."""
    terms = DAG_TERMS[dag_id]
    return {
        "dag_id": dag_id,
        "schedule": terms.schedule(),
        "start_date": pendulum.datetime(2026, 1, 1, tz=EXCHANGE_TIMEZONE),
        "catchup": False,
        "max_active_runs": 1,
        "tags": ["marketintel", *terms.tags],
        "doc_md": f"{doc_md or ''}\n{EVERY_DAG_DOC}",
        "default_args": {
            "owner": "marketintel",
            "on_failure_callback": on_task_failure,
            "retries": terms.retries,
            "retry_delay": timedelta(minutes=terms.retry_minutes),
            "retry_exponential_backoff": 2.0 if terms.backoff else 0,
            "execution_timeout": timedelta(minutes=terms.timeout_minutes),
        },
        "params": {"run_date": exchange_day_param(terms.run_date)},
    }


def stage_task(stage: str, input_stage: str | None = None, **task_args: Any) -> XComArg:
    """The task `stage` in the DAG being defined: it runs the stage's notebook and returns
    its stage summary (`pipeline.airflow_tasks.run_notebook_task`; with `input_stage`, a
    scheduled or asset-triggered run does not run it again when it already succeeded for
    the day after that stage's latest success); `task_args` are the task's own `@task`
    arguments (timeout, retries, outlets) over the DAG's defaults."""

    @task(task_id=stage, **task_args)
    def run(**context) -> object:  # noqa: ANN003 - the stage summary; a dict annotation would split its XCom
        from pipeline.airflow_tasks import run_notebook_task

        return run_notebook_task(stage, context, input_stage)

    return run()


def trading_day_task(current: tuple[str, str] | None = None, input_is_previous_day: bool = False) -> XComArg:
    """The `trading_day` short-circuit task in the DAG being defined: the tasks after it
    skip on a closed exchange day, and, with `current`, on a day already done for its
    input (`pipeline.airflow_tasks.trading_day_gate`, which the arguments are passed to).
    A `run_date` that is not a date or lies past the next trading day fails the task at once
    (AirflowFailException: T0's eight retries took 40 minutes to alert on a typo)."""

    @task.short_circuit(task_id="trading_day", execution_timeout=timedelta(minutes=2))
    def trading_day(**context) -> bool:  # noqa: ANN003
        from airflow.sdk.exceptions import AirflowFailException

        from market.errors import InvalidInputError
        from pipeline.airflow_tasks import trading_day_gate

        try:
            return trading_day_gate(context, current=current, input_is_previous_day=input_is_previous_day)
        except InvalidInputError as exc:
            # a run_date no retry can help: fail now (the alert is sent), not in 40 minutes
            raise AirflowFailException(exc.detail) from exc

    return trading_day()


def on_task_failure(context: Any) -> None:
    """Send the failure alert of a task that failed its last retry (see `alert_task_failure`)."""
    from pipeline.airflow_tasks import alert_task_failure

    alert_task_failure(context)


class MarketintelPlugin(AirflowPlugin):
    name = "marketintel"
    timetables = [ExchangeTimetable]
