"""reports/research.py's tables read the same whatever order the rows come in."""

import pandas as pd

from reports.research import calibration


def test_calibration_bins_equal_p_ups_by_date_then_symbol_whatever_the_rows_order() -> None:
    f = pd.DataFrame(
        {
            "symbol": list("ABCDEF"),
            "date": ["2026-11-20"] * 6,
            "p_up": [0.5] * 6,
            "fwd_1": [0.01, 0.02, 0.03, -0.01, -0.02, -0.03],
        }
    )
    for rows in (f, f.iloc[::-1], f.iloc[[4, 1, 5, 0, 3, 2]]):
        table = calibration(rows, bins=2)
        assert table["rose_share"].tolist() == [1.0, 0.0]  # A, B, C rose; D, E, F fell
        assert table["predictions"].tolist() == [3, 3]


def test_the_monthly_returns_table_reads_its_year_as_a_year_not_a_count() -> None:
    """A reviewer's read of docs/research/backtest.ipynb: the monthly returns' row read
    "2,026" (the year formatted as a count, with a thousands separator)."""
    from types import SimpleNamespace

    from reports.research import monthly_returns_table

    days = pd.bdate_range("2026-08-03", periods=80)
    curve = pd.DataFrame({"date": days, "equity": [10_000_000.0 + 1_000 * i for i in range(80)]})
    html = monthly_returns_table(SimpleNamespace(curve=curve)).to_html()
    assert ">2026</td>" in html and "2,026" not in html


def test_the_backtest_table_shows_the_backtest_figures_not_the_served_records_empty_fields() -> None:
    """A reviewer's read of docs/research/backtest.ipynb: the backtest's table carried rows
    "index source", "trades", "reason", "records" and "nulls" reading "-" in every column
    (the served track record's fields, which a backtest has none of), and "fill count"
    beside "orders", the same figure twice."""
    from portfolio.backtest import BacktestResult
    from reports.research import backtest_table

    days = pd.bdate_range("2026-08-03", periods=30).date
    rising = [10_000_000.0 + 10_000 * i for i in range(len(days))]
    curve = pd.DataFrame(
        {
            "date": days,
            "cash": 1_000_000.0,
            "market_value": [v - 1_000_000 for v in rising],
            "equity": rising,
            "liquid_equity": rising,
            "traded": 0.0,
            "fees": 0.0,
            "spread": 0.0,
            "impact": 0.0,
            "names": 20,
            "fills": 0,
        }
    )
    table = backtest_table({"next session, cost model": BacktestResult(fills="costed", curve=curve, orders=3)}).data
    shown = table["figure"].tolist()
    assert not {"index source", "trades", "reason", "records", "nulls", "fill count"} & set(shown), shown
    assert "orders" in shown and "total return" in shown and "annual return" in shown
