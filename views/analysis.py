"""The stored day analysis as its readers see it (REST /api/analysis, GraphQL
dayAnalysis): the latest version of a day's analysis with that day's notifications and
whether each reached the webhook. `pipeline/analysis_stage.py` writes it."""

from __future__ import annotations

from datetime import date
from typing import TypedDict

from sqlalchemy import Connection, func, select

from market.clock import exchange_iso
from market.errors import NotFoundError, NotReadyError
from market.plain import JsonValue
from store import tables
from store.history import current_rows


class AnalysisNotification(TypedDict):
    notification_id: str
    kind: str
    severity: str
    title: str | None
    delivered: bool  # reached the webhook


class StoredAnalysis(TypedDict):
    """A day's written analysis, the facts it was written from (JSON, analysis/day_facts.py)
    and the day's notifications."""

    trading_date: date
    writer: str
    fallback_reason: str | None
    body: str
    facts: dict[str, JsonValue]
    written_at: str  # exchange time
    notifications: list[AnalysisNotification]


def stored_analysis(conn: Connection, day: date | None = None) -> StoredAnalysis:
    """The analysis of `day` (default: the latest one stored) with that day's
    notifications and whether each reached the webhook; the latest version when the day was
    written more than once (new facts after a correction), with its own analysis
    notification only (each version is sent under its own id)."""
    a = tables.analyses.c
    if day is None:
        day = conn.execute(select(func.max(a.trading_date))).scalar()
        if day is None:
            raise NotReadyError("no analysis has been written yet; T1 step 5 (t1_analysis) writes one per trading day")
    versions = current_rows(conn, tables.analyses, where=[a.trading_date == day])
    if not versions:
        raise NotFoundError(f"no analysis is stored for {day.isoformat()}")
    latest = max(versions, key=lambda r: (r["recorded_at"], r["id"]))
    n, d = tables.notifications.c, tables.notification_attempts.c
    delivered = {r for (r,) in conn.execute(select(d.notification_id).where(d.status == "DELIVERED"))}
    # the day's other versions' analysis notifications are not this one's: only the shown one's
    notes = [
        x
        for x in current_rows(conn, tables.notifications, where=[n.trading_date == day])
        if x["kind"] != "ANALYSIS"
        or (x["payload"].get("body"), x["payload"].get("writer")) == (latest["body"], latest["writer"])
    ]
    return {
        "trading_date": day,
        "writer": latest["writer"],
        "fallback_reason": latest["fallback_reason"],
        "body": latest["body"],
        "facts": latest["facts"],
        "written_at": exchange_iso(latest["recorded_at"]),
        "notifications": [
            {
                "notification_id": x["notification_id"],
                "kind": x["kind"],
                "severity": x["severity"],
                "title": x["payload"].get("title"),
                "delivered": x["notification_id"] in delivered,
            }
            for x in sorted(notes, key=lambda x: x["id"])
        ],
    }
