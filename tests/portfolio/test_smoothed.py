"""The smoothed expected excess (portfolio/backtest.py `smoothed`): each row's trailing mean
over its own symbol's last K rows, that day's included and no later one; a row without an
expected excess keeps none; the row order and the other columns are unchanged."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest

from portfolio.backtest import smoothed
from tests.benchmark_modules import benchmark_module


def _rows() -> pd.DataFrame:
    days = [date(2010, 1, d) for d in (4, 5, 6, 7)]
    a = [("A", d, v) for d, v in zip(days, (1.0, 2.0, np.nan, 6.0), strict=True)]
    b = [("B", d, v) for d, v in zip(days[1:], (10.0, 20.0, 30.0), strict=True)]
    frame = pd.DataFrame([*a, *b], columns=["symbol", "date", "expected_return"])
    frame["p_up"] = 0.5
    return frame.sample(frac=1.0, random_state=3)  # any order: the rows come back in it


def test_a_rows_value_is_the_mean_of_its_symbols_last_k_known_values() -> None:
    rows = _rows()
    out = smoothed(rows, 2)
    got = dict(zip(zip(out["symbol"], out["date"]), out["expected_return"], strict=True))
    assert got[("A", date(2010, 1, 4))] == 1.0  # its first row: what there is
    assert got[("A", date(2010, 1, 5))] == 1.5
    assert np.isnan(got[("A", date(2010, 1, 6))])  # no expected excess that day: none given
    assert got[("A", date(2010, 1, 7))] == 6.0  # the window (NaN, 6) knows 6 only
    assert got[("B", date(2010, 1, 7))] == 25.0  # another symbol's rows never enter
    assert list(out.index) == list(rows.index) and (out["p_up"] == 0.5).all()


def test_one_session_is_the_predictions_and_a_later_row_never_moves_an_earlier_one() -> None:
    rows = _rows()
    assert smoothed(rows, 1) is rows
    early = rows[rows["date"] <= date(2010, 1, 6)]
    both = smoothed(rows, 3).loc[early.index, "expected_return"]
    pd.testing.assert_series_equal(smoothed(early, 3)["expected_return"], both)
    with pytest.raises(ValueError):
        smoothed(rows, 0)


def test_the_selection_grid_takes_the_dimensions_named_and_refuses_others() -> None:
    """`benchmarks/backtest.py --grid`: the named dimensions replace GRID's, the rest stay,
    and a key the grid does not have (or one without values) is refused naming it."""
    with benchmark_module("backtest") as backtest:
        grid = backtest.grid_of("hold=5,20 trim=2,none smooth=1,10", smooth=1)
        assert grid["hold"] == (5, 20) and grid["trim"] == (2.0, None) and grid["smooth"] == (1, 10)
        assert grid["swaps"] == backtest.GRID["swaps"] and grid["names"] == backtest.GRID["names"]
        assert backtest.grid_of(None, smooth=5)["smooth"] == (5,)
        assert backtest.grid_of(None)["rebalance"] == (5,) and backtest.grid_of("rebalance=1,5")["rebalance"] == (1, 5)
        for bad in ("horizon=5", "hold=", "hold"):
            with pytest.raises(ValueError, match="one of hold, swaps, trim, names, smooth, rebalance"):
                backtest.grid_of(bad)


def test_the_backtest_takes_a_horizon_and_a_rebalance_and_refuses_a_horizon_past_its_closes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--horizon H` is the label every book of the run reads (1 to the closes kept past the
    span, less the fill's session); `--rebalance` is one book's Mandate.rebalance_every."""
    import sys

    with benchmark_module("backtest") as backtest:
        monkeypatch.setattr(sys, "argv", ["backtest.py", "--horizon", "10", "--rebalance", "1"])
        args = backtest.parse_args()
        assert args.horizon == 10 and backtest.mandate_of(args).rebalance_every == 1
        for bad in ("0", str(backtest.LABEL_CUT - 1)):
            monkeypatch.setattr(sys, "argv", ["backtest.py", "--horizon", bad])
            with pytest.raises(SystemExit):
                backtest.parse_args()
            assert f"--horizon {bad}: a label of 1 to {backtest.LABEL_CUT - 2} sessions" in capsys.readouterr().err
