"""News and disclosure ingestion over real HTTP, with hostile sources that must each
become a stored failure with its reason while the day goes on."""

import asyncio
import gzip
import hashlib
import secrets
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import httpx
import pytest
from sqlalchemy import select

from ingest.exchange.client import ExchangeClient
from ingest.pdf_text import PdfExtractor
from ingest.text_sources import classify_disclosure, ingest_text
from market.settings import Settings
from pipeline.sentiment import score_new_documents, texts_in_window
from pipeline.serving import serve_in_thread
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.conftest import ON_SQLITE_ONLY
from tests.pdf_samples import decompression_bomb, page_bomb, relabelled_pdf, scanned_pdf, text_pdf
from views.instrument import news

DAY = date(2026, 11, 20)


def _item(title: str, link: str, pdf: str | None = None, description: str = "") -> str:
    enclosure = f'<enclosure url="{pdf}" type="application/pdf" length="0"/>' if pdf else ""
    return (
        f"<item><title>{title}</title><link>{link}</link><guid>{link}</guid>"
        f"<pubDate>Fri, 20 Nov 2026 14:00:00 -0500</pubDate><description>{description}</description>{enclosure}</item>"
    )


class Files:
    """A tiny website whose pages the test sets."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[int, str, bytes]] = {}
        self.asked: list[str] = []  # the paths requested, in order

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        self.asked.append(scope["path"])
        status, kind, body = self.pages.get(scope["path"], (404, "text/plain", b"not found"))
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", kind.encode())]})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
def site(settings: Settings) -> Iterator[tuple[Files, str]]:
    files = Files()
    with serve_in_thread(files) as url:
        yield files, url


INSTRUMENTS = [
    {"symbol": "KCB", "name": "Kingston Commercial Bank", "board": "MAIN", "source": "t"},
    {"symbol": "ISB", "name": "Island Savings Bank", "board": "MAIN", "source": "t"},
]


def _ingest(settings: Settings, feeds: list[str]):
    settings = settings.model_copy(
        update={"news_feeds": feeds, "pdf_timeout_seconds": 15, "exchange_retries": 1, "exchange_backoff_seconds": 0.01}
    )
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.instruments, INSTRUMENTS)
    with ExchangeClient("", retries=1, backoff=0.01) as client, httpx.Client(timeout=15) as http:
        return ingest_text(service_engine(settings), settings, DAY, client, http)


def _stamped(settings: Settings, site: tuple[Files, str], stamps: dict[str, str]) -> tuple[dict, set, dict]:
    """A feed of one item per stamp ("KCB <name>", published as the stamp writes it)
    ingested: `_stored_and_counted`."""
    files, url = site
    files.pages["/feed"] = _feed(
        *(
            _item(f"KCB {name}", f"{url}/n/{name}", description="Profit rose.").replace(
                "Fri, 20 Nov 2026 14:00:00 -0500", stamp
            )
            for name, stamp in stamps.items()
        )
    )
    _ingest(settings, [f"{url}/feed"])
    return _stored_and_counted(settings)


def _stored_and_counted(settings: Settings) -> tuple[dict, set, dict]:
    """The stored news by title (its `published_at`), the ids the day's sentiment window
    counts once the new documents are scored, and the stored ids by title."""
    with service_engine(settings).begin() as conn:
        stored = {r["title"]: r["published_at"] for r in current_rows(conn, tables.news_items)}
        score_new_documents(conn)
        counted = {t.doc_id for t in texts_in_window(conn, DAY)}
        ids = {r["title"]: r["id"] for r in current_rows(conn, tables.news_items)}
    return stored, counted, ids


def _feed(*items: str) -> tuple[int, str, bytes]:
    return (
        200,
        "application/rss+xml",
        (
            "<?xml version='1.0'?><rss version='2.0'><channel><title>t</title>" + "".join(items) + "</channel></rss>"
        ).encode(),
    )


def test_the_same_feed_twice_stores_each_item_once(settings: Settings, site: tuple[Files, str]) -> None:
    files, url = site
    files.pages["/feed"] = _feed(
        _item("KCB reports strong profit growth", f"{url}/n/1", description="Record results."),
        _item("Island Savings Bank warns of losses", f"{url}/n/2"),
        _item("KCB reports strong profit growth", f"{url}/n/1-copy", description="Record results."),  # same content
    )
    first = _ingest(settings, [f"{url}/feed"])
    second = _ingest(settings, [f"{url}/feed"])
    assert (first.news_new, second.news_new, second.news_seen) == (2, 0, 3)
    with service_engine(settings).connect() as conn:
        news = current_rows(conn, tables.news_items)
        mentions = {(m["doc_id"], m["symbol"], m["matched_by"]) for m in current_rows(conn, tables.document_mentions)}
    assert len(news) == 2
    ids = {n["title"]: n["id"] for n in news}
    assert mentions == {
        (ids["KCB reports strong profit growth"], "KCB", "symbol"),
        (ids["Island Savings Bank warns of losses"], "ISB", "name"),
    }


def test_hostile_sources_are_stored_failures_and_the_day_goes_on(settings: Settings, site: tuple[Files, str]) -> None:
    files, url = site
    files.pages.update(
        {
            "/broken-feed": (200, "application/rss+xml", b"<rss><channel><item><title>cut off"),
            "/good.pdf": (
                200,
                "application/pdf",
                text_pdf(["Kingston Commercial Bank interim financial results", "Profit improved strongly."]),
            ),
            "/encrypted.pdf": (200, "application/pdf", text_pdf(["secret"], password="pw")),
            "/pages.pdf": (200, "application/pdf", page_bomb()),
            "/zip.pdf": (200, "application/pdf", decompression_bomb()),
            "/page.pdf": (200, "application/pdf", b"<html><body>Not a PDF at all</body></html>"),
            "/feed": _feed(
                *(
                    _item(f"Disclosure {n}", f"{url}/d/{n}", pdf=f"{url}/{n}.pdf")
                    for n in ("good", "missing", "encrypted", "pages", "zip", "page")
                )
            ),
        }
    )
    report = _ingest(settings, [f"{url}/unreachable-feed", f"{url}/broken-feed", f"{url}/feed"])
    assert report.disclosures_ok == 1 and report.disclosures_failed == 5
    with service_engine(settings).connect() as conn:
        disclosures = {r["url"].rsplit("/", 1)[1]: r for r in current_rows(conn, tables.disclosures)}
        failures = {r["source_url"].rsplit("/", 1)[1]: r["reason"] for r in current_rows(conn, tables.ingest_failures)}
    assert disclosures["good.pdf"]["status"] == "OK" and disclosures["good.pdf"]["kind"] == "RESULTS"
    assert "Profit improved strongly." in disclosures["good.pdf"]["body"]
    reasons = {name: row["failure_reason"] for name, row in disclosures.items() if row["status"] == "FAILED"}
    assert reasons["missing.pdf"] == "download answered HTTP 404"
    assert reasons["encrypted.pdf"] == "encrypted.pdf is encrypted (a password is required)"
    assert reasons["pages.pdf"] == "pages.pdf has 400 pages, more than the limit of 50"
    assert reasons["zip.pdf"].startswith("zip.pdf ") and (
        "memory" in reasons["zip.pdf"] or "longer than" in reasons["zip.pdf"]
    )
    assert reasons["page.pdf"] == "page.pdf is not a PDF (it starts with '<html><body>Not ')"
    assert failures["unreachable-feed"].endswith("answered 404; not retried")
    assert failures["broken-feed"].startswith("not a readable feed")


def test_a_failed_disclosure_is_retried_and_an_unchanged_failure_not_repeated(
    settings: Settings, site: tuple[Files, str]
) -> None:
    files, url = site
    files.pages["/feed"] = _feed(_item("KCB dividend notice", f"{url}/d/1", pdf=f"{url}/late.pdf"))
    _ingest(settings, [f"{url}/feed"])
    _ingest(settings, [f"{url}/feed"])
    files.pages["/late.pdf"] = (200, "application/pdf", text_pdf(["KCB declares a dividend of J$0.50"]))
    _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        versions = conn.execute(select(tables.disclosures.c.status).order_by(tables.disclosures.c.id)).scalars().all()
        (current,) = current_rows(conn, tables.disclosures)
    assert versions == ["FAILED", "OK"]
    assert current["kind"] == "DIVIDEND"


@pytest.mark.parametrize(
    "title, text, kind",
    [
        ("Audited financial statements for the year", "", "RESULTS"),
        ("Notice of dividend", "", "DIVIDEND"),
        ("Directors' dealings", "", "DIRECTOR_TRADING"),
        ("Notice of Annual General Meeting", "", "AGM"),
        ("Change of registered office", "", "OTHER"),
        ("Notice", "A director purchased 10,000 shares", "DIRECTOR_TRADING"),
    ],
)
def test_disclosure_classification(title: str, text: str, kind: str) -> None:
    assert classify_disclosure(title, text) == kind


def test_a_stamp_without_a_zone_or_a_time_never_counts_before_the_close_it_may_follow(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A time without a zone is exchange time and a bare date the end of that day: read as
    UTC (feedparser's way), both entered the composite of a close they came after."""
    files, url = site
    entries = {
        "after-close": "2026-11-20T16:30:00",  # 16:30 at the exchange, after the 16:00 close
        "some-time-that-day": "2026-11-20",
        "before-close": "2026-11-20T15:00:00-05:00",
    }
    files.pages["/atom"] = (
        200,
        "application/atom+xml",
        (
            "<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><title>t</title>"
            + "".join(
                f"<entry><title>KCB {name}</title><link href='{url}/n/{name}'/><id>{url}/n/{name}</id>"
                f"<updated>{stamp}</updated><summary>Profit rose.</summary></entry>"
                for name, stamp in entries.items()
            )
            + "</feed>"
        ).encode(),
    )
    _ingest(settings, [f"{url}/atom"])
    stored, counted, ids = _stored_and_counted(settings)
    assert stored == {
        "KCB after-close": datetime(2026, 11, 20, 21, 30, tzinfo=UTC),
        "KCB some-time-that-day": datetime(2026, 11, 21, 4, 59, 59, tzinfo=UTC),
        "KCB before-close": datetime(2026, 11, 20, 20, 0, tzinfo=UTC),
    }
    assert counted == {ids["KCB before-close"]}


