"""Bootstrapping: a track record before the first live day.

Once history is in the store (the simulated backfill, a real-history replay or an
import), `bootstrap`:

a) runs the walk-forward over that history and stores every out-of-sample prediction
   as the model's validation record (models/validation.py);
b) replays the AI executor over the last `replay_days` (60) trading days of that record
   under the liquidity rails, exactly as T1 step 6 would have run on each of those days
   (portfolio/ai.py `execute_day` on the record's signals; every trade's rationale says
   `record: validation`), so the AI portfolio has trades, open positions and an equity
   curve;
c) runs T2 for the morning after the record's last day on the record's signals, so every
   client portfolio has its suggestions (only while no live day exists: after that, T2
   reads the live predictions).

Every row it writes is an ordinary append-only row with its own recorded_at. Re-running
it writes nothing new: the record is deterministic and appended only where it differs;
days the AI portfolio already executed are skipped (and the replay is skipped whole once
the AI portfolio has executed a day after the record, since a ledger cannot be slotted
into its own past); T2 leaves a portfolio that already has the day's suggestions alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import Connection, Engine, func, select

from desk import AI_PORTFOLIO, Desk, ExecutedDay, MorningSuggestions
from market.clock import TradingCalendar, utc_now
from market.errors import InvalidInputError, NotReadyError
from market.fees import fee_schedule
from market.settings import Settings
from models.decisions import HORIZON
from models.validation import DEFAULT_DAYS, DEFAULT_MIN_TRAIN_DAYS, ValidationRecord
from pipeline.monitor_reads import reference_data
from pipeline.validation import build_validation_record
from reports.format import counted
from store import tables
from store.panels import first_live_day, prediction_days, record_end
from store.transactions import write_transaction

REPLAY_DAYS = 60


@dataclass
class Bootstrap:
    record: ValidationRecord
    replayed: list[ExecutedDay]
    replay_note: str | None
    suggestions: MorningSuggestions | None
    suggestions_note: str | None

    def lines(self) -> list[str]:
        r = self.record
        lines = []
        if r.first is None:
            lines.append(f"validation record: none ({r.reason})")
        else:
            binary = r.metrics.get("binary_accuracy", {})
            accuracy = "n/a" if binary.get("value") is None else f"{binary['value']:.1%}"
            base = "n/a" if binary.get("base_rate") is None else f"{binary['base_rate']:.1%}"
            lines.append(
                f"validation record {r.first} to {r.last}: {r.predictions} out-of-sample predictions by "
                f"{r.models} walk-forward models, binary accuracy {accuracy} (base rate {base}, "
                f"n={binary.get('sample_size', 0)}); rows inserted {r.inserted}; {r.seconds:.1f}s"
            )
        trades = sum(d.trades_recorded for d in self.replayed)
        if self.replayed:
            last = self.replayed[-1]
            lines.append(
                f"AI portfolio replayed over {counted(len(self.replayed), 'day')} ({self.replayed[0].trading_date} to "
                f"{last.trading_date}): {counted(trades, 'trade')}, equity {last.equity:,.2f}"
            )
        if self.replay_note:
            lines.append(f"AI portfolio replay: {self.replay_note}")
        if self.suggestions is not None:
            lines.append(
                f"T2 for {self.suggestions.trading_date} from the validation record: "
                f"{counted(len(self.suggestions.suggestions), 'suggestion')} for "
                f"{counted(self.suggestions.portfolios, 'portfolio')}"
            )
        if self.suggestions_note:
            lines.append(f"T2: {self.suggestions_note}")
        return lines


@dataclass(frozen=True)
class BootstrapTerms:
    """What a bootstrap builds: the validation record's last day (`end`; default the day
    before the first live prediction, or the latest priced day: the demo passes the day
    before its live day, so a re-run after that day's T0 builds the same record), its
    `days` and the history each of its models needs first (`min_train_days`), the days the
    AI executor is replayed over (`replay_days`) and the label's horizon."""

    end: date | None = None
    days: int = DEFAULT_DAYS
    min_train_days: int = DEFAULT_MIN_TRAIN_DAYS
    replay_days: int = REPLAY_DAYS
    horizon: int = HORIZON


