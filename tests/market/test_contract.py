"""The output contract's rule by name where a name means two things: `spread` and `impact`
are fractions of a price in a prediction or a fill, money inside a `costs` object."""

from __future__ import annotations

from decimal import Decimal

from market.contract import conform


def test_cost_parts_are_money_inside_costs_and_fractions_elsewhere() -> None:
    fill = {
        "touch": 52.06,
        "impact": 0.00731234567,
        "costs": {"spread": "60.400000", "impact": Decimal("76.118376"), "fees": "535.20", "total": "671.718376"},
    }
    shown = conform({"fill": fill, "spread": 0.01234567})
    assert shown["fill"]["costs"] == {"spread": "60.40", "impact": "76.12", "fees": "535.20", "total": "671.72"}
    assert shown["fill"]["touch"] == "52.06" and shown["fill"]["impact"] == 0.007312 and shown["spread"] == 0.012346


def test_a_track_records_cost_share_keeps_its_fraction() -> None:
    costs = {"fees": Decimal("950"), "shareOfEquityPerYear": 0.00112345678}
    assert conform({"costs": costs}) == {"costs": {"fees": "950.00", "shareOfEquityPerYear": 0.001123}}
