"""The model-health panel both PDF reports show: the model monitor's latest day
(views.performance.monitor_state, docs/monitoring.md): the overall state, then every check
that is not OK with its figure, thresholds and the day its breach began, and under the table
what a figure does not say (`said_apart`: a stuck, missing or frozen feed is ALERT whatever
its figure reads, "input:layer1_p_up: stuck feed: one value (0.5) for 12 of ..."). A check without a
figure (the live checks before enough live outcomes are known) is counted apart, never as OK:
"Checks OK 15 of 16, 3 not run yet", not "18 of 19". A state older than the latest predicted
day (the monitor's stage failed or has not run since) says how far behind it is, boxed, as
the API's `unmonitored_days` and `marketintel monitor` say it."""

from __future__ import annotations

from reportlab.platypus import Flowable

from reports.format import number
from reports.layout import SMALL, caution, data_table, key_figures, text
from views.performance import Performance, said_apart

# A check's figure and its two lines print to the same decimals: rounding one rule can make a
# figure level with its line, never put it on the other side (0.5124 WATCH below 0.51245 read
# "below 0.512" at 3 decimals for the lines).
FIGURE_DECIMALS = 4


def model_health(perf: Performance) -> list[Flowable]:
    monitor = perf.get("monitor") or {}
    if not monitor.get("state"):
        return [text("Model health: " + (monitor.get("reason") or "the model monitor has not run yet") + ".", SMALL)]
    behind = behind_note(monitor)
    checks = monitor["checks"]
    flagged = [c for c in checks if c["state"] != "OK"]
    waiting = not_run(checks)
    blocks: list[Flowable] = [
        key_figures(
            [
                ("Monitor state", monitor["state"]),
                ("Checked on", str(monitor["trading_date"])),
                ("Checks OK", checks_ok(checks)),
                ("Alerts", str(sum(c["state"] == "ALERT" for c in checks))),
            ]
        ),
        *([caution(behind)] if behind else []),
    ]
    if flagged:
        rows = [
            [
                c["check"],
                c["state"],
                number(c["figure"], FIGURE_DECIMALS),
                "-"
                if c.get("worse_when") is None
                else f"{c['worse_when']} {number(c['watch_threshold'], FIGURE_DECIMALS)} / "
                f"{number(c['alert_threshold'], FIGURE_DECIMALS)}",
                str(c["since"] or "-"),
            ]
            for c in flagged
        ]
        blocks.append(data_table(["Check", "State", "Figure", "Watch / alert at", "Since"], rows, numeric_from=2))
        blocks += [text(f"{c['check']}: {apart}.", SMALL) for c in flagged if (apart := said_apart(c))]
    note = (
        "Input and Score drift: population stability index of the latest trading days against the validation "
        "record (market-wide inputs: the day's value against the record's daily values); live accuracy, Brier "
        "score and calibration error against the validation record's band. A check is ALERT only after its "
        "breach has lasted the set number of consecutive trading days."
    )
    if waiting:
        note += " " + waiting_note(waiting)
    blocks.append(text(note, SMALL))
    return blocks


def behind_note(monitor: dict) -> str:
    """ "Not monitored since 2026-11-20: ..." when predictions were stored for days after the
    monitor's latest day (`unmonitored_days`), else ""."""
    behind = monitor.get("unmonitored_days") or 0
    if not behind:
        return ""
    days = (
        "the predicted trading day after it was"
        if behind == 1
        else f"the {behind} predicted trading days after it were"
    )
    return (
        f"Not monitored since {monitor['trading_date']}: {days} not checked by T1's t1_monitor stage (the latest "
        f"{monitor['latest_predicted']}), so the state above is that old."
    )


def not_run(checks: list[dict]) -> list[dict]:
    """The checks that have no figure yet (OK only because nothing was measured)."""
    return [c for c in checks if c["figure"] is None and c["state"] == "OK"]


def checks_ok(checks: list[dict]) -> str:
    """ "15 of 16, 3 not run yet": the checks that ran and were OK, of those that ran."""
    waiting = len(not_run(checks))
    run = len(checks) - waiting
    if not run:
        return f"none run yet ({waiting} waiting)"
    ok = sum(c["state"] == "OK" for c in checks) - waiting
    return f"{ok} of {run}" + (f", {waiting} not run yet" if waiting else "")


def waiting_note(waiting: list[dict]) -> str:
    """Why each check without a figure has none, the checks grouped by their reason."""
    by_reason: dict[str, list[str]] = {}
    for c in waiting:
        by_reason.setdefault((c.get("note") or "no figure yet").rstrip("."), []).append(c["check"])
    return " ".join(f"Not run yet ({', '.join(names)}): {reason}." for reason, names in by_reason.items())
