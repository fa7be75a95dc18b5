"""The two PDF reports, generated on demand from the store: the Quant Briefing and the
Compliance Report (GET /api/quant-briefing.pdf, GET /api/compliance-report.pdf,
`marketintel report quant-briefing|compliance`).

`generate` reads the report's inputs in one snapshot of the store (reports/inputs.py), hashes
them, and typesets them with reportlab (reports/layout.py) in one embedded type family
(reports/fonts.py); charts are matplotlib drawn in as vectors (reports/charts.py).

A report's file name carries the market day it reports on, not the day it was generated:
`quant-briefing-<market day>.pdf`, `compliance-report-<market day>.pdf` (`market_day`).

May import: market, store, ingest, models, portfolio, views, analysis.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

from sqlalchemy import Engine

from market.clock import TradingCalendar, exchange_iso, latest_closed_trading_day
from market.errors import InvalidInputError
from market.settings import Settings

KINDS = ("quant-briefing", "compliance")
RIGHTS = (
    "Copyright {company}. For the recipient's internal use; not investment advice; redistribution requires consent."
)


@dataclass(frozen=True)
class Report:
    kind: str
    pdf: bytes
    pages: int
    sha256: str
    filename: str
    priced_day: str | None = None  # the market day its figures are about (reports.inputs.priced_day); None: no prices


def generate(kind: str, engine: Engine, settings: Settings, calendar: TradingCalendar, now: datetime) -> Report:
    """Build report `kind` ('quant-briefing' or 'compliance') from the store as it is at
    `now` (an aware datetime: the API's clock)."""
    if kind not in KINDS:
        raise InvalidInputError(f"unknown report '{kind}'; choose one of: {', '.join(KINDS)}")
    # Imported here, not with the package: `reports.stage_figures`, which every stage
    # notebook imports, must not pull in reportlab, the fonts and the views behind them.
    from reports import compliance, quant_briefing
    from reports.inputs import briefing_inputs, compliance_inputs, priced_day, snapshot_sha256, staleness
    from reports.layout import render
    from store.transactions import snapshot_read

    gather = briefing_inputs if kind == "quant-briefing" else compliance_inputs
    with snapshot_read(engine) as conn:  # every figure of one state of the store, as the digest certifies
        inputs = gather(conn, calendar, now, settings)
    digest = snapshot_sha256(inputs)
    stale = staleness(priced_day(inputs), calendar, now)  # when it was made, not what it was made from
    company = settings.company_name
    stamp = exchange_iso(now)
    if kind == "quant-briefing":
        title = quant_briefing.TITLE_TEXT
        story = quant_briefing.story(
            inputs, f"{stamp.replace('T', ' ')} exchange time", settings.report_page_size, stale
        )
    else:
        title = compliance.TITLE_TEXT
        generated = {
            "exchange": stamp.replace("T", " "),
            "method": f"generated on demand by the service from its store (reportlab {version('reportlab')}, "
            f"matplotlib {version('matplotlib')}, svglib {version('svglib')}); no figure is typed by hand",
            "rights": RIGHTS.format(company=company),
            "sha256": digest,
        }
        story = compliance.story(inputs, generated, company, settings.report_page_size, stale)
    rendered = render(
        story,
        company=company,
        title=title,
        page_size=settings.report_page_size,
        subject=f"data snapshot sha256 {digest}",
    )
    name = "quant-briefing" if kind == "quant-briefing" else "compliance-report"
    filename = f"{name}-{market_day(inputs, calendar, now)}.pdf"
    return Report(kind, rendered.pdf, rendered.pages, digest, filename, priced_day(inputs))


def generate_apart(kind: str, settings: Settings, calendar: TradingCalendar, now: datetime) -> Report:
    """`generate` on the store `settings` name, on an engine made for this report and closed
    after it: for a process of its own (the API's worker processes, api/services.py
    `Services.apart`), which so keeps no connection between reports."""
    from store.engine import build_engine

    engine = build_engine(settings.database_url, service_role=settings.postgres_service_role or None)
    try:
        return generate(kind, engine, settings, calendar, now)
    finally:
        engine.dispose()


def market_day(inputs: dict, calendar: TradingCalendar, now: datetime) -> str:
    """The market day a report's file is named for (YYYY-MM-DD): the latest day with stored
    prices (`reports.inputs.priced_day`, the day both headings name); on a store without
    prices, the latest closed trading day at `now` (a file needs a name; the heading says
    no day is delivered yet). A report generated on Sunday about Friday is Friday's."""
    from reports.inputs import priced_day

    return priced_day(inputs) or latest_closed_trading_day(now, calendar).isoformat()


def save(report: Report, path: Path) -> Path:
    """Write the PDF whole or not at all: a temporary file beside `path`, then a rename."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(report.pdf)
        os.replace(partial, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise InvalidInputError(f"cannot write the report to {path}: {exc.strerror or exc}") from None
    return path
