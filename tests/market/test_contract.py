"""The output contract prints money, prices and fractions by their declared type
(market/money.py `Money`, `Price`, `Fraction`), never by a field's name: a `spread` is money
in a fill's costs (`CostsText`, a `CostBreakdown`) and a fraction of a price in a prediction,
because each is declared so; and the same name prints both ways side by side."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TypedDict

import pytest

from market.contract import JsonOf, conform, described, served_fields, served_type, shown
from market.costs import CostBreakdown, CostsText, FillJson
from market.money import Fraction, Money, Price


class Prediction(TypedDict):
    spread: Fraction
    impact: Fraction
    price: Price


class Filled(TypedDict):
    fill: FillJson
    prediction: Prediction


def test_a_spread_is_money_in_costs_and_a_fraction_elsewhere_by_type() -> None:
    fill = {
        "touch": 52.06,
        "impact": 0.00731234567,
        "costs": {"spread": "60.400000", "impact": Decimal("76.118376"), "fees": "535.20", "total": "671.718376"},
    }
    prediction = {"spread": 0.01234567, "impact": Decimal("0.0012345678"), "price": "52.123400"}
    shown_ = conform({"fill": fill, "prediction": prediction}, Filled)
    assert shown_["fill"]["costs"] == {"spread": "60.40", "impact": "76.12", "fees": "535.20", "total": "671.72"}
    assert shown_["fill"]["touch"] == "52.06" and shown_["fill"]["impact"] == 0.007312
    assert shown_["prediction"] == {"spread": 0.012346, "impact": 0.001235, "price": "52.1234"}


def test_a_name_alone_never_makes_money() -> None:
    """Without a declared type a field named like money is a number like any other: the
    name rule is gone (a document must declare its money)."""
    assert conform({"costs": {"fees": Decimal("950"), "spread": 0.01234567}}) == {
        "costs": {"fees": 950.0, "spread": 0.012346}
    }


def test_a_dataclass_is_walked_by_its_own_types_and_properties() -> None:
    """A cost breakdown's parts are Money, and so is its `total`, a property, where its
    JSON form (a document inside a day's record) carries it."""
    assert conform(CostBreakdown(Decimal("1.234"), Decimal("2.5"), Decimal("0.004"))) == {
        "fees": "1.23",
        "spread": "2.50",
        "impact": "0.00",
    }
    text = CostBreakdown(Decimal("1.234"), Decimal("2.5"), Decimal("0.004")).as_text()
    assert (
        conform(text, JsonOf[CostBreakdown])
        == conform(text, CostsText)
        == {
            "spread": "2.50",
            "impact": "0.00",
            "fees": "1.23",
            "total": "3.74",
        }
    )


@pytest.mark.parametrize(
    "kind, value, printed",
    [
        (Money, Decimal("1234.565"), "1234.57"),
        (Money, 0.1, "0.10"),
        (Money, "-0.004", "0.00"),
        (Price, Decimal("52.123456"), "52.123456"),
        (Price, Decimal("52.10"), "52.10"),
        (Price, "52.1", "52.10"),
        (Fraction, 0.0123456789, 0.012346),
        (Fraction, Decimal("0.5"), 0.5),
        (Fraction, 0, 0),  # a whole number stays as it is
        (Money, None, None),
    ],
)
def test_each_type_has_one_rule(kind: object, value: object, printed: object) -> None:
    assert conform(value, kind) == printed
    if value is not None:
        assert shown(kind, value) == printed


def test_what_a_field_means_is_declared_with_it() -> None:
    @dataclass(frozen=True)
    class Held:
        amount: Money = described("What it is worth.")
        owner: str = described(served=False, default="")
        state: str | None = described("Its state.", served_as=str, default=None)

    assert [f.name for f in served_fields(Held)] == ["amount", "state"]
    assert served_type(Held, "amount") is Money and served_type(Held, "state") is str
