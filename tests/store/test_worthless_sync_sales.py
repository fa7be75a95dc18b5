"""A statement sync's sale at nothing (sql/*/0029): the trades stored before the migration
are kept as they were (ids, rows, append-only), a STATEMENT_SYNC sale may be priced at 0
(a holding delisted with nothing paid leaving the book, portfolio/statements.py
`_drop_price`) and every other trade is still refused a price of 0."""

from pathlib import Path

import pytest
from sqlalchemy import text

from store.migrations import upgrade
from tests.store.test_instrument_types import _migrated_to, _release

INSERT = text(
    "INSERT INTO trades (trade_id, portfolio_id, trading_date, executed_at, symbol, side, quantity, price, fees, "
    "origin) VALUES (:t, 'client:acme', '2026-11-20', '2026-11-20 21:00:00+00', 'DEAD', :s, 1000, :p, 0, :o)"
)


def _insert(engine, trade_id: str, side: str, price: str, origin: str) -> None:
    with engine.begin() as conn:
        conn.execute(INSERT, {"t": trade_id, "s": side, "p": price, "o": origin})


def test_only_a_statement_syncs_sale_is_priced_at_nothing(empty_database_url: str, tmp_path: Path) -> None:
    engine, sql_dir, held = _migrated_to(empty_database_url, tmp_path, 28)
    _insert(engine, "M-1", "BUY", "5", "MANUAL")
    with pytest.raises(Exception, match="(?i)check"):  # before 0029 no trade is priced at 0
        _insert(engine, "SYNC-0", "SELL", "0", "STATEMENT_SYNC")
    _release(sql_dir, held)
    assert [m.version for m in upgrade(engine, sql_dir)][:1] == [29]
    _insert(engine, "SYNC-1", "SELL", "0", "STATEMENT_SYNC")
    for trade_id, side, origin in (("M-2", "SELL", "MANUAL"), ("SYNC-2", "BUY", "STATEMENT_SYNC")):
        with pytest.raises(Exception, match="(?i)check"):
            _insert(engine, trade_id, side, "0", origin)
    with pytest.raises(Exception, match="(?i)check"):
        _insert(engine, "SYNC-3", "SELL", "-1", "STATEMENT_SYNC")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, trade_id FROM trades ORDER BY id")).all()
    assert [r.trade_id for r in rows] == ["M-1", "SYNC-1"] and rows[0].id < rows[1].id
    for statement in ("UPDATE trades SET fees = 1", "DELETE FROM trades"):
        with pytest.raises(Exception, match="append-only history"):  # the triggers are back
            with engine.begin() as conn:
                conn.execute(text(statement))
    with pytest.raises(Exception, match="append-only history|UNIQUE|unique"):
        _insert(engine, "M-1", "BUY", "5", "MANUAL")
    engine.dispose()
