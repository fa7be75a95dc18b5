"""The generated API key pepper (desk/keys.py `pepper`): created once in `secrets_dir`
by whichever API worker reads it first, the same one for every worker after."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from api.app import create_app
from desk import keys
from market.clock import utc_now
from market.errors import ConfigurationError
from market.settings import Settings
from pipeline.serving import serve_in_thread
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.conftest import ADMIN_KEY


def test_a_worker_reading_the_pepper_while_another_writes_it_gets_the_one_both_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers starting together: one read the pepper file the other had created and not
    yet written, found it empty ("shorter than 32 characters") and answered its request
    with a 500 (9 of 120 such reads). Here the other worker reads at that very moment, while
    the first is making its secret; both then hash keys with one pepper."""
    folder = tmp_path / "secrets"
    make = keys.secrets.token_hex
    meanwhile: list[bytes] = []

    def token_hex(nbytes: int) -> str:
        secret = make(nbytes)
        if not meanwhile:  # the second worker's read, once
            meanwhile.append(b"")
            meanwhile[0] = keys._pepper_file(folder)
            keys._PEPPERS.pop(folder)
        return secret

    monkeypatch.setattr(keys.secrets, "token_hex", token_hex)
    first = keys._pepper_file(folder)
    assert meanwhile == [first] and len(first) >= 32
    assert [p.name for p in folder.iterdir()] == [keys.PEPPER_FILE]  # nothing half-made left beside it
    assert stat.S_IMODE((folder / keys.PEPPER_FILE).stat().st_mode) == 0o600
    keys._PEPPERS.pop(folder)
    assert keys._pepper_file(folder) == first  # and it stays the one


def test_a_damaged_pepper_stops_start_up_with_its_reason(settings: Settings) -> None:
    """A pepper file cut short (a bad restore, a hand edit) let the API start, then answered
    every request with a client key 500 "internal error"; now the start-up names it."""
    keys._PEPPERS.pop(settings.secrets_dir, None)
    settings.secrets_dir.mkdir(parents=True, exist_ok=True)
    (settings.secrets_dir / keys.PEPPER_FILE).write_text("short\n")
    with pytest.raises(ConfigurationError, match="api-key-pepper is shorter than 32 characters"):
        create_app(settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)}))


def _with_pepper(settings: Settings, value: str | None) -> Settings:
    return settings.model_copy(
        update={"admin_key": SecretStr(ADMIN_KEY), "api_key_pepper": SecretStr(value) if value else None}
    )


def test_a_server_started_with_another_pepper_than_its_keys_stops_naming_the_cause(settings: Settings) -> None:
    """Started with another pepper than the store's keys were issued under, the API served
    and answered every client key 401 ("unknown, revoked or rotated out"), with nothing in
    its start-up to say why; now start-up stops naming the pepper and the fix."""
    first, other = "a" * 64, "b" * 64
    create_app(_with_pepper(settings, other))  # a store without keys starts under any pepper
    engine = service_engine(settings)
    issued = keys.generate(engine, _with_pepper(settings, first), "Acme Capital", "PRO")
    with pytest.raises(ConfigurationError) as refused:
        create_app(_with_pepper(settings, other))
    line = str(refused.value.detail)
    assert "\n" not in line and "MARKETINTEL_API_KEY_PEPPER" in line
    assert "is not the one the store's 1 working client keys were issued under" in line
    served = create_app(_with_pepper(settings, first))  # the pepper the keys were issued under starts
    assert served.state.services.desk.key_record(engine.connect(), issued["api_key"]) is not None
    keys.revoke(engine, issued["key_id"])  # no key left that works: any pepper starts
    create_app(_with_pepper(settings, other))


def test_a_key_issued_before_peppers_were_recorded_is_not_checked_until_it_is_used(settings: Settings) -> None:
    """A store upgraded with keys in it has no fingerprint for them: until one is presented
    and found under a pepper (`test_an_old_stores_key_is_checked_once_it_was_used`), it
    starts under any."""
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.api_keys,
            [{"key_id": "k-old", "client_id": "c-old", "key_hash": "0" * 64, "tier": "PRO"}],
            recorded_at=utc_now(),
        )
    create_app(_with_pepper(settings, "b" * 64))


