"""T1 step 7: both PDF reports of the day, built after the AI portfolio has traded it.

The Quant Briefing and the Compliance Report are built as `marketintel report` builds them
(`Desk.report`, from the store as it is when the stage runs) and written to the reports
folder (MARKETINTEL_REPORTS_DIR) under their file names of the day
(`quant-briefing-<day>.pdf`, `compliance-report-<day>.pdf`), each whole or not at all; its
note (the task log's stage summary, run-day's table) names the files written, or says why
none was. A
report reads the store as it is now, not as it was on a past day, so the stage writes them
only for the day they are about (the latest priced day): run for an earlier day (a backfill
of old days, a re-run after later days were delivered) it writes nothing and says why,
rather than file a later day's figures under that day's name; run for a day with no prices
yet (a day T0 has not delivered) it writes nothing either and says so. Each report reads a
snapshot of its own: a later day stored between the two (T0, a backfill) writes neither. A re-run of the day writes
the same two files again (the same figures; only the generation time differs). A preview
(`write=False`) builds both and writes neither. The stage stores no row.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.stage import Stage, StageContext, StageOutcome

KINDS = ("quant-briefing", "compliance")


def run_reports(ctx: StageContext) -> StageOutcome:
    desk, day = ctx.desk.on_market_clock(), ctx.trading_date.isoformat()  # a replay: its own time, as the API
    first = desk.report(KINDS[0])  # the day it is about is known before the second is built
    if first.priced_day != day:
        return _nothing_written(_not_written(day, first.priced_day))
    built = [first, *(desk.report(kind) for kind in KINDS[1:])]
    moved = next((made.priced_day for made in built if made.priced_day != day), None)
    if moved is not None:  # a later day stored meanwhile (T0, a backfill): no pair of two days
        return _nothing_written(_not_written(day, moved))
    rows = [
        {
            "report": made.kind,
            "file": str(
                desk.save_report(made, ctx.settings.reports_dir / made.filename) if ctx.write else made.filename
            ),
            "pages": made.pages,
            "sha256": made.sha256,
        }
        for made in built
    ]
    names = ", ".join(Path(row["file"]).name for row in rows)
    return StageOutcome(
        summary={"written": len(rows) if ctx.write else 0, "folder": str(ctx.settings.reports_dir)},
        tables={"reports": rows},
        note=f"wrote {names} to {ctx.settings.reports_dir}" if ctx.write else f"built {names}, wrote neither",
    )


def _nothing_written(why: str) -> StageOutcome:
    """No report written, and why: in the summary and as the stage's note (the task log's
    stage summary, run-day's table)."""
    return StageOutcome(summary={"written": 0, "not_written": why}, note=f"no report written: {why}")


def _not_written(day: str, latest: str | None) -> str:
    """Why no report of `day` is written: a later day is priced (a report reads the store as
    it is now), or `day` has no prices yet (T0 has not delivered it)."""
    if latest is not None and latest > day:
        return f"a report of {day} cannot be rebuilt: the latest priced day is {latest}"
    return f"{day} has no stored prices yet (the latest priced day is {latest or 'none'}): nothing to report on"


REPORTS = Stage(
    "t1_reports",
    run_reports,
    "Both PDF reports of the day (Quant Briefing, Compliance Report), written to the reports folder.",
)
