"""T1 step 2: news feeds and disclosure PDFs for a trading day.

Feed items without a PDF become `news_items` (de-duplicated: an item whose identity, the
feed's guid of it or else its link, or whose content hash is already stored is skipped);
items that carry a PDF enclosure are disclosures: the PDF is downloaded (size-capped), kept under
`<data_dir>/disclosures/<sha256>.pdf`, read by the sandboxed extractor, classified and
stored, at most `disclosures_per_run` downloads a run (the rest are counted as deferred and
left for the next run). Every text is tagged with the instruments it names (`document_mentions`).

Nothing here stops the day: a feed that fails is an `ingest_failures` row, a PDF that
fails (404, not a PDF, encrypted, a bomb, too slow) is a FAILED `disclosures` row with
its reason, and the rest goes on.
"""

from __future__ import annotations

import calendar
import hashlib
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path
from time import struct_time as time_struct
from urllib.parse import urljoin

import feedparser
import httpx
from feedparser.datetimes import rfc822
from sqlalchemy import Column, ColumnElement, Connection, Engine, select

from ingest.addresses import Reach, followed, origin
from ingest.exchange.client import ACCEPT_ENCODING, ExchangeClient, bounded_body
from ingest.mentions import InstrumentMatcher, Mention
from ingest.pdf_text import PdfExtractor, PdfRejected
from market.budget import Deadline
from market.clock import EXCHANGE_TZ
from market.errors import MarketIntelError
from market.files import write_whole
from market.settings import Settings
from market.text import PDF_TYPES, fits_key, key_cut, masked_urls, media_type, plain_text, printable, web_link
from store import tables
from store.history import append_history, current_rows, key_chunks
from store.splits import Split, renamed_on, stored_splits
from store.transactions import write_transaction

log = logging.getLogger(__name__)
# What every write of news items and disclosures holds: they are keyed by their content and
# their address, not by the day, so two days' runs at once (a backfill beside the daily
# run, a retry beside a run) each stored what the other was storing.
TEXT_LOCK = "text"

DISCLOSURE_KINDS = [  # first match wins; checked on the title, then the text
    (
        "DIRECTOR_TRADING",
        re.compile(r"director(s)?'? (dealing|trading|purchase|sale)|insider|purchased \d|sold \d", re.I),
    ),
    ("DIVIDEND", re.compile(r"dividend", re.I)),
    ("AGM", re.compile(r"annual general meeting|\bAGM\b", re.I)),
    ("RESULTS", re.compile(r"results|financial statements|quarterly|earnings|profit|interim report", re.I)),
]


@dataclass
class TextIngestReport:
    feeds: int = 0
    news_new: int = 0
    news_seen: int = 0
    disclosures_ok: int = 0
    disclosures_failed: int = 0
    # disclosures not yet stored that were past the run's `disclosures_per_run` downloads:
    # left for the next run, which finds them not stored
    disclosures_deferred: int = 0
    disclosures_fetched: int = 0  # downloads started, counted against `disclosures_per_run`
    failures: list[str] = field(default_factory=list)


def feed_urls(settings: Settings) -> list[str]:
    return settings.news_feeds or [f"{settings.exchange_base_url.rstrip('/')}/news/rss"]


def classify_disclosure(title: str, text: str) -> str:
    for source in (title, text):
        for kind, pattern in DISCLOSURE_KINDS:
            if pattern.search(source or ""):
                return kind
    return "OTHER"


def pdf_extractor(settings: Settings) -> PdfExtractor:
    return PdfExtractor.from_settings(settings)


