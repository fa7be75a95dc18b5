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

`on_task_failure` is every task's `on_failure_callback`; it imports the alerting code
only when a task has failed (`pipeline.airflow_tasks.alert_task_failure`).
"""
from __future__ import annotations

from typing import Any

from airflow.plugins_manager import AirflowPlugin
from airflow.timetables.trigger import CronTriggerTimetable

EXCHANGE_TIMEZONE = "America/Jamaica"


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


def on_task_failure(context: Any) -> None:
    """Send the failure alert of a task that failed its last retry (see `alert_task_failure`)."""
    from pipeline.airflow_tasks import alert_task_failure

    alert_task_failure(context)


class MarketintelPlugin(AirflowPlugin):
    name = "marketintel"
    timetables = [ExchangeTimetable]
