"""Adapters for the three national macro sources, each in the format that institution
publishes: the central bank's CSV downloads (one per series), the statistics institute's
HTML table, and the planning institute's PDF bulletin.

Each adapter returns observations ready for `macro_observations`: source, category,
indicator code, period (YYYY-MM or YYYY-Qn), frequency, value, unit, currency (of money
values; null for rates, indices and percentages) and release date. A revision is simply
another release of the same period and becomes another row; nothing is overwritten.
A release listed twice in one file (same indicator, period and release date) is one
release when both give one value, and refuses the file when they give two (`_once`).

A file that cannot be read whole is refused whole (SourceFormatError naming the source,
the series and the line), so a stage never stores half a release: a value is read by the
rule every printed figure is (`market.money.printed_number`: "1,234.5", "+0.8", "-0.6" and
"\u22120.6" read; a decimal comma "1,2", a mark "1.1p", "1e5", "inf", "nan" or "n/a" are
refused, not read as another number or dropped, and so is a figure too large for a float),
and a PIOJ line that starts with an indicator code must be a whole row of the table. A
period must have begun by its release date (an outlook's within `FORECAST_REACH`).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping
from dataclasses import astuple, dataclass
from datetime import date, datetime
from functools import partial
from typing import Any, TypeVar

import httpx
from lxml import html as lxml_html

from ingest.addresses import configured_reach, followed
from ingest.exchange.client import ACCEPT_ENCODING, PageLimits, bounded_body
from ingest.pdf_text import PdfExtractor
from market.budget import Deadline
from market.errors import MarketIntelError
from market.macro_catalogue import BOJ_SERIES, CATEGORIES, PIOJ_CATEGORIES, SOURCES, STATIN_CATEGORIES
from market.money import printed_number
from market.settings import Settings
from market.text import masked_urls

PERIOD = re.compile(r"^\d{4}-(0[1-9]|1[0-2]|Q[1-4])$")


class SourceFormatError(MarketIntelError):
    """A macro source answered in a form the reader does not know."""


@dataclass(frozen=True)
class _Published:
    """One observation as a source publishes it: the source, the indicator's code, the
    period and value as written, the unit, the currency of a money value, the release date."""

    source: str
    code: str
    period: str
    value: Any
    unit: str
    currency: str | None
    released: date


def _observation(published: _Published, where: str) -> dict[str, Any]:
    """The observation `macro_observations` stores, or SourceFormatError naming the source,
    the series and `where` (the line or row)."""
    source, code, period, value, unit, currency, released = astuple(published)
    if not PERIOD.match(period):
        raise SourceFormatError(f"{source}: {code} {where}: period '{period}' is not YYYY-MM or YYYY-Qn")
    _begun_by(f"{source}: {code} {where}", code, period, released)
    number = printed_number(str(value).strip())  # the one rule every printed figure is read by
    if number is None:
        raise SourceFormatError(f"{source}: {code} {where}: value '{value}' is not a number")
    if not math.isfinite(float(number)):  # 400 digits are a printed number, and no float
        raise SourceFormatError(f"{source}: {code} {where}: value '{str(value)[:40]}' is not a finite number")
    return {
        "source": source,
        "category": CATEGORIES[code],
        "indicator_code": code,
        "period": period,
        "frequency": "Q" if "Q" in period else "M",
        "value": float(number),
        "unit": unit,
        "currency": currency,
        "release_date": released,
    }


FORECAST_REACH = {"outlook": 366}  # days a period of the category may start after its release: a forecast's


def _begun_by(where: str, code: str, period: str, released: date) -> None:
    """SourceFormatError unless `period` started on or before `released` (a forecast's, within
    `FORECAST_REACH` days after): a figure of a period that has not begun is a typo (2062-10
    for 2026-10), and stored it would stay the series' latest period for good."""
    year, part = period.split("-")
    start = date(int(year), int(part[1:]) * 3 - 2 if part.startswith("Q") else int(part), 1)
    reach = FORECAST_REACH.get(CATEGORIES[code], 0)
    if (start - released).days > reach:
        after = f"more than {reach} days after" if reach else "after"
        raise SourceFormatError(f"{where}: period '{period}' starts {after} its release date {released}")


