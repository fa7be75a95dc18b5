"""The reports show what the AI portfolio's null books showed (issue 63, item 5): the Quant
Briefing draws the AI book's curve inside the band of its null books (the fixed random
books' 10th-90th percentile by day and their mean, the daily random books' band), with a
legend, beside a table of each family; the Compliance Report's backtesting limits state the
replayed model book's percentile in each family and its figures against the fixed-random
mean, with the caveat that a short span says little. On a planted market whose scores carry
a signal the model's book runs above the band."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pdfplumber
import pytest
from matplotlib.dates import date2num

from market.clock import default_calendar
from market.fees import fee_schedule
from market.settings import Settings
from reports import charts, generate
from reports.format import against_null_mean, ratio
from store.engine import service_engine
from tests.conftest import ON_SQLITE_ONLY
from tests.portfolio.planted_store import planted_world
from tests.portfolio.seed import DAY
from views.track_record import ai_track_record, ai_track_series

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)
LEGEND = list(charts.NULL_BAND_LABELS.values())


@pytest.fixture
def planted(settings: Settings) -> Settings:
    """The settings' store holding a planted market with a signal as the AI portfolio's 30 days."""
    planted_world(settings.database_url, 0, True, settings.ai_starting_cash, fee_schedule(settings))
    return settings


def _lines(pdf: bytes) -> list[str]:
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        return [line for page in document.pages for line in (page.extract_text() or "").splitlines()]


@ON_SQLITE_ONLY
def test_the_briefing_draws_the_book_inside_its_nulls_band(planted: Settings) -> None:
    with service_engine(planted).connect() as conn:
        series = ai_track_series(conn, planted.ai_starting_cash, fees=fee_schedule(planted))
        nulls = ai_track_record(conn, planted.ai_starting_cash, fees=fee_schedule(planted)).nulls
    band = series["nulls"]
    days = band["days"]
    figure = charts.nulls_figure(days, series["book"], band, 480.0)
    axes = figure.axes[0]
    assert [t.get_text() for t in axes.get_legend().get_texts()] == LEGEND
    lines = {line.get_label(): list(line.get_ydata()) for line in axes.get_lines()}
    assert lines[charts.NULL_BAND_LABELS["model"]] == [100 * v for v in band["model"]]
    assert lines[charts.NULL_BAND_LABELS["fixed_mean"]] == [100 * v for v in band["fixed_random_mean"]]
    assert lines[charts.NULL_BAND_LABELS["live"]] == [100 * v for v in series["book"]]
    fixed = next(c for c in axes.collections if c.get_label() == charts.NULL_BAND_LABELS["fixed_band"])
    top = fixed.get_paths()[0].vertices[:, 1]
    assert max(top) == pytest.approx(100 * max(band["fixed_random_high"]))
    assert min(top) == pytest.approx(100 * min(band["fixed_random_low"]))
    assert axes.get_xlim() == (date2num(days[0]), date2num(days[-1]))
    # the planted signal: the model's book ends above every fixed random book's band, as its percentile says
    assert band["model"][-1] > band["fixed_random_high"][-1] > band["fixed_random_low"][-1]
    assert nulls.families["fixed_random"].model_percentile == 100.0


@ON_SQLITE_ONLY
def test_the_reports_render_what_the_nulls_showed(planted: Settings) -> None:
    engine = service_engine(planted)
    with engine.connect() as conn:
        nulls = ai_track_record(conn, planted.ai_starting_cash, fees=fee_schedule(planted)).nulls
    briefing = _lines(generate("quant-briefing", engine, planted, default_calendar(), NOW).pdf)
    start = briefing.index("Against its null books")
    assert all(any(label in line for line in briefing[start:]) for label in LEGEND), briefing[start:]
    fixed = nulls.families["fixed_random"]
    ir, excess = fixed.information_ratio, fixed.excess_annual_return.mean
    assert excess is None, "30 days are under a year: no excess a year (GIPS)"
    row = f"20 {ratio(ir.mean)} ({ratio(ir.lowest)} to {ratio(ir.highest)}) - 100"
    assert row in " ".join(briefing[start:]), "the fixed random books' row: the figures the API serves"
    # two benchmarks on one page: the paragraph's ratios are against the fixed-random mean, the table's
    # against the equal-weighted liquid universe, and each says which
    assert "IR vs liquid universe" in " ".join(briefing[start:]) and "; against that mean, tracking error" in " ".join(
        briefing[start:]
    )
    # the planted days are the validation record's, replayed: never called live; LONG is a rank
    said = " ".join(briefing)
    assert "30 executed days from" in said and "all replayed on the validation record's out-of-sample" in said
    assert "AI portfolio (live)" not in said and "LONG is a rank, not a Score line" in said
    assert "LONG line" not in said
    compliance = " ".join(_lines(generate("compliance", engine, planted, default_calendar(), NOW).pdf))
    against = nulls.fixed_random_mean
    assert "the 100th percentile of the 20 books ranked at random once for the span" in compliance
    assert against.excess_annual_return is None
    # under a year nothing is annualised: both books' returns over the days, never "It earned - a year"
    assert (
        f"It earned {nulls.model_total_return * 100:+.2f}% over these 30 days, the mean of the fixed random books "
        f"{against.total_return * 100:+.2f}% (not annualised under a year of returns); against that mean, "
        f"tracking error {against.tracking_error * 100:.2f}%, information ratio {against.information_ratio:+.2f}"
    ) in compliance
    assert "It earned - a year" not in compliance
    assert "30 days is a short span: the percentiles and ratios say little about skill" in compliance
    assert f"Market day {DAY.isoformat()}" in compliance


def test_a_book_that_is_its_nulls_is_said_so_not_printed_as_a_dash() -> None:
    """On the demo every null book is the model's (its reserve holds every name the gates
    pass): the Compliance Report read "tracking error 0.00%, information ratio -."."""
    same = {"excess_annual_return": 0.0, "tracking_error": 0.0, "information_ratio": None}
    assert against_null_mean({"fixed_random_mean": same}) == (
        "+0.00% a year against the mean of the fixed random books; against that mean, tracking error 0.00%, "
        "so no information ratio (each day's return was their mean's)"
    )
    apart = {"excess_annual_return": 0.031, "tracking_error": 0.02, "information_ratio": 1.55}
    assert against_null_mean({"fixed_random_mean": apart}).endswith(
        "against that mean, tracking error 2.00%, information ratio +1.55"
    )


def _nulls_section_pages(settings: Settings, above_mm: float) -> list[str]:
    """The pages of the Briefing's null-books section under `above_mm` of other content."""
    from reportlab.lib.units import mm
    from reportlab.platypus import Spacer

    from reports.inputs import briefing_inputs
    from reports.layout import content_width, render
    from reports.quant_briefing import _against_nulls
    from tests.reports.pdf import read

    with service_engine(settings).connect() as conn:
        inputs = briefing_inputs(conn, default_calendar(), NOW, settings)
    blocks = _against_nulls(inputs["track_record"]["nulls"], inputs["track_series"], content_width("A4"))
    story = [Spacer(0, above_mm * mm), *blocks]
    return read(render(story, company="Co", title="Layout", page_size="A4", subject="test").pdf).pages


