"""The Quant Briefing's track record and its chart as a reader sees them (issue 64): every
column heading of the track-record table reads whole on its line, a sign stands only on a
change (a return, an excess) and never on a magnitude (volatility, tracking error, the
maximum drawdown), and the charts' time axis ends on the last executed day."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta

import pdfplumber
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import date2num
from matplotlib.figure import Figure

from market.clock import default_calendar
from market.contract import description
from market.settings import Settings
from models.scoring import ServedPrediction
from portfolio import ai
from portfolio.track_record import MIN_BETA_DAYS
from reports import charts, figures, generate
from reports.format import pct, signed_pct
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.api.world import MONDAY, SYMBOLS, close_of, seed_documents, seed_prices
from tests.conftest import ON_SQLITE_ONLY
from tests.portfolio.seed import DAY, days_up_to, price_row, seed_predictions
from views.bars import refresh_bars
from views.market import latest_market
from views.track_record import ai_track_record, ai_track_series

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)
HEADINGS = ["Statistic", "AI portfolio", "Equal-weighted liquid", "Index"]


@pytest.fixture
def briefing(settings: Settings) -> tuple[list[str], dict]:
    """15 executed days of a book that buys LIQ, beside an index (the world's shares
    outstanding make the capitalisation-weighted one): the Briefing's lines read back,
    and the track record the API serves."""
    engine = service_engine(settings)
    seed_prices(engine)
    seed_documents(engine)
    signals = {
        "LIQ": {"score": 72.0, "action": "LONG", "tercile": "TOP", "weight": 0.2},
        "MID": {"score": 55.0, "action": "HOLD", "tercile": "MIDDLE"},
    }
    for day in days_up_to(DAY, 15):
        seed_predictions(engine, day, signals)
        ai.execute_day(engine, settings, day)
    pdf = generate("quant-briefing", engine, settings, default_calendar(), NOW).pdf
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        lines = [line for page in document.pages for line in (page.extract_text() or "").splitlines()]
    with engine.connect() as conn:
        record = ai_track_record(conn, settings.ai_starting_cash).as_dict()
    assert record["index_source"] == "cap_weighted" and record["fill_count"] > 0
    return lines, record


def _row(lines: list[str], label: str) -> str:
    """The track-record table's row starting with `label` (below its heading row)."""
    start = next(i for i, line in enumerate(lines) if line.startswith("Statistic"))
    return next(line for line in lines[start:] if line.startswith(label))


@ON_SQLITE_ONLY
def test_every_track_record_heading_reads_whole(briefing: tuple[list[str], dict]) -> None:
    lines, _ = briefing
    # overlapping headings read back merged ("AI portfoEliqoual-weighted liquid")
    assert " ".join(HEADINGS) in lines, [line for line in lines if line.startswith("Statistic")]


@ON_SQLITE_ONLY
def test_a_sign_stands_on_changes_not_on_magnitudes(briefing: tuple[list[str], dict]) -> None:
    lines, record = briefing
    liquid, index = (record["benchmarks"][name] for name in ("equal_weight_liquid", "index"))
    shown = lambda value: pct(value * 100, 2)  # noqa: E731
    changed = lambda value: signed_pct(value * 100, 2)  # noqa: E731
    assert _row(lines, "Maximum drawdown").startswith(f"Maximum drawdown / Calmar {shown(record['max_drawdown'])} /")
    assert "+" not in _row(lines, "Maximum drawdown")
    # a few days are under MIN_BETA_DAYS: nothing is scaled to a year by sqrt(250), each reads "-"
    assert None is record["annual_volatility"] is liquid["tracking_error"] is index["tracking_error"]
    assert _row(lines, "Annual volatility") == "Annual volatility -"
    assert _row(lines, "Tracking error") == "Tracking error - -"
    assert _row(lines, "Sharpe / Sortino") == "Sharpe / Sortino - / -"
    assert f"Volatility, Sharpe and Sortino need at least {MIN_BETA_DAYS} days" in " ".join(lines)
    total = [changed(record["total_return"]), changed(liquid["total_return"]), changed(index["total_return"])]
    assert _row(lines, "Total return to") == f"Total return to {record['last']} {' '.join(total)}"
    # a few days are under a year: no return is annualised, each figure a year reads "-" (GIPS)
    assert None is record["annual_return"] is liquid["excess_annual_return"] is index["excess_annual_return"]
    assert _row(lines, "Annual return") == "Annual return - - -"
    excess = next(i for i, line in enumerate(lines) if line.startswith("Excess annual return"))
    assert "- -" in " ".join(lines[excess : excess + 2]), lines[excess : excess + 2]  # its label may wrap
    assert _row(lines, "Annual turnover") == "Annual turnover -"
    assert "(GIPS)" in " ".join(lines), "the record's note says why above the table"


