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


def test_two_runs_at_once_keep_one_whole_file_and_a_torn_one_is_a_miss(tmp_path: Path, monkeypatch) -> None:
    """Two benchmark runs with the same key (two terminals, a CI retry) wrote one fixed
    `.partial` file at once: one renamed it away under the other (FileNotFoundError) or
    left a mix of the two; a file cut short was read back and the run failed."""
    import threading

    data = tmp_path / "data"
    data.mkdir()
    (data / "day.csv").write_text("symbol,date,close\nA,2026-01-05,10\n")
    both_computed = threading.Barrier(2)
    many = pd.concat([prices()] * 20_000, ignore_index=True)

    def walk_forward(frame: pd.DataFrame, first_test_date: date, horizon: int) -> pd.DataFrame:
        both_computed.wait(timeout=10)
        return frame.assign(expected_return=0.01 * horizon)

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", walk_forward)
    args = argparse.Namespace(cache=str(tmp_path / "cache"), ohlcv=str(data), nse=None)
    results, errors = [], []
    with benchmark_module("backtest") as backtest:

        def run() -> None:
            try:
                results.append(
                    backtest.predictions_for(many, START, END, 5, args, {"hits": 0, "misses": 0, "seconds": 0.0})
                )
            except Exception as exc:  # noqa: BLE001 - the test reports it
                errors.append(exc)

        for _ in range(3):
            runs = [threading.Thread(target=run) for _ in range(2)]
            for thread in runs:
                thread.start()
            for thread in runs:
                thread.join(60)
            for kept in (tmp_path / "cache").glob("oos-*.pkl"):
                kept.unlink()
        assert errors == []
        assert [p.name for p in (tmp_path / "cache").iterdir()] == []  # no temporary file left behind
        monkeypatch.setattr(
            portfolio.backtest, "out_of_sample_predictions", lambda f, **_: f.assign(expected_return=1.0)
        )
        backtest.predictions_for(many, START, END, 5, args, {"hits": 0, "misses": 0, "seconds": 0.0})
        (kept,) = (tmp_path / "cache").glob("oos-*.pkl")
        whole = kept.read_bytes()
        kept.write_bytes(whole[: len(whole) // 2])  # a run stopped half-way under the old code
        counts = {"hits": 0, "misses": 0, "seconds": 0.0}
        again = backtest.predictions_for(many, START, END, 5, args, counts)
        assert (counts["hits"], counts["misses"]) == (0, 1)  # the torn file is a miss, not the run's failure
        assert (again["expected_return"] == 1.0).all() and len(again) == len(results[0])
        pd.testing.assert_frame_equal(pd.read_pickle(kept), again)  # and is written again whole
