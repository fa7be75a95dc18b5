"""The trade's cost columns (sql/*/0019): the migration fills the trades already stored
from their own rationale (a fill's spread and impact; 0 for a trade no fill priced), the
table stays append-only afterwards, and a trade the ledger records writes them."""

from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import bindparam, exc, text

from store.migrations import upgrade
from store.types import JSONDocument
from tests.store.test_instrument_types import _migrated_to, _release

FILLED = {"fill": {"costs": {"spread": "500.000000", "impact": "31.250000", "fees": "25.00", "total": "556.250000"}}}
INSERT = text(
    "INSERT INTO trades (trade_id, portfolio_id, trading_date, executed_at, symbol, side, quantity, price, fees, "
    "origin, rationale) VALUES (:t, 'AI', '2026-11-20', '2026-11-20 21:00:00+00', 'NCBFG', 'BUY', 5000, 51.2, 25, "
    ":o, :r)"
).bindparams(bindparam("r", type_=JSONDocument))


def test_the_migration_fills_the_stored_trades_from_their_rationale(empty_database_url: str, tmp_path: Path) -> None:
    engine, sql_dir, held = _migrated_to(empty_database_url, tmp_path, 18)
    with engine.begin() as conn:
        conn.execute(INSERT, {"t": "AI-1", "o": "AI", "r": FILLED})
        conn.execute(INSERT, {"t": "M-1", "o": "MANUAL", "r": {"note": "the client's own price"}})
        conn.execute(INSERT, {"t": "AI-0", "o": "AI", "r": {"fill": {"touch": 51.1}}})  # a fill without its parts
    _release(sql_dir, held)
    assert [m.version for m in upgrade(engine, sql_dir)][:1] == [19]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT trade_id, spread_cost, impact_cost FROM trades ORDER BY id")).all()
    assert [(r.trade_id, Decimal(str(r.spread_cost)), Decimal(str(r.impact_cost))) for r in rows] == [
        ("AI-1", Decimal("500"), Decimal("31.25")),
        ("M-1", Decimal(0), Decimal(0)),
        ("AI-0", Decimal(0), Decimal(0)),
    ]
    with pytest.raises(exc.DBAPIError, match="append-only history"):  # the trigger is back
        with engine.begin() as conn:
            conn.execute(text("UPDATE trades SET spread_cost = 0"))
    engine.dispose()
