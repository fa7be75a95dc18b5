"""T1 step 5: the day's written analysis and its notifications.

Reads the day's facts (analysis/day_facts.py); when an analysis of the same facts is
already stored (a re-run), it is reused and the language model is not asked again, so a
re-run writes nothing. Otherwise the writer (analysis/writers.py) writes it outside any
transaction (a slow model must not hold the store), then one transaction stores the
analysis and the notifications it raises: the analysis itself (a rewritten one, other
content for the same day, under its own id: `versioned`), each newly TRAPPED AI
position and a retrained model. After the commit, pending notifications of the day go to
the webhook; a webhook outage does not fail the stage (T1 goes on to trade) but is in its
summary and retried by the next pass (a webhook set up wrong, a URL without its secret, is
refused before the stage starts: pipeline/runner.py `refuse_to_start`). A preview sends
nothing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

from sqlalchemy import Connection

from analysis import notify
from analysis.day_facts import day_facts
from analysis.notify import Notification
from analysis.writers import write_analysis
from market.plain import canonical_sha256
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.history import append_history, current_rows


def run_analysis(ctx: StageContext) -> StageOutcome:
    day = ctx.trading_date
    with ctx.engine.connect() as conn:
        facts = day_facts(conn, ctx.calendar, day)
        stored = current_rows(conn, tables.analyses, where=[tables.analyses.c.trading_date == day])
    digest = canonical_sha256(facts)
    same = sorted(
        (a for a in stored if canonical_sha256(a["facts"]) == digest), key=lambda a: (a["recorded_at"], a["id"])
    )
    reused = bool(same)
    if reused:
        analysis = same[-1]
    else:
        written = write_analysis(facts, ctx.settings)
        analysis = {
            "trading_date": day,
            "writer": written.writer,
            "fallback_reason": written.fallback_reason,
            "facts": facts,
            "body": written.body,
        }
    with ctx.transaction() as conn:
        if not reused:
            append_history(conn, tables.analyses, [analysis])
        new = notify.record(conn, [versioned(conn, note) for note in raised(facts, analysis)])
    # a preview (ctx.write False) stores nothing, so it must not tell the webhook either; a
    # write delivers every notification still undelivered, an earlier day's too
    delivery = (
        ctx.desk.deliver_notifications()
        if ctx.write
        else {"webhook": "not sent: preview", "delivered": 0, "failed": 0, "waiting": 0}
    )
    summary: dict[str, Any] = {
        "writer": analysis["writer"],
        "fallback_reason": analysis["fallback_reason"],
        "reused_stored_analysis": reused,
        "new_notifications": new,
        **delivery,
    }
    with ctx.engine.connect() as conn:
        notes = current_rows(conn, tables.notifications, where=[tables.notifications.c.trading_date == day])
    return StageOutcome(
        summary=summary,
        tables={
            "analysis": [{"paragraph": p} for p in analysis["body"].split("\n\n")],
            "notifications": [
                {
                    "id": n["notification_id"],
                    "kind": n["kind"],
                    "severity": n["severity"],
                    "title": n["payload"].get("title"),
                }
                for n in sorted(notes, key=lambda n: n["id"])
            ],
        },
    )


def raised(facts: dict[str, Any], analysis: dict[str, Any]) -> list[Notification]:
    """The notifications a day's facts raise."""
    day = date.fromisoformat(facts["trading_date"])
    items = [
        Notification(
            f"{day.isoformat()}:analysis",
            day,
            "ANALYSIS",
            "INFO",
            f"Market analysis for {day.isoformat()}",
            {
                "body": analysis["body"],
                "writer": analysis["writer"],
                "fallback_reason": analysis["fallback_reason"],
                "breadth": facts["breadth"],
                "top_signals": facts["top_signals"],
            },
        )
    ]
    for symbol in facts["ai_portfolio"]["newly_trapped"]:
        items.append(
            Notification(
                f"{day.isoformat()}:trapped:{symbol}",
                day,
                "TRAPPED",
                "WARNING",
                f"AI position {symbol} is TRAPPED: no volume on {day.isoformat()}, no exit possible",
                {"symbol": symbol},
            )
        )
    model = facts["model"]
    if model["retrained"]:
        items.append(
            Notification(
                f"{day.isoformat()}:model-retrained:{model['model_id']}",
                day,
                "MODEL_RETRAINED",
                "INFO",
                f"Risk model {model['model_id']} trained for {day.isoformat()}",
                {
                    k: model.get(k)
                    for k in ("model_id", "warm_start", "training_rows", "trained_through", "layer1_backend")
                },
            )
        )
    return items


def versioned(conn: Connection, note: Notification) -> Notification:
    """A day's analysis notification under its version's id: the first version keeps
    `<date>:analysis`, one rewritten with other content (new facts after a correction) is
    `<date>:analysis:<digest of its payload>`, so each version is stored and sent once (an
    id, once stored, keeps its first content: the rewrite was never sent)."""
    if note.kind != "ANALYSIS":
        return note
    payload = canonical_sha256(note.row()["payload"])
    n = tables.notifications.c
    first = current_rows(conn, tables.notifications, where=[n.notification_id == note.notification_id])
    if not first or canonical_sha256(first[0]["payload"]) == payload:
        return note
    return replace(note, notification_id=f"{note.notification_id}:{payload[:12]}")


ANALYSIS = Stage("t1_analysis", run_analysis, "Write the day's analysis and send its notifications (webhook).")