def ingest_text(
    engine: Engine,
    settings: Settings,
    day: date,
    client: ExchangeClient,
    http: httpx.Client,
    extractor: PdfExtractor | None = None,
) -> TextIngestReport:
    """Ingest every configured feed for `day`; pass an `extractor` to reuse one PDF
    worker across many days (a backfill), else one is started for this call."""
    if extractor is None:
        with pdf_extractor(settings) as own:
            return ingest_text(engine, settings, day, client, http, own)
    report = TextIngestReport()
    with engine.connect() as conn:
        names = _Names(
            InstrumentMatcher(current_rows(conn, tables.instruments)),
            [s for s in stored_splits(conn) if s.new_symbol is not None],
            day,
        )
    run = _DisclosureRun(engine, settings, day, names, extractor, http, report)
    for url in feed_urls(settings):
        report.feeds += 1
        entries = _read_feed(engine, client, url, day, report)
        news = [e for e in entries if not e["pdf"]]
        _store_news(engine, news, names, report)
        for entry in (e for e in entries if e["pdf"]):
            _store_disclosure(run, entry)
    if report.disclosures_deferred:
        log.warning(
            "%d disclosures past the run's cap of %d (disclosures_per_run) are left for the next run",
            report.disclosures_deferred,
            settings.disclosures_per_run,
        )
    return report


def _read_feed(engine: Engine, client: ExchangeClient, url: str, day: date, report: TextIngestReport) -> list[dict]:
    try:
        body = client.get(url, {"date": day.isoformat()} if url.endswith("/news/rss") else None).body
        parsed = feedparser.parse(body)
        # A feed that is not well-formed is refused whole (its entries may be cut short;
        # a later run takes them when the feed is whole again). A wrong charset
        # declaration or content type alone is harmless.
        benign = (feedparser.CharacterEncodingOverride, feedparser.NonXMLContentType)
        if parsed.bozo and not isinstance(parsed.bozo_exception, benign):
            raise MarketIntelError(
                f"not a readable feed ({type(parsed.bozo_exception).__name__}: {parsed.bozo_exception})"
            )
    except MarketIntelError as exc:
        reason, shown = exc.detail, masked_urls(url)
        log.warning("feed %s failed for %s: %s", shown, day, reason)
        report.failures.append(f"{shown}: {reason}")
        with write_transaction(engine, TEXT_LOCK) as conn:
            append_history(
                conn,
                tables.ingest_failures,
                [{"source_kind": "FEED", "source_url": shown, "trading_date": day, "reason": reason}],
            )
        return []
    entries = []
    for item in parsed.entries:
        pdf = next((_address(url, e["href"]) for e in item.get("enclosures", []) if _is_pdf(e)), None)
        entries.append(
            {
                "title": plain_text(item.get("title") or ""),
                "summary": plain_text(item.get("summary") or ""),
                "legacy_hash": _legacy_hash(item),
                "link": web_link(item.get("link")),
                "guid": _guid(item),
                "feed_url": url,
                "pdf": pdf,
                "published_at": published_at(item),
            }
        )
    return entries


def _address(feed_url: str, href: str) -> str:
    """An enclosure's address, read against the feed's; one that is no URL (an unclosed IPv6
    bracket) as written, one too long to store cut (`key_cut`): each stopped the whole feed's
    ingest, and each is refused when it is fetched, a FAILED disclosure saying why."""
    try:
        return key_cut(urljoin(feed_url, href))
    except ValueError:
        return key_cut(printable(href))


def _guid(item: dict) -> str | None:
    """The feed's id of an item (RSS guid, Atom id) as stored text, None where it gives none
    or one too long to store (`fits_key`): the item is then known by its link and content."""
    guid = printable(str(item.get("id") or "")).strip()
    return guid if guid and fits_key(guid) else None


def _is_pdf(enclosure: dict) -> bool:
    """Whether a feed item's enclosure is a PDF by its media type, however written (any
    case, with parameters: `application/pdf; charset=binary`, the older `application/x-pdf`)."""
    return media_type(enclosure.get("type")) in PDF_TYPES and bool(enclosure.get("href"))


# a time of day, then AM/PM and a zone where given: Z, +hh, +hhmm, +hh:mm or a name (GMT, EST)
_CLOCK = re.compile(
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:[.,]\d+)?)?\s*(?P<half>[AP]M\b)?\s*"
    r"(?P<zone>Z\b|[+-]\d{2}(?::?\d{2})?\b|(?:Etc/)?[A-Z]{1,5}\b)?",
    re.I,
)
_OFFSET = re.compile(r"([+-])(\d{2}):?(\d{2})?")
# the zone names feedparser reads (any other it reads as UTC), and the westernmost offset
# in use: a time in a zone it does not know (COT, "local") is read there, the latest it can be
_KNOWN_ZONES = {**rfc822.timezone_names, "utc": 0}
_LATEST_OFFSET = timedelta(hours=-12)