BOJ_COLUMNS = ["period", "value", "release_date"]


def parse_boj_csv(code: str, text: str) -> list[dict[str, Any]]:
    """One BOJ series download: `# unit: ...` comment lines, then period,value,release_date.
    A row with fewer or more fields (a download cut off mid-row) is refused, naming its line
    (of the file, comments counted), and so is a download with no observation."""
    unit = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("# unit:")), None)
    if unit is None:
        raise SourceFormatError(f"BOJ {code}: the download has no '# unit:' line")
    body = "\n".join("" if line.startswith("#") else line for line in text.splitlines())  # lines keep their numbers
    reader = csv.reader(io.StringIO(body))
    header = next((cells for cells in reader if cells), None)
    if header != BOJ_COLUMNS:
        raise SourceFormatError(f"BOJ {code}: expected columns period,value,release_date, got {header}")
    rows = []
    for cells in reader:
        if not cells:
            continue  # a blank line
        where = f"line {reader.line_num}"
        if len(cells) != len(BOJ_COLUMNS):
            raise SourceFormatError(
                f"BOJ: {code} {where}: expected 3 fields (period,value,release_date), got {len(cells)}"
            )
        period, value, release_date = cells
        released = _iso_date("BOJ", release_date, f"{code} {where}")
        rows.append(
            (where, _observation(_Published("BOJ", code, period, value, unit, BOJ_SERIES[code][1], released), where))
        )
    if not rows:
        raise SourceFormatError(f"BOJ: {code}: the download has no observations")
    return _once("BOJ", rows)


def parse_statin_html(text: str) -> list[dict[str, Any]]:
    """STATIN's indicator table: Indicator, Code, Period, Value, Unit, Currency, Released; its
    rows in a tbody or straight in the table, as HTML allows. A table with no observation of
    the indicators tracked is refused, as an empty BOJ series and PIOJ bulletin are."""
    tree = lxml_html.fromstring(text)
    table = tree.xpath("//table[@id='indicators']")
    if not table:
        raise SourceFormatError("STATIN: the page has no indicators table")
    rows = []
    for number, tr in enumerate(table[0].xpath(".//tr[td]"), start=1):  # in a tbody or not; not the header
        cells = [c.text_content().strip() for c in tr.xpath("./td")]
        if len(cells) != 7:
            raise SourceFormatError(f"STATIN: table row {number} has {len(cells)} cells, not 7")
        _, code, period, value, unit, currency, released = cells
        if code not in STATIN_CATEGORIES:
            continue  # an indicator this service does not track
        try:
            day = datetime.strptime(released, "%d %b %Y").date()
        except ValueError:
            raise SourceFormatError(
                f"STATIN: row {number}: release date '{released}' is not like 05 Nov 2026"
            ) from None
        published = _Published("STATIN", code, period, value, unit, currency or None, day)
        rows.append((f"row {number}", _observation(published, f"row {number}")))
    if not rows:
        raise SourceFormatError(f"STATIN: the indicators table has no observations (of {', '.join(STATIN_CATEGORIES)})")
    return _once("STATIN", rows)


def parse_pioj_pdf(data: bytes, settings: Settings) -> list[dict[str, Any]]:
    """The PIOJ bulletin's table, read back from the PDF text (in the sandboxed reader, as
    every downloaded PDF is): Code Period Value Unit Released."""
    with PdfExtractor.from_settings(settings) as extractor:
        text = extractor.extract(data, "the PIOJ bulletin").text
    rows = []
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split()
        if not fields or fields[0] not in PIOJ_CATEGORIES:
            continue  # the bulletin's prose and the table's header
        if len(fields) != 5:
            raise SourceFormatError(f"PIOJ: line {number}: '{' '.join(fields)}' is not Code Period Value Unit Released")
        code, period, value, unit, released = fields
        day = _iso_date("PIOJ", released, f"line {number}")
        rows.append(
            (f"line {number}", _observation(_Published("PIOJ", code, period, value, unit, None, day), f"line {number}"))
        )
    if not rows:
        raise SourceFormatError("PIOJ: the bulletin has no estimates table")
    return _once("PIOJ", rows)


