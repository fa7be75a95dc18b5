"""What the Airflow task callables do, kept out of `dags/` so the DAG files stay thin and
read nothing at parse time. Airflow itself is not imported here."""
from __future__ import annotations

from datetime import date
from typing import Any, Mapping

from market.clock import exchange_date, parse_trading_date
from market.errors import InvalidInputError


def trading_date_from_context(context: Mapping[str, Any]) -> date:
    """The trading date of a run: the `run_date` param when given, else the run's own time
    on the exchange clock. A manually triggered Airflow 3 run has no logical date, so its
    `run_after` is used."""
    params = context.get("params") or {}
    if params.get("run_date"):
        return parse_trading_date(str(params["run_date"]))
    moment = context.get("logical_date")
    if moment is None and context.get("dag_run") is not None:
        moment = context["dag_run"].run_after
    if moment is None:
        raise InvalidInputError("the run has neither a run_date param, a logical date nor a run_after time")
    return exchange_date(moment)


def run_notebook_task(stage_name: str, context: Mapping[str, Any]) -> str:
    """Execute the stage notebook for the run's trading date; return the output path."""
    from pipeline.notebooks import run_stage_notebook

    output = run_stage_notebook(stage_name, trading_date_from_context(context), trigger="airflow")
    return str(output)


def trading_day_gate(context: Mapping[str, Any]) -> bool:
    """False (downstream tasks skip) when the run's trading date is an exchange holiday or
    a weekend, with the reason logged."""
    import logging

    from market.clock import default_calendar

    day = trading_date_from_context(context)
    reason = default_calendar().closed_reason(day)
    if reason:
        logging.getLogger(__name__).info("no run for %s: the exchange is closed (%s)", day.isoformat(), reason)
        return False
    return True


def run_preflight_task(context: Mapping[str, Any]) -> str:
    """The pre-flight notebook; when its last retry fails, a PREFLIGHT_FAILED alert is
    stored and sent before the task fails with the reason."""
    from market.errors import StageFailedError

    try:
        return run_notebook_task("t1_preflight", context)
    except StageFailedError as exc:
        task, ti = context.get("task"), context.get("ti")
        retries = getattr(task, "retries", 0) or 0
        if ti is None or getattr(ti, "try_number", 1) >= retries + 1:
            from pipeline.preflight import alert_failed_preflight

            alert_failed_preflight(trading_date_from_context(context), exc.detail)
        raise
