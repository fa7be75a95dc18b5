"""Score, Action, Weight and Tercile rules at their edges; metrics beside base rates."""
import numpy as np
import pandas as pd
import pytest

from models.decisions import decide
from market.liquidity import effective_spread, passes_entry_gates
from models.metrics import evaluate


def day(**columns) -> pd.DataFrame:  # noqa: ANN003
    n = len(next(iter(columns.values())))
    base = {"symbol": [f"S{i}" for i in range(n)], "predicted_return": [0.01] * n, "p_up": [0.6] * n,
            "volatility_20": [0.02] * n, "adv_20": [10_000] * n, "volume": [100] * n, "bid": [9.9] * n,
            "ask": [10.1] * n, "high": [10.2] * n, "low": [9.8] * n, "close": [10.0] * n}
    base.update(columns)
    return pd.DataFrame(base)


@pytest.mark.parametrize(
    "p_up, predicted, action",
    [(0.55, 0.001, "LONG"), (0.5494, 0.001, "HOLD"), (0.55, -0.001, "HOLD"), (0.45, 0.01, "AVOID"),
     (0.4506, 0.01, "HOLD"), (0.5, -0.0051, "AVOID"), (0.5, -0.005, "HOLD")],
)
def test_action_thresholds(p_up: float, predicted: float, action: str) -> None:
    out = decide(day(p_up=[p_up], predicted_return=[predicted]))
    assert out["action"].iloc[0] == action
    assert out["score"].iloc[0] == round(100 * p_up, 1)


def test_weights_only_for_long_capped_and_summing_to_at_most_one() -> None:
    out = decide(day(p_up=[0.9] * 10 + [0.5], volatility_20=[0.001] * 10 + [0.02]))
    assert (out["weight"].iloc[:10] <= 0.15).all() and out["weight"].iloc[10] == 0
    assert out["weight"].sum() <= 1.0 + 1e-9
    one = decide(day(p_up=[0.6, 0.7], volatility_20=[0.02, 0.02]))
    assert one["weight"].tolist() == [pytest.approx(0.05), pytest.approx(0.1)]  # (p - 0.5) / vol / 100


def test_terciles_rank_liquid_names_and_flag_the_rest() -> None:
    out = decide(day(p_up=[0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.95], adv_20=[10_000] * 6 + [4_999]))
    assert out["tercile"].tolist() == ["TOP", "TOP", "MIDDLE", "MIDDLE", "BOTTOM", "BOTTOM", "ILLIQUID"]


def test_equal_scores_are_ranked_by_predicted_return() -> None:
    out = decide(day(p_up=[0.5] * 3, predicted_return=[0.002, -0.003, 0.0]))
    assert out["tercile"].tolist() == ["TOP", "BOTTOM", "MIDDLE"]


@pytest.mark.parametrize(
    "changes, liquid",
    [({}, True), ({"adv_20": [4_999]}, False), ({"adv_20": [5_000]}, True), ({"volume": [0]}, False),
     ({"bid": [9.75], "ask": [10.25]}, True),  # exactly 5% of the mid
     ({"bid": [9.74], "ask": [10.26]}, False),
     ({"bid": [np.nan], "ask": [np.nan], "high": [10.2], "low": [9.8]}, True),  # no quotes: 4% range stands in
     ({"bid": [np.nan], "ask": [np.nan], "high": [np.nan], "low": [np.nan]}, False)],
)
def test_entry_gates_at_their_edges(changes: dict, liquid: bool) -> None:
    assert bool(passes_entry_gates(day(**{"p_up": [0.6], **changes})).iloc[0]) is liquid


def test_effective_spread_prefers_quotes() -> None:
    assert effective_spread(day(p_up=[0.6])).iloc[0] == pytest.approx(0.02)


def test_metrics_come_with_base_rates_and_baselines() -> None:
    frame = pd.DataFrame({
        "date": ["d1"] * 5 + ["d2"] * 5,
        "forward_return": [0.03, -0.01, 0.0, 0.02, -0.03, 0.01, 0.004, -0.02, 0.025, 0.0],
        "predicted_return": [0.01, -0.01, 0.0, 0.01, 0.01, 0.01, 0.0, -0.01, 0.01, 0.0],
        "p_up": [0.7, 0.3, 0.5, 0.6, 0.6, 0.6, 0.6, 0.4, 0.7, 0.5],
        "last_return": [0.01, 0.01, 0.0, -0.01, -0.02, 0.0, 0.01, -0.01, 0.02, 0.0],
    })
    m = evaluate(frame)
    binary = m["binary_accuracy"]
    assert binary["sample_size"] == 8  # two unchanged rows are neither up nor down
    assert binary["value"] == pytest.approx(7 / 8) and binary["base_rate"] == pytest.approx(5 / 8)
    assert binary["baselines"]["majority"] == pytest.approx(5 / 8)
    assert binary["baselines"]["last_move_sign"] == pytest.approx(6 / 8)  # unchanged last move: majority (up)
    movers = m["movers_accuracy"]
    assert movers["sample_size"] == 3 and movers["value"] == pytest.approx(2 / 3)  # moves beyond 2%: 0.03, -0.03, 0.025
    three = m["three_class_accuracy"]
    assert three["value"] == pytest.approx(9 / 10) and three["base_rate"] == pytest.approx(0.4)  # only row 5 is wrong
    assert m["average_error"]["value"] == pytest.approx(np.mean(np.abs(frame["predicted_return"] - frame["forward_return"])))
    assert -1 <= m["information_coefficient"]["value"] <= 1