@ON_SQLITE_ONLY
def test_the_null_books_section_starts_where_its_summary_fits_not_on_a_fresh_page(planted: Settings) -> None:
    """A reviewer's run: the Briefing's null-books section (its paragraph and chart kept
    together, most of a page) moved whole to the next page and left page 4 about 40% blank,
    with room for its heading and paragraph. The section starts where its heading and
    paragraph fit and the chart follows where it fits."""
    pages = _nulls_section_pages(planted, 175)
    assert "Against its null books" in pages[0] and "Over the AI portfolio's 30 executed days" in pages[0], pages
    assert all(label in pages[1] for label in LEGEND) and "Model's percentile" in pages[1]
    assert "Against its null books" in _nulls_section_pages(planted, 10)[0]


def _texts(block: object) -> str:
    """The paragraphs' text in a block and the blocks it keeps together."""
    return " ".join([getattr(block, "text", ""), *(_texts(b) for b in getattr(block, "_content", []))])


def _closing_pages(settings: Settings, above_mm: float) -> list[str]:
    """The pages of the Briefing's Score distribution and its closing logos under `above_mm` of other content."""
    from reportlab.lib.units import mm
    from reportlab.platypus import Spacer

    from reports.inputs import briefing_inputs
    from reports.layout import content_width, render, section
    from reports.logos import powered_by
    from reports.quant_briefing import _charts
    from tests.reports.pdf import read

    with service_engine(settings).connect() as conn:
        inputs = briefing_inputs(conn, default_calendar(), NOW, settings)
    width = content_width("A4")
    closing = section("Powered by", powered_by(width, inputs["performance"]))
    blocks = _charts(inputs, width, closing)
    start = next(i for i, b in enumerate(blocks) if "Score distribution" in _texts(b))
    story = [Spacer(0, above_mm * mm), *blocks[start:]]
    return read(render(story, company="Co", title="Layout", page_size="A4", subject="test").pdf).pages


