from pathlib import Path

import pytest
from pydantic import ValidationError

from market.errors import ConfigurationError
from market.settings import PROJECT_ROOT, Settings

VALID = "svc-admin-" + "ab" * 16


def test_defaults_need_no_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MARKETINTEL_DATABASE_URL")
    monkeypatch.delenv("MARKETINTEL_ALLOW_PRIVATE_ENCLOSURES", raising=False)
    settings = Settings(_env_file=None)
    assert settings.database_url == f"sqlite:///{PROJECT_ROOT / 'var' / 'marketintel.db'}"
    assert settings.public_reports is False
    assert settings.allow_private_enclosures is False  # a feed's PDFs at internal addresses are refused
    assert settings.foundation_model_offline is True


def test_environment_overrides_with_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARKETINTEL_PUBLIC_REPORTS", "true")
    monkeypatch.setenv("MARKETINTEL_RATE_LIMIT_PRO", "42")
    settings = Settings(_env_file=None)
    assert settings.public_reports is True
    assert settings.rate_limit_for("PRO") == 42


def test_dotenv_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MARKETINTEL_DATABASE_URL")
    env_file = tmp_path / ".env"
    env_file.write_text(f"MARKETINTEL_ADMIN_KEY={VALID}\nMARKETINTEL_DATABASE_URL=postgresql://u@db/x\n")
    settings = Settings(_env_file=env_file)
    assert settings.checked_admin_key() == VALID
    assert settings.database_url == "postgresql://u@db/x"


def test_missing_admin_key_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="MARKETINTEL_ADMIN_KEY is not set"):
        Settings(_env_file=None).checked_admin_key()


@pytest.mark.parametrize("bad", ["svc-admin-short", "svc-sk-" + "ab" * 16, "svc-admin-" + "XY" * 16, "ab" * 20])
def test_malformed_admin_key_is_a_clear_error(bad: str) -> None:
    with pytest.raises(ConfigurationError, match="malformed"):
        Settings(_env_file=None, admin_key=bad).checked_admin_key()


def test_admin_key_is_not_shown_in_repr() -> None:
    assert VALID not in repr(Settings(_env_file=None, admin_key=VALID))


def test_unsupported_database_url_is_rejected() -> None:
    with pytest.raises(ValidationError, match="only sqlite"):
        Settings(_env_file=None, database_url="mysql://root@localhost/x")


@pytest.mark.parametrize(
    ("kind", "watch", "alert"),
    [("psi", 0.3, 0.25), ("psi", 0.25, 0.25), ("tail", 0.01, 0.05), ("tail", 0.05, 0.05)],
)
def test_monitor_thresholds_the_wrong_way_round_are_refused(kind: str, watch: float, alert: float) -> None:
    """A WATCH threshold at or beyond the ALERT one would let a breach skip WATCH and make the
    API's `worse_when` read the thresholds upside down (a PSI is worse higher, a tail share lower)."""
    with pytest.raises(ValidationError, match=rf"monitor_{kind}_watch \({watch:g}\) is not (below|above)"):
        Settings(_env_file=None, **{f"monitor_{kind}_watch": watch, f"monitor_{kind}_alert": alert})
    assert Settings(_env_file=None).monitor_psi_watch < Settings(_env_file=None).monitor_psi_alert  # the defaults pass
