"""`marketintel serve` after `marketintel demo` (issue 64): the demo keeps the admin key it
generates in secrets_dir/admin-key, and serve finds it there; MARKETINTEL_ADMIN_KEY, when
set, is the key instead; with neither, serve says both ways in one line."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx
import pytest

from cli.demo import demo_admin_key
from desk import keys
from market.errors import ConfigurationError
from market.settings import Settings
from store.engine import service_engine
from tests.conftest import ADMIN_KEY, ON_SQLITE_ONLY
from tests.pipeline.test_cli import MARKETINTEL, cli


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_and_list_keys(key: str) -> tuple[int, int]:
    """Start `marketintel serve` as a user does, then GET /api/keys (admin only) with `key`
    and with the test suite's own admin key: the two status codes."""
    port = _free_port()
    process = subprocess.Popen(
        [MARKETINTEL, "serve", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 90
    try:
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                pytest.fail(f"marketintel serve did not start: {process.stdout.read()[-3000:]}")
            time.sleep(0.3)
        return tuple(
            httpx.get(f"{base}/api/keys", headers={"X-API-Key": k}, timeout=30).status_code for k in (key, ADMIN_KEY)
        )
    finally:
        process.terminate()
        process.wait(timeout=60)


@ON_SQLITE_ONLY
def test_serve_finds_the_admin_key_the_demo_wrote(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MARKETINTEL_ADMIN_KEY", raising=False)
    served, admin_from = demo_admin_key(settings)  # what `marketintel demo` does before it serves
    assert admin_from == str(settings.secrets_dir / "admin-key")
    assert oct(settings.admin_key_file.stat().st_mode & 0o777) == "0o600"
    key = served.checked_admin_key()
    assert _serve_and_list_keys(key) == (200, 401)  # the demo's key is the admin; no other is


@ON_SQLITE_ONLY
def test_the_environment_key_overrides_the_kept_one(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MARKETINTEL_ADMIN_KEY", raising=False)
    kept = demo_admin_key(settings)[0].checked_admin_key()
    monkeypatch.setenv("MARKETINTEL_ADMIN_KEY", ADMIN_KEY)
    overridden = Settings()
    assert overridden.checked_admin_key() == ADMIN_KEY != kept
    assert overridden.admin_key_origin() == "MARKETINTEL_ADMIN_KEY (environment or .env)"
    assert demo_admin_key(overridden)[1] == "MARKETINTEL_ADMIN_KEY (environment or .env)"


def test_a_malformed_kept_key_is_named_by_its_file(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MARKETINTEL_ADMIN_KEY", raising=False)
    (tmp_path / "admin-key").write_text("svc-admin-short\n")
    with pytest.raises(ConfigurationError, match=f"the admin key in {tmp_path / 'admin-key'} is malformed"):
        Settings(_env_file=None, secrets_dir=tmp_path).checked_admin_key()


@ON_SQLITE_ONLY
def test_serve_without_either_names_both_ways_in_one_line(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MARKETINTEL_ADMIN_KEY", raising=False)
    result = cli("serve")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith("error: MARKETINTEL_ADMIN_KEY is not set")
    assert str(settings.secrets_dir / "admin-key") in lines[0]
    assert "`marketintel keys new-admin`" in lines[0] and "`marketintel demo`" in lines[0]


@ON_SQLITE_ONLY
def test_a_server_refuses_where_it_cannot_listen_in_one_line(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An adversarial run: `serve --port 70000` served on port 4464 (70000 modulo 65536);
    `--host 999.1.1.1` and a port in use were uvicorn's startup log and exit status 3;
    `exchange serve --host bad..host` a traceback. Each is one line before anything starts."""
    monkeypatch.setenv("MARKETINTEL_ADMIN_KEY", ADMIN_KEY)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = str(taken.getsockname()[1])
        for command in (["serve"], ["exchange", "serve"]):
            for options, status, words in [
                (["--port", "70000"], 2, "Invalid value for '--port'"),
                (["--port", "-1"], 2, "Invalid value for '--port'"),
                (["--host", "999.1.1.1", "--port", busy], 1, "error: --host '999.1.1.1' is not an address"),
                (["--host", "bad..host", "--port", busy], 1, "error: --host 'bad..host' is not an address"),
                (["--port", busy], 1, f"error: cannot listen on 127.0.0.1:{busy}: "),
            ]:
                try:
                    result = subprocess.run(
                        [MARKETINTEL, *command, *options], capture_output=True, text=True, timeout=60
                    )
                except subprocess.TimeoutExpired:
                    pytest.fail(f"{command} {options} started a server")
                assert (result.returncode, result.stdout) == (status, ""), (options, result.stdout, result.stderr)
                assert "Traceback" not in result.stderr and words in result.stderr, (options, result.stderr)
                if status == 1:
                    assert result.stderr.startswith(words) and len(result.stderr.strip().splitlines()) == 1


@ON_SQLITE_ONLY
def test_the_demo_refuses_a_port_in_use_before_it_runs_the_day(settings: Settings) -> None:
    """`demo --port P` with P in use ran the whole demo (minutes of backfill, bootstrap and
    the day's stages), then ended in a traceback ("the server on 127.0.0.1 did not start")
    where it was to serve. It is refused in one line first, as `serve` refuses it, nothing run."""
    from sqlalchemy import func, select

    from store import tables

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = str(taken.getsockname()[1])
        try:
            result = subprocess.run([MARKETINTEL, "demo", "--port", busy], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("the demo ran instead of refusing the port in use")
    assert (result.returncode, result.stdout) == (1, ""), result.stdout
    assert result.stderr.startswith(f"error: cannot listen on 127.0.0.1:{busy}: "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.eod_prices)).scalar() == 0


@ON_SQLITE_ONLY
def test_serve_after_demo_no_serve_finds_the_key_the_demo_kept(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An adversarial run: `serve` after `demo --no-serve` refused, saying `marketintel demo`
    generates the key, which only the serving demo did. `demo --no-serve` keeps it too and
    says where; `serve` then starts on it. (The demo's day is left out here: it is the
    served demo's test, tests/pipeline/test_demo.py.)"""
    from typer.testing import CliRunner

    import cli.demo
    from cli.main import app

    monkeypatch.delenv("MARKETINTEL_ADMIN_KEY", raising=False)
    monkeypatch.setattr(cli.demo, "run_demo", lambda *args: iter(["(the demo's day)"]))
    monkeypatch.setattr("faulthandler.register", lambda *args, **kwargs: None)  # CliRunner's stderr has no fileno
    result = CliRunner().invoke(app, ["demo", "--no-serve"])
    assert result.exit_code == 0, result.output
    kept = settings.secrets_dir / "admin-key"
    assert result.output.splitlines()[-1] == f"admin key for `marketintel serve`: {kept}"
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    assert _serve_and_list_keys(kept.read_text().strip()) == (200, 401)


def test_a_demo_stopped_while_writing_the_admin_key_leaves_no_partial_key(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo created secrets_dir/admin-key, then wrote the key into it: a demo stopped
    between the two left an empty key file, and every later demo and serve failed on it
    until a user deleted it. The key is written whole to a private file (0600 from its
    creation) that takes the name only once complete: a stop leaves no key file, and the
    next demo generates one."""
    import os

    monkeypatch.delenv("MARKETINTEL_ADMIN_KEY", raising=False)
    settings = Settings(_env_file=None, secrets_dir=tmp_path)

    def stopped(fd: int, *_: object) -> None:  # Ctrl-C once the file is created, before the key is in it
        os.close(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", stopped)
    with pytest.raises(KeyboardInterrupt):
        demo_admin_key(settings)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    monkeypatch.delenv("MARKETINTEL_ADMIN_KEY", raising=False)
    served, _ = demo_admin_key(settings)
    assert served.checked_admin_key() == settings.admin_key_file.read_text().strip()
    assert oct(settings.admin_key_file.stat().st_mode & 0o777) == "0o600" and len(list(tmp_path.iterdir())) == 1


@ON_SQLITE_ONLY
def test_serve_with_another_pepper_than_the_keys_stops_in_one_line(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served with another pepper than the store's keys were issued under, every client key
    was a 401; `serve` now stops before it listens, saying why in one line."""
    keys.generate(service_engine(settings), settings, "Acme Capital", "PRO")  # under the generated pepper
    monkeypatch.setenv("MARKETINTEL_ADMIN_KEY", ADMIN_KEY)
    monkeypatch.setenv("MARKETINTEL_API_KEY_PEPPER", "b" * 64)
    result = cli("serve", "--port", str(_free_port()))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("error: the API key pepper (MARKETINTEL_API_KEY_PEPPER) is not the one the store's")