@ON_SQLITE_ONLY
def test_the_score_distribution_starts_where_its_chart_fits_and_the_logos_close_with_its_rule(
    planted: Settings,
) -> None:
    """A reviewer's run on Letter paper: the Score distribution, its rule and the Powered-by
    logos, kept as one block (over half a page), moved whole to the last page and left the
    page before it 59% blank under the equity curve. The chart starts under its heading where
    it fits; its rule and the logos follow together, so the logos never stand alone."""
    pages = _closing_pages(planted, 150)
    assert "Score distribution" in pages[0] and "Instruments" in pages[0], pages
    assert "The Score is the calibrated chance" in pages[1] and "Powered by" in pages[1], pages


@pytest.fixture
def short(settings: Settings) -> Settings:
    """The planted market as the AI portfolio's 12 days: under the 20 days of returns the ratios need."""
    planted_world(settings.database_url, 0, True, settings.ai_starting_cash, fee_schedule(settings), days=12)
    return settings


def _null_table(settings: Settings) -> str:
    """The Briefing's null-books table, from its caption on."""
    briefing = " ".join(
        _lines(generate("quant-briefing", service_engine(settings), settings, default_calendar(), NOW).pdf)
    )
    start = briefing.index("Information ratio and excess a year against the equal-weighted liquid universe")
    return briefing[start : briefing.index("Equity curve", start)]


@ON_SQLITE_ONLY
def test_a_family_without_ratios_reads_one_dash_not_a_range_of_dashes(short: Settings) -> None:
    """Under 20 days of returns the Briefing's null table read "10 - (- to -) - -" for every
    family with books: a range of nothing. It reads one dash, as the other tables do; the
    summary above it says why."""
    table = _null_table(short)
    assert "(- to -)" not in table, table
    assert "10 - - -" in table and "20 - - -" in table, table


@ON_SQLITE_ONLY
def test_a_one_book_family_reads_whether_the_model_beats_it_not_a_percentile(planted: Settings) -> None:
    """The Briefing's null table printed the one-book families' percentiles (traded value,
    the first month's book held, the inverted ranking) as 100, 50 and 100, as if a percentile
    among one book meant something. It says whether the model's book beats the book, as the
    backtest does (`portfolio.nulls.percentile_words`)."""
    with service_engine(planted).connect() as conn:
        families = ai_track_record(conn, planted.ai_starting_cash, fees=fee_schedule(planted)).nulls.families
    table = _null_table(planted)
    for family in ("size", "bought_and_held", "inverted"):
        assert families[family].books == 1, family
        tie = families[family].model_percentile == 50
        said = "level" if tie else f"beats: {'yes' if families[family].model_beats else 'no'}"
        ir = families[family].information_ratio.mean
        assert f"1 {ratio(ir)} ({ratio(ir)} to {ratio(ir)}) - {said}" in table, (family, table)
    assert "- 50" not in table and "over one book, whether it beats it" in table


def test_a_percentile_over_few_books_is_said_to_be_too_few_to_read() -> None:
    """The Compliance Report's paragraph read "the 33rd percentile of the 3 books ranked at
    random afresh each day" over a family of three books, where one book moves it by 33
    points: under FEW_BOOKS it says so, as the backtest does; over one book, whether the
    model's beats it."""
    from portfolio.nulls import FEW_BOOKS, percentile_words
    from reports.format import null_percentiles

    # a book not measured (no ratios under 20 days of returns) is not "beaten": no figure at all
    assert percentile_words(None, 0, 1, "-") == "-" and percentile_words(0.0, 0, 1) == "beats: no"
    # a tie with the one book (half a book below) is level, as the reports' sentences say, not "beats: no"
    assert percentile_words(50.0, 0, 1) == "level" and percentile_words(100.0, 1, 1) == "beats: yes"

    def family(books: int, percentile: float, beats: int) -> dict:
        return {"books": books, "model_percentile": percentile, "model_beats": beats, "note": None}

    nulls = {"families": {"daily_random": family(3, 33.3, 1), "fixed_random": family(FEW_BOOKS, 95.0, 9)}}
    nulls["families"]["size"] = family(1, 100.0, 1)
    assert null_percentiles(nulls) == (
        "the 33.3rd percentile of the 3 books ranked at random afresh each day (too few books to read); "
        f"the 95th percentile of the {FEW_BOOKS} books ranked at random once for the span; "
        "above the book ranked by traded value"
    )


