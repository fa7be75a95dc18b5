"""`marketintel report ...`: a client command, one desk method (`Desk.report`), importing
nothing of the project but desk/ and market/ (pyproject.toml's import contracts)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from cli.errors import one_line_errors
from market.settings import get_settings


@one_line_errors
def report(
    kind: str = typer.Argument(..., help="quant-briefing or compliance."),
    out: str | None = typer.Option(
        None,
        "--out",
        help="PDF file to write, or a folder (an existing one, or one ending with /, made if missing) to write "
        "<file name of the day> in; default: <reports dir>/<file name of the day>.",
    ),
) -> None:
    """Generate a PDF report from the store as it is now. Only an --out not given is the
    default path: an empty one (`--out "$FILE"`, FILE unset) is refused, nothing written."""
    from desk import Desk
    from market.errors import InvalidInputError

    if out is not None and not out.strip():
        raise InvalidInputError(f"--out must name the PDF file to write, not {out!r}")
    settings = get_settings()
    desk = Desk.from_settings(settings).on_market_clock()  # a replay's reports read its own time, as the API's
    made = desk.report(kind)
    path = desk.save_report(made, _target(out, settings.reports_dir, made.filename))
    typer.echo(f"wrote {path} ({made.pages} pages; data snapshot sha256 {made.sha256})")


def _target(out: str | None, reports_dir: Path, filename: str) -> Path:
    """Where the report goes: `filename` (the report's file name of the day) in the reports
    folder without --out, or in the folder --out names (an existing folder, or a path
    ending with a separator: saving makes it); else --out itself, the file."""
    if out is None:
        return reports_dir / filename
    separators = tuple(s for s in (os.sep, os.altsep) if s)
    return Path(out) / filename if out.endswith(separators) or Path(out).is_dir() else Path(out)
