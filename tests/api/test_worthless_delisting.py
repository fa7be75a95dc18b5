"""A worthless delisted holding a statement drops, as REST and GraphQL show it: the sync's
sale at 0 (portfolio/statements.py `_drop_price`), the realised loss of its whole cost
basis and the cash the statement states, the same to the cent on both."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from portfolio.statement_pdfs import Holding, holdings_statement
from tests.api.conftest import Api
from tests.api.test_graphql import data, snake
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import seed_market

pytestmark = pytest.mark.parametrize(
    "database_url", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def _upload(api: Api, pdf: bytes):
    return api.acme("POST", "/api/portfolio/upload-pdf", files={"file": ("s.pdf", pdf, "application/pdf")})


def test_rest_and_graphql_show_the_worthless_holding_left_at_nothing(api: Api) -> None:
    seed_market(api.world.engine, {"DEAD": {"close": 6.0, "volume": 40_000}}, day=date(2026, 11, 10))
    held = [Holding("DEAD", "Dead Co", 1_000, Decimal("5"), Decimal("6"))]
    first = _upload(api, holdings_statement("KC-0001", "Acme Ltd", date(2026, 11, 6), held, Decimal("5000")))
    assert first.status_code == 200, first.text
    announce_action(api.world.engine, "DEAD", "DELISTING", None, date(2026, 11, 16), "delisted")
    dropped = _upload(api, holdings_statement("KC-0001", "Acme Ltd", date(2026, 11, 20), [], Decimal("5000")))
    assert dropped.status_code == 200, dropped.text
    changes = [(c["side"], Decimal(c["price"])) for c in dropped.json()["changes"] if c.get("symbol") == "DEAD"]
    assert changes == [("SELL", 0)]
    summary = api.acme("GET", "/api/portfolio/summary").json()
    fields = "cash equity realizedPnl unrealizedPnl positionsCount"
    graph = snake(data(api, f"{{ portfolio {{ {fields} }} }}", api.world.acme_key)["portfolio"])
    assert graph == {k: summary[k] for k in graph}
    assert Decimal(str(summary["realized_pnl"])) == Decimal("-5000")
    assert Decimal(str(summary["equity"])) == Decimal(str(summary["cash"]))
    trades = api.acme("GET", "/api/portfolio/trade").json()["items"]
    assert [(t["side"], Decimal(str(t["price"]))) for t in trades if t["symbol"] == "DEAD"][-1] == ("SELL", 0)
