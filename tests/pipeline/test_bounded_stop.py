"""A stop has a bound: `marketintel serve` exits within its grace period
(MARKETINTEL_SHUTDOWN_GRACE_SECONDS) plus 2 s of SIGTERM even while a client trickles an
upload a few bytes at a time, and the ledger is consistent afterwards: what committed
before the stop is there, the upload it cut left nothing behind."""

from __future__ import annotations

import secrets
import signal
import socket
import subprocess
import threading
import time
from decimal import Decimal

import httpx
import pytest
from sqlalchemy import func, select

from desk import keys as keystore
from market.settings import Settings
from portfolio import ledger
from store import tables
from store.engine import service_engine
from tests.api.test_ratelimit import _free_port, _start_api

GRACE = 2.0


def _serve(port: int, monkeypatch: pytest.MonkeyPatch) -> subprocess.Popen:
    monkeypatch.setenv("MARKETINTEL_ADMIN_KEY", f"svc-admin-{secrets.token_hex(16)}")
    monkeypatch.setenv("MARKETINTEL_SHUTDOWN_GRACE_SECONDS", str(GRACE))
    return _start_api(port)


def _trickle(port: int, key: str, stop: threading.Event) -> None:
    """An upload whose body arrives 25 bytes every 0.5 s, for as long as the server listens."""
    boundary = "trickle"
    head = (
        f"POST /api/portfolio/upload-pdf HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: {key}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 1000000\r\n\r\n"
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="s.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.4\n"
    )
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head.encode())
        while not stop.is_set():
            try:
                sock.sendall(b"0" * 25)
            except OSError:
                return
            time.sleep(0.5)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sigterm_with_a_trickling_upload_exits_within_the_grace_period(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = service_engine(settings)
    key = keystore.generate(engine, settings, "acme", "STANDARD")
    port = _free_port()
    process = _serve(port, monkeypatch)
    deposit = httpx.post(
        f"http://127.0.0.1:{port}/api/portfolio/cash",
        json={"amount": "1000.00"},
        headers={"X-API-Key": key["api_key"]},
        timeout=10,
    )
    assert deposit.status_code == 201, deposit.text
    stop = threading.Event()
    uploader = threading.Thread(target=_trickle, args=(port, key["api_key"], stop), daemon=True)
    uploader.start()
    time.sleep(2.0)  # the upload is in flight, its body still arriving
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=GRACE + 2)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail(f"still running {GRACE + 2} s after SIGTERM with an upload trickling in")
    finally:
        stop.set()
    took = time.monotonic() - sent
    assert took <= GRACE + 2, took
    portfolio_id = ledger.client_portfolio_id(key["client_id"])
    with engine.connect() as conn:
        assert ledger.cash_balance(conn, portfolio_id) == Decimal("1000.00")  # the committed deposit, once
        imports = conn.execute(select(func.count()).select_from(tables.statement_imports)).scalar()
        assert imports == 0, "the cut upload left a statement import behind"
        if conn.dialect.name == "sqlite":
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
