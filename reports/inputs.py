"""What each report is built from, read through the same service functions the API
serves, so a figure in a PDF is the figure a client reads over REST:

| report figure | service function | endpoint |
|---|---|---|
| system performance, model metrics | views.performance.performance | GET /api/ai/performance |
| market sentiment | views.breadth.breadth_of over latest_market | GET /api/market/breadth |
| top AI signals, score distribution | views.market.latest_market | GET /api/market/latest |
| AI portfolio summary and positions | views.portfolio.ai_summary, views.portfolio.ai_positions | GET /api/ai-portfolio/summary, /positions |
| equity curve, trade audit trail | views.portfolio.ai_record | GET /api/ai-portfolio/history (admin) |

A section whose source has nothing yet carries `unavailable` (the reason) instead of
failing the report. The inputs are one JSON document; its SHA-256 (`snapshot_sha256`) is
the data snapshot the compliance report certifies, and it does not depend on when the
report was generated.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from market.clock import TradingCalendar, latest_closed_trading_day
from market.errors import NotReadyError
from market.plain import canonical_sha256, to_plain
from market.settings import Settings
from views.track_record import ai_track_record, ai_track_series
from views.breadth import breadth_of
from models.features import FEATURE_NAMES
from views.market import latest_market, valuation_day
from views.performance import performance
from views import portfolio as portfolio_views
from portfolio.market import trading_currency
from store import tables
from store.history import current_rows

TOP_SIGNALS = 15
AUDIT_TRADES = 100


def briefing_inputs(conn: Connection, calendar: TradingCalendar, now: datetime, settings: Settings) -> dict[str, Any]:
    market = _market(conn, calendar, now)
    quotes = market.pop("quotes")
    scored = [{"symbol": s, **q} for s, q in quotes.items() if q["score"] is not None]
    scored.sort(key=lambda q: (-q["score"], q["symbol"]))
    day = valuation_day(conn, calendar, now)
    summary = portfolio_views.ai_summary(conn, day, settings.ai_starting_cash)
    return to_plain({
        "performance": performance(conn),
        "market": market,
        "signals": scored[:TOP_SIGNALS],
        "scored_instruments": len(scored),
        "scores": [q["score"] for q in scored],
        "ai_portfolio": {**summary, "positions": portfolio_views.ai_positions(conn, day)},
        "equity_curve": portfolio_views.ai_record(conn)["days"],
        "track_record": ai_track_record(conn, settings.ai_starting_cash),
        "track_series": ai_track_series(conn, settings.ai_starting_cash),
        "currency": trading_currency(conn),
    })


def compliance_inputs(conn: Connection, calendar: TradingCalendar, now: datetime, settings: Settings) -> dict[str, Any]:
    trades = portfolio_views.ai_record(conn)["trades"]
    audit = [{**{k: t[k] for k in ("trade_id", "trading_date", "timestamp", "symbol", "side", "quantity", "price", "value",
                                   "fees")},
              "costs": ((t["rationale"] or {}).get("fill") or {}).get("costs", {}).get("total", str(t["fees"]))}
             for t in reversed(trades[-AUDIT_TRADES:])]
    return to_plain({
        "performance": performance(conn),
        "feature_count": len(FEATURE_NAMES),
        "features": FEATURE_NAMES,
        "trades_total": len(trades),
        "audit_trail": audit,
        "provenance": _provenance(conn),
    })


def snapshot_sha256(inputs: dict[str, Any]) -> str:
    """SHA-256 of the inputs as canonical JSON (sorted keys, no whitespace)."""
    return canonical_sha256(inputs)


def _market(conn: Connection, calendar: TradingCalendar, now: datetime) -> dict[str, Any]:
    try:
        quotes = latest_market(conn, calendar, latest_closed_trading_day(now, calendar))
    except NotReadyError as exc:
        return {"quotes": {}, "breadth": None, "unavailable": exc.detail}
    return {"quotes": quotes, "breadth": breadth_of(conn, quotes), "unavailable": None}


def _provenance(conn: Connection) -> dict[str, Any]:
    """Where the prices came from: the latest delivery and how many days were delivered."""
    deliveries = current_rows(conn, tables.deliveries)
    if not deliveries:
        return {"deliveries": 0, "latest": None}
    latest = max(deliveries, key=lambda d: d["trading_date"])
    return {"deliveries": len(deliveries), "first_day": min(d["trading_date"] for d in deliveries),
            "latest": {k: latest[k] for k in ("trading_date", "source", "status", "checksum", "row_count")}}
