"""A key's record kept between its events' effective times (desk/keys.py `KeyTimeline`):
asked at any moment, in any order, it is exactly what the one definition (`record_of`)
folds from the rows at that moment: a tier or limit that takes effect later, a
revocation, a rotation's grace period ending. An API process asks on every request."""

from __future__ import annotations

import random
from collections import namedtuple
from datetime import UTC, datetime, timedelta

from desk.keys import KeyTimeline, record_of

Row = namedtuple("Row", "key_id client_id tier pepper_fingerprint id event detail effective_at recorded_at")
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _rows() -> list[Row]:
    at = lambda hours: T0 + timedelta(hours=hours)  # noqa: E731
    events = [
        (1, "RATE_LIMIT_SET", {"value": 500}, at(0), at(0)),
        (2, "TIER_SET", {"value": "PRO"}, at(5), at(1)),  # recorded early, in effect later
        (3, "MACRO_ACCESS_SET", {"value": True}, at(7), at(7)),
        (4, "RATE_LIMIT_SET", {"value": 900}, at(7), at(8)),  # two settings at one moment
        (5, "ROTATED", {"new_key_id": "k2"}, at(30), at(6)),  # the grace period ends at 30 h
        (6, "TIER_SET", {"value": "INSTITUTIONAL"}, at(12), at(12)),
    ]
    return [Row("k1", "acme", "BASIC", "f" * 64, *event) for event in events]


def test_the_kept_record_is_the_definition_at_every_moment() -> None:
    rows = _rows()
    timeline = KeyTimeline(rows)
    rng = random.Random(3)
    moments = [T0 + timedelta(minutes=m) for m in range(-60, 40 * 60, 17)]
    moments += [row.effective_at for row in rows] + [row.effective_at - timedelta(microseconds=1) for row in rows]
    for now in moments + rng.sample(moments, len(moments)):  # forward, then in any order
        assert timeline.at(now) == record_of(rows, now), now
    assert timeline.at(T0 + timedelta(hours=29)).tier == "INSTITUTIONAL"
    assert timeline.at(T0 + timedelta(hours=30)) is None  # rotated out


def test_a_key_without_events_and_no_rows() -> None:
    bare = [Row("k1", "acme", "BASIC", "f" * 64, None, None, None, None, None)]
    assert KeyTimeline(bare).at(T0) == record_of(bare, T0) and KeyTimeline(bare).at(T0).tier == "BASIC"
    assert KeyTimeline([]).at(T0) is None
