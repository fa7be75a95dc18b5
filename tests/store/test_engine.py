"""The Postgres engine's disconnect handling (store/engine.py `_ping_when_idle`): a pooled
connection that sat idle is pinged before use, and one the server closed meanwhile is
replaced without the caller seeing an error; a connection back in use at once is not
pinged (no extra round trip per API request)."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import event, text

from store import engine as engines

pytestmark = pytest.mark.postgres


def _backend(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(text("SELECT pg_backend_pid()")).scalar_one()


def test_an_idle_connection_the_server_closed_is_replaced_unseen(
    postgres_url: str, postgres_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engines.build_engine(postgres_url)
    try:
        statements: list[str] = []
        event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
        first = _backend(engine)
        assert _backend(engine) == first and len(statements) == 2  # reused at once: no ping
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (first,))
        monkeypatch.setattr(engines, "IDLE_BEFORE_PING_SECONDS", 0.0)  # the pooled connection is now "idle"
        assert _backend(engine) != first  # pinged, found dead, replaced: no error reached the caller
    finally:
        engine.dispose()
