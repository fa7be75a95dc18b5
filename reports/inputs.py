"""What each report is built from, read through the same service functions the API
serves, so a figure in a PDF is the figure a client reads over REST:

| report figure | service function | endpoint |
|---|---|---|
| system performance, model metrics | views.performance.performance | GET /api/ai/performance |
| market sentiment | views.breadth.breadth_of over latest_market | GET /api/market/breadth |
| top AI signals, score distribution | views.market.latest_market | GET /api/market/latest |
| AI portfolio summary | views.portfolio.ai_summary | GET /api/ai-portfolio/summary |
| AI portfolio positions | views.portfolio.ai_positions | GET /api/ai-portfolio/positions |
| equity curve, trade audit trail | views.portfolio.ai_record | GET /api/ai-portfolio/history (admin) |
| track record, null books | views.track_record.ai_track_record, ai_track_series | GET /api/ai-portfolio/track-record |
| data provenance | the store's deliveries and prices (`_provenance` here) | - |

The AI portfolio's summary and positions are one valuation, read by the rule the desk reads
the API's by (views.market.valued_at): at the latest priced day's closes, on the current
session's share count (a split whose ex-date is today applies before its close is stored).

Data provenance counts the market days whose stored prices came from each origin, read
from what the store records for each day: a price row names the delivery it came with
(`eod_prices.delivery_id`) or, without one, its source (`import:<format>` for
`marketintel import`); a delivery's manifest names the base URL its pages were fetched
from. `pipeline/backfill.py` fetches from the built-in exchange site in-process at
`BACKFILL_BASE_URL`, so a delivery from there is backfill: simulated, or replayed from
files when the world is a replay (MARKETINTEL_REPLAY_PATH: every process of a replay
world has it); a delivery from any other base URL was scraped over HTTP.

The equity curve's days carry `untraded_written_down`: the holdings that did not trade
that day (no price row with volume), which liquid equity left out at their whole value
(the exit rail's TRAPPED; portfolio/rails.py), read from the day's stored
`illiquid_discounts`.

A section whose source has nothing yet carries `unavailable` (the reason) instead of
failing the report. The inputs are one JSON document; its SHA-256 (`snapshot_sha256`) is
the data snapshot the compliance report certifies, and it does not depend on when the
report was generated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, TypedDict

from sqlalchemy import Connection, select

from market.clock import TradingCalendar, latest_closed_trading_day
from market.costs import describe as cost_model
from market.errors import NotReadyError
from market.money import Money, Price
from market.plain import JsonValue, canonical_sha256, to_plain
from market.settings import Settings
from models.features import FEATURE_NAMES
from portfolio.ai import fee_schedule
from portfolio.ledger import AI_PORTFOLIO
from portfolio.market import trading_currency
from store import tables
from store.history import current_query, current_rows
from views import portfolio as portfolio_views
from views.breadth import Breadth, breadth_of
from views.market import Quote, latest_market, signal_order, valued_at
from views.performance import Performance, performance
from views.portfolio import AIDay, AIPosition, AISummary
from views.track_record import TrackSeries, ai_track_record, ai_track_series
from views.valuation import portfolio_view

TOP_SIGNALS = 15
AUDIT_TRADES = 100
BACKFILL_BASE_URL = "http://simulator.local"  # pipeline/backfill.py's in-process exchange site

# The inputs are one plain JSON document (market.plain.to_plain: dates and money as text);
# the types below name each part's read model, as the views declare it.
TrackRecordJson = dict[str, JsonValue]  # portfolio.track_record.TrackRecord.as_dict()
NullBooksJson = dict[str, JsonValue]  # its "nulls": the AI book against its null books (NullRecord)


class MarketSection(TypedDict):
    """The latest market day's breadth, or why there is none (`unavailable`)."""

    breadth: Breadth | None
    unavailable: str | None


class MarketRead(MarketSection):
    quotes: dict[str, Quote]


class SignalRow(Quote):
    symbol: str


class AIPortfolioSection(AISummary):
    positions: list[AIPosition]


class CurveDay(AIDay):
    untraded_written_down: dict[str, float]  # symbol -> the value liquid equity left out


class BriefingInputs(TypedDict):
    performance: Performance
    market: MarketSection
    signals: list[SignalRow]  # the top TOP_SIGNALS by Score
    scored_instruments: int
    scores: list[float]
    ai_portfolio: AIPortfolioSection
    equity_curve: list[CurveDay]
    track_record: TrackRecordJson
    track_series: TrackSeries
    cost_model: str
    currency: str  # the money figures' (portfolio/market.py `trading_currency`)


class AuditTrade(TypedDict):
    trade_id: str
    trading_date: date
    timestamp: str
    symbol: str
    side: str
    quantity: int
    price: Price  # as text
    value: Money  # as text
    fees: Money
    costs: Money | None  # spread + impact + fees, money as text; None: no fill recorded, so no spread or impact


class Origin(TypedDict):
    origin: str  # scraped, simulated, replayed, imported or other
    detail: str | None
    days: int
    first_day: date
    last_day: date


