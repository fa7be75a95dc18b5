"""benchmarks/model_quality.py says the span it actually scored (the first and last dates of
the scored rows), not the span it was asked for: a file asked from 2002 on whose first
scored year is 2009 printed "scored 2002-01-01" (issue 42). Synthetic data only: the real
NSE runs are the benchmark's own."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from tests.models.synthetic import synthetic_prices

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def quality():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("model_quality")
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_the_span_comes_from_the_scored_rows(quality) -> None:
    rows = pd.DataFrame({"symbol": ["A", "B", "A"], "date": [date(2010, 12, 30), date(2009, 1, 5), date(2009, 6, 1)]})
    assert quality.scored_span(rows) == (date(2009, 1, 5), date(2010, 12, 30))
    assert (
        quality.span_text(rows, date(2002, 1, 1), date(2010, 12, 31))
        == "scored 2009-01-05 to 2010-12-30 (asked 2002-01-01 to 2010-12-31)"
    )
    assert quality.span_text(rows, date(2009, 1, 5), date(2010, 12, 30)) == "scored 2009-01-05 to 2010-12-30"
    assert quality.scored_span(rows.iloc[:0]) is None
    assert (
        quality.span_text(rows.iloc[:0], date(2002, 1, 1), date(2010, 12, 31))
        == "scored nothing (asked 2002-01-01 to 2010-12-31)"
    )


def test_a_run_asked_for_more_than_it_can_score_prints_what_it_scored(tmp_path: Path) -> None:
    """300 trading days from 2024-01-01 asked from 2024-02-01: the walk-forward scores
    nothing before its 250 trading days of training, and the last day has no next close."""
    prices, _ = synthetic_prices(instruments=6, days=300, seed=3)
    path = tmp_path / "prices.csv"
    prices[["symbol", "date", "close", "volume", "high", "low"]].to_csv(path, index=False)
    days = sorted(prices["date"].unique())
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "model_quality.py"),
            "--ohlcv",
            str(path),
            "--from",
            "2024-02-01",
            "--no-reference",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert "scored 2024-02-01 to" not in lines[0], lines[0]  # what it printed before: the span asked for
    figures = json.loads(lines[-1])
    assert (figures["from"], figures["to"]) == ("2024-02-01", days[-1].isoformat())  # asked
    first, last = date.fromisoformat(figures["scored_from"]), date.fromisoformat(figures["scored_to"])
    assert first >= days[250] and last == days[-2]  # scored
    assert min(int(y) for y in figures["by_year"]) == first.year
    assert lines[0] == (
        f"ohlcv {path}: scored {first} to {last} (asked 2024-02-01 to {days[-1]}), "
        f"{figures['overall']['rows']} rows ({figures['overall']['moved_rows']} moved)"
    )