def bootstrap(
    engine: Engine, settings: Settings, calendar: TradingCalendar, terms: BootstrapTerms = BootstrapTerms()
) -> Bootstrap:
    """The validation record, the monitor's reference, the AI executor's replay and T2, as
    `terms` says (`BootstrapTerms`)."""
    horizon = terms.horizon
    with write_transaction(engine, "bootstrap:validation-record") as conn:
        record = build_validation_record(
            conn,
            terms.end,
            horizon=horizon,
            days=terms.days,
            min_train_days=terms.min_train_days,
            fee_rate=float(fee_schedule(settings).rate),
        )
    with engine.connect() as conn:  # the model monitor's reference, built once here rather than on T1's first day
        reference_data(conn, horizon, settings.models_dir / "monitor")
    replayed, replay_note = _replay_ai(engine, settings, record, terms.replay_days)
    suggestions, suggestions_note = _suggestions(engine, settings, calendar, record)
    return Bootstrap(record, replayed, replay_note, suggestions, suggestions_note)


def refuse_late_end(conn: Connection, calendar: TradingCalendar, end: date) -> None:
    """`marketintel bootstrap --end` after the latest day the record may end on (`record_end`:
    the day before the first live prediction, else the latest priced day) is refused
    (InvalidInputError) rather than moved back to it without a word, and one the exchange has
    not reached says so, as backfill --end and the stages refuse a day not closed. A weekend
    or holiday ends on the trading day before it ("up to and including"). `build_validation_record`
    still holds its callers' `end` to that day (the demo's day before its live day)."""
    closed = calendar.closed_day_at(utc_now())
    allowed, why = _latest_end(conn, closed)
    asked = calendar.latest_trading_day(end)
    if asked > closed:
        raise InvalidInputError(
            f"--end {end} has not closed yet; the record may end on {allowed} at the latest ({why})"
        )
    if asked > allowed:
        raise InvalidInputError(f"--end {end} is after {allowed}, the latest day the record may end on ({why})")


def _latest_end(conn: Connection, closed: date) -> tuple[date, str]:
    """The latest day the record may end on and why: `record_end`, else (no prices yet) the
    latest closed trading day."""
    live, last = first_live_day(conn), record_end(conn)
    if last is None:
        return closed, "the latest closed trading day"
    return last, "the latest priced day" if live is None else f"the day before the first live prediction, {live}"


def _replay_ai(
    engine: Engine, settings: Settings, record: ValidationRecord, replay_days: int
) -> tuple[list[ExecutedDay], str | None]:
    if record.first is None or replay_days <= 0:
        return [], "no validation record to replay" if record.first is None else None
    with engine.connect() as conn:
        window = prediction_days(conn, tables.validation_predictions, record.first, record.last)[-replay_days:]
        c = tables.portfolio_days.c
        executed = conn.execute(select(func.max(c.trading_date)).where(c.portfolio_id == AI_PORTFOLIO)).scalar()
    if not window:
        return [], "no validation record to replay"
    if executed is not None and executed > window[-1]:
        return [], f"skipped: the AI portfolio has already executed {executed}, after the record's last day"
    todo = [d for d in window if executed is None or d > executed]
    desk = Desk(engine, settings)
    results = [desk.ai_day(day, record=tables.validation_predictions) for day in todo]
    return results, None if todo else "every replay day was already executed"


def _suggestions(
    engine: Engine, settings: Settings, calendar: TradingCalendar, record: ValidationRecord
) -> tuple[MorningSuggestions | None, str | None]:
    if record.last is None:
        return None, "no validation record"
    with engine.connect() as conn:
        live = first_live_day(conn)
    if live is not None:
        return None, f"skipped: live predictions exist from {live}, so T2 reads those"
    try:
        desk = Desk(engine, settings, calendar)
        return desk.morning_suggestions(
            calendar.next_trading_day(record.last), record=tables.validation_predictions
        ), None
    except NotReadyError as error:
        return None, str(error)