class LatestDelivery(TypedDict):
    trading_date: date
    source: str
    status: str
    checksum: str
    row_count: int


class Provenance(TypedDict):
    deliveries: int
    first_day: date | None
    latest: LatestDelivery | None
    origins: list[Origin]  # most days first


class ComplianceInputs(TypedDict):
    performance: Performance
    feature_count: int
    features: list[str]
    trades_total: int
    audit_trail: list[AuditTrade]  # newest first
    cost_model: str
    currency: str  # the money figures' (portfolio/market.py `trading_currency`)
    null_books: NullBooksJson | None
    provenance: Provenance


def briefing_inputs(conn: Connection, calendar: TradingCalendar, now: datetime, settings: Settings) -> BriefingInputs:
    market = _market(conn, calendar, now)
    quotes = market.pop("quotes")
    scored = [{"symbol": s, **q} for s, q in quotes.items() if q["score"] is not None]
    scored.sort(key=signal_order)
    at = valued_at(conn, calendar, now)  # the desk's rule: on the current session's share count
    book = portfolio_view(conn, AI_PORTFOLIO, at.day, at.session)
    summary = portfolio_views.ai_summary(conn, at.day, settings.ai_starting_cash, view=book)
    currency = trading_currency(conn)
    return to_plain(
        {
            "performance": performance(conn, calendar),
            "market": market,
            "signals": scored[:TOP_SIGNALS],
            "scored_instruments": len(scored),
            "scores": [q["score"] for q in scored],
            "ai_portfolio": {**summary, "positions": portfolio_views.ai_positions(conn, at.day, view=book)},
            "equity_curve": _with_untraded_write_downs(conn, portfolio_views.ai_record(conn)["days"]),
            "track_record": ai_track_record(conn, settings.ai_starting_cash, fees=fee_schedule(settings)).as_dict(),
            "track_series": ai_track_series(conn, settings.ai_starting_cash, fees=fee_schedule(settings)),
            "cost_model": cost_model(fee_schedule(settings), currency),
            "currency": currency,
        }
    )


def compliance_inputs(
    conn: Connection, calendar: TradingCalendar, now: datetime, settings: Settings
) -> ComplianceInputs:
    trades = portfolio_views.ai_record(conn)["trades"]
    audit = [
        {
            **{
                k: t[k]
                for k in (
                    "trade_id",
                    "trading_date",
                    "timestamp",
                    "symbol",
                    "side",
                    "quantity",
                    "price",
                    "value",
                    "fees",
                )
            },
            "costs": ((t["rationale"] or {}).get("fill") or {}).get("costs", {}).get("total"),
        }
        for t in reversed(trades[-AUDIT_TRADES:])
    ]
    currency = trading_currency(conn)
    return to_plain(
        {
            "performance": performance(conn, calendar),
            "feature_count": len(FEATURE_NAMES),
            "features": FEATURE_NAMES,
            "trades_total": len(trades),
            "audit_trail": audit,
            "cost_model": cost_model(fee_schedule(settings), currency),
            "currency": currency,
            "null_books": ai_track_record(conn, settings.ai_starting_cash, fees=fee_schedule(settings)).as_dict()[
                "nulls"
            ],
            "provenance": _provenance(conn, replay=settings.replay_path),
        }
    )


def priced_day(inputs: BriefingInputs | ComplianceInputs | dict) -> str | None:
    """The market day a report is about (YYYY-MM-DD), whichever report it is: the latest
    day with stored prices, the briefing's breadth day or the compliance report's latest
    priced day from its provenance (delivered, backfilled or imported; a refused delivery
    priced nothing); None on a store without prices."""
    breadth = (inputs.get("market") or {}).get("breadth")
    origins = (inputs.get("provenance") or {}).get("origins") or []
    if breadth:
        return str(breadth["trading_date"])
    if origins:
        return str(max(str(o["last_day"]) for o in origins))
    return None


# How many sessions a report's prices may lag the latest closed session before it says they
# are stale: 1 is the hours between a close and T0's delivery, 2 a day T0 missed; more is a
# store nobody has fed (`staleness`).
STALE_AFTER_SESSIONS = 2


@dataclass(frozen=True)
class Staleness:
    """A report's market day (`priced_day`) against the latest closed session when it was
    generated: `behind` sessions apart."""

    day: date
    latest_closed: date
    behind: int


def staleness(day: str | None, calendar: TradingCalendar, now: datetime) -> Staleness | None:
    """Whether a report about market `day` generated at `now` reads old prices: its day more
    than STALE_AFTER_SESSIONS sessions before the latest closed one on `calendar`; None when
    it is current, or when no day is priced (the heading already says so). Not part of the
    inputs: it depends on when the report is made, the data snapshot does not."""
    if day is None:
        return None
    priced, latest = date.fromisoformat(day), latest_closed_trading_day(now, calendar)
    behind = calendar.trading_days_between(priced, latest)
    return Staleness(priced, latest, behind) if behind > STALE_AFTER_SESSIONS else None


