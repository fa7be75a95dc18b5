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
- A day that cannot be fetched or fails validation is recorded as a FAILED delivery with
  the reasons (unless a COMPLETE delivery for that date already exists, which a failed
  re-run must not demote) and the error is raised.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from sqlalchemy import Connection, Engine, func, select

from ingest.exchange.client import ExchangeClient, Fetched
from ingest.exchange.parsers import ParsedPage, parse_fundamentals, parse_securities, parse_trade_quotes
from ingest.exchange.validation import REPEAT_WINDOW_DAYS, repeated_notices, split_factor, validate_day
from market.errors import DeliveryRejectedError, IncompletePageError, MarketIntelError
from market.settings import HOME_CURRENCY, Settings
from store import tables
from store.history import append_history, current_rows
from store.transactions import write_transaction

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
    engine: Engine, settings: Settings, day: date, client: ExchangeClient, source: str = "exchange"
) -> DeliveryReport:
    try:
        scraped = scrape_day(client, day)
    except MarketIntelError as exc:
        _record_failure(engine, day, source, [exc.detail], None)
        raise
    with engine.connect() as conn:
        known = {r["symbol"] for r in current_rows(conn, tables.instruments)}
        previous = _previous_day(conn, day)
        c = tables.corporate_actions.c
        earlier = current_rows(
            conn,
            tables.corporate_actions,
            where=[c.action_date < day, c.action_date >= day - timedelta(days=REPEAT_WINDOW_DAYS)],
        )
    repeats = repeated_notices(scraped.notices.rows, earlier)
    if repeats:  # the same announcement shown again: neither checked nor stored as the day's own
        scraped.notices.rows = [n for n in scraped.notices.rows if all(n is not r for r, _ in repeats)]
    closes = {symbol: row["close"] for symbol, row in previous[1].items()} if previous else {}
    parse_errors = (
        scraped.quotes.errors
        + scraped.notices.errors
        + scraped.fundamentals.errors
        + scraped.securities.errors
        + scraped.indices.errors
    )
    verdict = validate_day(
        day,
        scraped.quotes.page_date,
        scraped.quotes.rows,
        scraped.notices.rows,
        scraped.securities.rows,
        known,
        closes,
        settings.price_band,
        previous_day=previous,
        indices=scraped.indices.rows,
    )
    verdict.warnings[:0] = [
        f"{n['symbol']}: {n['kind']} notice repeats the one stored for {first.isoformat()} (same "
        "amount and detail): left out, not stored again"
        for n, first in repeats
    ]
    errors = parse_errors + verdict.errors
    row_counts = {
        "MAIN": sum(1 for r in scraped.quotes.rows if r["board"] == "MAIN"),
        "JUNIOR": sum(1 for r in scraped.quotes.rows if r["board"] == "JUNIOR"),
        "notices": len(scraped.notices.rows),
        "fundamentals": len(scraped.fundamentals.rows),
        "securities": len(scraped.securities.rows),
        "indices": len(scraped.indices.rows),
    }
    manifest = {
        "trading_date": day.isoformat(),
        "source": client.base_url,
        "status": "FAILED" if errors else "COMPLETE",
        "checksum": scraped.checksum,
        "row_counts": row_counts,
        "warnings": verdict.warnings,
        "errors": errors,
        "sources": [
            {"name": n, "url": f.url, "sha256": f.sha256, "bytes": len(f.body)}
            for n, f in sorted(scraped.fetched.items())
        ],
    }
    snapshot = _write_snapshot(settings.data_dir, scraped, manifest)
    if errors:
        _record_failure(engine, day, source, errors, manifest, snapshot)
        shown = "; ".join(errors[:5]) + (f"; and {len(errors) - 5} more" if len(errors) > 5 else "")
        raise DeliveryRejectedError(f"T0 data for {day.isoformat()} refused, nothing stored: {shown}")
    with write_transaction(engine, f"delivery:{day.isoformat()}") as conn:
        inserted = _store_day(conn, day, scraped, manifest, snapshot, source)
    attempts = sum(f.attempts for f in scraped.fetched.values())
    return DeliveryReport(
        day, "COMPLETE", scraped.checksum, row_counts, verdict.warnings, str(snapshot), inserted, attempts
    )


