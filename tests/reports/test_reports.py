"""Reports on a brand-new store, tables that split across pages, and the CLI."""

from __future__ import annotations

import io
import re
import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from market.clock import default_calendar
from market.settings import Settings
from reports import KINDS, generate
from reports.compliance import _audit_trail
from reports.layout import MARGIN, data_table, render, text
from reports.quant_briefing import _portfolio
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.api.world import seed_prices
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import MARKETINTEL
from tests.reports.pdf import read
from views.market import latest_priced_day

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_store_gives_a_valid_report_that_says_what_is_missing(settings: Settings, kind: str) -> None:
    report = generate(kind, service_engine(settings), settings, default_calendar(), NOW)
    pdf = read(report.pdf)
    assert report.pages == len(pdf.pages) >= 1  # the logos close the last page, after what precedes them
    missing = re.findall(r"Not available yet: ([^\n]+)", pdf.text)
    # both headings say no day is priced yet, never the clock's day the file is named for
    assert pdf.pages[0].splitlines()[2].startswith("Market day not delivered yet | generated 2026-11-22")
    if kind == "quant-briefing":
        # performance, sentiment, signals, portfolio, track record, benchmarks, charts
        assert len(missing) == 8, missing
        assert "the AI portfolio has no executed day yet" in pdf.text  # the track record's reason
        assert "fewer than two executed days: nothing to compare yet" in pdf.text
        assert "no trading day has been delivered yet" in pdf.text and "no model has been trained yet" in pdf.text
    else:
        assert (
            any("has not traded yet" in m for m in missing) and "No end-of-day delivery has been stored yet" in pdf.text
        )
    assert pdf.logo_clusters == 3


@ON_SQLITE_ONLY
def test_both_reports_are_named_for_the_latest_priced_day(settings: Settings) -> None:
    """Imported prices (no delivery) end on a Friday and a later delivery FAILED (no price):
    a report a fortnight on is about the Friday, both files named for it, not for a clock's
    day or a refused delivery's day that the store has no prices for."""
    engine = service_engine(settings)
    seed_prices(engine)
    later = datetime(2026, 12, 10, 15, 0, tzinfo=UTC)
    with engine.connect() as conn:
        priced = latest_priced_day(conn)
    refused = {"trading_date": date(2026, 12, 9), "status": "FAILED", "source": "http://exchange.example"}
    with engine.begin() as conn:  # as T0 records a refused day (ingest/exchange/delivery.py): no price
        append_history(conn, tables.deliveries, [{**refused, "checksum": "0" * 64, "row_count": 0, "manifest": {}}])
    reports = {kind: generate(kind, engine, settings, default_calendar(), later) for kind in KINDS}
    names = {kind: report.filename for kind, report in reports.items()}
    assert all(read(r.pdf).pages[0].splitlines()[2].startswith(f"Market day {priced} |") for r in reports.values())
    assert names == {"quant-briefing": f"quant-briefing-{priced}.pdf", "compliance": f"compliance-report-{priced}.pdf"}


@ON_SQLITE_ONLY
def test_a_report_on_prices_weeks_old_says_so_under_its_heading(settings: Settings) -> None:
    """A reviewer's run: a store whose last prices are a Friday's, read three weeks on, gave
    reports that read as current (only the small "Market day" line told). Both now box a
    warning under the heading, naming the day and how many sessions it lags; a report two
    sessions behind (a day T0 missed) has none (reports.inputs.STALE_AFTER_SESSIONS)."""
    engine, calendar = service_engine(settings), default_calendar()
    seed_prices(engine)
    with engine.connect() as conn:
        priced = latest_priced_day(conn)

    def first_page(kind: str, sessions_later: int) -> str:
        closed = calendar.add_trading_days(priced, sessions_later)  # read the morning after that session's close
        morning = datetime.combine(calendar.next_trading_day(closed), datetime.min.time(), UTC).replace(hour=13)
        return " ".join(read(generate(kind, engine, settings, calendar, morning).pdf).pages[0].split())

    for kind in KINDS:
        weeks = first_page(kind, 15)
        closed = calendar.add_trading_days(priced, 15)
        warning = (
            f"Stale data: the latest stored prices are of {priced}, 15 sessions before the latest closed session "
            f"({closed}). Every figure in this report is as of {priced} or earlier"
        )
        assert warning in weeks, weeks[:600]
        assert (
            weeks.index(f"Market day {priced}")
            < weeks.index("Stale data")
            < weeks.index("System performance" if kind == "quant-briefing" else "Risk disclosures")
        )
        for current in (0, 2):
            assert "Stale data" not in first_page(kind, current), (kind, current)
    assert "Stale data" in first_page("compliance", 3)