@ON_SQLITE_ONLY
def test_the_charts_time_axis_ends_on_the_last_day(settings: Settings, briefing: tuple[list[str], dict]) -> None:
    with service_engine(settings).connect() as conn:
        series = ai_track_series(conn, settings.ai_starting_cash)
    days = [date.fromisoformat(d) for d in series["days"]]
    args = (days, series["book"], series["benchmarks"], series["drawdown"], 480.0)
    span = (date2num(days[0]), date2num(days[-1]))
    assert charts.benchmarks_figure(*args).axes[0].get_xlim() == span
    equity = charts.equity_figure(days, [1e7] * len(days), [1e7] * len(days), 1e7, 480.0).axes[0]
    assert equity.get_xlim() == span
    assert all(tick == int(tick) for tick in equity.get_xticks()), "ticks on whole days, never hours"
    short = charts.benchmarks_figure(days[-2:], series["book"][-2:], {}, series["drawdown"][-2:], 480.0)
    assert all(tick == int(tick) for tick in short.axes[0].get_xticks()), "two days: ticked at days, not hours"


@ON_SQLITE_ONLY
def test_the_demo_prints_the_drawdown_unsigned(settings: Settings, briefing: tuple[list[str], dict]) -> None:
    from cli.demo import _track_record_line

    _, record = briefing
    line = _track_record_line(settings)
    assert f"return {signed_pct(record['total_return'] * 100, 2)}," in line
    assert f"max drawdown {pct(record['max_drawdown'] * 100, 2)}," in line


@ON_SQLITE_ONLY
def test_the_signals_say_what_the_score_is_as_the_api_does(briefing: tuple[list[str], dict]) -> None:
    """The Score is the chance a name beats the equal-weighted liquid universe (the label is
    an excess), as REST and GraphQL describe it, not the chance its close rises."""
    lines, _ = briefing
    prose = " ".join(" ".join(lines).split())
    assert f"Score: {description(ServedPrediction, 'score')}" in prose
    assert "Not live signals" not in prose, "live Scores are not boxed as the validation record's"
    assert "close rises" not in prose


@ON_SQLITE_ONLY
def test_a_halted_signal_says_it_is_halted(settings: Settings) -> None:
    """The exchange halted MID the day before the market day: its row in the Top AI signals
    read as a tradable name's, its Score and Action as if it could be bought. The row marks it
    halted and the note says since when, as the latest quote's `halted_since` does."""
    from tests.portfolio.clients import announce_action
    from tests.portfolio.seed import CALENDAR

    engine = service_engine(settings)
    seed_prices(engine)
    signals = {
        "LIQ": {"score": 72.0, "action": "LONG", "tercile": "TOP"},
        "MID": {"score": 55.0, "action": "HOLD", "tercile": "MIDDLE"},
    }
    seed_predictions(engine, DAY, signals)
    halted = CALENDAR.previous_trading_day(DAY)
    announce_action(engine, "MID", "HALT", None, halted, "trading halted pending announcement")
    pdf = generate("quant-briefing", engine, settings, default_calendar(), NOW).pdf
    prose = _prose(pdf)
    assert "2 MID (halted)" in prose and "1 LIQ (halted)" not in prose
    assert f"MID is halted since {halted.isoformat()} (the exchange's HALT notice)" in prose