def test_a_pdf_sent_a_byte_at_a_time_is_cut_off_at_the_time_limit(settings: Settings) -> None:
    """Each byte comes within the client's timeout, so only a limit on the whole download
    stops it: a server dripping a PDF used to hold the stage as long as it liked."""

    async def dripping(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        feed = scope["path"] == "/feed"
        kind = b"application/rss+xml" if feed else b"application/pdf"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
        if feed:
            body = _feed(_item("KCB notice", "http://x/d/1", pdf=f"{base}/slow.pdf"))[2]
            await send({"type": "http.response.body", "body": body})
            return
        for _ in range(40):  # 10 s in all, a byte every 0.25 s
            await send({"type": "http.response.body", "body": b"%", "more_body": True})
            await asyncio.sleep(0.25)
        await send({"type": "http.response.body", "body": b""})

    with serve_in_thread(dripping, grace_seconds=1) as base:
        started = time.monotonic()
        settings = settings.model_copy(update={"news_feeds": [f"{base}/feed"], "pdf_timeout_seconds": 1})
        with ExchangeClient("", retries=0) as client, httpx.Client(timeout=1) as http:
            report = ingest_text(service_engine(settings), settings, DAY, client, http)
        took = time.monotonic() - started
    (failure,) = report.failures
    assert failure == f"{base}/slow.pdf: the download took longer than the 1 s allowed; retried on the next run"
    assert took < 5


def test_an_item_is_stored_once_by_its_link_within_a_feed_and_an_item_without_a_link_is_not_dropped(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """The same link twice in one feed (an item re-published with corrected text) was stored
    and counted twice; and once a stored item without a link was read back, every other new
    item without a link was taken as already stored."""
    files, url = site
    files.pages["/feed"] = _feed(
        _item("KCB profit rises", f"{url}/n/1", description="Profit rose."),
        _item("KCB profit rises sharply", f"{url}/n/1", description="Corrected: profit rose sharply."),
        "<item><title>ISB opens a branch</title></item>",
    )
    first = _ingest(settings, [f"{url}/feed"])
    files.pages["/feed"] = _feed(
        "<item><title>ISB opens a branch</title></item>", "<item><title>Island Savings Bank names a CEO</title></item>"
    )
    second = _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        titles = sorted(r["title"] for r in current_rows(conn, tables.news_items))
    assert (first.news_new, first.news_seen, second.news_new, second.news_seen) == (2, 1, 1, 1)
    assert titles == ["ISB opens a branch", "Island Savings Bank names a CEO", "KCB profit rises"]
    files.pages["/feed"] = _feed("<item><title>KCB names a CEO</title></item>", "<item><title>KCB AGM</title></item>")
    third = _ingest(settings, [f"{url}/feed"])
    assert (third.news_new, third.news_seen) == (2, 0)  # the first without a link was no match for the next


def test_a_pdf_whose_text_holds_a_nul_is_stored_without_it_and_the_day_goes_on(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A glyph mapped to U+0000 put a NUL in the extracted text: Postgres refused the row
    and the stage stopped, losing the other PDF and the next feed, every day again."""
    files, url = site
    files.pages.update(
        {
            "/nul.pdf": (200, "application/pdf", relabelled_pdf(["KCB interim results X profit rose"], {"X": "\x00"})),
            "/good.pdf": (200, "application/pdf", text_pdf(["Island Savings Bank declares a dividend"])),
            "/feed1": _feed(
                _item("KCB interim results", f"{url}/d/1", pdf=f"{url}/nul.pdf"),
                _item("ISB dividend notice", f"{url}/d/2", pdf=f"{url}/good.pdf"),
            ),
            "/feed2": _feed(_item("KCB wins licence", f"{url}/n/3")),
        }
    )
    report = _ingest(settings, [f"{url}/feed1", f"{url}/feed2"])
    with service_engine(settings).connect() as conn:
        disclosures = {r["url"].rsplit("/", 1)[1]: r for r in current_rows(conn, tables.disclosures)}
        news = [r["title"] for r in current_rows(conn, tables.news_items)]
    assert (report.disclosures_ok, report.disclosures_failed, news) == (2, 0, ["KCB wins licence"])
    assert disclosures["nul.pdf"]["body"].split() == ["KCB", "interim", "results", "profit", "rose"]


class _FaultyExtractor:
    """The real extractor, but one file raises what nobody expected."""

    def __init__(self, real: PdfExtractor) -> None:
        self.real = real

    def extract(self, data: bytes, name: str = "file"):
        if name == "odd.pdf":
            raise RuntimeError("the reader tripped")
        return self.real.extract(data, name)


@ON_SQLITE_ONLY
def test_an_unexpected_error_on_one_disclosure_is_its_failed_row(settings: Settings, site: tuple[Files, str]) -> None:
    files, url = site
    files.pages.update(
        {
            "/odd.pdf": (200, "application/pdf", text_pdf(["KCB notice"])),
            "/good.pdf": (200, "application/pdf", text_pdf(["Island Savings Bank declares a dividend"])),
            "/feed": _feed(
                _item("KCB notice", f"{url}/d/1", pdf=f"{url}/odd.pdf"),
                _item("ISB dividend notice", f"{url}/d/2", pdf=f"{url}/good.pdf"),
            ),
        }
    )
    settings = settings.model_copy(update={"news_feeds": [f"{url}/feed"], "exchange_retries": 0})
    with (
        ExchangeClient("", retries=0) as client,
        httpx.Client(timeout=15) as http,
        PdfExtractor.from_settings(settings) as real,
    ):
        report = ingest_text(service_engine(settings), settings, DAY, client, http, _FaultyExtractor(real))
    with service_engine(settings).connect() as conn:
        rows = {r["url"].rsplit("/", 1)[1]: r for r in current_rows(conn, tables.disclosures)}
    assert (report.disclosures_ok, report.disclosures_failed) == (1, 1)
    assert rows["odd.pdf"]["status"] == "FAILED"
    assert rows["odd.pdf"]["failure_reason"] == "unexpected error (RuntimeError: the reader tripped)"
    assert rows["good.pdf"]["status"] == "OK"


@ON_SQLITE_ONLY
@pytest.mark.parametrize("stamp", ["9999-12-31", "0001-01-01T00:00:00+05:00"])
def test_an_item_dated_out_of_range_is_undated_and_its_feed_and_the_next_are_kept(
    settings: Settings, site: tuple[Files, str], stamp: str
) -> None:
    """Its date overflowed the calendar when read as exchange time or UTC, outside the
    feed's error handling: the whole stage failed, on any database."""
    files, url = site
    far = _item("KCB archive", f"{url}/n/2").replace("Fri, 20 Nov 2026 14:00:00 -0500", stamp)
    files.pages["/feed1"] = _feed(_item("KCB profit rises", f"{url}/n/1"), far)
    files.pages["/feed2"] = _feed(_item("ISB opens a branch", f"{url}/n/3"))
    report = _ingest(settings, [f"{url}/feed1", f"{url}/feed2"])
    with service_engine(settings).connect() as conn:
        stored = {r["title"]: r["published_at"] for r in current_rows(conn, tables.news_items)}
    assert (report.news_new, report.failures) == (3, [])
    assert stored["KCB archive"] is None
    assert stored["ISB opens a branch"] == datetime(2026, 11, 20, 19, 0, tzinfo=UTC)


# SQLite read the single look-up as well; what it proves is Postgres's limit
@pytest.mark.parametrize("database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_a_feed_of_more_items_than_a_statement_can_bind_is_read(settings: Settings, site: tuple[Files, str]) -> None:
    """The look-up of a feed's stored items bound two parameters an item in one statement:
    at 32,768 items Postgres refused it (65,535 at most) and the stage failed."""
    files, url = site
    many = 33_000
    with service_engine(settings).begin() as conn:  # stored on an earlier day
        append_history(
            conn,
            tables.news_items,
            [
                {"content_hash": f"{n:064x}", "link": f"{url}/n/{n}", "title": f"Item {n}", "feed_url": f"{url}/feed1"}
                for n in range(many)
            ],
        )
    files.pages["/feed1"] = _feed(
        *(f"<item><title>Item {n}</title><link>{url}/n/{n}</link></item>" for n in range(many)),
        _item("KCB profit rises", f"{url}/k/1"),
    )
    files.pages["/feed2"] = _feed(_item("ISB opens a branch", f"{url}/k/2"))
    report = _ingest(settings, [f"{url}/feed1", f"{url}/feed2"])
    assert (report.news_seen, report.news_new, report.failures) == (many, 2, [])


@ON_SQLITE_ONLY
def test_a_stamp_in_am_pm_or_an_unknown_zone_never_counts_before_the_close_it_may_follow(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """feedparser drops AM/PM (4:30 PM was 04:30) and reads a zone name it does not know as
    UTC: both put after-close news into that day's composite."""
    stamps = {
        "pm": "Fri, 20 Nov 2026 04:30 PM -0500",
        "pm-named-zone": "Fri, 20 Nov 2026 04:30 PM EST",
        "am": "Fri, 20 Nov 2026 11:30 AM -0500",
        "cot": "Fri, 20 Nov 2026 16:30:00 COT",
        "local": "2026-11-20 16:30 local",
    }
    stored, counted, ids = _stamped(settings, site, stamps)
    assert stored == {
        "KCB pm": datetime(2026, 11, 20, 21, 30, tzinfo=UTC),
        "KCB pm-named-zone": datetime(2026, 11, 20, 21, 30, tzinfo=UTC),
        "KCB am": datetime(2026, 11, 20, 16, 30, tzinfo=UTC),
        "KCB cot": datetime(2026, 11, 21, 4, 30, tzinfo=UTC),  # 16:30 at UTC-12, the latest it can be
        "KCB local": datetime(2026, 11, 21, 4, 30, tzinfo=UTC),
    }
    assert counted == {ids["KCB am"]}


@ON_SQLITE_ONLY
def test_a_pdf_enclosure_is_read_whatever_its_type_is_written_and_wherever_its_url_is_relative_to(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """Only `application/pdf` exactly was a disclosure (x-pdf, or with a parameter, was stored
    as news and never read), and a relative enclosure URL could never be downloaded."""
    files, url = site
    kinds = {"a": "application/pdf", "b": "application/x-pdf", "c": "Application/PDF; charset=binary", "d": ""}
    for name in kinds:
        files.pages[f"/files/{name}.pdf"] = (200, "application/pdf", text_pdf([f"KCB notice {name}: profit fell"]))
    files.pages["/feeds/rss"] = _feed(
        *(
            _item(f"KCB notice {name}", f"{url}/d/{name}", pdf=f"{url}/files/{name}.pdf").replace(
                'type="application/pdf"', f'type="{kind}"'
            )
            for name, kind in kinds.items()
            if kind
        ),
        _item("KCB notice d", f"{url}/d/d", pdf="../files/d.pdf"),
    )
    report = _ingest(settings, [f"{url}/feeds/rss"])
    with service_engine(settings).connect() as conn:
        disclosures = {r["title"]: (r["status"], r["url"]) for r in current_rows(conn, tables.disclosures)}
        news = current_rows(conn, tables.news_items)
    assert (report.disclosures_ok, report.disclosures_failed, news) == (4, 0, [])
    assert disclosures["KCB notice d"] == ("OK", f"{url}/files/d.pdf")


@ON_SQLITE_ONLY
def test_the_same_story_with_an_html_summary_is_stored_and_counted_once(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """The content hash covered the summary's markup: the same story from a wire in plain
    text and a paper in HTML was stored twice and counted twice in the composite."""
    files, url = site
    plain = "Losses widened &amp; the dividend was cut."
    html = "&lt;p&gt;Losses  widened &amp;amp; the &lt;b&gt;dividend&lt;/b&gt; was cut.&lt;/p&gt;"
    files.pages["/wire"] = _feed(_item("KCB profit falls sharply", f"{url}/wire/1", description=plain))
    files.pages["/paper"] = _feed(_item("KCB Profit Falls Sharply", f"{url}/paper/77", description=html))
    report = _ingest(settings, [f"{url}/wire", f"{url}/paper"])
    with service_engine(settings).begin() as conn:
        stored = [(r["title"], r["summary"]) for r in current_rows(conn, tables.news_items)]
        score_new_documents(conn)
        counted = [t.doc_id for t in texts_in_window(conn, DAY + timedelta(days=3))]
    assert (report.news_new, report.news_seen) == (1, 1)
    assert stored == [("KCB profit falls sharply", "Losses widened & the dividend was cut.")]
    assert len(counted) == 1


@ON_SQLITE_ONLY
def test_items_stored_under_the_earlier_content_hash_are_not_new_again(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """The content hash is now of the plain, case-folded text; an item stored under the
    earlier hash (of the raw text) and without a link must still be known on the next run."""
    files, url = site
    title, summary = "ISB opens a branch", "Island Savings Bank & partners open in Ocho Rios."  # as feedparser reads it
    with service_engine(settings).begin() as conn:
        legacy = hashlib.sha256(" ".join(f"{title}\n{summary}".split()).encode()).hexdigest()
        append_history(
            conn,
            tables.news_items,
            [{"content_hash": legacy, "link": None, "title": title, "summary": summary, "feed_url": f"{url}/feed"}],
        )
    described = summary.replace("&", "&amp;")
    files.pages["/feed"] = _feed(f"<item><title>{title}</title><description>{described}</description></item>")
    report = _ingest(settings, [f"{url}/feed"])
    assert (report.news_new, report.news_seen) == (0, 1)


def test_two_runs_at_once_store_each_item_and_disclosure_once(
    settings: Settings, site: tuple[Files, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backfill's day beside the daily run (two DAG runs at once) reading the same feed:
    both look up what is stored before either writes (held at a barrier while they can be),
    and the items, the disclosure and its file are stored once, the lookups after the
    first writer's commit finding them stored."""
    import threading

    import ingest.text_sources as text_sources

    files, url = site
    files.pages.update(
        {
            "/dividend.pdf": (200, "application/pdf", text_pdf(["Kingston Commercial Bank declares a dividend"])),
            "/feed": _feed(
                _item("KCB profit rises", f"{url}/n/1"),
                _item("Island Savings Bank names a CEO", f"{url}/n/2"),
                _item("KCB dividend notice", f"{url}/d/1", pdf=f"{url}/dividend.pdf"),
            ),
        }
    )
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.instruments, INSTRUMENTS)
    settings = settings.model_copy(update={"news_feeds": [f"{url}/feed"], "exchange_retries": 0})
    both_looked, looked = threading.Barrier(2), threading.local()
    stored = text_sources._stored

    def stored_after_both_looked(*args):
        found = stored(*args)
        if not getattr(looked, "once", False):
            looked.once = True
            try:
                both_looked.wait(timeout=3)  # a run held by the other's lock times out here
            except threading.BrokenBarrierError:
                pass
        return found

    monkeypatch.setattr(text_sources, "_stored", stored_after_both_looked)
    reports, errors = {}, []

    def run(day: date) -> None:
        try:
            with ExchangeClient("", retries=0) as client, httpx.Client(timeout=15) as http:
                reports[day] = ingest_text(service_engine(settings), settings, day, client, http)
        except Exception as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(day,)) for day in (DAY, DAY - timedelta(days=1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    with service_engine(settings).connect() as conn:
        news = conn.execute(select(tables.news_items.c.title)).scalars().all()
        disclosures = conn.execute(select(tables.disclosures.c.status)).scalars().all()
        mentions = conn.execute(select(tables.document_mentions.c.doc_kind, tables.document_mentions.c.symbol)).all()
    assert sorted(news) == ["Island Savings Bank names a CEO", "KCB profit rises"]
    assert disclosures == ["OK"]
    assert sorted(mentions) == [("DISCLOSURE", "KCB"), ("NEWS", "ISB"), ("NEWS", "KCB")]
    assert sorted((r.news_new, r.news_seen) for r in reports.values()) == [(0, 2), (2, 0)]
    (pdf,) = (settings.data_dir / "disclosures").iterdir()
    assert pdf.read_bytes() == files.pages["/dividend.pdf"][2]


@ON_SQLITE_ONLY
def test_a_kept_pdf_cut_short_is_written_again(settings: Settings, site: tuple[Files, str]) -> None:
    """A run stopped while it wrote a disclosure's file (the old code wrote it in place)
    left half of it, which every later run trusted because the file was there."""
    files, url = site
    pdf = text_pdf(["Island Savings Bank declares a dividend"])
    files.pages.update(
        {
            "/good.pdf": (200, "application/pdf", pdf),
            "/feed": _feed(_item("ISB notice", f"{url}/d/1", pdf=f"{url}/good.pdf")),
        }
    )
    kept = settings.data_dir / "disclosures" / f"{hashlib.sha256(pdf).hexdigest()}.pdf"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_bytes(pdf[: len(pdf) // 2])
    report = _ingest(settings, [f"{url}/feed"])
    assert report.disclosures_ok == 1
    assert kept.read_bytes() == pdf


def test_the_same_pdf_under_a_new_address_is_stored_once_and_downloaded_once(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A stored disclosure's PDF named again under another address: recognised by its
    content and stored once, but nothing kept that address, so every run downloaded it."""
    files, url = site
    pdf = text_pdf(["Kingston Commercial Bank declares a dividend"])
    files.pages.update({"/a.pdf": (200, "application/pdf", pdf), "/b.pdf": (200, "application/pdf", pdf)})
    files.pages["/feed"] = _feed(_item("KCB dividend", f"{url}/d/1", pdf=f"{url}/a.pdf"))
    _ingest(settings, [f"{url}/feed"])
    files.pages["/feed"] = _feed(_item("KCB dividend notice", f"{url}/d/2", pdf=f"{url}/b.pdf"))
    reports = [_ingest(settings, [f"{url}/feed"]) for _ in range(3)]
    with service_engine(settings).connect() as conn:
        stored = [(r["url"], r["status"]) for r in current_rows(conn, tables.disclosures)]
    assert files.asked == ["/feed", "/a.pdf", "/feed", "/b.pdf", "/feed", "/feed"]
    assert stored == [(f"{url}/a.pdf", "OK")]
    assert [(r.disclosures_ok, r.disclosures_failed, r.failures) for r in reports] == [(0, 0, [])] * 3
    assert [p.name for p in (settings.data_dir / "disclosures").iterdir()] == [f"{hashlib.sha256(pdf).hexdigest()}.pdf"]


def test_a_feed_of_more_pdfs_than_a_run_takes_leaves_the_rest_for_the_next_runs_and_loses_none(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A feed listing thousands of PDFs had every one downloaded and read in one run, each up
    to the PDF time limit twice: the stage was held for hours. A run takes
    `disclosures_per_run` of those not stored, counts the rest as deferred, and the next
    runs take them; the ones stored are not counted again."""
    files, url = site
    items = []
    for n in range(5):
        files.pages[f"/{n}.pdf"] = (200, "application/pdf", text_pdf([f"Kingston Commercial Bank notice {n}"]))
        items.append(_item(f"KCB notice {n}", f"{url}/d/{n}", pdf=f"{url}/{n}.pdf"))
    files.pages["/feed"] = _feed(*items)
    settings = settings.model_copy(update={"disclosures_per_run": 2})
    reports = [_ingest(settings, [f"{url}/feed"]) for _ in range(4)]
    assert [(r.disclosures_ok, r.disclosures_deferred) for r in reports] == [(2, 3), (2, 1), (1, 0), (0, 0)]
    assert sorted(p for p in files.asked if p.endswith(".pdf")) == [f"/{n}.pdf" for n in range(5)]
    with service_engine(settings).connect() as conn:
        stored = sorted(r["title"] for r in current_rows(conn, tables.disclosures) if r["status"] == "OK")
    assert stored == [f"KCB notice {n}" for n in range(5)]


class _HeldExtractor:
    """A PDF worker that reads only once both runs have downloaded their file (each run's
    look-up for the same file stored elsewhere is done by then)."""

    def __init__(self, inner: PdfExtractor, both_downloaded: threading.Barrier) -> None:
        self.inner, self.both_downloaded = inner, both_downloaded

    def extract(self, data: bytes, name: str = "file"):
        try:
            self.both_downloaded.wait(timeout=3)
        except threading.BrokenBarrierError:
            pass
        return self.inner.extract(data, name)


def test_one_pdf_found_under_two_new_addresses_by_two_runs_at_once_is_stored_and_counted_once(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """Two runs at once (a backfill's day beside the daily run), each finding the same PDF
    under an address of its own: each looked for the file stored elsewhere before either
    wrote, and each stored it, so the day's sentiment counted the one disclosure twice."""
    files, url = site
    pdf = text_pdf(["Kingston Commercial Bank declares a dividend"])
    files.pages.update(
        {
            "/a.pdf": (200, "application/pdf", pdf),
            "/b.pdf": (200, "application/pdf", pdf),
            "/fa": _feed(_item("KCB dividend", f"{url}/d/1", pdf=f"{url}/a.pdf")),
            "/fb": _feed(_item("KCB dividend notice", f"{url}/d/2", pdf=f"{url}/b.pdf")),
        }
    )
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.instruments, INSTRUMENTS)
    both_downloaded, reports = threading.Barrier(2), []

    def run(feed: str, day: date) -> None:
        own = settings.model_copy(update={"news_feeds": [f"{url}{feed}"], "exchange_retries": 0})
        with (
            ExchangeClient("", retries=0) as client,
            httpx.Client(timeout=15) as http,
            PdfExtractor.from_settings(own) as extractor,
        ):
            held = _HeldExtractor(extractor, both_downloaded)
            reports.append(ingest_text(service_engine(own), own, day, client, http, held))

    threads = [threading.Thread(target=run, args=(feed, DAY)) for feed in ("/fa", "/fb")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    with service_engine(settings).begin() as conn:
        stored = [r["status"] for r in current_rows(conn, tables.disclosures)]
        addresses = conn.execute(select(tables.disclosure_addresses.c.url)).scalars().all()
        score_new_documents(conn)
        counted = [t for t in texts_in_window(conn, DAY) if t.kind == "DISCLOSURE"]
    assert stored == ["OK"] and len(addresses) == 1 and len(counted) == 1
    assert sorted(r.disclosures_ok for r in reports) == [0, 1]


def test_stories_that_all_link_to_one_newsroom_page_are_each_stored_once(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A feed that links every story to its newsroom page, each with a guid of its own: by
    the link, every story after the first was taken as already stored and lost."""
    files, url = site
    stories = ["KCB declares a dividend", "Island Savings Bank appoints a CEO", "KCB profit falls"]
    items = [
        f"<item><title>{title}</title><link>{url}/newsroom/</link><guid isPermaLink='false'>story-{i}</guid>"
        f"<pubDate>Fri, 20 Nov 2026 14:00:00 -0500</pubDate><description>{title}.</description></item>"
        for i, title in enumerate(stories)
    ]
    files.pages["/feed"] = _feed(*items)
    first = _ingest(settings, [f"{url}/feed"])
    again = _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        titles = sorted(r["title"] for r in current_rows(conn, tables.news_items))
    assert titles == sorted(stories)
    assert (first.news_new, first.news_seen, again.news_new, again.news_seen) == (3, 0, 0, 3)


def test_a_feed_of_one_story_per_fetch_all_linking_to_the_newsroom_keeps_every_story(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A feed that lists only its latest story, each linking to the newsroom page with a guid
    of its own: every later fetch's story was taken for the first by its link and lost."""
    files, url = site
    stories = ["KCB declares a dividend", "Island Savings Bank appoints a CEO", "KCB profit falls"]
    reports = []
    for i, title in enumerate(stories):
        files.pages["/feed"] = _feed(
            f"<item><title>{title}</title><link>{url}/newsroom/</link><guid isPermaLink='false'>story-{i}</guid>"
            f"<pubDate>Fri, 20 Nov 2026 14:00:00 -0500</pubDate><description>{title}.</description></item>"
        )
        reports += [_ingest(settings, [f"{url}/feed"]), _ingest(settings, [f"{url}/feed"])]
    with service_engine(settings).connect() as conn:
        titles = sorted(r["title"] for r in current_rows(conn, tables.news_items))
    assert titles == sorted(stories)
    assert [(r.news_new, r.news_seen) for r in reports] == [(1, 0), (0, 1)] * 3


def test_an_item_whose_link_or_pdf_is_no_url_is_kept_and_the_feed_goes_on(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A link or an enclosure with an unclosed IPv6 bracket raised ValueError out of the
    feed's reading: the day's text ingest failed, every feed's every item with it."""
    files, url = site
    files.pages["/feed"] = _feed(
        _item("KCB profit rises", "http://[oops/n/1"),
        _item("KCB dividend", f"{url}/d/1", pdf="http://[::1/d.pdf"),
        _item("KCB notice", f"{url}/d/2", pdf="http://example.com:99999/d.pdf"),
        _item("Island Savings Bank names a CEO", f"{url}/n/2"),
    )
    report = _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        links = {r["title"]: r["link"] for r in current_rows(conn, tables.news_items)}
    assert links == {"KCB profit rises": None, "Island Savings Bank names a CEO": f"{url}/n/2"}
    assert report.failures == [
        "http://[::1/d.pdf: not fetched: not a URL (Invalid IPv6 URL)",
        "http://example.com:99999/d.pdf: not fetched: not a URL (Port out of range 0-65535)",
    ]


def test_an_item_whose_link_guid_or_pdf_address_is_too_long_to_store_is_kept_and_the_feed_goes_on(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """An 8,000-byte link (random: it does not compress) went over Postgres's limit on an
    index entry (2,704 bytes), and the whole day's text ingest failed with it."""
    files, url = site
    long = secrets.token_hex(4000)
    files.pages["/feed"] = _feed(
        _item("KCB profit rises", f"{url}/n/{long}"),
        f"<item><title>KCB names a CEO</title><guid isPermaLink='false'>{long}</guid></item>",
        _item("KCB dividend", f"{url}/d/1", pdf=f"{url}/{long}.pdf"),
        "<item><title>Island Savings Bank names a CEO</title></item>",
    )
    report = _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        news = {r["title"]: (r["link"], r["guid"]) for r in current_rows(conn, tables.news_items)}
        (disclosure,) = current_rows(conn, tables.disclosures)
    assert news == {t: (None, None) for t in ("KCB profit rises", "KCB names a CEO", "Island Savings Bank names a CEO")}
    assert disclosure["failure_reason"] == "not fetched: the address is longer than 2,000 bytes"
    assert disclosure["url"] == f"{url}/{long}"[:2000] + "…" and report.news_new == 3


def test_an_items_link_is_kept_only_as_a_web_address(settings: Settings, site: tuple[Files, str]) -> None:
    """A hostile feed's `javascript:` link was stored and served as the item's link to every
    client that shows the news as links."""
    files, url = site
    files.pages["/feed"] = _feed(
        _item("KCB profit rises", "javascript:alert(document.cookie)"),
        _item("ISB opens a branch", " JaVaScRiPt:alert(1)"),
        _item("KCB names a CEO", "data:text/html,<script>alert(1)</script>"),
        _item("Island Savings Bank dividend", f"{url}/n/4"),
    )
    report = _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        links = {r["title"]: r["link"] for r in current_rows(conn, tables.news_items)}
    assert report.news_new == 4
    assert links == {
        "KCB profit rises": None,
        "ISB opens a branch": None,
        "KCB names a CEO": None,
        "Island Savings Bank dividend": f"{url}/n/4",
    }


@ON_SQLITE_ONLY
def test_a_link_stored_before_links_were_checked_is_served_as_none(settings: Settings) -> None:
    from views.instrument import news

    with service_engine(settings).begin() as conn:
        append_history(conn, tables.instruments, INSTRUMENTS)
        stored = {"content_hash": "h", "link": "javascript:alert(1)", "title": "KCB profit rises", "feed_url": "f"}
        append_history(conn, tables.news_items, [stored])
        doc = conn.execute(select(tables.news_items.c.id)).scalar_one()
        append_history(
            conn,
            tables.document_mentions,
            [{"doc_kind": "NEWS", "doc_id": doc, "symbol": "KCB", "matched_by": "symbol"}],
        )
        (served,) = news(conn, ["KCB"])["KCB"]
    assert served["title"] == "KCB profit rises" and served["link"] is None


def test_an_enclosure_at_an_internal_address_is_refused_and_never_requested(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A hostile feed named PDFs inside the service's network (the cloud metadata service,
    loopback on another port than the feed's, a private range, a name resolving to loopback,
    a file:// path), and the service requested each on its behalf; the configured feed itself
    is still read."""
    files, url = site
    port = url.rsplit(":", 1)[1]
    files.pages["/secret.pdf"] = (200, "application/pdf", text_pdf(["Kingston Commercial Bank internal"]))
    inside = {
        "metadata": "http://169.254.169.254/latest/meta-data.pdf",
        "loopback": f"http://127.0.0.1:{int(port) + 1}/secret.pdf",
        "v6": f"http://[::1]:{port}/secret.pdf",
        "mapped": f"http://[::ffff:127.0.0.1]:{port}/secret.pdf",
        "private": "http://10.0.0.8/secret.pdf",
        "named": f"http://localhost:{port}/secret.pdf",
        "file": "file:///etc/passwd.pdf",
    }
    files.pages["/feed"] = _feed(*(_item(f"KCB {name}", f"{url}/d/{name}", pdf=pdf) for name, pdf in inside.items()))
    report = _ingest(settings.model_copy(update={"allow_private_enclosures": False}), [f"{url}/feed"])
    assert files.asked == ["/feed"] and report.disclosures_ok == 0 and report.disclosures_failed == len(inside)
    with service_engine(settings).connect() as conn:
        reasons = {r["url"]: r["failure_reason"] for r in current_rows(conn, tables.disclosures)}
    assert reasons[inside["metadata"]] == (
        "not fetched: 169.254.169.254 is an internal address (169.254.169.254); only public addresses are fetched"
    )
    assert reasons[inside["named"]].startswith("not fetched: localhost is an internal address (")
    assert reasons[inside["file"]] == "not fetched: file scheme, only http and https are fetched"
    assert all(reason.startswith("not fetched: ") for reason in reasons.values())


def test_an_enclosure_on_the_configured_feeds_own_internal_origin_is_fetched(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """An exchange's feed read from an internal mirror (127.0.0.1 here) with its PDFs beside
    it: the operator chose that origin, so its PDFs are fetched without turning the address
    check off, while the same feed's PDF on another internal host is not."""
    files, url = site
    port = url.rsplit(":", 1)[1]
    files.pages["/d/1.pdf"] = (200, "application/pdf", text_pdf(["KCB dividend of 1.00"]))
    files.pages["/feed"] = _feed(
        _item("KCB dividend", f"{url}/d/1", pdf=f"{url}/d/1.pdf"),
        _item("KCB secret", f"{url}/d/2", pdf=f"http://localhost:{port}/d/1.pdf"),
    )
    report = _ingest(settings.model_copy(update={"allow_private_enclosures": False}), [f"{url}/feed"])
    assert files.asked == ["/feed", "/d/1.pdf"]
    assert report.disclosures_ok == 1 and report.disclosures_failed == 1


def test_a_redirect_to_an_internal_address_is_not_followed(settings: Settings, site: tuple[Files, str]) -> None:
    """A public address that redirects inside the network: the client followed it."""
    files, url = site
    public = "http://93.184.216.34"  # written as an address: nothing is resolved or sent over a network
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        if request.url.path == "/hop.pdf":
            return httpx.Response(302, headers={"location": "/kept.pdf"})
        if request.url.path == "/kept.pdf":
            return httpx.Response(200, content=text_pdf(["KCB dividend of 1.00"]))
        return httpx.Response(302, headers={"location": "http://169.254.169.254/latest/meta-data.pdf"})

    files.pages["/feed"] = _feed(
        _item("KCB dividend", f"{url}/d/1", pdf=f"{public}/hop.pdf"),
        _item("KCB secret", f"{url}/d/2", pdf=f"{public}/x.pdf"),
    )
    settings = settings.model_copy(update={"news_feeds": [f"{url}/feed"], "allow_private_enclosures": False})
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.instruments, INSTRUMENTS)
    transport = httpx.MockTransport(answer)
    with ExchangeClient("", retries=0) as client, httpx.Client(transport=transport) as http:  # as the stage's
        report = ingest_text(service_engine(settings), settings, DAY, client, http)
    assert asked == [f"{public}/hop.pdf", f"{public}/kept.pdf", f"{public}/x.pdf"]  # followed by `followed`
    assert report.disclosures_ok == 1 and report.failures == [
        f"{public}/x.pdf: {public}/x.pdf redirected to http://169.254.169.254/latest/meta-data.pdf, not fetched: "
        "169.254.169.254 is an internal address (169.254.169.254); only public addresses are fetched"
    ]


def test_a_name_that_resolves_again_to_an_internal_address_is_not_requested_there(
    settings: Settings, site: tuple[Files, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the enclosure's host resolved to a public address for the check, and
    to 127.0.0.1 when the client resolved it again for the request, which then went inside."""
    files, url = site
    port = url.rsplit(":", 1)[1]
    public, resolved, real = "93.184.216.34", [], socket.getaddrinfo
    files.pages["/secret.pdf"] = (200, "application/pdf", text_pdf(["Kingston Commercial Bank internal"]))
    files.pages["/feed"] = _feed(_item("KCB secret", f"{url}/d/1", pdf=f"http://rebind.test:{port}/secret.pdf"))

    def dns(host: str, *args, **kwargs):
        if host == public:  # the test has no network: the public host cannot be reached
            raise OSError("network unreachable")
        if host == "rebind.test":
            resolved.append(host)
            host = public if len(resolved) == 1 else "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", dns)
    report = _ingest(settings.model_copy(update={"allow_private_enclosures": False}), [f"{url}/feed"])
    assert files.asked == ["/feed"] and resolved == ["rebind.test"]
    assert report.disclosures_ok == 0 and report.failures == [
        f"http://rebind.test:{port}/secret.pdf: download failed (ConnectError: network unreachable)"
    ]


def test_a_host_whose_name_server_does_not_answer_is_given_up_on_at_the_download_limit(
    settings: Settings, site: tuple[Files, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look-up of an enclosure's host had no timeout and ran before the download's
    clock: a name server that never answered held the stage as long as the resolver
    retried. It is the one disclosure's failure, within the limit, and the next is read.
    The limit (3 s) leaves the next PDF's read, in its sandbox process, room on a loaded
    machine; the name server's 30 s stay far past it."""
    files, url = site
    port = url.rsplit(":", 1)[1]
    real = socket.getaddrinfo
    files.pages["/x.pdf"] = (200, "application/pdf", text_pdf(["Kingston Commercial Bank declares a dividend"]))
    files.pages["/feed"] = _feed(
        _item("KCB notice", f"{url}/d/1", pdf=f"http://silent-dns.test:{port}/x.pdf"),
        _item("KCB dividend", f"{url}/d/2", pdf=f"{url}/x.pdf"),
    )

    def dns(host: str, *args, **kwargs):
        if host == "silent-dns.test":
            time.sleep(30)
            raise OSError("the name server did not answer")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", dns)
    settings = settings.model_copy(
        update={"allow_private_enclosures": False, "news_feeds": [f"{url}/feed"], "pdf_timeout_seconds": 3}
    )
    started = time.monotonic()
    with ExchangeClient("", retries=0) as client, httpx.Client(timeout=5) as http:
        report = ingest_text(service_engine(settings), settings, DAY, client, http)
    assert time.monotonic() - started < 10
    assert report.disclosures_ok == 1 and report.failures == [
        f"http://silent-dns.test:{port}/x.pdf: not fetched: looking up silent-dns.test took longer than the 3 s "
        "allowed; retried on the next run"
    ]


def test_a_configured_feeds_own_host_is_looked_up_within_the_download_limit(
    settings: Settings, site: tuple[Files, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PDF on a configured feed's own origin skips the address check, and its host was then
    looked up by the HTTP client with no limit of its own: a name server that did not answer
    held the stage past the download's limit. It is looked up as any other host is."""
    files, url = site
    port = url.rsplit(":", 1)[1]
    real, asked = socket.getaddrinfo, []
    files.pages["/x.pdf"] = (200, "application/pdf", text_pdf(["Kingston Commercial Bank declares a dividend"]))
    files.pages["/feed"] = _feed(_item("KCB notice", f"{url}/d/1", pdf=f"http://mirror.test:{port}/x.pdf"))

    def dns(host: str, *args, **kwargs):
        if host == "mirror.test":
            asked.append(host)
            if len(asked) == 1:  # the name server is slow to answer the first look-up only
                time.sleep(8)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", dns)
    feeds = [f"{url}/feed", f"http://mirror.test:{port}/other"]  # the mirror is a configured feed's origin
    settings = settings.model_copy(
        update={"allow_private_enclosures": False, "news_feeds": feeds, "pdf_timeout_seconds": 1}
    )
    started = time.monotonic()
    with ExchangeClient("", retries=0) as client, httpx.Client(timeout=5) as http:
        report = ingest_text(service_engine(settings), settings, DAY, client, http)
    assert time.monotonic() - started < 5
    assert report.disclosures_ok == 0 and report.failures[0] == (
        f"http://mirror.test:{port}/x.pdf: not fetched: looking up mirror.test took longer than the 1 s "
        "allowed; retried on the next run"
    )


def _layered_gzip(zeros: int) -> bytes:
    """`zeros` zero bytes gzipped twice: a few hundred bytes."""
    layer = zlib.compressobj(9, zlib.DEFLATED, 31)
    inner = b"".join(layer.compress(bytes(1 << 20)) for _ in range(zeros >> 20)) + layer.flush()
    return gzip.compress(inner, 9)


def _encoded(body: bytes, coding: str):
    """A site answering every request with `body` sent as `Content-Encoding: coding`."""

    async def answer(scope, receive, send) -> None:
        if scope["type"] == "http":
            headers = [(b"content-type", b"application/pdf"), (b"content-encoding", coding.encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})

    return answer


@pytest.mark.parametrize(
    ("coding", "encode"),
    [("gzip", gzip.compress), ("deflate", zlib.compress), ("gzip, deflate", lambda b: zlib.compress(gzip.compress(b)))],
)
def test_a_pdf_sent_compressed_is_read(settings: Settings, site: tuple[Files, str], coding: str, encode) -> None:
    files, url = site
    with serve_in_thread(_encoded(encode(text_pdf(["KCB declares a dividend"])), coding)) as pdf_site:
        files.pages["/feed"] = _feed(_item("KCB dividend", f"{url}/d/1", pdf=f"{pdf_site}/d.pdf"))
        report = _ingest(settings, [f"{url}/feed"])
    assert (report.disclosures_ok, report.failures) == (1, [])


def test_a_pdf_in_a_coding_not_read_is_a_failure_saying_so(settings: Settings, site: tuple[Files, str]) -> None:
    files, url = site
    with serve_in_thread(_encoded(b"\x1b\x00", "br")) as pdf_site:
        files.pages["/feed"] = _feed(_item("KCB dividend", f"{url}/d/1", pdf=f"{pdf_site}/d.pdf"))
        report = _ingest(settings, [f"{url}/feed"])
    assert report.failures == [f"{pdf_site}/d.pdf: the body's content encoding 'br' is not read"]


def test_a_pdf_sent_in_layers_of_gzip_is_refused_at_the_limit_without_decoding_it_whole(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """A body of 600 bytes sent as `Content-Encoding: gzip, gzip`: the client decoded each
    chunk whole before the limit was checked, each layer again, so 256 MiB were held in
    memory against a limit of 1 MiB (and a few more bytes took all the memory there was)."""
    files, url = site
    bomb = _layered_gzip(256 << 20)

    with serve_in_thread(_encoded(bomb, "gzip, gzip")) as bomb_site:
        files.pages["/feed"] = _feed(_item("KCB dividend", f"{url}/d/1", pdf=f"{bomb_site}/bomb.pdf"))
        tracemalloc.start()
        try:
            report = _ingest(settings.model_copy(update={"pdf_max_bytes": 1 << 20}), [f"{url}/feed"])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert report.failures == [f"{bomb_site}/bomb.pdf: the body exceeds the limit of 1,048,576 bytes"]
    assert len(bomb) < 1000 and peak < 32 << 20


def _refused_port() -> int:
    """A local port nothing listens on: a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("address", "shown"),
    [
        ("http://feeduser:s3cret-pw@127.0.0.1:{port}/rss", "http://***@127.0.0.1:{port}/rss"),
        ("http://127.0.0.1:{port}/rss?ApiKey=s3cret-pw&lang=en", "http://127.0.0.1:{port}/rss?ApiKey=***&lang=en"),
    ],
)
def test_a_feed_whose_address_holds_credentials_fails_without_showing_them(
    settings: Settings, caplog: pytest.LogCaptureFixture, address: str, shown: str
) -> None:
    """A configured feed's address holding a password or an API key, unreachable: its failure
    row, the run's failures and the log name the feed with the credentials masked (each
    showed them whole)."""
    port = _refused_port()
    address, shown = address.format(port=port), shown.format(port=port)
    with caplog.at_level("WARNING", logger="ingest"):
        report = _ingest(settings, [address])
    with service_engine(settings).connect() as conn:
        (row,) = current_rows(conn, tables.ingest_failures)
    assert row["source_url"] == shown and row["reason"].startswith(f"{shown} connection failed"), row
    assert report.failures == [f"{shown}: {row['reason']}"]
    assert shown in caplog.text and "s3cret-pw" not in caplog.text + repr(row) + repr(report.failures)


def test_a_disclosure_beside_a_feed_holding_credentials_fails_and_is_served_without_them(
    settings: Settings, site: tuple[Files, str], caplog: pytest.LogCaptureFixture
) -> None:
    """A PDF the feed names relative to itself is read against the feed's address, its
    password included: the disclosure's failure, the log and the link the API serves
    showed it whole."""
    from views.instrument import news

    files, url = site
    files.pages["/feed"] = _feed(
        _item("KCB dividend", f"{url}/d/1", pdf="/kcb.pdf"), _item("ISB results", f"{url}/d/2", pdf="/missing.pdf")
    )
    files.pages["/kcb.pdf"] = (200, "application/pdf", text_pdf(["KCB declares a dividend of J$0.50"]))
    feed = url.replace("://", "://desk:feed-pw@") + "/feed"
    with caplog.at_level("WARNING", logger="ingest"):
        report = _ingest(settings, [feed])
    shown = url.replace("://", "://***@")
    assert report.failures == [f"{shown}/missing.pdf: download answered HTTP 404"]
    with service_engine(settings).connect() as conn:
        (served,) = news(conn, ["KCB"])["KCB"]
    assert served["link"] == f"{shown}/kcb.pdf" and "feed-pw" not in caplog.text


@ON_SQLITE_ONLY
def test_a_date_written_in_digits_is_read_as_written_or_not_at_all(settings: Settings, site: tuple[Files, str]) -> None:
    """feedparser's ISO 8601 reader took any digits for a date: 2026/11/20 was 1 December,
    20-11-2026 was 20 November 2020, a Unix time was 1796, so a story of the day counted in
    a composite eleven days on (or in none). A date is read as written, or the item is undated."""
    stamps = {
        "year-first": "2026/11/20 14:00",
        "year-first-dots": "2026.11.20",
        "day-first": "20/11/2026 04:30 PM",
        "day-first-dashes": "20-11-2026 14:00",
        "month-first": "11/20/2026 14:00",
        "ambiguous": "03/11/2026 14:00",  # 3 November or 11 March: no stamp
        "unix-time": "1795190400",
        "year-month": "2026-11",  # 1 November was earlier than the stamp allows
    }
    stored, _, _ = _stamped(settings, site, stamps)
    at_two = datetime(2026, 11, 20, 19, 0, tzinfo=UTC)
    assert stored == {
        "KCB year-first": at_two,
        "KCB year-first-dots": datetime(2026, 11, 21, 4, 59, 59, tzinfo=UTC),  # the end of that day
        "KCB day-first": datetime(2026, 11, 20, 21, 30, tzinfo=UTC),
        "KCB day-first-dashes": at_two,
        "KCB month-first": at_two,
        "KCB ambiguous": None,
        "KCB unix-time": None,
        "KCB year-month": None,
    }


@ON_SQLITE_ONLY
def test_a_disclosure_is_tagged_with_the_names_its_feed_item_gives(settings: Settings, site: tuple[Files, str]) -> None:
    """A disclosure was tagged from its title and its PDF's text alone: a scanned notice (no
    text layer) titled "Notice of dividend", whose feed item says which company declared it,
    named nobody, and never reached the company's news or its sentiment composite."""
    files, url = site
    files.pages["/scan.pdf"] = (200, "application/pdf", scanned_pdf())
    files.pages["/feed"] = _feed(
        _item(
            "Notice of dividend",
            f"{url}/d/1",
            pdf=f"{url}/scan.pdf",
            description="Kingston Commercial Bank Limited declares a dividend.",
        )
    )
    report = _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        (stored,) = current_rows(conn, tables.disclosures)
        named = {(m["doc_kind"], m["doc_id"], m["symbol"]) for m in current_rows(conn, tables.document_mentions)}
    assert (report.disclosures_ok, stored["status"], stored["body"]) == (1, "OK", "")
    assert named == {("DISCLOSURE", stored["id"], "KCB")}


@ON_SQLITE_ONLY
def test_a_date_with_its_month_named_first_is_read(settings: Settings, site: tuple[Files, str]) -> None:
    """feedparser reads no "Nov 20, 2026 4:30 PM" nor "20-Nov-2026": such an item was undated,
    and served as published when it was stored."""
    stamps = {
        "us": "Nov 20, 2026 4:30 PM",
        "long": "Friday, November 20, 2026 - 14:00",
        "dashes": "20-Nov-2026",
        "offset-after-zone": "Nov 20, 2026 14:00 GMT-5",  # GMT then -5: not read as GMT
        "no-month": "Novel 20, 2026",
    }
    stored, _, _ = _stamped(settings, site, stamps)
    assert stored == {
        "KCB us": datetime(2026, 11, 20, 21, 30, tzinfo=UTC),
        "KCB long": datetime(2026, 11, 20, 19, 0, tzinfo=UTC),
        "KCB dashes": datetime(2026, 11, 21, 4, 59, 59, tzinfo=UTC),
        "KCB offset-after-zone": None,
        "KCB no-month": None,
    }


@ON_SQLITE_ONLY
def test_a_text_naming_a_renamed_ticker_after_the_rename_names_the_new_one(
    settings: Settings, site: tuple[Files, str]
) -> None:
    """After CFC became SBIC, a story still written "CFC reports..." was CFC's alone: delisted
    from the ex-date, it reached neither SBIC's news nor its sentiment composite."""
    files, url = site
    with service_engine(settings).begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                {
                    "symbol": "CFC",
                    "name": "CFC Bank",
                    "board": "MAIN",
                    "source": "t",
                    "delisted_on": date(2026, 11, 16),
                },
                {"symbol": "SBIC", "name": "Stanbic Holdings", "board": "MAIN", "source": "t"},
            ],
        )
        append_history(
            conn,
            tables.corporate_actions,
            [
                {
                    "symbol": "CFC",
                    "action_date": date(2026, 11, 16),
                    "kind": "RENAME",
                    "amount": None,
                    "source": "import:ohlcv",
                    "detail": {"new_symbol": "SBIC", "text": "test"},
                }
            ],
        )
    before = _item("CFC results", f"{url}/n/1").replace("Fri, 20 Nov 2026", "Tue, 10 Nov 2026")
    files.pages["/feed"] = _feed(_item("CFC and KCB report profit", f"{url}/n/2"), before)
    _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        titles = {r["id"]: r["title"] for r in current_rows(conn, tables.news_items)}
        named = sorted((titles[m["doc_id"]], m["symbol"]) for m in current_rows(conn, tables.document_mentions))
    assert named == [
        ("CFC and KCB report profit", "KCB"),
        ("CFC and KCB report profit", "SBIC"),
        ("CFC results", "CFC"),
    ]


@ON_SQLITE_ONLY
def test_a_disclosure_another_run_stored_meanwhile_is_not_stored_again(
    settings: Settings, site: tuple[Files, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs at once both found an address not stored and read its PDF; the later write,
    under another feed's title, was a second version of the disclosure (and a FAILED read
    one over the stored one): the company's news listed it twice."""
    from ingest import text_sources

    files, url = site
    files.pages["/a.pdf"] = (200, "application/pdf", text_pdf(["Kingston Commercial Bank dividend declared"]))
    files.pages["/feed"] = _feed(_item("KCB dividend", f"{url}/d/1", pdf=f"{url}/a.pdf"))
    _ingest(settings, [f"{url}/feed"])
    # the other run: it looked the address up before the first run's write
    monkeypatch.setattr(text_sources, "_known_address", lambda conn, address: False)
    files.pages["/feed"] = _feed(_item("Dividend notice: KCB", f"{url}/d/1", pdf=f"{url}/a.pdf"))
    _ingest(settings, [f"{url}/feed"])
    files.pages["/a.pdf"] = (503, "text/plain", b"busy")
    _ingest(settings, [f"{url}/feed"])
    with service_engine(settings).connect() as conn:
        versions = conn.execute(select(tables.disclosures.c.title, tables.disclosures.c.status)).all()
        listed = [n["title"] for n in news(conn, ["KCB"])["KCB"]]
    assert (versions, listed) == ([("KCB dividend", "OK")], ["KCB dividend"])
