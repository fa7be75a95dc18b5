"""T3 (Monday 09:00): read the three national macro sources, store every release (a
revision is a new row), then compute the week's macro parameters, and any of the last
`BACKFILL_WEEKS` weeks not computed yet, point in time (models/macro_model.py)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, astuple, dataclass
from datetime import date, timedelta
from typing import Any, TypedDict

from sqlalchemy import Connection, func, select

from ingest.macro_sources import fetch_all
from market.clock import exchange_day_end_utc
from market.macro_catalogue import SOURCES
from models import macro_model
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.history import AppendResult, append_history, current_rows
from views import macro as macro_views

BACKFILL_WEEKS = 26
REVISED = ("NIR", "GDP")  # the notebook's revisions: a monthly series (revised monthly) and a quarterly one
REVISED_PERIODS = 16  # periods of each shown
log = logging.getLogger(__name__)


def run_macro(ctx: StageContext) -> StageOutcome:
    observations = fetch_all(ctx.settings, ctx.trading_date)
    week = macro_model.week_start(ctx.trading_date)
    weeks = [week - timedelta(weeks=n) for n in range(BACKFILL_WEEKS - 1, -1, -1)]
    with ctx.transaction() as conn:
        stored = append_history(conn, tables.macro_observations, observations)
        everything = macro_model.observations(current_rows(conn, tables.macro_observations))
        changed, unlisted = _changed(stored), _unlisted(everything, observations, ctx.trading_date)
        done = {r["week_start"] for r in current_rows(conn, tables.macro_parameters)}
        known = _Vintages(conn, everything, week, ctx.trading_date)
        computed, missing = [], {}
        for day in weeks:
            if day in done and day != week:
                continue
            rows, absent = macro_model.parameters(known.of(day), day)
            computed += rows
            if day == week:
                missing = absent
        written = append_history(conn, tables.macro_parameters, [asdict(p) for p in computed])
        this_week = [r for r in computed if r.week_start == week]
        panel = macro_model.panel({day: known.of(day) for day in weeks[-13:]})
        revisions, history = _revisions(conn, ctx.trading_date), _parameter_weeks(conn, ctx.trading_date)
    return StageOutcome(
        summary={
            "week_start": week.isoformat(),
            "releases_read": len(observations),
            "releases_new": stored.inserted - len(changed),
            "releases_changed": len(changed),
            "releases_unlisted": len(unlisted),
            "sources": ", ".join(SOURCES),
            "parameters": len(this_week),
            "parameter_rows_new": written.inserted,
            "missing": "; ".join(f"{k}: {', '.join(v)}" for k, v in missing.items()) or "none",
        },
        tables={
            "parameters": [{"parameter": r.parameter, "value": r.value, "reading": r.reading} for r in this_week],
            "panel": [{"week_start": w.isoformat(), **row} for w, row in panel.to_dict("index").items()],
            "changed": [asdict(c) for c in changed],
            "unlisted": [asdict(k) for k in unlisted],
            "revisions": revisions,
            "weekly": history,
        },
    )


class Revision(TypedDict):
    """A row of T3's `revisions` table."""

    indicator_code: str
    period: str
    first: float
    latest: float
    revision: float


class ParameterWeek(TypedDict):
    """A row of T3's `weekly` table: a parameter's stored value for a week."""

    week_start: str  # ISO 8601
    parameter: str
    value: float


def _revisions(conn: Connection, on: date) -> list[Revision]:
    """The notebook's revisions: each of the last REVISED_PERIODS periods of the REVISED
    indicators, its first release against the latest known on the run date
    (`views.macro.releases(..., as_of=on)`): an old week's run shows no release after it.
    Read in the stage's transaction, so a preview shows the releases it has just read."""
    rows: list[Revision] = []
    for code in REVISED:
        first_latest: dict[str, tuple[float, float]] = {}
        for release in macro_views.releases(conn, code, as_of=on):  # by period, then release date
            first = first_latest.get(release["period"], (release["value"], 0.0))[0]
            first_latest[release["period"]] = (first, release["value"])
        for period, (first, latest) in list(first_latest.items())[-REVISED_PERIODS:]:
            rows.append(
                Revision(indicator_code=code, period=period, first=first, latest=latest, revision=latest - first)
            )
    return rows


