"""The screening tool's candidates are point in time: a candidate that read a later day
would flatter every variant using it and choose on leaked information (docs/model.md)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models.dataset import build_panel
from tests.models.synthetic import synthetic_prices

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def screen():
    saved = dict(os.environ)  # the tool pins BLAS threads for its own processes; not for the suite's
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("feature_screen")
    finally:
        sys.path.remove(str(BENCHMARKS))
        os.environ.clear()
        os.environ.update(saved)


def test_every_candidate_uses_nothing_after_its_day(screen) -> None:
    prices, _ = synthetic_prices(instruments=12, days=330, seed=11)
    rng = np.random.default_rng(3)
    prices.loc[rng.random(len(prices)) < 0.25, "volume"] = 0  # days without a trade, as on the NSE
    cut = sorted(prices["date"].unique())[299]
    full = screen.candidates(build_panel(prices, horizon=1))
    early = screen.candidates(build_panel(prices[prices["date"] <= cut], horizon=1))
    registry = set(build_panel(prices[prices["date"] <= cut], horizon=1).columns) - {"market_breadth"}
    columns = [c for c in early.columns if c not in registry]
    assert {"peer_return_5", "gap_high", "last_bar_location", "stale_gap", "liquid_return"} <= set(columns)
    key = ["symbol", "date"]
    merged = early.merge(full[full["date"] <= cut], on=key, suffixes=("", "_full"))
    assert len(merged) == len(early)
    for column in columns:
        a, b = merged[column].astype(float), merged[f"{column}_full"].astype(float)
        assert a.isna().equals(b.isna()), column
        assert np.allclose(a.fillna(0), b.fillna(0), rtol=0, atol=1e-12), column
    # the peers are chosen, and a day with peers trading has a peer move
    assert merged["peer_return_5"].notna().mean() > 0.5


def test_peers_are_chosen_from_the_months_before(screen) -> None:
    """S00 moves with S01-S03 until a month begins and with S04-S06 from then on: on that
    month's days its three peers are still S01-S03, chosen from the 250 days before."""
    days = pd.bdate_range("2024-01-01", periods=300).date
    switch = next(i for i in range(260, 300) if days[i].month != days[i - 1].month)
    rng = np.random.default_rng(0)
    old, new = rng.normal(0, 0.02, len(days)), rng.normal(0, 0.02, len(days))
    returns = {f"S{k:02d}": (old if k <= 3 else new) + rng.normal(0, 0.002, len(days)) for k in range(1, 7)}
    returns["S00"] = np.where(np.arange(len(days)) < switch, old, new) + rng.normal(0, 0.002, len(days))
    returns["S07"] = rng.normal(0, 0.02, len(days))
    rows = [
        {
            "symbol": s,
            "date": d,
            "close": float(c),
            "volume": 100,
            "high": float(c),
            "low": float(c),
            "bid": np.nan,
            "ask": np.nan,
        }
        for s, r in returns.items()
        for d, c in zip(days, 50 * np.exp(np.cumsum(r)))
    ]
    panel = screen.candidates(build_panel(pd.DataFrame(rows), horizon=1))
    moves = panel.pivot(index="date", columns="symbol", values="return_1d")
    peers = panel.pivot(index="date", columns="symbol", values="peer_return_3")
    month = [d for d in days[switch:] if d.month == days[switch].month]
    assert len(month) >= 5
    assert np.allclose(peers.loc[month, "S00"], moves.loc[month, ["S01", "S02", "S03"]].mean(axis=1))


