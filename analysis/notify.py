"""Notifications: stored first, then POSTed to the configured webhook.

A notification has a stable id (`<date>:analysis`, `<date>:analysis:<digest>` for a day's
analysis rewritten with other content, `<date>:trapped:<symbol>`,
`<date>:preflight-failed:<run>:<try>`, `<date>:model-retrained:<model>`,
`<date>:task-failed:<dag>.<task>:<run>:<try>`), so recording it again is a
no-op and a re-run never notifies twice (a notification, once stored, is never changed).
Delivery is at least once: every attempt is a `notification_attempts` row, a notification
with a DELIVERED attempt on the channel (`webhook:<url without query>`) is not sent again,
and one whose attempts all failed is retried by the next delivery pass (the next run of
the stage, or `marketintel notify deliver`).

The request: `POST <webhook_url>` with the notification as JSON and
`X-Marketintel-Notification: <id>`, `X-Marketintel-Timestamp: <unix seconds>`,
`X-Marketintel-Signature: sha256=<hex>` where the hex is HMAC-SHA256 over
`<timestamp>.<body>` keyed with `webhook_secret` (receivers recompute it and reject old
timestamps, which stops replays). Connection errors, timeouts, 408, 429 and 5xx are
retried with exponential backoff; any other 4xx is final for that pass.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import TypedDict

import httpx
from sqlalchemy import Connection, Engine, func, select

from market.errors import ConfigurationError
from market.plain import JsonValue
from market.settings import Settings
from store import tables
from store.history import append_history, current_rows
from store.transactions import write_transaction

log = logging.getLogger(__name__)
SIGNATURE_HEADER = "X-Marketintel-Signature"
TIMESTAMP_HEADER = "X-Marketintel-Timestamp"
ID_HEADER = "X-Marketintel-Notification"
RETRYABLE = {408, 429}


class NotificationRow(TypedDict):
    """A notification as `notifications` stores it: its title inside the JSON payload."""

    notification_id: str
    trading_date: date | None
    kind: str
    severity: str
    payload: dict[str, JsonValue]


class StoredNotification(NotificationRow):
    id: int
    recorded_at: datetime


class Delivery(TypedDict):
    webhook: str  # the redacted target, or "not configured"
    delivered: int
    failed: int
    waiting: int  # still not delivered after this pass: the failed ones, or every pending one without a webhook


@dataclass(frozen=True)
class Notification:
    notification_id: str
    trading_date: date
    kind: str  # ANALYSIS, TRAPPED, PREFLIGHT_FAILED, MODEL_RETRAINED, TASK_FAILED
    severity: str  # INFO, WARNING, CRITICAL
    title: str
    payload: dict[str, JsonValue]

    def row(self) -> NotificationRow:
        return {
            "notification_id": self.notification_id,
            "trading_date": self.trading_date,
            "kind": self.kind,
            "severity": self.severity,
            "payload": {"title": self.title, **self.payload},
        }


def record(conn: Connection, notifications: list[Notification]) -> int:
    """Store the notifications not stored yet (inside the caller's transaction); returns how
    many are new. An id already stored keeps its first content: it may have been sent."""
    if not notifications:
        return 0
    n = tables.notifications.c
    ids = [x.notification_id for x in notifications]
    known = {r for (r,) in conn.execute(select(n.notification_id).where(n.notification_id.in_(ids)))}
    new = [x.row() for x in notifications if x.notification_id not in known]
    return append_history(conn, tables.notifications, new).inserted if new else 0


def signature(secret: str, timestamp: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def webhook_target(settings: Settings) -> str | None:
    """The configured webhook, checked, or None when notifications are stored only."""
    if not settings.webhook_url:
        return None
    if not settings.webhook_secret or not settings.webhook_secret.get_secret_value():
        raise ConfigurationError(
            "MARKETINTEL_WEBHOOK_URL is set without MARKETINTEL_WEBHOOK_SECRET; notifications "
            "are signed, so set a secret the receiver shares"
        )
    if not settings.webhook_url.startswith(("http://", "https://")):
        raise ConfigurationError(f"MARKETINTEL_WEBHOOK_URL must be an http(s) URL, not '{settings.webhook_url}'")
    return settings.webhook_url


def deliver_pending(
    engine: Engine, settings: Settings, trading_date: date | None = None, sleep: Callable[[float], None] = time.sleep
) -> Delivery:
    """Send every stored notification (of `trading_date`, or all) not yet delivered."""
    url = webhook_target(settings)
    target = f"webhook:{_redacted(url)}" if url is not None else None
    n = tables.notifications.c
    with engine.connect() as conn:
        pending = [
            row
            for row in current_rows(
                conn, tables.notifications, where=[n.trading_date == trading_date] if trading_date else ()
            )
            if target is None or not _delivered(conn, row["notification_id"], target)
        ]
    if url is None or target is None:  # stored only: every one of them waits for a webhook
        return {"webhook": "not configured", "delivered": 0, "failed": 0, "waiting": len(pending)}
    delivered = failed = 0
    for row in sorted(pending, key=lambda r: r["id"]):
        if _send(engine, settings, url, target, row, sleep):
            delivered += 1
        else:
            failed += 1
    return {"webhook": target, "delivered": delivered, "failed": failed, "waiting": failed}


def _send(
    engine: Engine,
    settings: Settings,
    url: str,
    target: str,
    row: StoredNotification,
    sleep: Callable[[float], None],
) -> bool:
    body = json.dumps(
        {k: row[k] for k in ("notification_id", "kind", "severity", "payload")}
        | {
            "title": row["payload"].get("title"),
            "trading_date": row["trading_date"].isoformat() if row["trading_date"] else None,
        },
        sort_keys=True,
    ).encode()
    secret = settings.webhook_secret.get_secret_value()  # type: ignore[union-attr] - checked by webhook_target
    delay = settings.webhook_backoff_seconds
    for attempt_of_pass in range(settings.webhook_retries + 1):
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            ID_HEADER: row["notification_id"],
            TIMESTAMP_HEADER: stamp,
            SIGNATURE_HEADER: signature(secret, stamp, body),
        }
        status, error = None, None
        try:
            response = httpx.post(url, content=body, headers=headers, timeout=settings.webhook_timeout_seconds)
            status = response.status_code
            if response.is_success:
                _attempt(engine, row["notification_id"], target, "DELIVERED", status, None)
                return True
            error = f"HTTP {status}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]
        _attempt(engine, row["notification_id"], target, "FAILED", status, error)
        final = status is not None and status < 500 and status not in RETRYABLE
        if final or attempt_of_pass == settings.webhook_retries:
            log.warning("notification %s not delivered to %s: %s", row["notification_id"], target, error)
            return False
        sleep(delay)
        delay *= 2
    return False


def _attempt(
    engine: Engine, notification_id: str, channel: str, status: str, http_status: int | None, error: str | None
) -> None:
    d = tables.notification_attempts.c
    with write_transaction(engine, f"notification:{notification_id}") as conn:  # its number read, then written
        previous = conn.execute(select(func.max(d.attempt)).where(d.notification_id == notification_id)).scalar() or 0
        append_history(
            conn,
            tables.notification_attempts,
            [
                {
                    "notification_id": notification_id,
                    "channel": channel,
                    "attempt": previous + 1,
                    "status": status,
                    "response_code": http_status,
                    "error": error,
                }
            ],
        )


def _delivered(conn: Connection, notification_id: str, channel: str) -> bool:
    d = tables.notification_attempts.c
    return (
        conn.execute(
            select(func.count())
            .select_from(tables.notification_attempts)
            .where(d.notification_id == notification_id, d.channel == channel, d.status == "DELIVERED")
        ).scalar()
        > 0
    )


def _redacted(url: str) -> str:
    """The URL without credentials or query (a token in either must not land in the store)."""
    parsed = httpx.URL(url)
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path}"


def alert(engine: Engine, settings: Settings, notification: Notification) -> Delivery:
    """Record one alert in its own transaction and deliver what is pending for its date."""
    with write_transaction(engine, f"notifications:{notification.trading_date}") as conn:
        record(conn, [notification])
    return deliver_pending(engine, settings, notification.trading_date)