def _tick_labels(figure: Figure) -> list[str]:
    FigureCanvasAgg(figure).draw()
    return [t.get_text() for t in figure.axes[0].get_yticklabels()]


def test_no_two_ticks_of_a_number_axis_read_alike() -> None:
    """A book of 10M that moved 10,500 over 15 days: its equity axis read "10.01M, 10.01M,
    10.00M, 10.00M, ..."; spreads of 0.2-0.5% read "0%" at every tick; the Score histogram
    of two names counted 0.2 instruments."""
    days = [date(2026, 11, 2) + timedelta(days=i) for i in range(15)]
    equity = [10_000_000 + 700 * i for i in range(15)]
    labels = _tick_labels(charts.equity_figure(days, equity, equity, 10_000_000, 480.0))
    assert len(set(labels)) == len(labels) > 3 and "10.002M" in labels, labels
    fig, ax = figures.figure()
    ax.plot([0, 1, 2], [10_000_000, 10_003_000, 10_001_000])
    figures.millions_axis(ax)
    labels = _tick_labels(fig)
    assert len(set(labels)) == len(labels) > 3, labels
    fig, ax = figures.figure()  # t0's closing spreads by board, in percent: every tick read "0%"
    ax.plot([0, 1, 2], [0.2, 0.5, 0.35])
    figures.percent_axis(ax, fraction=False)
    labels = _tick_labels(fig)
    assert len(set(labels)) == len(labels) > 3 and "0.20%" in labels, labels
    assert all(label.isdigit() for label in _tick_labels(charts.score_figure([72.0, 55.0], 480.0))), "whole instruments"


@ON_SQLITE_ONLY
def test_signals_from_the_validation_record_say_so(settings: Settings) -> None:
    """A bootstrapped store before its first live day: the market day's Scores are the
    validation record's, as each quote's `reason` says over REST; the Top AI signals read
    as the day's live signals. They say whose they are (live ones say nothing of it: the
    `briefing` test above)."""
    engine = service_engine(settings)
    seed_prices(engine)
    signals = {"LIQ": {"score": 72.0, "action": "LONG", "tercile": "TOP"}}
    seed_predictions(engine, DAY, signals, model_id="wf-2026-08-03-h5", table=tables.validation_predictions)
    with engine.connect() as conn:
        served = latest_market(conn, default_calendar(), DAY)["LIQ"]["reason"]
    assert served and served.startswith("validation record: ")
    prose = _prose(generate("quant-briefing", engine, settings, default_calendar(), NOW).pdf)
    signals_part = prose[prose.index("Top AI signals") : prose.index("# Symbol")]
    assert f"Not live signals. Scores from the {served}" in signals_part


def _prose(pdf: bytes) -> str:
    """A PDF's text as one line of words."""
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        return " ".join(" ".join((page.extract_text() or "") for page in document.pages).split())


@ON_SQLITE_ONLY
def test_a_count_of_one_reads_singular(settings: Settings, briefing: tuple[list[str], dict]) -> None:
    """One fill, an index of one instrument, one trade: the reports read "1 fills", "index
    of 1 instruments" and "1 most recent of 1 trades"."""
    lines, record = briefing
    prose = " ".join(" ".join(lines).split())
    assert record["fill_count"] == 1
    assert f"to {record['last']}, all live, 1 fill. " in prose and "index of 1 instrument, not" in prose
    compliance = _prose(generate("compliance", service_engine(settings), settings, default_calendar(), NOW).pdf)
    assert "The AI portfolio's 1 trade, newest first" in compliance


