"""One trading day without Airflow (`marketintel run-day`): T0 then T1's stages, in the
DAGs' order, through the same stage notebooks. A failed pre-flight stores and sends the
PREFLIGHT_FAILED alert (there is no retry window here: run it again when T0 has
delivered) and stops the day; any failed stage stops the day with its reason, and a
re-run redoes only what is not already stored (every stage is a transaction). A day that
is not a trading day, or whose session has not closed, and notification settings a
delivery would refuse (a webhook URL without its secret) are refused before the first
notebook (the runner's rule, `refuse_to_start`): nothing is run, listed or recorded.

Each stage reports what a person running the day wants to see: its status, how long it
took and the rows it inserted, as the runner recorded them in `stage_runs`
(`pipeline.runner.recorded_outcome`, which Airflow's task log reads too).

An interrupted stage (Ctrl-C, or SIGTERM from a service manager or `kill` while
`terminate_as_interrupt` holds; Python's own SIGTERM ends the process with no cleanup at
all) ends as a failure like any other: its notebook is marked failed and its kernel shut
down, runs/index.md is rewritten, `stage_runs` records it FAILED ("interrupted by SIGTERM")
unless it recorded an end first, and the day's table shows it before the one-line error
(which says the stage's recorded status when the interrupt came after its end).
A re-run finishes the day: each stage is a transaction.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path

from sqlalchemy import Engine

from market.clock import default_calendar, utc_now
from market.errors import InvalidInputError, StageFailedError
from market.settings import Settings
from pipeline.notebooks import one_kernel, run_stage_notebook
from pipeline.registry import day_rule
from pipeline.runner import StageResult, record_interrupted, recorded_outcome, refuse_to_start, run_stage
from pipeline.stage_lists import T0_STAGES, T1_PREFLIGHT, T1_STAGES
from store.engine import service_engine


@dataclass(frozen=True)
class DayStage:
    """One stage of the day as it ran."""

    stage: str
    status: str  # SUCCEEDED, SKIPPED or FAILED (the runner's last event for the stage and day)
    seconds: float
    rows_written: int  # rows inserted, all history tables together
    output: Path | None  # the executed notebook
    reason: str | None = None  # why it was skipped or failed, as recorded
    alarm: str | None = None  # what a stage that succeeded found wrong (health's failed checks)
    note: str | None = None  # what its rows do not show, or why it did nothing (t1_reports' files)
    error: StageFailedError | None = field(default=None, compare=False, repr=False)  # a failure, to raise

    def outcome(self) -> str:
        """What `marketintel stage run --notebook` says of the stage: its recorded status,
        with the reason of a skip, and where its executed notebook is."""
        why = f" ({self.said()})" if self.said() else ""
        return f"{self.status}{why}; output notebook: {self.output}"

    def said(self) -> str:
        """What the runner recorded beside the status: why a stage was skipped or failed,
        else what one that succeeded found wrong or noted (`StageOutcome.note`)."""
        if self.status != "SUCCEEDED":
            return self.reason or ""
        return "; ".join(filter(None, (self.alarm, self.note)))


def run_day(day: date, settings: Settings, trigger: str = "cli") -> Iterator[DayStage]:
    """Run T0 and T1 for `day`; yields each stage as it finishes, a FAILED one included,
    after which the stage's StageFailedError is raised."""
    calendar = default_calendar()
    reason = calendar.closed_reason(day)
    if reason:
        raise InvalidInputError(f"nothing to run: {reason}")
    for stage in T0_STAGES + T1_STAGES:  # a day not closed, a webhook set up wrong: refused before any notebook
        refuse_to_start(day, calendar, day_rule(stage), settings)
    engine, invocation = service_engine(settings), uuid.uuid4().hex  # this run-day's id, for its alert
    with one_kernel():  # the day's stages share one kernel (pipeline/notebooks.py)
        for stage in T0_STAGES + T1_STAGES:
            ran = notebook_stage(stage, day, settings, trigger, engine)
            yield ran
            if ran.error is not None:
                if stage == T1_PREFLIGHT:
                    from pipeline.preflight import alert_failed_preflight  # the stages' code: only on a failure

                    alert_failed_preflight(day, ran.error.detail, f"run-day:{invocation}")
                raise ran.error