def snapshot_sha256(inputs: BriefingInputs | ComplianceInputs) -> str:
    """SHA-256 of the inputs as canonical JSON (sorted keys, no whitespace)."""
    return canonical_sha256(inputs)


def _market(conn: Connection, calendar: TradingCalendar, now: datetime) -> MarketRead:
    try:
        quotes = latest_market(conn, calendar, latest_closed_trading_day(now, calendar))
    except NotReadyError as exc:
        return {"quotes": {}, "breadth": None, "unavailable": exc.detail}
    return {"quotes": quotes, "breadth": breadth_of(conn, quotes), "unavailable": None}


def _provenance(conn: Connection, replay: Any = None) -> Provenance:
    """Where the prices came from: how many market days came from each origin (`origins`,
    most days first), the latest delivery and how many days were delivered."""
    deliveries = current_rows(conn, tables.deliveries)
    latest = max(deliveries, key=lambda d: d["trading_date"]) if deliveries else None
    return {
        "deliveries": len(deliveries),
        "first_day": min(d["trading_date"] for d in deliveries) if deliveries else None,
        "latest": {k: latest[k] for k in ("trading_date", "source", "status", "checksum", "row_count")}
        if latest
        else None,
        "origins": _price_origins(conn, replay),
    }


def _price_origins(conn: Connection, replay: Any) -> list[Origin]:
    """[{origin, detail, days, first_day, last_day}]: each market day with stored prices
    counted once, under the delivery its prices came with (the latest one when several
    did) or, for prices stored without a delivery, their source."""
    prices = current_query(tables.eod_prices, dialect=conn.dialect.name).subquery()
    rows = conn.execute(select(prices.c.trading_date, prices.c.delivery_id, prices.c.source).distinct()).all()
    by_day: dict[date, tuple[int | None, str]] = {}
    for day, delivery_id, source in rows:
        known = by_day.get(day)
        if known is None or (delivery_id or 0, source) > (known[0] or 0, known[1]):
            by_day[day] = (delivery_id, source)
    ids = {d for d, _ in by_day.values() if d is not None}
    c = tables.deliveries.c
    manifests = (
        {r.id: (r.source, r.manifest) for r in conn.execute(select(c.id, c.source, c.manifest).where(c.id.in_(ids)))}
        if ids
        else {}
    )
    groups: dict[tuple[str, str | None], list[date]] = {}
    for day, (delivery_id, source) in by_day.items():
        delivered = manifests.get(delivery_id)
        key = _delivered_origin(*delivered, replay) if delivered else _stored_origin(source)
        groups.setdefault(key, []).append(day)
    origins: list[Origin] = [
        {"origin": origin, "detail": detail, "days": len(days), "first_day": min(days), "last_day": max(days)}
        for (origin, detail), days in groups.items()
    ]
    return sorted(origins, key=lambda o: (-o["days"], o["origin"], o["detail"] or ""))


def _delivered_origin(source: str, manifest: dict[str, JsonValue], replay: Any) -> tuple[str, str | None]:
    """A delivery's origin: backfill from the in-process site (simulated, or replayed from
    files), else scraped over HTTP from the base URL its manifest names."""
    base = str((manifest or {}).get("source") or "")
    named = (source or "").lower()
    if "replay" in named:
        return "replayed", source.split(":", 1)[1] if ":" in source else None
    if "simulat" in named:
        return "simulated", None
    if base.rstrip("/") == BACKFILL_BASE_URL:
        return ("replayed", _file_name(replay)) if replay else ("simulated", None)
    return "scraped", base or None


def _stored_origin(source: str) -> tuple[str, str | None]:
    """The origin of prices stored without a delivery: `import:<format>` or another source."""
    if source.startswith("import:"):
        return "imported", source.removeprefix("import:")
    return "other", source


def _file_name(path: Any) -> str:
    return str(path).rstrip("/").rsplit("/", 1)[-1] or str(path)


def _with_untraded_write_downs(conn: Connection, days: list[AIDay]) -> list[CurveDay]:
    """Each executed day with `untraded_written_down`: {symbol: amount} of the holdings that
    did not trade that day (no price row with volume on it, as portfolio.market reads it),
    which liquid equity left out at their whole value. A HIGH_SPREAD discount (the holding
    traded) is not one of them."""
    discounts = {d["trading_date"]: (d.get("summary") or {}).get("illiquid_discounts") or {} for d in days}
    traded: set[tuple[date, str]] = set()
    if any(discounts.values()):
        c = tables.eod_prices.c
        rows = current_rows(
            conn,
            tables.eod_prices,
            where=[
                c.symbol.in_(sorted({s for held in discounts.values() for s in held})),
                c.trading_date.in_([day for day, held in discounts.items() if held]),
            ],
        )
        traded = {(r["trading_date"], r["symbol"]) for r in rows if (r["volume"] or 0) > 0}
    return [
        {
            **d,
            "untraded_written_down": {
                symbol: amount for symbol, amount in sorted(discounts[day].items()) if (day, symbol) not in traded
            },
        }
        for d in days
        for day in [d["trading_date"]]
    ]
