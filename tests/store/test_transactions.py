"""A write on a connection already held (store/transactions.py `write_on`)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from store.engine import build_engine
from store.transactions import write_on


@pytest.mark.postgres
def test_a_request_connection_reads_in_autocommit_again_after_a_write_on_it(postgres_url: str) -> None:
    """An API request's Postgres connection reads in autocommit (api/services.py); a write
    on it (a portfolio opened on first use, a key's pepper recorded) left it in a
    transaction for the rest of the request, so its reads and its rate-limit count each
    paid BEGIN and ROLLBACK round trips. It reads in autocommit again after the write."""
    engine = build_engine(postgres_url)
    with engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT")
        with write_on(conn, "a-lock"):
            conn.execute(text("SELECT 1"))
        assert conn.get_execution_options()["isolation_level"] == "AUTOCOMMIT"
    engine.dispose()
