"""Key writes that wait for the keys' lock (desk/keys.py): the desk reads its clock before
the write takes the lock, so a write can run at a moment earlier than one committed while
it waited. A revocation, never scheduled, holds for such a write all the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from desk import keys
from market.errors import ConflictError
from market.settings import Settings
from store.engine import service_engine

ISSUED = datetime(2026, 11, 24, 15, 0, tzinfo=UTC)


def test_a_write_that_waited_for_a_revocation_does_not_revive_the_revoked_key(settings: Settings) -> None:
    """A rotation that read its clock, then waited while an admin's revocation of the same
    key committed, rotated the revoked key: its successor worked, for a key revoked as
    leaked. Now it is the 409 a rotation of a revoked key gets, and so is a change."""
    engine = service_engine(settings)
    issued = keys.generate(engine, settings, "Acme Capital", "PRO", now=ISSUED)
    keys.revoke(engine, issued["key_id"], now=ISSUED + timedelta(seconds=2))  # took the lock first
    before = keys.list_keys(engine, ISSUED + timedelta(seconds=3))
    waited = ISSUED + timedelta(seconds=1)  # the clock the waiting writes read
    with pytest.raises(ConflictError, match="is revoked and cannot be rotated"):
        keys.rotate(engine, settings, issued["key_id"], 0, now=waited)
    with pytest.raises(ConflictError, match="is revoked and cannot be changed"):
        keys.set_option(engine, issued["key_id"], "TIER_SET", "INSTITUTIONAL", now=waited)
    assert keys.list_keys(engine, ISSUED + timedelta(seconds=3)) == before  # nothing issued, nothing stored