def published_at(item: dict) -> datetime | None:
    """When a feed item was published (UTC), never earlier than its stamp allows: a time
    with a zone as given, AM/PM honoured; a time without a zone is exchange time, one with
    a zone name feedparser does not know (COT, "local") the latest it can be (at UTC-12,
    where feedparser read UTC); a date without a time is
    the end of that day at the exchange (it may have come after the close). feedparser reads
    both as UTC, which put a 16:30 item at 11:30 and a dated one at 19:00 the evening before,
    inside the composite of a close they came after. A date written in digits is read as
    written (`_written_day`), never as feedparser's ISO 8601 reader takes other digits.
    None: the item has no readable stamp
    (also one out of the calendar's range, 9999-12-31 at the exchange or year 0 in UTC: an
    unreadable date is no date, never the feed's failure)."""
    for name in ("published", "updated"):  # the first one readable
        try:
            found = _read_stamp(item.get(f"{name}_parsed"), item.get(name) or "")
        except (OverflowError, ValueError):
            found = None
        if found is not None:
            return found
    return None


def _read_stamp(stamp: time_struct | None, raw: str) -> datetime | None:
    """`published_at` of one stamp: feedparser's reading `stamp` where it reads the form
    right, else the date as written (`_written_day`) at the time written after it."""
    if _ISO_DATE.match(raw) or (stamp and _NAMED_MONTH.search(raw)):  # a date feedparser reads right
        return _stamp_time(stamp, raw) if stamp else None
    day, written = _written_day(raw)
    if day is None:
        return None
    clock = _CLOCK.search(raw, written)
    if clock is not None and _OFFSET_AFTER.match(raw, clock.end()):  # "GMT-5": a zone, then an offset from it
        return None
    return _written_time(day, clock)


# A date feedparser reads right: ISO 8601's calendar or ordinal date (2026-11-20, 20261120,
# 2026-324), or one with a month's name (RFC 822's). Any other date in digits alone, which
# its ISO 8601 reader took as it could (2026/11/20 as 1 December, 20-11-2026 as 20 November
# 2020, a Unix time as 1796, 2026-11 as 1 November), is read by `_written_day` or not at all.
_ISO_DATE = re.compile(r"\s*\d{4}(?:-\d{2}-\d{2}|\d{4}|-\d{3})(?![\d/.-])")
_NAMED_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)", re.I)
_NUMERIC_DATE = re.compile(r"(?<!\d)(\d{1,4})([/.-])(\d{1,2})\2(\d{4}|\d{1,2})(?!\d)")
# a month's name with its day before a four-digit year, either way round: Nov 20, 2026;
# November 20th 2026; 20-Nov-2026; 20 November, 2026 (feedparser reads none but the last)
_NAMED_DATE = re.compile(
    r"\b(?:(?P<month>[a-z]{3,9})\.?\s+(?P<day>\d{1,2})|(?P<day2>\d{1,2})(?:st|nd|rd|th)?[\s-]+(?P<month2>[a-z]{3,9})\.?)"
    r"(?:st|nd|rd|th)?,?[\s-]+(?P<year>\d{4})(?!\d)",
    re.I,
)
_MONTHS = [m.lower() for m in calendar.month_name[1:]]
_OFFSET_AFTER = re.compile(r"\s*[+-]\d")