def _offset(figure: Figure) -> str:
    """The text under a chart's time axis, as drawn."""
    FigureCanvasAgg(figure).draw()
    return figure.axes[0].xaxis.get_offset_text().get_text()


def test_the_time_axis_names_the_span_it_draws_not_its_last_month() -> None:
    """A reviewer's read of the demo's Briefing: under the three charts of the AI portfolio's
    61 days, 2026-09-07 to 2026-12-01, the time axis read "2026-Dec" (matplotlib's offset
    names the last tick's month), as if the chart were December's. It names the span's year,
    its month and year where the span is within one month, both years across a new year."""
    autumn = [date(2026, 9, 7) + timedelta(days=i) for i in range(0, 86)]
    flat = [0.0] * len(autumn)
    band = {k: flat for k in ("model", "fixed_random_low", "fixed_random_high", "fixed_random_mean")}
    drawn = [
        charts.equity_figure(autumn, [1e7] * len(autumn), [1e7] * len(autumn), 1e7, 480.0),
        charts.benchmarks_figure(autumn, flat, {"equal_weight_liquid": flat}, flat, 480.0),
        charts.nulls_figure(autumn, flat, band, 480.0),
    ]
    assert [_offset(f) for f in drawn] == ["2026", "2026", "2026"]
    december = [date(2026, 12, 2) + timedelta(days=i) for i in range(0, 15)]
    assert _offset(charts.equity_figure(december, [1e7] * 15, [1e7] * 15, 1e7, 480.0)) == "2026-Dec"
    winter = [date(2026, 11, 20) + timedelta(days=i) for i in range(0, 60)]
    assert _offset(charts.equity_figure(winter, [1e7] * 60, [1e7] * 60, 1e7, 480.0)) == "2026-2027"


def _market_day(settings: Settings, rows: list[dict]) -> str:
    """The Briefing's Market sentiment, on the world's prices and `rows` stored after them."""
    engine = service_engine(settings)
    seed_prices(engine)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, rows)
        refresh_bars(conn)
    prose = _prose(generate("quant-briefing", engine, settings, default_calendar(), NOW + timedelta(days=3)).pdf)
    return prose[prose.index("Market sentiment") : prose.index("Top AI signals")]


@ON_SQLITE_ONLY
def test_the_breadth_sentence_counts_a_first_trade_and_says_when_nothing_traded(settings: Settings) -> None:
    """A reviewer's read: on the day a new listing first traded, Market sentiment read "3 up,
    0 down, 0 unchanged of 4 stocks that traded" (a first trade has no previous close, so it
    is neither up, down nor unchanged); on a day nothing traded it read "Advancers and
    decliners were level: 0 up, 0 down, 0 unchanged of 0 stocks that traded". The first
    trade is counted apart, and a day without a trade says so."""
    listed = [{"symbol": "NEWCO", "name": "NewCo Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}]
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.instruments, listed)
    traded = [price_row(s, MONDAY, close_of(s, 60), v, None, None) for s, (_, v, _) in SYMBOLS.items() if v] + [
        price_row("NEWCO", MONDAY, 10.0, 5_000, None, None)
    ]
    section = _market_day(settings, traded)
    moved = sum(int(section.split(f"{label} ")[1].split()[0]) for label in ("Advancers", "Decliners"))
    unchanged = int(section.split("Unchanged (traded firm) ")[1].split()[0])
    assert "First trade (no previous close) 1" in section, section
    assert moved + unchanged + 1 == 4, section
    assert "1 trading for the first time (no previous close to compare with) of 4 stocks that traded" in section


@ON_SQLITE_ONLY
def test_a_day_nothing_traded_says_so(settings: Settings) -> None:
    quiet = [price_row(s, MONDAY, close_of(s, 59), 0, None, None) for s in SYMBOLS]
    section = _market_day(settings, quiet)
    assert f"No stock traded on {MONDAY.isoformat()}: none of the 4 listed instruments had a trade" in section
    assert "0 stocks that traded" not in section and "were level" not in section, section