@ON_SQLITE_ONLY
def test_a_paragraph_prints_the_percentile_its_table_prints(planted: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reviewer's read: the Briefing's null-books paragraph said "the 88th percentile of the
    20 books ranked at random once for the span" where the table under it printed 87.5 (and
    62.5 read the 62nd: Python rounds half to even). Both print the figure the API serves, by
    one rule (`portfolio.nulls.percentile_figure`), in the Briefing and the Compliance Report."""
    import dataclasses

    from portfolio import nulls

    figures = nulls.family_figures

    def served_as(family: str, *args: object, **kwargs: object) -> nulls.FamilyFigures:
        made = figures(family, *args, **kwargs)
        percentile = {"fixed_random": 87.5, "daily_random": 62.5}.get(family)
        return dataclasses.replace(made, model_percentile=percentile) if percentile else made

    monkeypatch.setattr(nulls, "family_figures", served_as)
    engine = service_engine(planted)
    with engine.connect() as conn:
        families = ai_track_record(conn, planted.ai_starting_cash, fees=fee_schedule(planted)).nulls.families
    assert families["fixed_random"].model_percentile == 87.5, "the API serves 87.5"
    daily = families["daily_random"].books
    briefing = " ".join(_lines(generate("quant-briefing", engine, planted, default_calendar(), NOW).pdf))
    compliance = " ".join(_lines(generate("compliance", engine, planted, default_calendar(), NOW).pdf))
    for said in (briefing, compliance):
        assert "the 87.5th percentile of the 20 books ranked at random once for the span" in said
        assert f"the 62.5th percentile of the {daily} books ranked at random afresh each day" in said
        assert "88th" not in said and "62nd" not in said
    fixed = families["fixed_random"].information_ratio
    assert f"20 {ratio(fixed.mean)} ({ratio(fixed.lowest)} to {ratio(fixed.highest)}) - 87.5" in _null_table(planted)


def test_a_percentile_reads_as_an_ordinal_of_its_printed_figure() -> None:
    from portfolio.nulls import percentile_figure, percentile_ordinal

    assert [percentile_figure(p) for p in (87.5, 95.0, 33.3, 100.0, 0.0)] == ["87.5", "95", "33.3", "100", "0"]
    whole = [percentile_ordinal(p) for p in (1.0, 2.0, 3.0, 11.0, 12.0, 13.0, 21.0, 95.0, 100.0, 0.0)]
    assert whole == ["1st", "2nd", "3rd", "11th", "12th", "13th", "21st", "95th", "100th", "0th"]
    assert [percentile_ordinal(p) for p in (87.5, 33.3, 66.7, 57.1, 62.5)] == [
        "87.5th",
        "33.3rd",
        "66.7th",
        "57.1st",
        "62.5th",
    ]


def test_the_served_percentile_tells_a_client_to_read_the_beats_over_few_books() -> None:
    """REST and GraphQL serve `model_percentile` 0, 50 or 100 for a one-book family; the
    count beside it, `model_beats` of `books`, already says whether the model's book beats
    it. The field's description (both schemas) says to read that count there, and under
    FEW_BOOKS."""
    from pathlib import Path

    sdl = (Path(__file__).parents[2] / "api" / "graphql" / "schema.graphql").read_text()
    assert "Over one book it can only be 0, 50 or 100" in sdl and "read modelBeats of books there" in sdl


@ON_SQLITE_ONLY
def test_a_store_without_shares_outstanding_has_no_index_not_one_of_nought(short: Settings) -> None:
    """On a store without shares outstanding (the planted market) the Briefing's market
    sentiment read "Index: the service's capitalisation-weighted index of 0 instruments"
    beside an index change of "-": there is no index, and it says why."""
    briefing = " ".join(_lines(generate("quant-briefing", service_engine(short), short, default_calendar(), NOW).pdf))
    assert "index of 0 instruments" not in briefing
    assert "No index: the service's capitalisation-weighted index weighs instruments by their shares" in briefing


@ON_SQLITE_ONLY
def test_families_without_ratios_are_named_together_and_the_reason_said_once(short: Settings) -> None:
    """Under 20 days of returns the Compliance Report's paragraph read "not ranked against
    the books ... (no information ratio)" four times, then "12 days is a short span: the
    percentiles and ratios say little about skill" of percentiles and ratios it does not
    have. It names the unranked families once, and gives the 20-day reason once."""
    compliance = " ".join(_lines(generate("compliance", service_engine(short), short, default_calendar(), NOW).pdf))
    assert compliance.count("not ranked against") == 1 and compliance.count("(no information ratio)") == 1
    assert "the book ranked by traded value or the book on the model's ranking inverted (no information" in compliance
    assert compliance.count("need at least 20 days of returns") == 1 and "short span" not in compliance
