"""The words a monitor ALERT is sent in (pipeline/monitor_stage.py): the webhook's and the
apprise message's title, and the apprise message's body, read by a person on call."""

from __future__ import annotations

from datetime import date

from models.monitor import ALERT, Check
from pipeline.monitor_stage import alert_notification, message_body

DAY = date(2026, 11, 20)
STUCK = (
    "stuck feed: one value (0.5) for 12 of the day's 12 traded names (100%; at most 8% on any day of the "
    "validation record)"
)


def _check(figure: float, figures: dict) -> Check:
    return Check(
        "input:layer1_p_up", "input_drift", ALERT, figure, 0.1, 0.2512345678, figures, ALERT, date(2026, 11, 18)
    )


def test_a_stuck_feed_alert_says_what_moved_not_a_figure_under_its_line() -> None:
    """The title read "(figure 0.012345678912, alert at 0.2512345678)": a figure under its
    ALERT line beside ALERT, in Python's float repr, and the body was the figures' dict repr
    ("{'stuck': True, ...}"). The title now says the check's note, the body one figure a line."""
    note = alert_notification(_check(0.012345678912, {"stuck": True, "window_days": 20, "note": STUCK}), DAY)
    assert (
        note.title == f"Model drift: input layer1_p_up is ALERT, in breach (WATCH or ALERT) since 2026-11-18: {STUCK}"
    )
    body = message_body(note)
    assert body.splitlines()[0] == note.title
    assert "stuck: true" in body.splitlines() and "window_days: 20" in body.splitlines()
    assert "{'" not in body and "True" not in body and "0.012345678912" not in body


def test_a_drift_alert_reads_its_figure_against_its_line() -> None:
    """Without a note, the title reads the figure against its thresholds in four figures."""
    note = alert_notification(_check(0.41234567, {"window_days": 5}), DAY)
    assert note.title == (
        "Model drift: input layer1_p_up is ALERT, in breach (WATCH or ALERT) since 2026-11-18: 0.4123: WATCH above "
        "0.1, ALERT above "
        "0.2512; level ALERT, state ALERT"
    )
    assert note.payload["figure"] == 0.41234567, "the payload keeps the figures as computed"


def test_an_alert_after_weeks_at_watch_does_not_date_the_alert_from_the_watch() -> None:
    """`since` is the first day of the breach, WATCH days included (models/monitor.py
    `persist`): a drift at WATCH from 2026-10-21 that reached ALERT this week was sent as
    "has been ALERT since 2026-10-21". The title names the breach's start as such."""
    check = _check(0.41234567, {"window_days": 20})
    note = alert_notification(Check(**{**check.__dict__, "since": date(2026, 10, 21)}), DAY)
    assert "has been ALERT since" not in note.title
    assert note.title.startswith(
        "Model drift: input layer1_p_up is ALERT, in breach (WATCH or ALERT) since 2026-10-21: 0.4123"
    )
