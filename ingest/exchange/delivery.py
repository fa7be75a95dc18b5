"""T0: fetch one trading day from the exchange, validate it, keep the raw snapshot and a
delivery manifest, and append the day to the store in one transaction.

- Raw pages are kept under `<data_dir>/raw/<date>/<checksum>/` with `manifest.json`:
  content-addressed, so a re-run with the same content rewrites nothing different and a
  changed day lands beside the earlier one.
- The `deliveries` row and the day's instruments, prices, fundamentals, notices and the
  market's index levels (where the page publishes them) are written together or not at
  all. The instruments' currency is the one the trade-quotes page names in its money
  columns (`Value (KES)`), the home currency if it names none. The same content again
  adds nothing; different content for a past date becomes new versions.
- A day whose SPLIT notice (a split, bonus issue or consolidation) has an ex-date before
  trades a client already recorded on the old count (a day delivered late, or again as a
  correction) would leave that client's ledger unreplayable for good: the caller's
  `keep_books` check (`ingest.books`; the T0 stage passes the desk's) refuses it inside
  the day's transaction, and the day is recorded as FAILED like a row the store refuses.
- A caller delivering another market's days (backfill's simulated or replayed ones,
  `keep_sources`) never replaces a close stored from another source: a day whose stored
  closes came from elsewhere (the exchange's T0) and differ is refused, naming both
  (the same closes from another source add nothing, as always).
- A day that cannot be fetched, fails validation or has a row the store refuses is
  recorded as a FAILED delivery with the reasons (unless a COMPLETE delivery for that
  date already exists, which a failed re-run must not demote) and the error is raised.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import NoReturn

from sqlalchemy import Connection, Engine, func, select

from ingest.books import BooksCheck, append_actions
from ingest.exchange.client import ExchangeClient, Fetched, PageLimits
from ingest.exchange.parsers import ParsedPage, parse_fundamentals, parse_securities, parse_trade_quotes
from ingest.exchange.validation import (
    REPEAT_WINDOW_DAYS,
    Known,
    Published,
    Verdict,
    repeated_notices,
    split_factor,
    validate_day,
)
from market.errors import DeliveryRejectedError, IncompletePageError, InvalidInputError, MarketIntelError
from market.files import write_whole
from market.settings import HOME_CURRENCY, Settings
from market.text import masked_urls
from store import tables
from store.history import append_history, current_rows
from store.transactions import MARKET_FILES, write_transaction

log = logging.getLogger(__name__)
PAGES = {
    "securities": "/market/securities",
    "trade_quotes": "/market/trade-quotes",
    "fundamentals": "/market/fundamentals",
}


@dataclass
class ScrapedDay:
    day: date
    fetched: dict[str, Fetched]
    quotes: ParsedPage
    notices: ParsedPage
    fundamentals: ParsedPage
    securities: ParsedPage
    indices: ParsedPage = field(default_factory=ParsedPage)

    @property
    def checksum(self) -> str:
        joined = "".join(f"{name}:{self.fetched[name].sha256}" for name in sorted(self.fetched))
        return hashlib.sha256(joined.encode()).hexdigest()


@dataclass
class DeliveryReport:
    trading_date: date
    status: str
    checksum: str
    row_counts: dict[str, int]
    warnings: list[str]
    snapshot_path: str | None
    inserted: dict[str, int] = field(default_factory=dict)
    attempts: int = 0


def client_for(settings: Settings, **overrides) -> ExchangeClient:  # noqa: ANN003
    options = {
        "timeout": settings.exchange_timeout_seconds,
        "retries": settings.exchange_retries,
        "backoff": settings.exchange_backoff_seconds,
        "limits": PageLimits(internal_redirects=settings.allow_private_enclosures),
        **overrides,
    }
    return ExchangeClient(settings.exchange_base_url, **options)


def scrape_day(client: ExchangeClient, day: date, page_attempts: int = 3) -> ScrapedDay:
    """Fetch and parse the day's pages; an incomplete page is fetched again, up to
    `page_attempts` times, before IncompletePageError is raised."""
    fetched: dict[str, Fetched] = {}
    parsed: dict[str, object] = {}
    parsers = {"securities": parse_securities, "trade_quotes": parse_trade_quotes, "fundamentals": parse_fundamentals}
    for name, path in PAGES.items():
        for attempt in range(1, page_attempts + 1):
            page = client.get(path, {"date": day.isoformat()})
            try:
                parsed[name] = parsers[name](page.text)
                fetched[name] = page
                break
            except IncompletePageError as exc:
                log.warning("%s for %s incomplete (attempt %d of %d): %s", name, day, attempt, page_attempts, exc)
                if attempt == page_attempts:
                    raise IncompletePageError(f"{exc.detail} on all {page_attempts} attempts") from exc
    quotes, notices, indices = parsed["trade_quotes"]
    return ScrapedDay(day, fetched, quotes, notices, parsed["fundamentals"], parsed["securities"], indices)


def deliver_day(
    engine: Engine,
    settings: Settings,
    day: date,
    client: ExchangeClient,
    source: str = "exchange",
    keep_books: BooksCheck | None = None,
    keep_sources: bool = False,
) -> DeliveryReport:
    """Fetch, check, keep and store one trading day (the module's docstring says how).

    A day that cannot be fetched, or whose pages or rows fail the checks or are refused by
    the store or by `keep_books` (`InvalidInputError` while storing: the transaction is
    rolled back, nothing of the day is kept), is recorded as a FAILED delivery
    (`_record_failure`) and raises: the fetch's own error, or DeliveryRejectedError naming
    the first five problems. `keep_books`: what refuses, before the day commits, SPLIT
    notices that would leave a client's ledger unreplayable (`ingest.books.BooksCheck`).
    `keep_sources`: refuse the day rather than replace closes stored from another source
    (`_keep_sources`).
    """
    try:
        scraped = scrape_day(client, day)
    except MarketIntelError as exc:
        _record_failure(engine, day, source, [exc.detail], None)
        raise
    with engine.connect() as conn:
        stored = _read_stored(conn, day)
    repeats = _drop_repeats(scraped, stored.earlier)
    verdict = _check_day(day, scraped, stored, settings.price_band, repeats)
    row_counts = _row_counts(scraped)
    manifest = _manifest(day, client.base_url, scraped, row_counts, verdict)
    snapshot = _write_snapshot(settings.data_dir, scraped, manifest)
    if verdict.errors:
        _refuse(engine, day, source, verdict.errors, manifest, snapshot)
    try:
        with write_transaction(engine, MARKET_FILES, f"delivery:{day.isoformat()}") as conn:
            inserted = _store_day(conn, day, scraped, (manifest, snapshot), source, keep_books, keep_sources)
    except InvalidInputError as exc:  # a row the store or the books refuse: rolled back, nothing kept
        failed = {**manifest, "status": "FAILED", "errors": [exc.detail]}
        _refuse(engine, day, source, failed["errors"], failed, _write_snapshot(settings.data_dir, scraped, failed))
    attempts = sum(f.attempts for f in scraped.fetched.values())
    return DeliveryReport(
        day, "COMPLETE", scraped.checksum, row_counts, verdict.warnings, str(snapshot), inserted, attempts
    )


@dataclass(frozen=True)
class _Stored:
    """What the store holds that a new day is checked against (`_read_stored`)."""

    known: set[str]  # the stored instruments' symbols
    previous: tuple[date, dict[str, dict]] | None  # the latest stored session before the day, rows by symbol
    earlier: list[dict]  # corporate actions stored for the REPEAT_WINDOW_DAYS calendar days before the day

    @property
    def closes(self) -> dict[str, float]:
        """The previous session's close by symbol (empty before the first session)."""
        return {symbol: row["close"] for symbol, row in self.previous[1].items()} if self.previous else {}


def _read_stored(conn: Connection, day: date) -> _Stored:
    known = {r["symbol"] for r in current_rows(conn, tables.instruments)}
    previous = _previous_day(conn, day)
    c = tables.corporate_actions.c
    earlier = current_rows(
        conn,
        tables.corporate_actions,
        where=[c.action_date < day, c.action_date >= day - timedelta(days=REPEAT_WINDOW_DAYS)],
    )
    return _Stored(known, previous, earlier)


def _drop_repeats(scraped: ScrapedDay, earlier: list[dict]) -> list[tuple[dict, date]]:
    """Take out of the day's notices those that repeat one stored for an earlier session
    (`repeated_notices`): the same announcement shown again is neither checked nor stored
    as the day's own. Returns them, each with the date it was first stored."""
    repeats = repeated_notices(scraped.notices.rows, earlier)
    if repeats:
        scraped.notices.rows = [n for n in scraped.notices.rows if all(n is not r for r, _ in repeats)]
    return repeats


def _check_day(
    day: date, scraped: ScrapedDay, stored: _Stored, price_band: float, repeats: list[tuple[dict, date]]
) -> Verdict:
    """The day's errors (the pages' unreadable cells, then `validate_day`'s) and warnings
    (a line for each repeated notice left out, then `validate_day`'s)."""
    pages = Published(
        scraped.quotes.page_date,
        scraped.quotes.rows,
        scraped.notices.rows,
        scraped.securities.rows,
        scraped.indices.rows,
        scraped.fundamentals.rows,
        scraped.quotes.currency,
    )
    verdict = validate_day(day, pages, Known(stored.known, stored.closes, price_band, stored.previous))
    left_out = [
        f"{n['symbol']}: {n['kind']} notice repeats the one stored for {first.isoformat()} (same "
        "amount and detail): left out, not stored again"
        for n, first in repeats
    ]
    pages = (scraped.quotes, scraped.notices, scraped.fundamentals, scraped.securities, scraped.indices)
    return Verdict([e for page in pages for e in page.errors] + verdict.errors, left_out + verdict.warnings)


def _row_counts(scraped: ScrapedDay) -> dict[str, int]:
    return {
        "MAIN": sum(1 for r in scraped.quotes.rows if r["board"] == "MAIN"),
        "JUNIOR": sum(1 for r in scraped.quotes.rows if r["board"] == "JUNIOR"),
        "notices": len(scraped.notices.rows),
        "fundamentals": len(scraped.fundamentals.rows),
        "securities": len(scraped.securities.rows),
        "indices": len(scraped.indices.rows),
    }


def _manifest(day: date, base_url: str, scraped: ScrapedDay, row_counts: dict[str, int], verdict: Verdict) -> dict:
    """The delivery manifest: kept beside the raw pages and in the `deliveries` row, its
    addresses as they are shown (`masked_urls`: no credentials)."""
    return {
        "trading_date": day.isoformat(),
        "source": masked_urls(base_url),
        "status": "FAILED" if verdict.errors else "COMPLETE",
        "checksum": scraped.checksum,
        "row_counts": row_counts,
        "warnings": verdict.warnings,
        "errors": verdict.errors,
        "sources": [
            {"name": n, "url": masked_urls(f.url), "sha256": f.sha256, "bytes": len(f.body)}
            for n, f in sorted(scraped.fetched.items())
        ],
    }


def _refuse(engine: Engine, day: date, source: str, errors: list[str], manifest: dict, snapshot: Path) -> NoReturn:
    """Record the day as FAILED and raise DeliveryRejectedError with the first five errors."""
    _record_failure(engine, day, source, errors, manifest, snapshot)
    shown = "; ".join(errors[:5]) + (f"; and {len(errors) - 5} more" if len(errors) > 5 else "")
    raise DeliveryRejectedError(f"T0 data for {day.isoformat()} refused, nothing stored: {shown}")


def _store_day(
    conn: Connection,
    day: date,
    s: ScrapedDay,
    kept: tuple[dict, Path],
    source: str,
    keep_books: BooksCheck | None = None,
    keep_sources: bool = False,
) -> dict[str, int]:
    """Append the COMPLETE delivery (`kept`: its manifest and snapshot) and the day's rows
    (the day's prices and index levels tied to that delivery), the notices through
    `append_actions` (`keep_books`'s check of the splits stored); returns the rows inserted
    by table. With `keep_sources`, closes stored from another source are not replaced."""
    manifest, snapshot = kept
    stored = current_rows(conn, tables.deliveries, where=[tables.deliveries.c.trading_date == day])
    if stored and stored[0]["status"] == "COMPLETE" and stored[0]["checksum"] == s.checksum:
        # the same pages again (another address for the same exchange: a mirror, a port,
        # https): the stored delivery stands, and every row keyed to it is unchanged
        inserted, delivery_id = {"deliveries": 0}, stored[0]["id"]
    else:
        delivery = _delivery_row(day, "COMPLETE", source, s.checksum, len(s.quotes.rows), manifest, snapshot)
        inserted = {"deliveries": append_history(conn, tables.deliveries, [delivery]).inserted}
        delivery_id = current_rows(conn, tables.deliveries, where=[tables.deliveries.c.trading_date == day])[0]["id"]
    currency = s.quotes.currency or HOME_CURRENCY
    instruments = [_instrument_row(r, currency, source) for r in s.securities.rows]
    inserted["instruments"] = append_history(conn, tables.instruments, instruments).inserted
    prices = append_history(
        conn,
        tables.eod_prices,
        [_price_row(r, day, delivery_id, source) for r in s.quotes.rows],
        scope=[tables.eod_prices.c.trading_date == day],
    )
    if keep_sources:
        _keep_sources(day, source, prices.replaced)
    inserted["eod_prices"] = prices.inserted
    inserted["fundamentals"] = append_history(
        conn, tables.fundamentals, [{**r, "source": source} for r in s.fundamentals.rows]
    ).inserted
    inserted["corporate_actions"] = append_actions(
        conn, [_action_row(n, day, source) for n in s.notices.rows], keep_books
    )
    levels = [
        {"symbol": x["symbol"], "trading_date": day, "level": x["level"], "delivery_id": delivery_id, "source": source}
        for x in s.indices.rows
    ]
    inserted["index_levels"] = append_history(
        conn, tables.index_levels, levels, scope=[tables.index_levels.c.trading_date == day]
    ).inserted
    return inserted


def _keep_sources(day: date, source: str, replaced: tuple[tuple[dict, dict], ...]) -> None:
    """Refuse (InvalidInputError: the day's transaction is rolled back) closes of `source`
    that would replace different ones stored from another source: backfill delivers
    another market (the simulator's made-up days, or replayed files), and over a day T0
    delivered from the exchange it stored made-up closes as the day's current version."""
    other = [(was, new) for was, new in replaced if was["source"] != source]
    if other:
        was, new = other[0]
        raise InvalidInputError(
            f"{len(other)} closes of {day.isoformat()} are stored from {was['source']} and would be replaced by "
            f"{source} ones ({was['symbol']} {was['close']:g} stored, {new['close']:g} {source}): a backfill never "
            f"replaces a day delivered from another source; fill a day T0 missed with "
            f"`marketintel scrape --date {day.isoformat()}`"
        )


def _instrument_row(security: dict, currency: str, source: str) -> dict:
    return {
        "symbol": security["symbol"],
        "name": security["name"],
        "board": security["board"],
        "sector": security["sector"],
        "currency": currency,
        "listed_on": security["listed_on"],
        "delisted_on": security["delisted_on"],
        "source": source,
    }


def _price_row(row: dict, day: date, delivery_id: int, source: str) -> dict:
    return {
        "symbol": row["symbol"],
        "trading_date": day,
        "open": row["open"],
        "high": row["high"],
        "low": row["low"],
        "close": row["close"],
        "prev_close": row["prev_close"],
        "volume": row["volume"],
        "trades": row["trades"],
        "value_traded": row["value_traded"],
        "bid": row["bid"],
        "ask": row["ask"],
        "halted": row["status"] == "HALTED",
        "delivery_id": delivery_id,
        "source": source,
    }


def _action_row(notice: dict, day: date, source: str) -> dict:
    """A notice as a corporate action; a split's amount is its factor (store.splits)."""
    return {
        "symbol": notice["symbol"],
        "action_date": day,
        "kind": notice["kind"],
        "amount": split_factor(notice) if notice["kind"] == "SPLIT" else notice["amount"],
        "detail": {"text": notice["detail"]},
        "source": source,
    }


def _delivery_row(
    day: date, status: str, source: str, checksum: str, row_count: int, manifest: dict, snapshot: Path | None
) -> dict:
    return {
        "trading_date": day,
        "status": status,
        "source": source,
        "checksum": checksum,
        "row_count": row_count,
        "warning_count": len(manifest.get("warnings", [])),
        "snapshot_path": str(snapshot) if snapshot else None,
        "manifest": manifest,
    }


def _record_failure(
    engine: Engine, day: date, source: str, errors: list[str], manifest: dict | None, snapshot: Path | None = None
) -> None:
    manifest = manifest or {"trading_date": day.isoformat(), "status": "FAILED", "errors": errors}
    checksum = manifest.get("checksum") or hashlib.sha256("\n".join(errors).encode()).hexdigest()
    with write_transaction(engine, f"delivery:{day.isoformat()}") as conn:
        latest = current_rows(conn, tables.deliveries, where=[tables.deliveries.c.trading_date == day])
        if latest and latest[0]["status"] == "COMPLETE":
            log.error("T0 re-run for %s failed (%s); the earlier COMPLETE delivery stands", day, errors[0])
            return
        row = _delivery_row(day, "FAILED", source, checksum, 0, manifest, snapshot)
        append_history(conn, tables.deliveries, [row])


def _previous_day(conn: Connection, day: date) -> tuple[date, dict[str, dict]] | None:
    """The latest stored session before `day` and its rows by symbol (None before the first)."""
    prices = tables.eod_prices
    before = conn.execute(select(func.max(prices.c.trading_date)).where(prices.c.trading_date < day)).scalar()
    if before is None:
        return None
    return before, {r["symbol"]: r for r in current_rows(conn, prices, where=[prices.c.trading_date == before])}


def _write_snapshot(data_dir: Path, scraped: ScrapedDay, manifest: dict) -> Path:
    """The day's raw pages and its manifest kept under their content's folder, each file
    written whole (market/files.py): a run stopped half-way leaves the file as it was, and a
    page a later run finds is kept only when it holds the bytes fetched (one cut short by a
    writer stopped before files were written whole is written again)."""
    folder = data_dir / "raw" / scraped.day.isoformat() / scraped.checksum[:16]
    for name, page in scraped.fetched.items():
        target = folder / f"{name.replace('_', '-')}.html"
        if not target.is_file() or hashlib.sha256(target.read_bytes()).hexdigest() != page.sha256:
            write_whole(target, page.body)
    write_whole(folder / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True).encode())
    return folder