def test_a_variant_adds_inputs_beyond_the_registry(screen) -> None:
    """`SLOT=CANDIDATE` takes a registered input's place, `+CANDIDATE` adds one after the
    14: the walk-forward then trains on 15 inputs and reports the added one's gain."""
    from models.features import FEATURE_NAMES

    name, swaps, _, params, extras = screen.parse("v zero_volume_share_20=r60 +log_adv20 +r2 p:num_leaves=7")
    assert (name, swaps, extras, params) == (
        "v",
        {"zero_volume_share_20": "r60"},
        ["log_adv20", "r2"],
        {"num_leaves": 7},
    )
    prices, _ = synthetic_prices(instruments=8, days=420, seed=5)
    screen._PANEL = screen.candidates(build_panel(prices, horizon=1))
    days = sorted(prices["date"].unique())
    start, end = days[320], days[400]
    result = screen.run("plus-adv +log_adv20", start, end)
    assert set(result["gain_share"]) == {*FEATURE_NAMES, "log_adv20"}
    assert result["moved_rows"] > 0
    with pytest.raises(SystemExit, match="no_such_input"):
        screen.run("bad +no_such_input", start, end)


def test_index_candidates_are_the_days_own_index_move(screen) -> None:
    """Round seven's inputs: an index's return and close location on the row's own day,
    from the index's rows up to that day only, NaN where the index has no row or no range."""
    prices, _ = synthetic_prices(instruments=4, days=60, seed=2)
    days = sorted(prices["date"].unique())
    levels = 100 * np.exp(np.cumsum(np.random.default_rng(1).normal(0, 0.01, len(days))))
    indices = pd.DataFrame(
        {"symbol": "^IDX", "date": days, "close": levels, "high": levels * 1.01, "low": levels * 0.99}
    )
    indices = indices.drop(index=30)  # a day the index has no row
    indices.loc[indices.index[:5], ["high", "low"]] = indices.loc[indices.index[:5], "close"]  # no range yet
    cut = days[45]
    full = screen.index_candidates(build_panel(prices, horizon=1), indices)
    early = screen.index_candidates(
        build_panel(prices[prices["date"] <= cut], horizon=1), indices[indices["date"] <= cut]
    )
    day = full[full["date"] == days[20]].iloc[0]
    assert day["index_return_IDX"] == pytest.approx(levels[20] / levels[19] - 1)
    assert day["index_location_IDX"] == pytest.approx(0.5)
    assert full.loc[full["date"] == days[30], "index_return_IDX"].isna().all()
    assert full.loc[full["date"] == days[3], "index_location_IDX"].isna().all()
    merged = early.merge(full, on=["symbol", "date"], suffixes=("", "_full"))
    for column in ("index_return_IDX", "index_location_IDX"):
        assert np.allclose(merged[column].fillna(-9), merged[f"{column}_full"].fillna(-9), rtol=0, atol=1e-12)


def test_learned_layer1_reads_no_label_after_its_day(screen) -> None:
    """Round nine's learned layer 1 is point in time: a row's P(up) is the same whether the
    panel ends at the row's day or runs on for a month (no model saw a later label), rows
    without enough known history are NaN, and the values are probabilities."""
    prices, _ = synthetic_prices(instruments=12, days=330, seed=5)
    cut = sorted(prices["date"].unique())[299]
    columns = ["r2", "r10", "gap_high", "liquid_return"]
    full = screen.candidates(build_panel(prices, horizon=1))
    early = screen.candidates(build_panel(prices[prices["date"] <= cut], horizon=1))
    full["learned"] = screen.learned_layer1(full, columns, every=40, min_rows=600)
    early["learned"] = screen.learned_layer1(early, columns, every=40, min_rows=600)
    merged = early.merge(full[full["date"] <= cut], on=["symbol", "date"], suffixes=("", "_full"))
    assert merged["learned"].isna().equals(merged["learned_full"].isna())
    assert np.allclose(merged["learned"].fillna(0), merged["learned_full"].fillna(0), rtol=0, atol=1e-12)
    assert merged["learned"].notna().mean() > 0.5 and merged["learned"].isna().any()
    assert merged["learned"].dropna().between(0, 1).all()
    # a model trained on the longer panel scores the month after the cut: it is not the early one
    later = full[full["date"] > cut]["learned"]
    assert later.notna().all()
