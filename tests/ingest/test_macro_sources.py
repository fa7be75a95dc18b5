"""The three macro sources: their formats read back, refusal of a broken file, and point
in time after revisions, against the simulated institutions served over HTTP."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import date, timedelta

import httpx
import pytest

from ingest.macro_sources import SourceFormatError, fetch_all, parse_boj_csv, parse_pioj_pdf, parse_statin_html
from ingest.simulator.macro import SERIES, MacroEconomy, Release
from ingest.simulator.market import SimulatedMarket
from ingest.simulator.site import SimulatorSite
from market.clock import exchange_day_end_utc
from market.errors import MarketIntelError
from market.settings import Settings
from pipeline.runner import run_stage
from pipeline.serving import serve_in_thread
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows, row_counts
from views.macro import indicators

ECONOMY = MacroEconomy()
FIRST_SEEN = date(2026, 11, 16)  # NIR 2026-10 was first released 2026-11-09; its revision comes 2026-11-23
AFTER_REVISION = date(2026, 11, 24)


class MovingSite:
    """The simulated institutions over real HTTP, with a publication date the test moves."""

    def __init__(self) -> None:
        self.through = FIRST_SEEN
        self.site = SimulatorSite(SimulatedMarket(), published_through=lambda: self.through, economy=ECONOMY)


@pytest.fixture
def institutions(settings: Settings) -> Iterator[tuple[MovingSite, Settings]]:
    moving = MovingSite()
    with serve_in_thread(moving.site.asgi_app()) as base:
        yield moving, settings.model_copy(update={"macro_base_url": base})


def test_each_format_reads_back_every_release() -> None:
    day = AFTER_REVISION
    nir = parse_boj_csv("NIR", ECONOMY.boj_csv("NIR", day))
    assert [(r["period"], r["value"], r["release_date"]) for r in nir] == [
        (r.period, r.value, r.release_date) for r in ECONOMY.published("NIR", day)
    ]
    assert {(r["unit"], r["currency"], r["category"]) for r in nir} == {("USD millions", "USD", "reserves")}
    statin = parse_statin_html(ECONOMY.statin_html(day))
    assert {r["indicator_code"] for r in statin} == {c for c, s in SERIES.items() if s[0] == "STATIN"}
    gdp = [r for r in statin if r["indicator_code"] == "GDP"]
    assert [(r["period"], r["value"]) for r in gdp] == [(r.period, r.value) for r in ECONOMY.published("GDP", day)]
    assert gdp[0]["currency"] == "JMD" and gdp[0]["frequency"] == "Q"
    pioj = parse_pioj_pdf(ECONOMY.pioj_pdf(day), Settings())
    expected = [
        (r.code, r.period, r.value, r.release_date)
        for code in ("GDP_GROWTH_EST", "GROWTH_OUTLOOK")
        for r in ECONOMY.published(code, day)
    ]
    assert [(r["indicator_code"], r["period"], r["value"], r["release_date"]) for r in pioj] == expected


def test_a_broken_file_is_refused_whole_with_where() -> None:
    good = ECONOMY.boj_csv("M2", AFTER_REVISION)
    broken = good.replace(good.splitlines()[10].split(",")[1], "n/a", 1)
    with pytest.raises(SourceFormatError, match=r"BOJ: M2 line \d+: value 'n/a' is not a number"):
        parse_boj_csv("M2", broken)
    with pytest.raises(SourceFormatError, match="no '# unit:' line"):
        parse_boj_csv("M2", "period,value,release_date\n2026-01,1,2026-02-03\n")
    with pytest.raises(SourceFormatError, match="no indicators table"):
        parse_statin_html("<html><body><p>maintenance</p></body></html>")
    with pytest.raises(SourceFormatError, match="release date '31/12/2026'"):
        parse_statin_html(ECONOMY.statin_html(AFTER_REVISION).replace("15 Oct 2026", "31/12/2026", 1))


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e999", "9" * 400])
def test_a_value_that_is_no_finite_number_refuses_the_file_naming_where(value: str) -> None:
    """A value that is not a finite number (written as a word, or too long for a float) is
    refused with the file, naming the source, the series and the line: stored, it was served
    as null by REST, and GraphQL lost the whole list."""
    csv = f"# unit: USD millions\nperiod,value,release_date\n2026-09,5000,2026-10-08\n2026-10,{value},2026-11-09\n"
    with pytest.raises(SourceFormatError, match=r"BOJ: NIR line 4: value '.*' is not a (finite )?number"):
        parse_boj_csv("NIR", csv)
    html = ECONOMY.statin_html(AFTER_REVISION)
    row = next(tr for tr in html.split("<tr>") if "<td>GDP</td>" in tr)
    cells = row.split("</td>")
    broken = html.replace(row, "</td>".join([*cells[:3], f"<td>{value}", *cells[4:]]), 1)
    with pytest.raises(SourceFormatError, match=r"STATIN: GDP row \d+: value '.*' is not a (finite )?number"):
        parse_statin_html(broken)


@pytest.mark.parametrize(
    ("last", "fields"), [("2026-10,5431.2", 2), ("2026-10,5431.2,2026-11-09,provisional", 4), ("2026-10", 1)]
)
def test_a_boj_row_cut_off_or_with_a_field_too_many_refuses_the_download(last: str, fields: int) -> None:
    """A download cut off mid-row (the connection dropped) or with a field the columns do not
    name: the download is refused naming the series and the line, not failed with a bare
    TypeError or read without the field."""
    csv = f"# unit: USD millions\nperiod,value,release_date\n2026-09,5409.7,2026-10-08\n{last}\n"
    with pytest.raises(SourceFormatError, match=rf"BOJ: NIR line 4: expected 3 fields .*, got {fields}"):
        parse_boj_csv("NIR", csv)


STATIN_ROW = (
    "<tr><td>Real GDP</td><td>GDP</td><td>2026-Q2</td><td>203,785</td><td>JMD millions</td><td>JMD</td>"
    "<td>01 Sep 2026</td></tr>"
)


def test_a_statin_table_without_tbody_is_read_and_an_empty_table_or_series_is_refused() -> None:
    """Rows written straight into the table (no tbody, as HTML allows) are read like those in
    a tbody; a table, or a BOJ series, with no observation at all is refused as the PIOJ
    bulletin is, rather than read as nothing released."""
    head = "<thead><tr><th>Indicator</th><th>Code</th></tr></thead>"
    for table in (f"<tbody>{STATIN_ROW}</tbody>", f"{head}{STATIN_ROW}", STATIN_ROW):
        (row,) = parse_statin_html(f"<table id='indicators'>{table}</table>")
        assert (row["indicator_code"], row["period"], row["value"]) == ("GDP", "2026-Q2", 203785.0)
    for empty in ("<tbody></tbody>", head, f"{head}<tbody></tbody>"):
        with pytest.raises(SourceFormatError, match="STATIN: the indicators table has no observations"):
            parse_statin_html(f"<table id='indicators'>{empty}</table>")
    with pytest.raises(SourceFormatError, match="BOJ: USDJMD: the download has no observations"):
        parse_boj_csv("USDJMD", "# unit: JMD per USD\nperiod,value,release_date\n")


def _bulletin(*rows: tuple[str, str, str, str, str]) -> bytes:
    """A PIOJ bulletin with these table rows (Code, Period, Value, Unit, Released)."""
    import io

    from reportlab.platypus import SimpleDocTemplate, Table

    buffer = io.BytesIO()
    SimpleDocTemplate(buffer).build([Table([("Code", "Period", "Value", "Unit", "Released"), *rows])])
    return buffer.getvalue()


def test_a_pioj_estimate_with_a_sign_is_read_and_one_that_does_not_parse_refuses_the_bulletin() -> None:
    """Every row of the bulletin's table is read or the bulletin is refused naming the row:
    an explicit sign or a typographic minus reads as the other sources' values do, a
    provisional mark or a decimal comma is not dropped without a word."""
    first = ("GDP_GROWTH_EST", "2026-Q2", "1.4", "percent", "2026-07-20")
    signed = [
        first,
        ("GDP_GROWTH_EST", "2026-Q3", "+0.8", "percent", "2026-10-20"),
        ("GROWTH_OUTLOOK", "2026-Q4", "\u22120.6", "percent", "2026-10-20"),
    ]
    rows = parse_pioj_pdf(_bulletin(*signed), Settings())
    assert [(r["indicator_code"], r["period"], r["value"]) for r in rows] == [
        ("GDP_GROWTH_EST", "2026-Q2", 1.4),
        ("GDP_GROWTH_EST", "2026-Q3", 0.8),
        ("GROWTH_OUTLOOK", "2026-Q4", -0.6),
    ]
    for value in ("1.1p", "1,2"):
        with pytest.raises(SourceFormatError, match=rf"PIOJ: GROWTH_OUTLOOK line \d+: value '{value}' is not a number"):
            parse_pioj_pdf(_bulletin(first, ("GROWTH_OUTLOOK", "2027-Q1", value, "percent", "2026-11-20")), Settings())
    with pytest.raises(SourceFormatError, match=r"PIOJ: line \d+: 'GROWTH_OUTLOOK 2027-Q1 1.2' is not"):
        parse_pioj_pdf(_bulletin(first, ("GROWTH_OUTLOOK", "2027-Q1", "1.2", "", "")), Settings())


def _nir(engine, as_of: date | None) -> dict:
    with engine.connect() as conn:
        body = indicators(conn, source="BOJ", category="reserves", as_of=as_of)
    (item,) = body["indicators"]
    return item


def test_as_of_before_a_revision_sees_the_first_release_and_after_it_the_revision(institutions) -> None:
    moving, settings = institutions
    engine = service_engine(settings)
    first, revised = [r for r in ECONOMY.releases["NIR"] if r.period == "2026-10"]
    assert first.release_date < FIRST_SEEN < revised.release_date <= AFTER_REVISION and first.value != revised.value
    run_stage("t3_macro", FIRST_SEEN, settings=settings)
    assert _nir(engine, None)["value"] == first.value  # only the first estimate is out
    moving.through = AFTER_REVISION
    run_stage("t3_macro", AFTER_REVISION, settings=settings)
    before = _nir(engine, revised.release_date - timedelta(days=1))
    assert (before["period"], before["value"], before["release_date"]) == ("2026-10", first.value, first.release_date)
    after = _nir(engine, revised.release_date)
    assert (after["period"], after["value"], after["release_date"]) == ("2026-10", revised.value, revised.release_date)
    assert _nir(engine, None) == after
    with engine.connect() as conn:
        rows = [
            r
            for r in conn.execute(
                tables.macro_observations.select().where(
                    tables.macro_observations.c.indicator_code == "NIR", tables.macro_observations.c.period == "2026-10"
                )
            ).mappings()
        ]
    assert sorted((r["release_date"], r["value"]) for r in rows) == [
        (first.release_date, first.value),
        (revised.release_date, revised.value),
    ]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_no_as_of_query_sees_a_release_from_its_future(settings: Settings) -> None:
    site = SimulatorSite(SimulatedMarket(), published_through=AFTER_REVISION, economy=ECONOMY)
    engine = service_engine(settings)
    with httpx.Client(transport=site.transport()) as http, engine.begin() as conn:
        append_history(conn, tables.macro_observations, fetch_all(settings, AFTER_REVISION, http))
    rng = random.Random(11)
    for _ in range(40):
        as_of = date(2018, 1, 1) + timedelta(days=rng.randrange((AFTER_REVISION - date(2018, 1, 1)).days))
        with engine.connect() as conn:
            body = indicators(conn, as_of=as_of)
        assert body["indicators"], as_of
        for item in body["indicators"]:
            assert item["release_date"] <= as_of
            known = [r for r in ECONOMY.releases[item["indicator_code"]] if r.release_date <= as_of]
            latest_period = max(r.period for r in known)
            expected = max((r for r in known if r.period == latest_period), key=lambda r: r.release_date)
            assert (item["period"], item["value"]) == (expected.period, expected.value), (as_of, item)


def test_running_t3_twice_changes_nothing(institutions) -> None:
    moving, settings = institutions
    moving.through = AFTER_REVISION
    engine = service_engine(settings)
    first = run_stage("t3_macro", date(2026, 11, 16), settings=settings)
    with engine.connect() as conn:
        counts = row_counts(conn, [tables.macro_observations, tables.macro_parameters])
    again = run_stage("t3_macro", date(2026, 11, 16), settings=settings)
    with engine.connect() as conn:
        assert row_counts(conn, [tables.macro_observations, tables.macro_parameters]) == counts
    assert first.summary["parameters"] == 3 and again.summary["releases_new"] == 0
    assert again.summary["parameter_rows_new"] == 0 and counts["macro_parameters"] == 3 * 26


def _republished(change: dict[tuple[str, date], Release]) -> MacroEconomy:
    """The simulated economy with some NIR releases (by period and release date) published anew."""
    economy = MacroEconomy()
    economy.releases = {
        code: [change.get((r.period, r.release_date), r) if code == "NIR" else r for r in rows]
        for code, rows in ECONOMY.releases.items()
    }
    return economy


def test_t3_counts_and_names_a_release_its_source_changed(institutions) -> None:
    """A re-read in which the central bank corrected one release in place (same period, same
    release date) and re-dated another: neither is a new release, and neither goes unsaid."""
    moving, settings = institutions
    run_stage("t3_macro", FIRST_SEEN, settings=settings)
    latest, redated = ECONOMY.published("NIR", FIRST_SEEN)[-1], ECONOMY.published("NIR", FIRST_SEEN)[-3]
    moving.site.economy = _republished(
        {
            (latest.period, latest.release_date): replace(latest, value=latest.value + 500),
            (redated.period, redated.release_date): replace(redated, release_date=redated.release_date + timedelta(1)),
        }
    )
    again = run_stage("t3_macro", FIRST_SEEN, settings=settings)
    assert {k: again.summary[k] for k in ("releases_new", "releases_changed", "releases_unlisted")} == {
        "releases_new": 1,  # the re-dated release, under its new date
        "releases_changed": 1,
        "releases_unlisted": 1,  # the re-dated release, under its old date
    }
    assert again.tables["changed"] == [
        {
            "source": "BOJ",
            "indicator_code": "NIR",
            "period": latest.period,
            "release_date": latest.release_date.isoformat(),
            "stored": latest.value,
            "now": latest.value + 500,
        }
    ]
    assert [(r["period"], r["release_date"]) for r in again.tables["unlisted"]] == [
        (redated.period, redated.release_date.isoformat())
    ]


def test_an_unreachable_source_fails_the_stage_and_stores_nothing(institutions) -> None:
    moving, settings = institutions
    moving.site.faults.server_errors = 1_000_000
    from market.errors import StageFailedError

    with pytest.raises(StageFailedError, match="BOJ: .* answered HTTP 503"):
        run_stage("t3_macro", FIRST_SEEN, settings=settings)
    with service_engine(settings).connect() as conn:
        assert row_counts(conn, [tables.macro_observations, tables.macro_parameters]) == {
            "macro_observations": 0,
            "macro_parameters": 0,
        }


def test_the_simulated_macro_says_which_weeks_it_publishes() -> None:
    """The demo on real files that end before the simulated macro's first year skips T3
    with this reason (an adversarial run: it stopped at t3_macro with "the bulletin has no
    estimates table", and the house portfolio, T2 and the reports never ran)."""
    from ingest.simulator.macro import macro_span_reason, simulated_macro_covers

    assert not simulated_macro_covers(date(2014, 12, 29)) and simulated_macro_covers(date(2015, 1, 5))
    assert simulated_macro_covers(date(2028, 12, 25)) and not simulated_macro_covers(date(2029, 1, 1))
    assert macro_span_reason(date(2014, 12, 29)).startswith("the simulated macro sources publish from 2015 to 2028")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_source_answering_a_gzip_bomb_is_refused_at_the_page_limit(settings: Settings) -> None:
    """A macro source's answer was read whole and decoded by the HTTP client: a few hundred
    bytes of gzip, gzipped again, became gigabytes in memory. It is read as the exchange's
    pages are, refused once it passes their limit."""
    import gzip
    import zlib

    layer = zlib.compressobj(9, zlib.DEFLATED, 31)
    inner = b"".join(layer.compress(bytes(1 << 20)) for _ in range(65)) + layer.flush()  # 65 MiB of zeros
    bomb = gzip.compress(inner, 9)
    assert len(bomb) < 10_000
    answer = httpx.Response(200, content=bomb, headers={"content-encoding": "gzip, gzip", "content-type": "text/csv"})
    with (
        httpx.Client(transport=httpx.MockTransport(lambda request: answer)) as http,
        pytest.raises(MarketIntelError, match="the body exceeds the limit of 67,108,864 bytes"),
    ):
        fetch_all(settings, AFTER_REVISION, http)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_source_at_an_address_holding_credentials_fails_without_showing_them(settings: Settings) -> None:
    """A macro source's failure named its address whole: the password and the key in it too."""
    answer = httpx.Response(503)
    settings = settings.model_copy(update={"macro_base_url": "http://desk:macro-pw@macro.example"})
    with (
        httpx.Client(transport=httpx.MockTransport(lambda request: answer)) as http,
        pytest.raises(MarketIntelError) as refused,
    ):
        fetch_all(settings, AFTER_REVISION, http)
    assert refused.value.detail.startswith("BOJ: http://***@macro.example/"), refused.value.detail
    assert "macro-pw" not in refused.value.detail


def test_a_week_computed_late_reads_each_release_as_recorded_by_its_monday(institutions) -> None:
    """The central bank corrected reserves in place (same period, same release date) after
    the store had recorded them. A T3 run that computes an earlier week for the first time
    (after an outage, or a first deployment over a loaded store) read that week from the
    correction: a value nobody knew on its Monday. It reads the week as recorded by its
    Monday, and the run's own week as recorded by the run's date."""
    moving, settings = institutions
    engine = service_engine(settings)
    monday = FIRST_SEEN
    original = next(
        r for r in ECONOMY.published("NIR", monday) if (r.period, r.release_date) == ("2026-10", date(2026, 11, 9))
    )
    with engine.begin() as conn:
        append_history(
            conn, tables.macro_observations, fetch_all(settings, monday), recorded_at=exchange_day_end_utc(monday)
        )
    moving.site.economy = _republished({(original.period, original.release_date): replace(original, value=6000.0)})
    wednesday = monday + timedelta(days=2)
    with engine.begin() as conn:
        append_history(
            conn, tables.macro_observations, fetch_all(settings, monday), recorded_at=exchange_day_end_utc(wednesday)
        )
    run_stage("t3_macro", monday + timedelta(weeks=1), settings=settings)
    with engine.connect() as conn:
        stored = {(r["week_start"], r["parameter"]): r["inputs"] for r in current_rows(conn, tables.macro_parameters)}
    assert stored[(monday, "fx_pressure")]["reserves"]["value"] == original.value
    assert stored[(monday + timedelta(weeks=1), "fx_pressure")]["reserves"]["value"] == 6000.0


def test_a_published_zero_leaves_out_the_change_measured_from_it_and_stores_the_rest(institutions) -> None:
    """The central bank publishing reserves of 0 three months before the latest (a placeholder,
    a typo) made T3 divide by zero: the stage failed, stored none of the week's releases and
    none of its parameters, and failed again every week while the source listed the zero.
    The change that would be measured from it is not computed and says why; the rest is."""
    moving, settings = institutions
    base = [r for r in ECONOMY.published("NIR", FIRST_SEEN) if r.period == "2026-07"]
    moving.site.economy = _republished({(r.period, r.release_date): replace(r, value=0.0) for r in base})
    outcome = run_stage("t3_macro", FIRST_SEEN, settings=settings)
    assert outcome.summary["parameters"] == 2 and outcome.summary["releases_new"] > 0
    assert outcome.summary["missing"] == (
        "fx_pressure: reserves_3m_before (0.0 for 2026-07: no change is measured from a level at 0 or below)"
    )
    assert {r["parameter"] for r in outcome.tables["parameters"]} == {"rates_regime", "macro_risk"}


def _listed_twice(value_again: float) -> tuple[MacroEconomy, Release]:
    """The simulated economy whose central bank lists its latest NIR release a second time."""
    economy, latest = MacroEconomy(), ECONOMY.published("NIR", FIRST_SEEN)[-1]
    economy.releases = {**ECONOMY.releases, "NIR": [*ECONOMY.releases["NIR"], replace(latest, value=value_again)]}
    return economy, latest


def test_a_release_listed_twice_is_stored_once_and_two_values_for_it_are_refused(institutions) -> None:
    """A download listing one release (period, release date) twice made T3 fail with "two
    rows for the same key", and fail again every week while the source listed it: with the
    same value it is one release, stored once; with two values the file is refused, naming
    the series and both lines, since which one the source means is not the reader's guess."""
    moving, settings = institutions
    moving.site.economy, latest = _listed_twice(ECONOMY.published("NIR", FIRST_SEEN)[-1].value)
    outcome = run_stage("t3_macro", FIRST_SEEN, settings=settings)
    assert outcome.summary["parameters"] == 3 and _nir(service_engine(settings), None)["value"] == latest.value
    moving.site.economy, _ = _listed_twice(latest.value + 1)
    from market.errors import StageFailedError

    named = (
        rf"BOJ: NIR {latest.period} released {latest.release_date} is listed twice, with {latest.value} \(line \d+\)"
    )
    with pytest.raises(StageFailedError, match=named + rf" and {latest.value + 1} \(line \d+\)"):
        run_stage("t3_macro", FIRST_SEEN, settings=settings)
    assert _nir(service_engine(settings), None)["value"] == latest.value  # stored once, nothing of the refused file


def test_a_period_that_starts_after_its_release_refuses_the_file_unless_an_outlook(institutions) -> None:
    """A release whose period is a typo ahead of its release date (2062-10 for 2026-10) was
    stored and served as the series' latest period for good: kept when the source fixed its
    file (a release no longer listed is kept), it hid every later month from the indicators
    and left the parameters measured from the series out every week after. A figure for a
    period that has not begun is refused, naming the line; an outlook is a forecast, and its
    period may start up to a year after its release."""
    moving, settings = institutions
    latest = ECONOMY.published("NIR", FIRST_SEEN)[-1]
    economy = MacroEconomy()
    economy.releases = {**ECONOMY.releases, "NIR": [*ECONOMY.releases["NIR"], replace(latest, period="2062-10")]}
    moving.site.economy = economy
    from market.errors import StageFailedError

    ahead = rf"BOJ: NIR line \d+: period '2062-10' starts after its release date {latest.release_date}"
    with pytest.raises(StageFailedError, match=ahead):
        run_stage("t3_macro", FIRST_SEEN, settings=settings)
    with service_engine(settings).connect() as conn:
        assert row_counts(conn, [tables.macro_observations])["macro_observations"] == 0
    outlook = parse_pioj_pdf(_bulletin(("GROWTH_OUTLOOK", "2027-Q3", "1.2", "percent", "2026-11-20")), Settings())
    assert [(r["period"], r["value"]) for r in outlook] == [("2027-Q3", 1.2)]
    with pytest.raises(SourceFormatError, match=r"PIOJ: GROWTH_OUTLOOK line \d+: period '2028-Q1' starts more than"):
        parse_pioj_pdf(_bulletin(("GROWTH_OUTLOOK", "2028-Q1", "1.2", "percent", "2026-11-20")), Settings())
