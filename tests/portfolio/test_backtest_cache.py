"""The backtest benchmark's opt-in cache of out-of-sample predictions (benchmarks/backtest.py
--cache): a run with the same data files, span, horizon and code reads the predictions back
instead of running the walk-forward; a change to any of them is a miss."""

from __future__ import annotations

import argparse
from datetime import date, timedelta
from pathlib import Path

import pandas as pd

import portfolio.backtest
from tests.benchmark_modules import benchmark_module

START, END = date(2026, 1, 5), date(2026, 1, 20)


def prices() -> pd.DataFrame:
    days = [START + timedelta(days=i) for i in range(20)]
    return pd.DataFrame({"symbol": "A", "date": days, "close": 10.0, "volume": 100})


def test_a_second_run_reads_the_predictions_back_and_a_change_misses(tmp_path: Path, monkeypatch) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "day.csv").write_text("symbol,date,close\nA,2026-01-05,10\n")
    calls = []

    def walk_forward(frame: pd.DataFrame, first_test_date: date, horizon: int) -> pd.DataFrame:
        calls.append((first_test_date, horizon))
        return frame.assign(expected_return=0.01 * horizon)

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", walk_forward)
    args = argparse.Namespace(cache=str(tmp_path / "cache"), ohlcv=str(data), nse=None)
    counts = {"hits": 0, "misses": 0, "seconds": 0.0}
    with benchmark_module("backtest") as backtest:
        first = backtest.predictions_for(prices(), START, END, 5, args, counts)
        again = backtest.predictions_for(prices(), START, END, 5, args, counts)
        assert len(calls) == 1 and (counts["hits"], counts["misses"]) == (1, 1)
        pd.testing.assert_frame_equal(first, again)
        assert first["date"].max() <= END
        backtest.predictions_for(prices(), START, END, 10, args, counts)  # another horizon
        backtest.predictions_for(prices(), START, END - timedelta(days=1), 5, args, counts)  # another span
        (data / "day.csv").write_text("symbol,date,close\nA,2026-01-05,11\n")  # the data changed
        backtest.predictions_for(prices(), START, END, 5, args, counts)
        assert len(calls) == 4 and counts["misses"] == 4
        assert len(list((tmp_path / "cache").glob("oos-*.pkl"))) == 4
        args.cache = None  # opt-in: without a folder nothing is kept
        backtest.predictions_for(prices(), START, END, 5, args, counts)
        assert len(calls) == 5 and counts["misses"] == 4


def test_the_key_follows_the_code_that_makes_the_predictions(tmp_path: Path, monkeypatch) -> None:
    data = tmp_path / "day.csv"
    data.write_text("symbol,date,close\n")
    with benchmark_module("backtest") as backtest:
        before = backtest.cache_key(data, prices(), START, END, 5)
        code = tmp_path / "models"
        code.mkdir()
        (code / "risk.py").write_text("X = 1\n")
        monkeypatch.setattr(backtest, "ROOT", tmp_path)
        monkeypatch.setattr(backtest, "PREDICTION_CODE", ("models",))
        planted = backtest.cache_key(data, prices(), START, END, 5)
        (code / "risk.py").write_text("X = 2\n")
        assert len({before, planted, backtest.cache_key(data, prices(), START, END, 5)}) == 3