def test_a_short_pepper_in_the_environment_stops_start_up_with_its_reason(settings: Settings) -> None:
    """MARKETINTEL_API_KEY_PEPPER had no least length ("x" served, every key hashed under a
    one-letter secret), where the generated file's had 32 characters; both are held to it."""
    for short in ("x", "a" * 31):
        with pytest.raises(ConfigurationError) as refused:
            create_app(_with_pepper(settings, short))
        assert refused.value.detail.startswith(
            "the API key pepper in MARKETINTEL_API_KEY_PEPPER is shorter than 32 characters"
        )
    create_app(_with_pepper(settings, "a" * 32))


def _old_key(settings: Settings, pepper: str) -> str:
    """A key stored as before migration 0024 (no fingerprint), hashed under `pepper`; its secret."""
    secret = "svc-sk-" + "1" * 40
    with service_engine(settings).begin() as conn:
        append_history(
            conn,
            tables.api_keys,
            [
                {
                    "key_id": "k-old",
                    "client_id": "c-old",
                    "key_hash": keys.key_hash(_with_pepper(settings, pepper), secret),
                    "tier": "PRO",
                }
            ],
            recorded_at=utc_now(),
        )
    return secret


def test_an_old_stores_key_is_checked_once_it_was_used(settings: Settings) -> None:
    """A store whose keys all predate migration 0024 had no fingerprint to compare: started
    with another pepper, it served and answered every client key 401, however long its keys
    had been in use. A key found under the serving pepper has that pepper recorded (0025),
    so a later start with another pepper stops, as for a key issued since."""
    first, other = "a" * 64, "b" * 64
    secret = _old_key(settings, first)
    create_app(_with_pepper(settings, other))  # never used: no pepper is known for it
    with serve_in_thread(create_app(_with_pepper(settings, first))) as base:
        for _ in range(2):
            answer = httpx.get(f"{base}/api/portfolio", headers={"X-API-Key": secret}, timeout=30)
            assert answer.status_code == 200, answer.text
    with service_engine(settings).connect() as conn:
        recorded = conn.execute(
            select(tables.api_key_peppers.c.key_id, tables.api_key_peppers.c.pepper_fingerprint)
        ).all()
    assert recorded == [("k-old", keys.pepper_fingerprint(_with_pepper(settings, first)))]  # once, not a row a request
    with pytest.raises(ConfigurationError) as refused:
        create_app(_with_pepper(settings, other))
    assert "is not the one the store's 1 working client keys were issued under" in str(refused.value.detail)
    create_app(_with_pepper(settings, first))


def test_working_keys_of_two_peppers_start_with_a_line_naming_the_refused_ones(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Two API machines that did not share one pepper each issued keys only its own
    accepts: started with either pepper, the check passed (some key was of it) and said
    nothing of the others, each a 401 on every request. It starts, with one error line
    naming how many keys each pepper has and which keys this process refuses."""
    first, other = "a" * 64, "b" * 64
    engine = service_engine(settings)
    kept = keys.generate(engine, _with_pepper(settings, first), "Acme Capital", "PRO")
    with caplog.at_level(logging.ERROR, logger="desk.keys"):
        create_app(_with_pepper(settings, first))
    assert not caplog.records  # one pepper: nothing to say
    refused = [
        keys.generate(engine, _with_pepper(settings, other), name, "PRO")["key_id"] for name in ("Beta", "Gamma")
    ]
    with caplog.at_level(logging.ERROR, logger="desk.keys"):
        create_app(_with_pepper(settings, first))
    [line] = [r.getMessage() for r in caplog.records]
    assert "issued under 2 API key peppers: 1 under this one (MARKETINTEL_API_KEY_PEPPER), 2 under another" in line
    assert all(k in line for k in refused) and kept["key_id"] not in line and "401" in line