def _parameter_weeks(conn: Connection, on: date) -> list[ParameterWeek]:
    """The notebook's parameters week by week: the stored weeks up to the run date (weeks
    computed ahead are not this run's), the last BACKFILL_WEEKS of them, this run's own
    included (read in its transaction, so a preview shows the weeks it computed)."""
    stored = [r for r in current_rows(conn, tables.macro_parameters) if r["week_start"] <= on]
    kept = set(sorted({r["week_start"] for r in stored})[-BACKFILL_WEEKS:])
    return [
        ParameterWeek(week_start=r["week_start"].isoformat(), parameter=r["parameter"], value=r["value"])
        for r in sorted(stored, key=lambda r: (r["week_start"], r["parameter"]))
        if r["week_start"] in kept
    ]


class _Vintages:
    """The stored releases as the store had recorded them by the end of a week's Monday (the
    run's own week: by the end of its run date), each in the version `views.macro` serves
    `as_of` that day (store/history.py `backdate_first`: a release loaded later counts in the
    version first recorded, a correction from the day it was recorded). A week computed for
    the first time after its Monday (after an outage, or over a store loaded since) so reads
    what was known then, not a correction recorded later; on a live Monday run the run's
    own week reads the latest versions. A store in which no release was ever corrected has
    one version of each, so every week reads the current rows without reading again."""

    def __init__(self, conn: Connection, current: list[macro_model.Observation], week: date, run_date: date) -> None:
        self._conn, self._week, self._run_date = conn, week, run_date
        versions = conn.execute(select(func.count()).select_from(tables.macro_observations)).scalar_one()
        self._current = current if versions == len(current) else None
        self._read: dict[date, list[macro_model.Observation]] = {}

    def of(self, week: date) -> list[macro_model.Observation]:
        if self._current is not None:
            return self._current
        day = self._run_date if week == self._week else week
        if day not in self._read:
            rows = current_rows(
                self._conn, tables.macro_observations, as_of=exchange_day_end_utc(day), backdate_first=True
            )
            self._read[day] = macro_model.observations(rows)
        return self._read[day]


@dataclass(frozen=True)
class StoredRelease:
    """A stored release by its key, as T3 names it (its "unlisted" table: those no longer listed)."""

    source: str
    indicator_code: str
    period: str
    release_date: str  # ISO 8601

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> StoredRelease:
        return cls(row["source"], row["indicator_code"], row["period"], row["release_date"].isoformat())


@dataclass(frozen=True)
class ChangedRelease(StoredRelease):
    """A stored release its source now publishes with another value (T3's "changed" table)."""

    stored: float
    now: float


def _changed(stored: AppendResult) -> list[ChangedRelease]:
    """The stored releases the sources now publish with another value (same period, same
    release date): a correction, stored as a new version and served from today on (as_of
    reads of earlier days keep the value known then: docs/macro.md). Logged, and shown."""
    changed = [
        ChangedRelease(*astuple(StoredRelease.of(new)), old["value"], new["value"]) for old, new in stored.replaced
    ]
    for c in changed:
        log.warning("T3: %s %s %s released %s changed at its source: %s -> %s", *astuple(c))
    return changed


def _unlisted(stored: list[macro_model.Observation], read: list[Mapping[str, Any]], on: date) -> list[StoredRelease]:
    """The stored releases dated up to `on` that the sources no longer list (re-dated or
    withdrawn): kept and served as before, since the source did publish them (docs/macro.md),
    and named so that it is not silent."""
    listed = {StoredRelease.of(r) for r in read}
    kept = [StoredRelease.of(asdict(o)) for o in stored if o.release_date <= on]
    gone = sorted((k for k in kept if k not in listed), key=astuple)
    for k in gone:
        log.warning("T3: %s %s %s released %s is no longer listed by its source", *astuple(k))
    return gone


T3_MACRO = Stage(
    "t3_macro",
    run_macro,
    "Weekly macro: read BOJ, STATIN and PIOJ releases; compute the macro parameters.",
    trading_days_only=False,
)
