"""Layer 1: the fallback's arithmetic, the quantile-to-probability rule, and the real
Chronos-Bolt loading and caching code on a tiny random-weight model saved to a folder."""

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models.layer1 import (
    EmpiricalFallback,
    empirical_p_up_series,
    load_layer1,
    p_up_from_quantiles,
    save_random_chronos_bolt,
)


def test_fallback_counts_rising_moves_after_a_move_like_the_latest() -> None:
    window = np.array([10, 11, 11, 10, 12, 13], dtype=float)  # 1-day moves: +1, 0, -1, +2, +1 (latest: up)
    # moves after an up move: 0 (after +1, not counted), +1 (after +2): 1 up of 1
    assert EmpiricalFallback().p_up([window], 1)[0] == pytest.approx((1 + 1) / (1 + 2))
    # 2-day moves: +1, -1, +1, +3 (latest: up); after an up move 2 days later: +1 (after +1): 1 up of 1
    assert EmpiricalFallback().p_up([window], 2)[0] == pytest.approx((1 + 1) / (1 + 2))
    bounce = np.array([10, 11, 10, 11, 10, 11, 10], dtype=float)  # latest move down; every down move was undone
    assert EmpiricalFallback().p_up([bounce], 1)[0] == pytest.approx((2 + 1) / (2 + 2))
    assert EmpiricalFallback().p_up([np.array([5.0])], 1)[0] == 0.5
    assert EmpiricalFallback().model_id == "fallback-empirical-v2" and EmpiricalFallback.is_fallback


@pytest.mark.parametrize("horizon", [1, 2, 5])
def test_fallback_series_equals_the_windowed_fallback(horizon: int) -> None:
    rng = np.random.default_rng(3)
    closes = pd.Series(100 * np.exp(np.cumsum(rng.normal(0, 0.02, 320))))
    closes[rng.random(320) < 0.3] = np.nan
    closes = closes.ffill().fillna(100.0)  # unchanged closes too, as in a thin market
    series = empirical_p_up_series(closes, horizon)
    for t in (0, 3, 10, 199, 200, 250, 319):
        assert series.iloc[t] == pytest.approx(EmpiricalFallback().p_up([closes.iloc[: t + 1].to_numpy()], horizon)[0])


def test_probability_from_quantiles() -> None:
    levels = np.array([90, 92, 94, 96, 100, 102, 104, 106, 108], dtype=float)
    assert p_up_from_quantiles(levels, 100.0) == pytest.approx(0.5)
    # a quarter of the way from q0.4=96 to q0.5=100
    assert p_up_from_quantiles(levels, 97.0) == pytest.approx(1 - 0.425)
    assert p_up_from_quantiles(levels, 80.0) == pytest.approx(0.95)
    assert p_up_from_quantiles(levels[::-1], 100.0) == pytest.approx(0.5)  # crossing quantiles are sorted


@pytest.fixture(scope="module")
def tiny_chronos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_random_chronos_bolt(tmp_path_factory.mktemp("models") / "tiny-chronos-bolt")


def test_a_local_chronos_bolt_loads_offline_and_forecasts(tiny_chronos: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    backend = load_layer1(str(tiny_chronos), offline=True)
    assert backend.backend == "chronos-bolt" and not backend.is_fallback
    assert backend.model_id == "chronos-bolt:tiny-chronos-bolt"
    windows = [100 + np.cumsum(np.random.default_rng(i).normal(0, 1, 200)) for i in range(5)] + [np.full(30, 50.0)]
    p = backend.p_up(windows, 1)
    assert p.shape == (6,) and np.all((p >= 0.01) & (p <= 0.99))
    assert np.array_equal(p, backend.p_up(windows, 1))  # deterministic


def test_no_weights_means_the_labelled_fallback(tmp_path: Path) -> None:
    backend = load_layer1("amazon/chronos-bolt-small", offline=True)  # a hub id, and offline: never downloaded
    assert backend.is_fallback and backend.model_id == "fallback-empirical-v2"
    assert load_layer1(str(tmp_path / "missing-folder"), offline=True).is_fallback


def test_a_day_is_computed_once_and_cached_per_model(settings, tiny_chronos: Path) -> None:
    from pipeline.scoring import layer1_for_day
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows

    day = date(2026, 11, 20)
    days = pd.bdate_range(end="2026-11-20", periods=210).date
    prices = pd.DataFrame(
        [
            {"symbol": s, "date": d, "close": 100 + i * k, "volume": 1}
            for k, s in enumerate(["AAA", "BBB"], start=1)
            for i, d in enumerate(days)
        ]
    )
    calls = []

    class Counting(EmpiricalFallback):
        def p_up(self, windows, horizon):
            calls.append(len(windows))
            return super().p_up(windows, horizon)

    engine = service_engine(settings)
    with engine.begin() as conn:
        first = layer1_for_day(conn, prices, day, Counting(), 1)
        again = layer1_for_day(conn, prices, day, Counting(), 1)
        chronos = layer1_for_day(conn, prices, day, load_layer1(str(tiny_chronos), offline=True), 1)
        rows = current_rows(conn, tables.layer1_forecasts)
    assert calls == [2] and first.equals(again)
    assert {(r["model_id"], r["backend"]) for r in rows} == {
        ("fallback-empirical-v2", "fallback-empirical"),
        ("chronos-bolt:tiny-chronos-bolt", "chronos-bolt"),
    }
    assert len(rows) == 4 and len(chronos) == 2
