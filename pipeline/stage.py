"""What a stage is: a named function of a `StageContext` that returns a `StageOutcome`."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine

from market.clock import TradingCalendar
from market.settings import Settings
from store.transactions import write_transaction

if TYPE_CHECKING:
    from desk import Desk


@dataclass(frozen=True)
class StageContext:
    stage: str
    trading_date: date
    run_id: str
    settings: Settings
    engine: Engine
    calendar: TradingCalendar
    write: bool = True  # False: a preview on an engine that stores nothing (pipeline/runner.py)

    @property
    def desk(self) -> Desk:
        """The use cases on this stage's engine, settings and calendar (desk/desk.py;
        imported here, where a stage runs, not where stages are only named)."""
        from desk import Desk

        return Desk(self.engine, self.settings, self.calendar)

    def transaction(self) -> AbstractContextManager[Connection]:
        """The one write transaction of this stage for this date: all or nothing."""
        return write_transaction(self.engine, f"stage:{self.stage}:{self.trading_date.isoformat()}")


@dataclass
class StageOutcome:
    """What a stage reports: a small summary (numbers and short text) and named tables
    (lists of rows) for notebooks and the CLI to show."""

    summary: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # What the stage found wrong, for a person to act on (health's failed checks), or None.
    # The stage still SUCCEEDED (it ran and recorded its findings); the alarm is recorded
    # with its summary, and the callers make it seen: the CLI exits 2, an Airflow task fails.
    alarm: str | None = None
    # One line on what the stage did that the rows it inserted do not show (the files it
    # wrote), or why it did nothing, or None. Recorded with its summary; the Airflow task's
    # stage summary and run-day's table of the day show it beside the status.
    note: str | None = None


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[[StageContext], StageOutcome]
    description: str
    trading_days_only: bool = True  # False: runs on any calendar day (e.g. health)
    after_close: bool = True  # False: runs for a session that has not closed yet (T2's morning suggestions)
