"""Score, Action, Weight and Tercile rules at their edges; metrics beside base rates."""

import numpy as np
import pandas as pd
import pytest

from market.liquidity import effective_spread, passes_entry_gates
from models.decisions import EDGE_BANDS, EdgeTable, decide, edge_tables
from models.metrics import evaluate


def day(**columns) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    base = {
        "symbol": [f"S{i}" for i in range(n)],
        "predicted_return": [0.01] * n,
        "p_up": [0.6] * n,
        "volatility_20": [0.02] * n,
        "adv_20": [10_000] * n,
        "volume": [100] * n,
        "bid": [9.9] * n,
        "ask": [10.1] * n,
        "high": [10.2] * n,
        "low": [9.8] * n,
        "close": [10.0] * n,
    }
    base.update(columns)
    return pd.DataFrame(base)


def flat_edge(edge: float) -> EdgeTable:
    return EdgeTable(1, tuple([edge] * (len(EDGE_BANDS) - 1)), tuple([100] * (len(EDGE_BANDS) - 1)))


# The day's quoted spread is 2%, fees 0.5% a side: a round trip costs 3%, leaving 1.5%.
@pytest.mark.parametrize(
    "p_up, edge, action",
    [
        (0.55, 0.0301, "LONG"),
        (0.5494, 0.0301, "HOLD"),
        (0.55, 0.03, "HOLD"),
        (0.90, 0.029, "HOLD"),
        (0.45, -0.0001, "AVOID"),
        (0.45, 0.0, "HOLD"),
        (0.4506, -0.0149, "HOLD"),
        (0.60, -0.0151, "AVOID"),
    ],
)
def test_action_reads_the_held_edge_against_the_round_trip_cost(p_up: float, edge: float, action: str) -> None:
    out = decide(day(p_up=[p_up]), edge=flat_edge(edge), fee_rate=0.005)
    assert out["action"].iloc[0] == action
    assert out["score"].iloc[0] == round(100 * p_up, 1)
    assert out["round_trip_cost"].iloc[0] == pytest.approx(0.03)


def test_a_score_above_the_long_line_that_is_not_long_says_why() -> None:
    out = decide(day(p_up=[0.68]), edge=flat_edge(0.004), fee_rate=0.005)
    assert out["action"].iloc[0] == "HOLD"
    assert out["reason"].iloc[0] == "edge +0.40% over 1 sessions below round-trip cost 3.00% (spread 2.00%, fees 1.00%)"
    assert decide(day(p_up=[0.68]))["action"].iloc[0] == "HOLD"  # no held-return record: no LONG on conviction alone
    assert decide(day(p_up=[0.40]))["action"].iloc[0] == "AVOID"


def test_weights_only_for_long_capped_and_summing_to_at_most_one() -> None:
    out = decide(day(p_up=[0.9] * 10 + [0.5], volatility_20=[0.001] * 10 + [0.02]), edge=flat_edge(0.05))
    assert (out["weight"].iloc[:10] <= 0.15).all() and out["weight"].iloc[10] == 0
    assert out["weight"].sum() <= 1.0 + 1e-9
    one = decide(day(p_up=[0.6, 0.7], volatility_20=[0.2, 0.4]), edge=flat_edge(0.07))
    # a quarter of the Kelly fraction of the net edge: 0.25 x (0.07 - 0.03) / (vol^2 x 1)
    assert one["weight"].iloc[1] == pytest.approx(0.0625) and one["weight"].iloc[0] == pytest.approx(0.15)


def test_the_held_edge_is_known_only_after_its_exit_close() -> None:
    rows = pd.DataFrame(
        {
            "score": [70.0] * 60 + [70.0],
            "held_return": [0.01] * 60 + [0.5],
            "liquid": [True] * 61,
            "known_on": [pd.Timestamp("2026-01-05").date()] * 60 + [pd.Timestamp("2026-01-07").date()],
        }
    )
    days = [pd.Timestamp(d).date() for d in ("2026-01-05", "2026-01-06", "2026-01-07", "2026-01-08")]
    tables = edge_tables(rows, days, horizon=1)
    assert np.isnan(tables[days[0]].lookup([70.0])[0])  # exits known on the 5th count from the 6th
    assert tables[days[1]].lookup([70.0])[0] == pytest.approx(0.01)
    assert tables[days[2]].lookup([70.0])[0] == pytest.approx(0.01)  # the 0.5 is known on the 7th, counted from the 8th
    assert tables[days[3]].lookup([70.0])[0] == pytest.approx((60 * 0.01 + 0.5) / 61)
    assert np.isnan(tables[days[3]].lookup([50.0])[0])  # a band with too few rows has no edge


def test_terciles_rank_liquid_names_and_flag_the_rest() -> None:
    out = decide(day(p_up=[0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.95], adv_20=[10_000] * 6 + [4_999]))
    assert out["tercile"].tolist() == ["TOP", "TOP", "MIDDLE", "MIDDLE", "BOTTOM", "BOTTOM", "ILLIQUID"]


def test_equal_scores_are_ranked_by_predicted_return() -> None:
    out = decide(day(p_up=[0.5] * 3, predicted_return=[0.002, -0.003, 0.0]))
    assert out["tercile"].tolist() == ["TOP", "BOTTOM", "MIDDLE"]


@pytest.mark.parametrize(
    "changes, liquid",
    [
        ({}, True),
        ({"adv_20": [4_999]}, False),
        ({"adv_20": [5_000]}, True),
        ({"volume": [0]}, False),
        ({"bid": [9.75], "ask": [10.25]}, True),  # exactly 5% of the mid
        ({"bid": [9.74], "ask": [10.26]}, False),
        ({"bid": [np.nan], "ask": [np.nan], "high": [10.2], "low": [9.8]}, True),  # no quotes: 4% range stands in
        ({"bid": [np.nan], "ask": [np.nan], "high": [np.nan], "low": [np.nan]}, False),
    ],
)
def test_entry_gates_at_their_edges(changes: dict, liquid: bool) -> None:
    assert bool(passes_entry_gates(day(**{"p_up": [0.6], **changes})).iloc[0]) is liquid


def test_effective_spread_prefers_quotes() -> None:
    assert effective_spread(day(p_up=[0.6])).iloc[0] == pytest.approx(0.02)


def test_metrics_come_with_base_rates_and_baselines() -> None:
    frame = pd.DataFrame(
        {
            "date": ["d1"] * 5 + ["d2"] * 5,
            "forward_return": [0.03, -0.01, 0.0, 0.02, -0.03, 0.01, 0.004, -0.02, 0.025, 0.0],
            "predicted_return": [0.01, -0.01, 0.0, 0.01, 0.01, 0.01, 0.0, -0.01, 0.01, 0.0],
            "p_up": [0.7, 0.3, 0.5, 0.6, 0.6, 0.6, 0.6, 0.4, 0.7, 0.5],
            "last_return": [0.01, 0.01, 0.0, -0.01, -0.02, 0.0, 0.01, -0.01, 0.02, 0.0],
        }
    )
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
    assert m["average_error"]["value"] == pytest.approx(
        np.mean(np.abs(frame["predicted_return"] - frame["forward_return"]))
    )
    assert -1 <= m["information_coefficient"]["value"] <= 1