_Row = TypeVar("_Row", bound=Mapping[str, object])


def _once(source: str, read: list[tuple[str, _Row]]) -> list[_Row]:
    """The observations `read` (each with where it was read), each release (indicator,
    period, release date: `macro_observations`' key) once: listed twice with one value it is
    one release; with two values the file is refused, naming both places, since which one
    the source means is not the reader's guess."""
    first: dict[tuple[object, ...], tuple[str, _Row]] = {}
    for where, row in read:
        key = (row["indicator_code"], row["period"], row["release_date"])
        held_where, held = first.setdefault(key, (where, row))
        if held["value"] != row["value"]:
            raise SourceFormatError(
                f"{source}: {key[0]} {key[1]} released {key[2]} is listed twice, with "
                f"{held['value']} ({held_where}) and {row['value']} ({where})"
            )
    return [row for _, row in first.values()]


def _iso_date(source: str, text: str, where: str) -> date:
    try:
        return date.fromisoformat(text)
    except (TypeError, ValueError):  # TypeError: no text at all
        raise SourceFormatError(f"{source}: {where}: release date '{text}' is not YYYY-MM-DD") from None


def fetch_all(settings: Settings, on: date, http: httpx.Client | None = None) -> list[dict[str, Any]]:
    """Every observation the three sources had released by `on` (the date is also passed to
    the sites, which the simulator honours; a live site answers with what it has)."""
    base = (settings.macro_base_url or settings.exchange_base_url).rstrip("/")
    client = http or httpx.Client(timeout=settings.exchange_timeout_seconds)
    get = partial(_get, client, params={"date": on.isoformat()}, allow_private=settings.allow_private_enclosures)
    try:
        rows: list[dict[str, Any]] = []
        for code in BOJ_SERIES:
            rows += parse_boj_csv(code, get(f"{base}/boj/series/{code}.csv", "BOJ").text)
        rows += parse_statin_html(get(base + SOURCES["STATIN"].path, "STATIN").text)
        rows += parse_pioj_pdf(get(base + SOURCES["PIOJ"].path, "PIOJ").content, settings)
    finally:
        if http is None:
            client.close()
    return [r for r in rows if r["release_date"] <= on]


def _get(client: httpx.Client, url: str, source: str, *, params: dict[str, str], allow_private: bool) -> httpx.Response:
    """The source's answer at `url`, its body read as the exchange's pages are (`bounded_body`:
    at most `PageLimits.max_bytes` decoded, within `PageLimits.max_seconds`): read whole and
    decoded by the client, a few hundred bytes of layered gzip took gigabytes of memory. Its
    redirects are followed as every download's are (`followed`: one to another host checked,
    and requested at the address checked, unless `allow_private`)."""
    limits, shown = PageLimits(), masked_urls(url)  # the request uses `url` as it is
    deadline = Deadline(limits.max_seconds, f"{source}: {shown}", "retried on the next run")
    asked = str(httpx.URL(url).copy_merge_params(params))
    try:
        with followed(client, asked, deadline, configured_reach(asked, allow_private), _READS) as hop:
            status, kind = hop.response.status_code, hop.response.headers.get("content-type", "")
            body = bounded_body(hop.response, limits.max_bytes, deadline) if status == 200 else b""
    except httpx.HTTPError as exc:
        raise MarketIntelError(f"{source}: {shown} unreachable ({type(exc).__name__})") from None
    except MarketIntelError as exc:
        raise MarketIntelError(f"{source}: {shown}: {exc.detail}") from None
    if status != 200:
        raise MarketIntelError(f"{source}: {shown} answered HTTP {status}")
    return httpx.Response(status, content=body, headers={"content-type": kind})


_READS = {"Accept-Encoding": ACCEPT_ENCODING}  # what `bounded_body` reads