def _written_day(raw: str) -> tuple[date | None, int]:
    """The date of a stamp as written: with its month's name (`_NAMED_DATE`), or in digits,
    year first (2026/11/20, 2026.11.20), or day and month before a four-digit year where only one reading is a date
    (20/11/2026 day first, 11/20/2026 month first); None where both are (03/11/2026: 3
    November or 11 March), or it is no such date (a Unix time, 2026-11); with where the
    date ends in `raw` (its time follows)."""
    if named := _NAMED_DATE.search(raw):
        word = (named["month"] or named["month2"]).lower()
        month = next((n for n, full in enumerate(_MONTHS, 1) if full.startswith(word)), None)
        if month is None:  # a word, not a month's name
            return None, 0
        return date(int(named["year"]), month, int(named["day"] or named["day2"])), named.end()
    written = _NUMERIC_DATE.search(raw)
    if written is None:
        return None, 0
    first, _, second, third = written.groups()
    if len(first) == 4:
        return date(int(first), int(second), int(third)), written.end()
    a, b = int(first), int(second)
    if len(third) != 4 or (a != b and a <= 12 and b <= 12):  # a two-digit year; either could be the month
        return None, 0
    day, month = (a, b) if a > 12 or a == b else (b, a)
    return date(int(third), month, day), written.end()


def _stamp_time(stamp: time_struct, raw: str) -> datetime:
    clock = _CLOCK.search(raw)
    zone = "" if clock is None else (clock["zone"] or "").lower().removeprefix("etc/")
    if clock is not None and clock["half"] is None and (zone[:1] in ("+", "-") or zone in _KNOWN_ZONES):
        return datetime.fromtimestamp(calendar.timegm(stamp), tz=UTC)  # feedparser's reading
    # feedparser dropped AM/PM (and then the zone) or read an unknown zone, or none, as UTC:
    # the time as written, on the date it gave (it shifted nothing), read here
    return _written_time(date(*stamp[:3]), clock)


def _written_time(day: date, clock: re.Match[str] | None) -> datetime:
    """The moment (UTC) of a stamp written on `day` at `clock` (AM/PM honoured, its zone by
    `_zone`); without a clock, the end of that day at the exchange."""
    if clock is None:
        return datetime.combine(day, time(23, 59, 59), tzinfo=EXCHANGE_TZ).astimezone(UTC)
    hour = int(clock["hour"])
    if clock["half"]:
        hour = hour % 12 + (12 if clock["half"].upper() == "PM" else 0)
    written = datetime.combine(day, time(hour, int(clock["minute"]), int(clock["second"] or 0)))
    zone = (clock["zone"] or "").lower().removeprefix("etc/")
    return written.replace(tzinfo=_zone(zone)).astimezone(UTC)


def _zone(zone: str) -> tzinfo:
    """The zone of a written time: its offset, a name feedparser knows, none (the exchange's),
    or an unknown name (the westernmost offset: never earlier than the stamp allows)."""
    if offset := _OFFSET.fullmatch(zone):
        minutes = int(offset[2]) * 60 + int(offset[3] or 0)
        return timezone(timedelta(minutes=-minutes if offset[1] == "-" else minutes))
    if zone in _KNOWN_ZONES:
        return timezone(timedelta(hours=_KNOWN_ZONES[zone]))
    return EXCHANGE_TZ if not zone else timezone(_LATEST_OFFSET)


def _store_news(engine: Engine, entries: list[dict], names: _Names, report: TextIngestReport) -> None:
    """A feed's items without a PDF stored once each, tagged and counted. An item is known by
    its identity (`_identity`) or its content, stored or earlier in this batch (the same
    item twice in a feed, a re-publication, counted twice)."""
    if not entries:
        return
    news = tables.news_items
    for entry in entries:
        entry["content_hash"] = content_hash(entry["title"], entry["summary"])
    with write_transaction(engine, TEXT_LOCK) as conn:
        known = _stored_identities(conn, entries)
        hashes = {entry["content_hash"] for entry in entries} | {entry["legacy_hash"] for entry in entries}
        known_hashes = _stored(conn, news.c.content_hash, hashes)
        fresh = []
        for entry in entries:
            if _identity(entry) in known or known_hashes & {entry["content_hash"], entry["legacy_hash"]}:
                report.news_seen += 1
                continue
            known_hashes.add(entry["content_hash"])
            if _identity(entry) is not None:  # no identity is no match: known by its content only
                known.add(_identity(entry))
            fresh.append({k: entry[k] for k in NEWS_COLUMNS})
        append_history(conn, news, fresh)
        for entry in fresh:
            doc_id = conn.execute(select(news.c.id).where(news.c.content_hash == entry["content_hash"])).scalar_one()
            _tag(conn, "NEWS", doc_id, names.mentions(f"{entry['title']}\n{entry['summary']}", entry["published_at"]))
        report.news_new += len(fresh)