@ON_SQLITE_ONLY
def test_the_t1_reports_stage_writes_both_reports_of_the_day_and_none_for_an_earlier_day(
    settings: Settings, tmp_path: Path
) -> None:
    """Reports were built on request only: an Airflow operator found none after the day's
    run. T1's last task (t1_reports, pipeline/report_stage.py) writes both, named for the
    day, to the reports folder; a re-run writes the same files again; a run for an earlier
    day writes nothing and says why (a report reads the store as it is now), and a preview
    writes nothing."""
    from pipeline.runner import run_stage
    from pipeline.stage_lists import T1_STAGES

    assert T1_STAGES[-2:] == ["t1_trade", "t1_reports"], "built once the AI portfolio has traded the day"
    settings = settings.model_copy(update={"reports_dir": tmp_path / "reports"})
    engine = service_engine(settings)
    seed_prices(engine)
    with engine.connect() as conn:
        day = latest_priced_day(conn)
    names = [f"quant-briefing-{day}.pdf", f"compliance-report-{day}.pdf"]
    preview = run_stage("t1_reports", day, settings=settings, write=False)
    assert preview.status == "SUCCEEDED" and not (tmp_path / "reports").exists()
    for _ in range(2):  # the day, then its re-run
        result = run_stage("t1_reports", day, settings=settings)
        assert result.status == "SUCCEEDED" and result.summary["written"] == 2, result.summary
        assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == sorted(names)
        assert [r["file"] for r in result.tables["reports"]] == [str(tmp_path / "reports" / n) for n in names]
    first = read((tmp_path / "reports" / names[0]).read_bytes()).pages[0]
    assert f"Market day {day} |" in first
    certified = " ".join(read((tmp_path / "reports" / names[1]).read_bytes()).text.split())
    assert "Generation method generated by the service from its store at the time above" in certified
    assert "on demand" not in certified, "a report the T1 task built was not asked for"
    earlier = default_calendar().previous_trading_day(day)
    old = run_stage("t1_reports", earlier, settings=settings)
    assert old.summary == {
        "written": 0,
        "not_written": f"a report of {earlier} cannot be rebuilt: the latest priced day is {day}",
    }
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == sorted(names)
    # a day not priced yet (`stage run t1_reports` before T0 delivered it) was "cannot be rebuilt"
    later = default_calendar().next_trading_day(day)
    assert run_stage("t1_reports", later, settings=settings).summary == {
        "written": 0,
        "not_written": f"{later} has no stored prices yet (the latest priced day is {day}): nothing to report on",
    }