def _store_day(
    conn: Connection, day: date, s: ScrapedDay, manifest: dict, snapshot: Path, source: str
) -> dict[str, int]:
    inserted = {}
    delivery = append_history(
        conn,
        tables.deliveries,
        [
            {
                "trading_date": day,
                "status": "COMPLETE",
                "source": source,
                "checksum": s.checksum,
                "row_count": len(s.quotes.rows),
                "warning_count": len(manifest["warnings"]),
                "snapshot_path": str(snapshot),
                "manifest": manifest,
            }
        ],
    )
    inserted["deliveries"] = delivery.inserted
    delivery_id = current_rows(conn, tables.deliveries, where=[tables.deliveries.c.trading_date == day])[0]["id"]
    inserted["instruments"] = append_history(
        conn,
        tables.instruments,
        [
            {
                "symbol": r["symbol"],
                "name": r["name"],
                "board": r["board"],
                "sector": r["sector"],
                "currency": s.quotes.currency or HOME_CURRENCY,
                "listed_on": r["listed_on"],
                "delisted_on": r["delisted_on"],
                "source": source,
            }
            for r in s.securities.rows
        ],
    ).inserted
    inserted["eod_prices"] = append_history(
        conn,
        tables.eod_prices,
        [
            {
                "symbol": r["symbol"],
                "trading_date": day,
                "open": r["open"],
                "high": r["high"],
                "low": r["low"],
                "close": r["close"],
                "prev_close": r["prev_close"],
                "volume": r["volume"],
                "trades": r["trades"],
                "value_traded": r["value_traded"],
                "bid": r["bid"],
                "ask": r["ask"],
                "halted": r["status"] == "HALTED",
                "delivery_id": delivery_id,
                "source": source,
            }
            for r in s.quotes.rows
        ],
        scope=[tables.eod_prices.c.trading_date == day],
    ).inserted
    inserted["fundamentals"] = append_history(
        conn, tables.fundamentals, [{**r, "source": source} for r in s.fundamentals.rows]
    ).inserted
    inserted["corporate_actions"] = append_history(
        conn,
        tables.corporate_actions,
        [
            {
                "symbol": n["symbol"],
                "action_date": day,
                "kind": n["kind"],
                # a split's amount: its factor (store.splits)
                "amount": split_factor(n) if n["kind"] == "SPLIT" else n["amount"],
                "detail": {"text": n["detail"]},
                "source": source,
            }
            for n in s.notices.rows
        ],
    ).inserted
    inserted["index_levels"] = append_history(
        conn,
        tables.index_levels,
        [
            {
                "symbol": x["symbol"],
                "trading_date": day,
                "level": x["level"],
                "delivery_id": delivery_id,
                "source": source,
            }
            for x in s.indices.rows
        ],
        scope=[tables.index_levels.c.trading_date == day],
    ).inserted
    return inserted


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
        append_history(
            conn,
            tables.deliveries,
            [
                {
                    "trading_date": day,
                    "status": "FAILED",
                    "source": source,
                    "checksum": checksum,
                    "row_count": 0,
                    "warning_count": len(manifest.get("warnings", [])),
                    "snapshot_path": str(snapshot) if snapshot else None,
                    "manifest": manifest,
                }
            ],
        )


def _previous_day(conn: Connection, day: date) -> tuple[date, dict[str, dict]] | None:
    """The latest stored session before `day` and its rows by symbol (None before the first)."""
    prices = tables.eod_prices
    before = conn.execute(select(func.max(prices.c.trading_date)).where(prices.c.trading_date < day)).scalar()
    if before is None:
        return None
    return before, {r["symbol"]: r for r in current_rows(conn, prices, where=[prices.c.trading_date == before])}


def _write_snapshot(data_dir: Path, scraped: ScrapedDay, manifest: dict) -> Path:
    folder = data_dir / "raw" / scraped.day.isoformat() / scraped.checksum[:16]
    folder.mkdir(parents=True, exist_ok=True)
    for name, page in scraped.fetched.items():
        target = folder / f"{name.replace('_', '-')}.html"
        if not target.exists():
            target.write_bytes(page.body)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return folder