NEWS_COLUMNS = ("content_hash", "link", "guid", "title", "summary", "feed_url", "published_at")


def _identity(entry: dict) -> tuple[str, str, str] | None:
    """What tells a feed's item from its others: the feed's id of it (RSS guid, Atom id) in
    that feed where it gives one, else its link; None: neither (known by its content only).
    A feed that links every story to its newsroom page gives each story a guid of its own:
    by the link, every story after the first was taken as already stored, in one fetch and
    across fetches alike."""
    if entry["guid"]:
        return ("guid", entry["feed_url"], entry["guid"])
    return ("link", "", entry["link"]) if entry["link"] else None


def _stored_identities(conn: Connection, entries: list[dict]) -> set[tuple[str, str, str] | None]:
    """The identities of `entries` that a stored news item has (never None)."""
    news = tables.news_items
    known: set[tuple[str, str, str] | None] = set()
    for feed in {entry["feed_url"] for entry in entries if entry["guid"]}:
        guids = {entry["guid"] for entry in entries if entry["guid"] and entry["feed_url"] == feed}
        known.update(("guid", feed, guid) for guid in _stored(conn, news.c.guid, guids, news.c.feed_url == feed))
    links = {entry["link"] for entry in entries if entry["link"] and not entry["guid"]}
    known.update(("link", "", link) for link in _stored(conn, news.c.link, links))
    return known


def content_hash(title: str, summary: str) -> str:
    """What makes two news items the same story: their plain title and summary, case-folded
    (the same story from a wire in plain text and a paper in HTML, retitled in capitals)."""
    return hashlib.sha256(f"{title}\n{summary}".casefold().encode()).hexdigest()


def _legacy_hash(item: dict) -> str:
    """The content hash of items stored before `content_hash` (of the raw text with its
    markup, whitespace collapsed): looked up too, so that those stored items, a link-less
    one included, are not new again."""
    raw = f"{(item.get('title') or '').strip()}\n{(item.get('summary') or '').strip()}"
    return hashlib.sha256(" ".join(raw.split()).encode()).hexdigest()


def _stored(conn: Connection, column: Column, values: set[str], *where: ColumnElement[bool]) -> set[str]:
    """Those of `values` that a stored news item (one matching `where`) has in `column`,
    looked up in chunks (one `IN (...)` of a feed's every item went over Postgres's 65,535
    parameters)."""
    found: set[str] = set()
    for chunk in key_chunks(sorted(values)):
        found.update(conn.execute(select(column).where(column.in_(chunk), *where)).scalars())
    return found


@dataclass(frozen=True)
class _DisclosureRun:
    """What storing a day's disclosures works with: the store, the settings, the day, the
    names it tags texts with, the PDF worker, the HTTP client and the report it adds to."""

    engine: Engine
    settings: Settings
    day: date
    names: _Names
    extractor: PdfExtractor
    http: httpx.Client
    report: TextIngestReport


def _store_disclosure(run: _DisclosureRun, entry: dict) -> None:
    """A feed entry's PDF downloaded, read in the sandbox and stored once, with its tags;
    an error nobody foresaw on this one file (a reader's, the store's refusal of its row)
    is its FAILED row with that reason, never the stage's failure (retried on the next run)."""
    try:
        _store_one_disclosure(run, entry)
    except Exception as exc:  # one disclosure's fault is its own row
        log.exception("disclosure %s failed unexpectedly", masked_urls(entry["pdf"]))
        first_line = (str(exc).splitlines() or [""])[0]
        reason = printable(f"unexpected error ({type(exc).__name__}: {first_line})")
        row = {"url": entry["pdf"], "title": entry["title"], "published_at": entry["published_at"]}
        _write_disclosure(run, entry, {**row, "status": "FAILED", "failure_reason": reason})


