"""T1 step 4b, after the predictions: the model monitor (docs/monitoring.md).

Computes the day's checks (read by pipeline/monitor_reads.py, figured by models/monitor.py:
drift of the 14 inputs and of the Score against the validation record, the live record's
accuracy and calibration against the validation record's band), sets each check's state
from its stored levels of the previous trading days (ALERT only after
`monitor_persistence_days` consecutive ALERT days) and stores one `monitor_checks` row per
check in one transaction, with a MODEL_DRIFT or MODEL_DEGRADED notification for each check
in ALERT (id `<since>:model-drift:<check>` or
`<since>:model-degraded:<check>`: one per breach, however long it lasts). After the commit
the pending notifications of the day go to the signed webhook and new alerts to the
apprise URLs of `notify_urls`; a delivery failure does not fail the stage (a webhook set up
wrong, a URL without its secret, is refused before the stage starts: pipeline/runner.py
`refuse_to_start`). A re-run with
the same figures writes nothing and notifies nobody again. A preview sends nothing.
"""

from __future__ import annotations

import json
import logging
from datetime import date
from typing import Any

from sqlalchemy import Connection, select

from analysis import notify
from analysis.notify import Notification
from market.settings import Settings
from market.text import masked_urls
from models.monitor import ALERT, Check, Thresholds, overall, persist, said
from pipeline.monitor_reads import day_checks, priced_days
from pipeline.predict_stages import require_prices
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.history import append_history, current_rows

log = logging.getLogger(__name__)
HISTORY_DAYS = 60  # stored days read back for a breach's persistence and start


def _unrecorded(conn: Connection, alerts: list[Notification]) -> list[Notification]:
    """The day's ALERT notifications not stored yet (a re-run of the day records none twice)."""
    n = tables.notifications.c
    ids = [a.notification_id for a in alerts]
    known = {r for (r,) in conn.execute(select(n.notification_id).where(n.notification_id.in_(ids)))} if ids else set()
    return [a for a in alerts if a.notification_id not in known]


def run_monitor(ctx: StageContext) -> StageOutcome:
    day = ctx.trading_date
    t = Thresholds.of(ctx.settings)
    with ctx.engine.connect() as conn:
        require_delivered(conn, day)
        checks, context = day_checks(conn, day, t, cache_dir=ctx.settings.models_dir / "monitor")
        checks = persist(checks, stored_levels(conn, day), t, day)
    alerts = [alert_notification(c, day) for c in checks if c.state == ALERT]
    with ctx.transaction() as conn:
        written = append_history(
            conn,
            tables.monitor_checks,
            [row(c, day) for c in checks],
            scope=[tables.monitor_checks.c.trading_date == day],
        ).inserted
        new = _unrecorded(conn, alerts)
        notify.record(conn, new)
    if ctx.write:
        delivery = ctx.desk.deliver_notifications()  # every undelivered one, an earlier day's too
        delivery["apprise"] = send_apprise(ctx.settings, new)
    else:
        delivery = {
            "webhook": "not sent: preview",
            "delivered": 0,
            "failed": 0,
            "waiting": 0,
            "apprise": "not sent: preview",
        }
    states = {c.check_name: c.state for c in checks}
    return StageOutcome(
        summary={
            "state": overall(states.values()),
            "alerts": sorted(c for c, s in states.items() if s == ALERT),
            "watch": sorted(c for c, s in states.items() if s == "WATCH"),
            "monitor_rows_written": written,
            "new_alerts": len(new),
            "reference": list(context.reference) if context.reference else None,
            "window": list(context.window) if context.window else None,
            **delivery,
        },
        tables={
            "checks": [
                {
                    "check": c.check_name,
                    "state": c.state,
                    "level": c.level,
                    "figure": c.figure,
                    "watch_threshold": c.watch_threshold,
                    "alert_threshold": c.alert_threshold,
                    "since": c.since.isoformat() if c.since else None,
                    "note": c.figures.get("note"),
                }
                for c in checks
            ]
        },
    )


def require_delivered(conn: Connection, day: date) -> None:
    """NotReadyError, as t1_features and t1_predict refuse it (`require_prices`), for a day
    after the store's first price without closes of its own (T0 has not delivered it): its
    checks would read only earlier days (every market-wide and activity check OK, nothing on
    the day to read) and, stored as that day's, make it the monitor's latest day, so the
    predicted days before it that were never monitored would no longer count as behind. A
    day before the first price keeps its checks, each noting NO_PRICED_DAYS (a re-run of an
    early day)."""
    latest = priced_days(conn, day, 1)
    if latest and latest[-1] != day:
        require_prices(conn, day)