@ON_SQLITE_ONLY
def test_t1_reports_writes_no_pair_of_two_days_when_a_later_day_is_stored_between_its_reports(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each report reads its own snapshot of the store: a later day's prices stored between
    the two (T0 or a backfill beside a late T1) gave the day's Quant Briefing and the next
    day's Compliance Report, both written by the day's task. Neither is written then."""
    from desk import Desk
    from pipeline.runner import run_stage
    from tests.api.world import HISTORY_DAYS, price_rows

    settings = settings.model_copy(update={"reports_dir": tmp_path / "reports"})
    engine = service_engine(settings)
    seed_prices(engine)
    with engine.connect() as conn:
        day = latest_priced_day(conn)
    later = default_calendar().next_trading_day(day)
    built = Desk.report

    def stored_meanwhile(desk: Desk, kind: str) -> object:
        report = built(desk, kind)
        if kind == "quant-briefing":
            with engine.begin() as conn:
                append_history(conn, tables.eod_prices, price_rows([later], HISTORY_DAYS))
        return report

    monkeypatch.setattr(Desk, "report", stored_meanwhile)
    result = run_stage("t1_reports", day, settings=settings)
    assert result.summary == {
        "written": 0,
        "not_written": f"a report of {day} cannot be rebuilt: the latest priced day is {later}",
    }
    assert not (tmp_path / "reports").exists()


@ON_SQLITE_ONLY
def test_t1_reports_says_what_it_wrote_or_why_not_in_the_task_log_and_run_days_table(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """t1_reports stores no row: its Airflow task log and run-day's table said SUCCEEDED with
    0 rows written whether it wrote both reports or none (the why only in its notebook and
    `stage_runs`). Both name the files written, or say why none was, as they show another
    stage's reason."""
    from pipeline.airflow_tasks import log_stage_summary
    from pipeline.day import notebook_stage, stage_table
    from pipeline.notebooks import one_kernel
    from pipeline.runner import run_stage

    engine = service_engine(settings)
    seed_prices(engine)
    with engine.connect() as conn:
        day = latest_priced_day(conn)
    earlier = default_calendar().previous_trading_day(day)
    with one_kernel():
        ran = [notebook_stage("t1_reports", d, settings) for d in (day, earlier)]
    wrote = f"wrote quant-briefing-{day}.pdf, compliance-report-{day}.pdf to {settings.reports_dir}"
    why = f"no report written: a report of {earlier} cannot be rebuilt: the latest priced day is {day}"
    table = stage_table(ran)
    assert table[1].startswith("t1_reports      SUCCEEDED") and table[1].endswith(f"0  {wrote}"), table
    assert table[2].endswith(f"0  {why}"), table
    since = datetime.now(UTC)
    run_stage("t1_reports", earlier, settings=settings, trigger="airflow", run_id="task")
    with caplog.at_level("INFO", logger="pipeline.airflow_tasks"):
        summary = log_stage_summary("t1_reports", earlier, since, 1.0, "task")
    assert summary["note"] == why
    assert caplog.records[-1].getMessage().endswith(f"; note: {why}")


def test_a_long_table_repeats_its_header_on_every_page() -> None:
    rows = [[f"2026-11-{1 + i % 28:02d}", f"SYM{i}", "BUY", i, f"{i}.00"] for i in range(150)]
    story = [text("Trail"), data_table(["Date", "Symbol", "Action", "Quantity", "Price"], rows, numeric_from=3)]
    rendered = render(story, company="Co", title="Split", page_size="A4", subject="test")
    pdf = read(rendered.pdf)
    assert len(pdf.pages) >= 3
    for page in pdf.pages:
        assert page.splitlines()[1] == "Date Symbol Action Quantity Price" or page.splitlines()[2].startswith("Date")
    listed = re.findall(r"SYM(\d+) BUY", pdf.text)
    assert [int(n) for n in listed] == list(range(150)), "every row once, in order"


@ON_SQLITE_ONLY
def test_cli_writes_the_report_and_refuses_an_unknown_kind(settings: Settings, tmp_path: Path) -> None:
    out = tmp_path / "deep" / "compliance.pdf"
    result = subprocess.run(
        [MARKETINTEL, "report", "compliance", "--out", str(out)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(
        rf"wrote {re.escape(str(out))} \(\d+ pages; data snapshot sha256 [0-9a-f]{{64}}\)\n", result.stdout
    )
    assert "Compliance Report" in read(out.read_bytes()).pages[0]
    unknown = subprocess.run([MARKETINTEL, "report", "weekly"], capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 1
    assert unknown.stderr == "error: unknown report 'weekly'; choose one of: quant-briefing, compliance\n"
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    refused = subprocess.run(
        [MARKETINTEL, "report", "quant-briefing", "--out", str(blocked / "r.pdf")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1 and refused.stderr.startswith(
        f"error: cannot write the report to {blocked / 'r.pdf'}"
    )
    assert list(tmp_path.glob("**/.*.partial")) == []


@ON_SQLITE_ONLY
def test_cli_out_naming_a_folder_writes_the_report_into_it(settings: Settings, tmp_path: Path) -> None:
    """A reviewer's run: `report quant-briefing --out DIR/` with DIR missing wrote a PDF
    file named DIR, and with DIR existing refused "Is a directory". An --out that ends with
    a separator (the folder made if missing) or names a folder gets the report's own file
    name inside it; any other --out is the file, as before."""
    for folder, out in (
        (tmp_path / "new", f"{tmp_path / 'new'}/"),
        (tmp_path / "existing", str(tmp_path / "existing")),
    ):
        if not out.endswith("/"):
            folder.mkdir()
        made = subprocess.run(
            [MARKETINTEL, "report", "quant-briefing", "--out", out], capture_output=True, text=True, timeout=120
        )
        assert made.returncode == 0, made.stderr
        (written,) = folder.iterdir()
        assert re.fullmatch(r"quant-briefing-\d{4}-\d{2}-\d{2}\.pdf", written.name), written
        assert made.stdout.startswith(f"wrote {written} (") and "Quant Briefing" in read(written.read_bytes()).text


def test_a_letter_the_font_cannot_draw_is_shown_as_a_square_not_left_blank() -> None:
    """An adversarial run: a client or instrument named in Han characters printed blank (the
    font has no glyph for them), so a reader could not tell a name was there. Each such
    letter is a white square, in the page header, a paragraph and a table cell; letters
    the font draws (Greek here) are kept."""
    story = [text("Held for 中文公司 and Ωμέγα"), data_table(["Symbol", "Name"], [["ABC", "中国 Co"]])]
    rendered = render(story, company="华夏 Securities", title="Names", page_size="A4", subject="test")
    page = read(rendered.pdf).text
    assert "Held for □□□□ and Ωμέγα" in page and "ABC □□ Co" in page, page
    assert "□□ Securities" in page and "\x00" not in page, page


RETIRED = "JMMBGL7.25PREFERENCE~2025-09-30"  # 31 characters: the longest symbol the store keeps (a retired ticker)


def _position(symbol: str, flags: list[str]) -> dict:
    return {
        "symbol": symbol,
        "quantity": 66666,
        "average_cost": "10.01",
        "price": "10.00",
        "market_value": "666660.00",
        "unrealized_pnl": "-666.66",
        "flags": flags,
        "entered_as": "slot",
    }


def _positions_table(positions: list[dict], cash: str) -> str:
    """The Briefing's AI portfolio section over `positions` and `cash`, read back."""
    weights = [{"symbol": p["symbol"], "weight": 0.0667} for p in positions] + [{"symbol": "CASH", "weight": 0.9}]
    ai = {
        "started": True,
        "positions_count": len(positions),
        "positions": positions,
        "equity": "10000000.00",
        "cash": cash,
        "liquid_equity": cash,
        "total_return_pct": 0.0,
        "as_of": "2026-11-20",
        "allocation": weights,
    }
    story = _portfolio(ai, {"first": "2026-01-02", "last": "2026-11-20"}, "JMD")
    return read(render(story, company="Co", title="Positions", page_size="A4", subject="test").pdf).text


def test_a_holdings_exit_flags_wrap_as_text_and_every_figure_reads_whole() -> None:
    """A reviewer's run: one holding flagged TRAPPED and SLOW_EXIT in a 10M book. The
    Briefing's positions table read "9,333,340.0" / "0" and "Symbo" / "l": its Flags column
    was sized as a figure, and a table short of room was shared out in proportion, figures
    included. The flags are words that wrap; every heading and figure reads whole."""
    shown = _positions_table([_position("SGJ", ["TRAPPED", "SLOW_EXIT"])], "9333340.00")
    headings = ("Symbol", "Quantity", "Avg cost", "Price", "Value", "Weight", "Unrealised PnL", "Flags")
    assert all(h in shown for h in headings) and shown.count("(JMD)") == 3 + 4, shown  # key figures, money columns
    words = shown.split()
    for figure in ("SGJ", "66,666", "10.01", "10.00", "666,660.00", "6.7%", "-666.66", "9,333,340.00", "90.0%"):
        assert figure in words, figure
    assert {"TRAPPED,", "SLOW_EXIT"} <= set(words)


def test_a_retired_symbol_wraps_and_the_dates_and_figures_beside_it_read_whole() -> None:
    """A reviewer's run: the Compliance audit trail and the Briefing's positions with the
    longest symbol the store keeps read "2026-11-" / "20" and "5,956.6" / "0". Figures and
    dates keep their width; only the text (the symbol, the flags) wraps."""
    trade = {"trading_date": "2026-11-20", "symbol": RETIRED, "side": "SELL", "quantity": 56789, "price": "12.34"}
    trades = [trade | {"value": "700776.26", "fees": "5956.60", "costs": "8000.00", "timestamp": "", "trade_id": "t"}]
    trail = _audit_trail({"audit_trail": trades, "trades_total": 1, "currency": "JMD"})
    words = read(render(trail, company="Co", title="Trail", page_size="A4", subject="test").pdf).text.split()
    for figure in ("2026-11-20", "SELL", "56,789", "12.34", "700,776.26", "5,956.60", "8,000.00"):
        assert figure in words, figure
    flagged = [_position("KPLC-P4", ["TRAPPED", "SLOW_EXIT", "HIGH_SPREAD"]), _position(RETIRED, ["DELISTED"])]
    words = _positions_table(flagged, "8000000.00").split()
    for figure in ("KPLC-P4", "66,666", "10.01", "10.00", "666,660.00", "6.7%", "-666.66", "8,000,000.00"):
        assert figure in words, figure
    assert {"TRAPPED,", "SLOW_EXIT,", "HIGH_SPREAD", "DELISTED"} <= set(words)


@ON_SQLITE_ONLY
def test_an_audit_trail_trade_without_its_fill_shows_no_cost_it_does_not_know(settings: Settings) -> None:
    """An AI trade stored without its fill in the rationale: the trail's All costs read its
    fees alone, as if spread and impact had been nought. It reads "-" and the note says why."""
    from decimal import Decimal

    from portfolio import ledger
    from tests.api.world import DAY as PRICED

    engine = service_engine(settings)
    seed_prices(engine)
    executed = datetime(2026, 11, 20, 20, 0, tzinfo=UTC)
    with ledger.portfolio_transaction(engine, ledger.AI_PORTFOLIO) as conn:
        ledger.ensure_portfolio(conn, ledger.AI_PORTFOLIO, "AI")
        ledger.record_cash(conn, ledger.AI_PORTFOLIO, "C-ai-opening", Decimal("100000"), "DEPOSIT", executed, None)
        bought = ledger.TradeRequest(
            ledger.AI_PORTFOLIO, PRICED, executed, "AAA", "BUY", 100, Decimal("10.00"), Decimal("12.34"), "AI"
        )
        ledger.record_trade(conn, bought)
    text = " ".join(read(generate("compliance", engine, settings, default_calendar(), NOW).pdf).text.split())
    assert f"{PRICED.isoformat()} AAA BUY 100 10.00 1,000.00 12.34 -" in text, text
    assert 'All costs "-": a trade stored without its fill, so the spread and impact paid are not known' in text


def _pages_with(rows: int, above_mm: float) -> list[str]:
    """The pages of a section whose note leads a `rows`-row statistics table, under `above_mm` of text."""
    from reportlab.lib.units import mm
    from reportlab.platypus import Spacer

    from reports.layout import SMALL, section

    table = data_table(["Statistic", "Value"], [[f"Row {i:02d}", f"{i}.00"] for i in range(1, rows + 1)])
    notes = [text("The span and the cost model.", SMALL), text("Under a year of returns.", SMALL), Spacer(0, 4)]
    story = [Spacer(0, above_mm * mm), *section("Track record", *notes, table)]
    return read(render(story, company="Co", title="Layout", page_size="A4", subject="test").pdf).pages


def test_a_short_table_fills_the_page_it_starts_on_rather_than_leave_half_of_it_blank() -> None:
    """A reviewer's run: the Briefing's track-record table (17 rows) moved whole to the next
    page and left half of page 3 blank under its heading. With room for several rows it
    starts under its heading and continues, its header repeated, on the next page; with room
    for a row or two only it still moves whole."""
    split = _pages_with(17, 170)
    assert "Track record" in split[0] and "Row 01" in split[0] and "Row 17" in split[1], split
    assert "Statistic" in split[1], "the header row repeats on the page the table continues on"
    whole = _pages_with(17, 200)
    assert "Track record" in whole[0] and "Row" not in whole[0] and "Row 01" in whole[1], whole


def test_a_section_led_by_kept_blocks_starts_on_the_page_they_fit() -> None:
    """A section whose first block is a group kept together (`kept`) moved to the next page
    even at the top of an empty one: reportlab breaks the page early for a KeepTogether inside
    another, and the heading's was one. The heading and the group start where they fit."""
    from reportlab.lib.units import mm
    from reportlab.platypus import Spacer

    from reports.layout import SMALL, kept, section

    group = kept(text("A paragraph kept with the next.", SMALL), text("Its companion."))
    story = [Spacer(0, 10 * mm), *section("Kept section", *group)]
    pages = read(render(story, company="Co", title="Layout", page_size="A4", subject="test").pdf).pages
    assert len(pages) == 1 and "Kept section" in pages[0] and "Its companion." in pages[0], pages


def test_a_report_path_through_a_file_says_which_file_is_in_the_way(tmp_path: Path) -> None:
    """An adversarial run: `report quant-briefing --out /etc/hostname/x.pdf` said "cannot
    write the report to /etc/hostname/x.pdf: File exists", naming neither the file in the
    way nor that a folder was wanted there."""
    from types import SimpleNamespace

    from market.errors import InvalidInputError
    from reports import save

    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(InvalidInputError) as refused:
        save(SimpleNamespace(pdf=b"%PDF"), blocked / "r.pdf")
    assert str(refused.value) == f"cannot write the report to {blocked / 'r.pdf'}: {blocked} is a file, not a folder"


def test_a_report_is_not_written_over_a_file_that_is_no_pdf(tmp_path: Path) -> None:
    """`--out` naming the store's own SQLite file (or any other file that is no PDF: a typo
    of one letter) replaced it with the report, whole: the database gone. A file there is
    replaced only when it is a PDF (an earlier report) or empty (`mktemp`'s); anything
    else is refused, kept as it was."""
    from types import SimpleNamespace

    from market.errors import InvalidInputError
    from reports import save

    store = tmp_path / "marketintel.db"
    store.write_bytes(b"SQLite format 3\x00 the store")
    with pytest.raises(InvalidInputError) as refused:
        save(SimpleNamespace(pdf=b"%PDF-1.4 new"), store)
    assert str(refused.value) == f"cannot write the report to {store}: it holds a file that is no PDF, kept as it was"
    assert store.read_bytes() == b"SQLite format 3\x00 the store"
    earlier = tmp_path / "briefing.pdf"
    earlier.write_bytes(b"%PDF-1.4 earlier")
    assert save(SimpleNamespace(pdf=b"%PDF-1.4 new"), earlier).read_bytes() == b"%PDF-1.4 new"
    made = tmp_path / "made-by-mktemp"
    made.touch()
    assert save(SimpleNamespace(pdf=b"%PDF-1.4 new"), made).read_bytes() == b"%PDF-1.4 new"


def test_a_long_company_name_leaves_the_header_on_the_page_with_the_report_it_names() -> None:
    """The header line (company | title | Engine v3) was drawn at its full length: a long
    `MARKETINTEL_COMPANY_NAME` ran it off the page's right edge, the report's title with it.
    The company's name is shortened with an ellipsis to the text width; the title stays whole."""
    import pdfplumber

    company = "The Caribbean Regional Securities, Asset Management and Market Intelligence Holdings Company Limited"
    made = render([text("Body")], company=company, title="Compliance Report", page_size="A4", subject="test")
    with pdfplumber.open(io.BytesIO(made.pdf)) as document:
        page = document.pages[0]
        header = [c for c in page.chars if c["top"] < 40]
        line = "".join(c["text"] for c in header)
        assert max(c["x1"] for c in header) <= page.width - MARGIN + 0.5, line  # within the right margin
    assert line.endswith("… | Compliance Report | Engine v3") and line.startswith("The Caribbean Regional"), line
    short = render([text("Body")], company="Acme", title="Compliance Report", page_size="A4", subject="test")
    assert read(short.pdf).pages[0].splitlines()[0] == "Acme | Compliance Report | Engine v3"