def _store_one_disclosure(run: _DisclosureRun, entry: dict) -> None:
    engine, settings = run.engine, run.settings
    url = entry["pdf"]
    with engine.connect() as conn:
        if _known_address(conn, url) or _deferred(run):
            return
    row = {"url": url, "title": entry["title"], "published_at": entry["published_at"], "status": "OK"}
    try:
        data = _download(run.http, url, settings)
        sha = hashlib.sha256(data).hexdigest()
        if _stored_elsewhere(run, url, sha):
            return
        path = _kept(settings.data_dir / "disclosures" / f"{sha}.pdf", data, sha)
        row.update(file_path=str(path), file_sha256=sha)
        text = run.extractor.extract(data, Path(url).name)
        row.update(page_count=text.pages, body=text.text, kind=classify_disclosure(entry["title"], text.text))
    except (PdfRejected, MarketIntelError) as exc:
        row.update(status="FAILED", failure_reason=exc.detail)
    _write_disclosure(run, entry, row)


def _deferred(run: _DisclosureRun) -> bool:
    """Whether a disclosure to download is left for the next run, counted so: the run has
    started its `disclosures_per_run` downloads (a feed listing thousands of PDFs, each up to
    `pdf_timeout_seconds` to download and as long to read, held the stage for hours). Nothing
    of it is stored, so the next run that reads it in a feed downloads it."""
    if run.report.disclosures_fetched < run.settings.disclosures_per_run:
        run.report.disclosures_fetched += 1
        return False
    run.report.disclosures_deferred += 1
    return True


def _known_address(conn: Connection, url: str) -> bool:
    """Whether `url` needs no download: its disclosure is stored and was read, or it is an
    address the same file was found at (`disclosure_addresses`). A FAILED one is tried again."""
    if _read(conn, url):
        return True
    addresses = tables.disclosure_addresses
    return conn.execute(select(addresses.c.id).where(addresses.c.url == url)).first() is not None


def _read(conn: Connection, url: str) -> bool:
    """Whether the disclosure at `url` is stored and was read (its current version OK)."""
    stored = current_rows(conn, tables.disclosures, where=[tables.disclosures.c.url == url])
    return bool(stored) and stored[0]["status"] == "OK"


def _stored_elsewhere(run: _DisclosureRun, url: str, sha: str) -> bool:
    """Whether the file `url` gave (of sha256 `sha`) is a disclosure already stored under
    another address, looked up before it is read (`_kept_as_address`)."""
    with write_transaction(run.engine, TEXT_LOCK) as conn:
        return _kept_as_address(conn, url, sha)


def _kept_as_address(conn: Connection, url: str, sha: str) -> bool:
    """Whether the file `url` gave (of sha256 `sha`) is a disclosure already stored under
    another address: it is stored once, and `url` is kept as an address of it, so that no
    later run downloads it again. Called under the text lock, which the disclosure's own
    write holds too: the check and the write are one step, so two runs at once finding one
    file under two new addresses store it once (each stored it, and it counted twice in
    the day's sentiment)."""
    d = tables.disclosures
    same_file = conn.execute(
        select(d.c.id).where((d.c.file_sha256 == sha) & (d.c.status == "OK") & (d.c.url != url))
    ).first()
    if same_file is None:
        return False
    append_history(conn, tables.disclosure_addresses, [{"url": url, "file_sha256": sha}])
    return True


def _kept(path: Path, data: bytes, sha: str) -> Path:
    """`path` holding `data` (whose sha256 is `sha`), written whole (market/files.py) unless
    it already holds them: a file cut short by a writer that was stopped is written again."""
    if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != sha:
        write_whole(path, data)
    return path


