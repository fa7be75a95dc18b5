"""`marketintel report ...`: a client command, one desk method (`Desk.report`), importing
nothing of the project but desk/ and market/ (pyproject.toml's import contracts)."""

from __future__ import annotations

from pathlib import Path

import typer

from cli.errors import one_line_errors
from market.settings import get_settings


@one_line_errors
def report(
    kind: str = typer.Argument(..., help="quant-briefing or compliance."),
    out: str | None = typer.Option(
        None, "--out", help="PDF file to write; default: <reports dir>/<file name of the day>."
    ),
) -> None:
    """Generate a PDF report from the store as it is now."""
    from desk import Desk

    settings = get_settings()
    desk = Desk.from_settings(settings)
    made = desk.report(kind)
    path = desk.save_report(made, Path(out) if out else settings.reports_dir / made.filename)
    typer.echo(f"wrote {path} ({made.pages} pages; data snapshot sha256 {made.sha256})")