def row(check: Check, day: date) -> dict[str, Any]:
    return {
        "trading_date": day,
        "check_name": check.check_name,
        "kind": check.kind,
        "level": check.level,
        "state": check.state,
        "figure": check.figure,
        "watch_threshold": check.watch_threshold,
        "alert_threshold": check.alert_threshold,
        "since": check.since,
        "figures": check.figures,
    }


def stored_levels(conn: Connection, day: date) -> dict[str, list[tuple[date, str, date | None]]]:
    """check -> [(day, level, since)] of the stored trading days before `day`, latest first,
    stopping at the first day without a row (persistence counts consecutive monitored days)."""
    m = tables.monitor_checks.c
    rows = current_rows(conn, tables.monitor_checks, where=[m.trading_date < day])
    days = sorted({r["trading_date"] for r in rows}, reverse=True)[:HISTORY_DAYS]
    by_check: dict[str, dict[date, dict[str, Any]]] = {}
    for r in rows:
        by_check.setdefault(r["check_name"], {})[r["trading_date"]] = r
    history = {}
    for name, by_day in by_check.items():
        seq = []
        for d in days:
            if d not in by_day:
                break
            seq.append((d, by_day[d]["level"], by_day[d]["since"]))
        history[name] = seq
    return history


def alert_notification(check: Check, day: date) -> Notification:
    kind = "MODEL_DRIFT" if check.drift else "MODEL_DEGRADED"
    since = check.since or day
    what = (
        f"input {check.check_name.split(':', 1)[1]}"
        if check.check_name.startswith("input:")
        else "the Score"
        if check.check_name == "score"
        else check.check_name.replace("_", " ")
    )
    # what moved, in words (models/monitor.py `said`): a stuck, missing or frozen feed's note, whose figure
    # need not pass its ALERT line, else the figure against its lines in four figures
    # `since` is the breach's first day, its WATCH days included (models/monitor.py `persist`): not when ALERT began
    breach = f"in breach (WATCH or ALERT) since {since.isoformat()}"
    headline = f"Model {'drift' if check.drift else 'degraded'}: {what} is ALERT, {breach}"
    title = f"{headline}: {said(check)}"
    return Notification(
        f"{since.isoformat()}:{kind.lower().replace('_', '-')}:{check.check_name}",
        day,
        kind,
        "CRITICAL",
        title,
        {
            "check": check.check_name,
            "state": check.state,
            "figure": check.figure,
            "watch_threshold": check.watch_threshold,
            "alert_threshold": check.alert_threshold,
            "since": since.isoformat(),
            "figures": check.figures,
        },
    )


def message_body(alert: Notification) -> str:
    """An apprise message's body: the alert's title, then the figures behind it, one a line
    ("stuck: true", "window_days: 20"), each value as JSON writes it, never Python's repr."""
    figures = alert.payload.get("figures") or {}
    lines = [f"{name}: {json.dumps(value, default=str)}" for name, value in sorted(figures.items()) if name != "note"]
    return "\n".join([alert.title, *lines])


def send_apprise(settings: Settings, alerts: list[Notification]) -> str:
    """A message per new alert to the apprise URLs of `notify_urls`; never raises."""
    if not settings.notify_urls:
        return "not configured"
    if not alerts:
        return "nothing new"
    try:
        import apprise

        sender = apprise.Apprise()
        for url in settings.notify_urls:
            sender.add(url)
        sent = sum(
            bool(
                sender.notify(
                    title=a.title,
                    body=message_body(a),
                    notify_type=apprise.NotifyType.FAILURE,
                )
            )
            for a in alerts
        )
    except Exception as exc:  # noqa: BLE001 - a notification channel must not fail T1
        log.warning("apprise notification failed: %s", masked_urls(str(exc)))
        return f"failed: {type(exc).__name__}"
    return f"sent {sent} of {len(alerts)}"


MONITOR = Stage(
    "t1_monitor",
    run_monitor,
    "Model monitor: input and Score drift, live accuracy and calibration; alerts after persistence (webhook, apprise).",
)
