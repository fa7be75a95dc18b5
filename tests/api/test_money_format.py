"""Money answers the same way everywhere: decimal text with the currency's 2 places
(REST and GraphQL alike), never a float, "0" or "100000.000000"."""

from __future__ import annotations

from decimal import Decimal

import pytest

from market.money import MONEY_OUT, money_display, price_display
from tests.api.graph import data
from tests.conftest import ADMIN_KEY

MONEY_FIELDS = {
    "cash",
    "equity",
    "liquid_equity",
    "market_value",
    "cost_basis",
    "average_cost",
    "price",
    "unrealized_pnl",
    "realized_pnl",
    "starting_cash",
    "fees",
    "value",
    "balance",
    "limit_price",
    "cash_after",
    "liquidEquity",
    "marketValue",
    "startingCash",
    "unrealizedPnl",
    "realizedPnl",
}

FREE_FORM = {"rationale", "summary", "reason", "changes"}  # the executor's own records, not amounts of the answer


def money_values(body, seen=None):
    """Every value under a money field name, anywhere in a JSON body."""
    seen = [] if seen is None else seen
    if isinstance(body, dict):
        for key, value in body.items():
            if key in FREE_FORM:
                continue
            if key in MONEY_FIELDS and not isinstance(value, (dict, list)) and value is not None:
                seen.append((key, value))
            elif key in ("illiquid_discounts", "illiquidDiscounts") and isinstance(value, dict):
                seen.extend((key, v) for v in value.values())
            else:
                money_values(value, seen)
    elif isinstance(body, list):
        for item in body:
            money_values(item, seen)
    return seen


@pytest.mark.parametrize(
    "value, shown",
    [
        (Decimal("100000.000000"), "100000.00"),
        (Decimal("0"), "0.00"),
        (Decimal("-0.001"), "0.00"),
        (12.345, "12.35"),
        (Decimal("6.485"), "6.49"),
        (1_000_000, "1000000.00"),
        (Decimal("-12.344"), "-12.34"),
    ],
)
def test_money_display(value, shown) -> None:
    assert money_display(value) == shown and MONEY_OUT.fullmatch(shown)


@pytest.mark.parametrize(
    "value, shown",
    [
        (Decimal("39.05"), "39.05"),
        (Decimal("39.050000"), "39.05"),
        (52.05 / 1.5, "34.70"),  # a float close divided by a split: whole cents once rounded
        (52.0 / 1.5, "34.666667"),
        (Decimal("34.6000001"), "34.60"),  # rounded to six places it is whole cents: two places, never "34.6"
        (Decimal("50.1234565"), "50.123457"),
    ],
)
def test_price_display_shows_two_to_six_places(value, shown) -> None:
    assert price_display(value) == shown


def test_every_rest_and_graphql_money_field_is_text_with_two_places(api) -> None:
    # DRY's spread is wide: the position is valued less an illiquid discount
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "buy", "symbol": "DRY", "quantity": 1000, "price": "12.48"}
    )
    assert bought.status_code == 201, bought.text
    rest = [
        api.acme("GET", path).json()
        for path in (
            "/api/portfolio",
            "/api/portfolio/summary",
            "/api/portfolio/trades",
            "/api/suggestions",
            "/api/ai-portfolio/positions",
            "/api/ai-portfolio/summary",
        )
    ]
    rest.append(api.admin("GET", "/api/ai-portfolio/history").json())
    graph = [
        data(
            api,
            """{ portfolio { cash marketValue equity liquidEquity illiquidDiscounts unrealizedPnl realizedPnl
        positions { nodes { price marketValue } } suggestions { nodes { limitPrice } } } }""",
            api.world.acme_key,
        ),
        data(
            api,
            """{ aiPortfolio { startingCash cash equity liquidEquity illiquidDiscounts
        positions { nodes { costBasis averageCost price } } trades { nodes { price fees value } }
        days { nodes { equity cash liquidEquity } } } }""",
            ADMIN_KEY,
        ),
    ]
    values = money_values(rest) + money_values(graph)
    assert len({key for key, _ in values}) >= 10, values  # the world has cash, positions, trades and suggestions
    assert {key for key, _ in values} >= {"illiquid_discounts", "illiquidDiscounts"}, values
    wrong = [(key, value) for key, value in values if not (isinstance(value, str) and MONEY_OUT.fullmatch(value))]
    assert not wrong, wrong