def notebook_stage(
    stage: str, day: date, settings: Settings, trigger: str = "cli", engine: Engine | None = None
) -> DayStage:
    """Run one stage's notebook for `day` and read back what the stage recorded (the status
    papermill sees is only whether the notebook ran: a stage that skipped a holiday ran
    fine). A failed stage is returned too, with its StageFailedError as `error` for the
    caller to raise (run-day shows it in the day's table first)."""
    since, started, run_id = utc_now(), time.monotonic(), uuid.uuid4().hex
    engine = engine or service_engine(settings)
    try:
        output = run_stage_notebook(stage, day, settings=settings, trigger=trigger, run_id=run_id)
    except StageFailedError as exc:
        return _finished(engine, (stage, run_id), day, (since, started), None, exc)
    except KeyboardInterrupt as exc:  # the notebook is marked failed and its kernel shut down by now
        why = f"interrupted by {'SIGTERM' if isinstance(exc, Terminated) else 'Ctrl-C'}"
        unended = record_interrupted(engine, stage, day, run_id, trigger, f"{why} before it recorded an end")
        ran = _finished(engine, (stage, run_id), day, (since, started), None, None)
        return replace(ran, error=StageFailedError(_interrupted(ran, day, why, unended)))
    return _finished(engine, (stage, run_id), day, (since, started), output, None)


def _interrupted(ran: DayStage, day: date, why: str, unended: bool) -> str:
    """What an interrupt during `ran` says: the stage was cut short (it recorded no end), or
    it had already recorded its end (its status stands) and the day stopped after it."""
    again = "(each stage is a transaction)"
    if unended:
        return f"stage '{ran.stage}' for {day.isoformat()} {why}; run the day again to finish it {again}"
    return (
        f"{why} after stage '{ran.stage}' for {day.isoformat()} recorded {ran.status}; "
        f"run the day again to run the stages after it {again}"
    )


def stage_in_process(name: str, day: date, settings: Settings, trigger: str = "cli") -> StageResult:
    """`run_stage` in this process (`stage run` without --notebook, `scrape`), interrupted as
    a stage's notebook is: Ctrl-C, or SIGTERM while it runs, records it FAILED ("interrupted
    by ...") unless it recorded an end first, and raises StageFailedError saying so. The
    plain runner left its STARTED without an end and the command ended without a word
    (130 for Ctrl-C, at once for SIGTERM)."""
    since, run_id = utc_now(), uuid.uuid4().hex
    try:
        with terminate_as_interrupt():
            return run_stage(name, day, settings=settings, trigger=trigger, run_id=run_id)
    except KeyboardInterrupt as exc:
        why = f"interrupted by {'SIGTERM' if isinstance(exc, Terminated) else 'Ctrl-C'}"
        engine = service_engine(settings)
        if record_interrupted(engine, name, day, run_id, trigger, f"{why} before it recorded an end"):
            said = f"stage '{name}' for {day.isoformat()} {why}; run it again to finish it"
        else:
            status = recorded_outcome(engine, name, day, since, run_id)["status"]
            said = f"{why} after stage '{name}' for {day.isoformat()} recorded {status}; run it again for its summary"
        raise StageFailedError(f"{said} (each stage is a transaction)") from None


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised as Ctrl-C is (`terminate_as_interrupt`)."""


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside (on the main thread), SIGTERM raises `Terminated` so that a stopped
    command cleans up as Ctrl-C does; the previous handler is put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise Terminated(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _finished(
    engine: Engine,
    run: tuple[str, str],
    day: date,
    began: tuple[datetime, float],
    output: Path | None,
    error: StageFailedError | None,
) -> DayStage:
    """The stage `run` (its name and run id) as it ended, read back from its own records:
    a second run-day on the same store at once records its own."""
    stage, run_id = run
    since, started = began
    outcome = recorded_outcome(engine, stage, day, since, run_id)
    return DayStage(
        stage,
        outcome["status"],
        time.monotonic() - started,
        sum(outcome["rows_written"].values()),
        output,
        outcome.get("reason"),
        outcome.get("alarm"),
        outcome.get("note"),
        error,
    )


def stage_table(stages: list[DayStage]) -> list[str]:
    """The stages of a day as an aligned table, with a total row; after a stage's figures,
    what the runner recorded beside its status (`DayStage.said`: why it was skipped or
    failed, what it found wrong or noted)."""
    lines = [f"{'stage':<15} {'status':<9} {'seconds':>8} {'rows written':>13}"]
    for s in stages:
        said = f"  {s.said()}" if s.said() else ""
        lines.append(f"{s.stage:<15} {s.status:<9} {s.seconds:>8.1f} {s.rows_written:>13,}{said}")
    if stages:
        lines.append(
            f"{'total':<15} {'':<9} {sum(s.seconds for s in stages):>8.1f} {sum(s.rows_written for s in stages):>13,}"
        )
    return lines
