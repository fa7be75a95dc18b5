"""The generated API key pepper (desk/keys.py `pepper`): created once in `secrets_dir`
by whichever API worker reads it first, the same one for every worker after."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from api.app import create_app
from desk import keys
from market.errors import ConfigurationError
from market.settings import Settings
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
