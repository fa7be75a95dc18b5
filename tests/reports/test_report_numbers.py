"""Every number printer of the reports (reports/format.py) and the notebooks
(reports/figures.py) rounds to the digits it prints before it picks a sign: a value that
rounds to zero, or an API's -0.0, reads as zero, never "-0.00%"."""

from __future__ import annotations

from reports.figures import fmt_money, fmt_number, fmt_pct
from reports.format import (
    fraction,
    metric_value,
    money,
    number,
    pct,
    ratio,
    signed_pct,
    statistic_pct,
)
from reports.quant_briefing import edge_against_cost


def test_a_value_that_rounds_to_zero_prints_without_a_minus() -> None:
    printed = [
        signed_pct(-0.004),
        fraction(-1e-5, 1, True),
        fraction(-0.0),
        statistic_pct("excess_annual_return", -0.0),
        statistic_pct("volatility", -1e-9),
        metric_value("tercile_spread", -1e-7),
        metric_value("binary_accuracy", -0.0),
        metric_value("rank_ic", -0.00001),
        ratio(-0.001),
        money(-0.001),
        number(-0.4),
        pct(-0.01),
        fmt_pct(-1e-5, 2),
        fmt_pct(-1e-5, 2, signed=True),
        fmt_pct(-0.001, 2, fraction=False),
        fmt_money(-0.004),
        fmt_number(-0.0),
        edge_against_cost({"held_edge": -1e-6, "round_trip_cost": 0.0447}),  # type: ignore[typeddict-item]
    ]
    assert printed == [
        "+0.00%",
        "+0.0%",
        "0.0%",
        "+0.00%",
        "0.00%",
        "+0.00%",
        "0.0%",
        "0.0000",
        "+0.00",
        "0.00",
        "0",
        "0.0%",
        "0.00%",
        "+0.00%",
        "0.00%",
        "0.00",
        "0.00",
        "+0.00% / 4.47%",
    ]


def test_a_negative_value_keeps_its_minus() -> None:
    assert signed_pct(-0.006) == "-0.01%"
    assert fraction(-0.0123, 2, True) == "-1.23%"
    assert ratio(-0.5) == "-0.50"
    assert money(-1234.5) == "-1,234.50"
    assert fmt_pct(-0.0123, 1) == "-1.2%"