def _write_disclosure(run: _DisclosureRun, entry: dict, row: dict) -> None:
    """A disclosure's row stored, tagged when it is OK, and counted in the report; nothing
    where another run stored the disclosure meanwhile, read (under the text lock, as the
    write: the look-up before the download is not)."""
    url = row["url"]
    with write_transaction(run.engine, TEXT_LOCK) as conn:
        if _read(conn, url):  # another run stored it meanwhile (its look-up came before that write)
            return  # a second version under another feed's title was listed twice, a FAILED one retried
        if row["status"] == "OK" and _kept_as_address(conn, url, row["file_sha256"]):
            return  # another run stored the same file meanwhile, under another address
        append_history(conn, tables.disclosures, [row])
        if row["status"] == "OK":
            (stored_row,) = current_rows(conn, tables.disclosures, where=[tables.disclosures.c.url == url])
            _tag(
                conn,
                "DISCLOSURE",
                stored_row["id"],
                run.names.mentions(_disclosure_text(entry, row), row["published_at"]),
            )
    if row["status"] == "FAILED":
        log.warning("disclosure %s failed: %s", masked_urls(url), row["failure_reason"])
        run.report.failures.append(f"{masked_urls(url)}: {row['failure_reason']}")
    run.report.disclosures_ok += row["status"] == "OK"
    run.report.disclosures_failed += row["status"] == "FAILED"


def _disclosure_text(entry: dict, row: dict) -> str:
    """What a disclosure is tagged from: its feed item's title and summary, and its PDF's
    text. The summary too: a scanned notice (no text layer) titled "Notice of dividend" named
    nobody, though its feed item said which company declared it."""
    return f"{entry['title']}\n{entry['summary']}\n{row['body']}"


def _download(http: httpx.Client, url: str, settings: Settings) -> bytes:
    """The file at `url`, at most `pdf_max_bytes` of it, within about `pdf_timeout_seconds`
    in all (the client's timeout bounds each wait only: a server sending a byte a second went
    on for ever). Each address, the first and every one redirected to, is checked before it is
    requested, and requested at the address checked (`ingest.addresses.followed`): a feed
    never has the service request an internal one beyond the configured feeds' own origins."""
    deadline = Deadline(settings.pdf_timeout_seconds, "the download", "retried on the next run")
    trusted = frozenset(origin(feed) for feed in feed_urls(settings))  # the operator's own addresses
    reach = Reach(settings.allow_private_enclosures, trusted)
    try:
        with followed(http, url, deadline, reach, {"Accept-Encoding": ACCEPT_ENCODING}) as hop:
            if hop.response.status_code != 200:
                raise MarketIntelError(f"download answered HTTP {hop.response.status_code}")
            return bounded_body(hop.response, settings.pdf_max_bytes, deadline)
    except httpx.HTTPError as exc:
        raise MarketIntelError(f"download failed ({type(exc).__name__}: {exc})") from None


@dataclass(frozen=True)
class _Names:
    """What a text is tagged with: the instruments it names (`matcher`), each under the ticker
    its company traded under when the text was published (`renames`, the stored ticker
    changes; `day`, the run's, for a text without a date). A text after a rename naming the
    old ticker, as the press goes on writing it, was the old symbol's alone: delisted from
    the ex-date, it reached neither the new symbol's news nor its sentiment composite."""

    matcher: InstrumentMatcher
    renames: list[Split]
    day: date

    def mentions(self, text: str, published: datetime | None) -> list[Mention]:
        on = published.astimezone(EXCHANGE_TZ).date() if published is not None else self.day
        found: dict[str, Mention] = {}
        for mention in self.matcher.find(text):
            symbol, seen = mention.symbol, {mention.symbol}
            while (rename := renamed_on(self.renames, symbol, on)) is not None and rename.new_symbol not in seen:
                symbol = str(rename.new_symbol)  # a chain (A to B, then B to C) to its last ticker
                seen.add(symbol)
            found.setdefault(symbol, Mention(symbol, mention.matched_by))
        return sorted(found.values(), key=lambda m: m.symbol)


def _tag(conn: Connection, kind: str, doc_id: int, mentions: list[Mention]) -> None:
    append_history(
        conn,
        tables.document_mentions,
        [{"doc_kind": kind, "doc_id": doc_id, "symbol": m.symbol, "matched_by": m.matched_by} for m in mentions],
    )
