"""benchmarks/model_monitor.py's simulated reference stands in for a validation record, so
every input has a value on each of its days: with a warm-up shorter than the longest input
window (volatility_60's 60 returns) its first days lacked that input for every traded name,
which left the input a shorter reference and turned its missing-feed rule off (the
reference's largest missing share 100%, which no monitored day can exceed)."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from models.features import FEATURE_NAMES
from models.monitor import STUCK_SHARE, reference_missing_share
from tests.benchmark_modules import benchmark_module


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    with benchmark_module("model_monitor") as module:
        yield module


def test_every_input_has_a_value_on_every_reference_day(bench) -> None:
    prices = bench.market_prices("nse", 7, bench.WARMUP + bench.REFERENCE + 1)
    frame, dates = bench.input_frame(prices)
    reference = frame[frame["date"].isin(dates[bench.WARMUP : bench.WARMUP + bench.REFERENCE])]
    assert reference["date"].nunique() == bench.REFERENCE
    for name in FEATURE_NAMES:
        # a value on each of the 250 days, and at most a new listing's few names without one,
        # so a monitored day where most traded names have none is ALERT (`missing_feed`)
        assert reference.dropna(subset=[name])["date"].nunique() == bench.REFERENCE, name
        assert reference_missing_share(reference, name) < STUCK_SHARE, name
