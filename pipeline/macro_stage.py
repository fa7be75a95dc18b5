"""T3 (Monday 09:00): read the three national macro sources, store every release (a
revision is a new row), then compute the week's macro parameters, and any of the last
`BACKFILL_WEEKS` weeks not computed yet, point in time (models/macro_model.py)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta

from ingest.macro_sources import fetch_all
from market.macro_catalogue import SOURCES
from models import macro_model
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.history import append_history, current_rows

BACKFILL_WEEKS = 26


def run_macro(ctx: StageContext) -> StageOutcome:
    observations = fetch_all(ctx.settings, ctx.trading_date)
    week = macro_model.week_start(ctx.trading_date)
    weeks = [week - timedelta(weeks=n) for n in range(BACKFILL_WEEKS - 1, -1, -1)]
    with ctx.transaction() as conn:
        stored = append_history(conn, tables.macro_observations, observations)
        everything = macro_model.observations(current_rows(conn, tables.macro_observations))
        done = {r["week_start"] for r in current_rows(conn, tables.macro_parameters)}
        computed, missing = [], {}
        for day in weeks:
            if day in done and day != week:
                continue
            rows, absent = macro_model.parameters(everything, day)
            computed += rows
            if day == week:
                missing = absent
        written = append_history(conn, tables.macro_parameters, [asdict(p) for p in computed])
        this_week = [r for r in computed if r.week_start == week]
        panel = macro_model.panel(everything, weeks[-13:])
    return StageOutcome(
        summary={
            "week_start": week.isoformat(),
            "releases_read": len(observations),
            "releases_new": stored.inserted,
            "sources": ", ".join(SOURCES),
            "parameters": len(this_week),
            "parameter_rows_new": written.inserted,
            "missing": "; ".join(f"{k}: {', '.join(v)}" for k, v in missing.items()) or "none",
        },
        tables={
            "parameters": [{"parameter": r.parameter, "value": r.value, "reading": r.reading} for r in this_week],
            "panel": [{"week_start": w.isoformat(), **row} for w, row in panel.to_dict("index").items()],
        },
    )


T3_MACRO = Stage(
    "t3_macro",
    run_macro,
    "Weekly macro: read BOJ, STATIN and PIOJ releases; compute the macro parameters.",
    trading_days_only=False,
)
