"""Fundamentals keep the output contract's units: the exchange's "Dividend Yield %" is served
as `dividendYieldPct` (percent); served as `dividendYield`, a rate without `Pct` that the
contract reads as a fraction, 5.56 read as 556%."""

from __future__ import annotations

from tests.api.conftest import Api
from tests.api.graph import data, gql


def test_the_dividend_yield_is_served_in_percent_under_a_pct_name(api: Api) -> None:
    key = api.world.acme_key
    query = '{ instrument(symbol: "LIQ") { fundamentals { reportDate dividendYieldPct marketCap } } }'
    fundamentals = data(api, query, key)["instrument"]["fundamentals"]
    assert fundamentals["dividendYieldPct"] == 3.1
    old = gql(api, '{ instrument(symbol: "LIQ") { fundamentals { dividendYield } } }', key).json()
    assert "Cannot query field 'dividendYield'" in old["errors"][0]["message"]
