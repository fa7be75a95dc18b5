"""Score, Action, Weight and Tercile rules at their edges; metrics beside base rates."""

import numpy as np
import pandas as pd
import pytest

from market.liquidity import effective_spread, passes_entry_gates
from models.decisions import decide
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


# The day's quoted spread is 2%, fees 0.5% a side: a round trip costs 3%.
@pytest.mark.parametrize(
    "p_up, edge, action",
    [
        (0.55, 0.0001, "LONG"),  # alone on the day: the book's best name
        (0.30, -0.01, "LONG"),  # still the best there is: the mandate is invested, LONG is a rank
        (0.90, -0.0299, "LONG"),  # expected to lag, by less than a round trip
        (0.60, -0.0301, "AVOID"),  # expected to lose more than a round trip costs (the spread, two fees)
        (0.45, -0.0300, "LONG"),  # exactly a round trip: kept
    ],
)
def test_action_reads_the_expected_excess(p_up: float, edge: float, action: str) -> None:
    out = decide(day(p_up=[p_up], expected_return=[edge]), fee_rate=0.005)
    assert out["action"].iloc[0] == action
    assert out["score"].iloc[0] == round(100 * p_up, 1)
    assert out["held_edge"].iloc[0] == pytest.approx(edge)
    assert out["round_trip_cost"].iloc[0] == pytest.approx(0.03)


def test_long_is_the_books_best_liquid_ordinary_names() -> None:
    edges = [0.02, 0.015, 0.01, 0.005, 0.004, 0.003]
    out = decide(day(p_up=[0.6] * 6, expected_return=edges), book_names=2)
    assert out["action"].tolist() == ["LONG", "LONG", "HOLD", "HOLD", "HOLD", "HOLD"]
    assert out["reason"].iloc[2].endswith("rank 3 of the liquid names: the book holds the 2 best")
    assert out["weight"].tolist() == [0.475, 0.475, 0, 0, 0, 0]  # the book's slot: 95% over its 2 names
    typed = decide(
        day(p_up=[0.6] * 3, expected_return=[0.02, 0.01, 0.0], ordinary=[False, True, True], adv_20=[9e4, 9e4, 10]),
        book_names=1,
    )
    assert typed["action"].tolist() == ["HOLD", "LONG", "HOLD"]  # a preference share and an illiquid name: never
    assert "not an ordinary share" in typed["reason"].iloc[0] and typed["weight"].iloc[0] == 0
    assert "fails the entry liquidity gates" in typed["reason"].iloc[2]


def test_a_name_not_bought_says_why() -> None:
    out = decide(
        day(p_up=[0.68, 0.7, 0.7], expected_return=[-0.004, 0.01, 0.02]), fee_rate=0.005, book_names=1, horizon=10
    )
    assert out["action"].tolist() == ["HOLD", "HOLD", "LONG"]
    assert out["reason"].iloc[0] == (
        "expected excess -0.40% over 10 sessions (Score 68.0), rank 3 of the liquid names: the book holds the 1 best"
    )
    unscored = decide(day(p_up=[0.68], expected_return=[np.nan]))
    assert unscored["action"].iloc[0] == "HOLD"  # no calibrated expected excess: no LONG on conviction alone
    assert "not bought on conviction alone" in unscored["reason"].iloc[0]


def test_terciles_and_weights_rank_within_each_day() -> None:
    two_days = pd.concat(
        [
            day(p_up=[0.6] * 3, expected_return=[0.03, 0.02, 0.01]).assign(date="d1"),
            day(p_up=[0.6] * 3, expected_return=[0.001, 0.002, 0.003]).assign(date="d2"),
        ],
        ignore_index=True,
    )
    out = decide(two_days, book_names=1)
    assert out["tercile"].tolist() == ["TOP", "MIDDLE", "BOTTOM", "BOTTOM", "MIDDLE", "TOP"]
    assert out["weight"].gt(0).tolist() == [True, False, False, False, False, True]


def test_terciles_rank_liquid_names_and_flag_the_rest() -> None:
    out = decide(
        day(
            p_up=[0.6] * 7,
            expected_return=[0.06, 0.05, 0.04, 0.03, 0.02, 0.01, 0.07],
            adv_20=[10_000] * 6 + [4_999],
        )
    )
    assert out["tercile"].tolist() == ["TOP", "TOP", "MIDDLE", "MIDDLE", "BOTTOM", "BOTTOM", "ILLIQUID"]


def test_equal_expected_excess_is_ranked_by_score() -> None:
    out = decide(day(p_up=[0.55, 0.45, 0.5], expected_return=[0.001] * 3))
    assert out["tercile"].tolist() == ["TOP", "BOTTOM", "MIDDLE"]


def test_on_exact_ties_the_terciles_are_the_books_order_reversed() -> None:
    """30 names alike in every respect: the book's best are the TOP third and no LONG is
    BOTTOM, whatever order the rows come in (the last tie key is the symbol)."""
    n = 30
    alike = day(p_up=[0.5] * n, expected_return=[0.001] * n, raw_score=[0.0] * n)
    for rows in (alike, alike.iloc[::-1], alike.sample(frac=1, random_state=3)):
        out = decide(rows.reset_index(drop=True), fee_rate=0.005).set_index("symbol").sort_index()
        assert (out["tercile"] == "TOP").sum() == 10
        assert set(out.index[out["tercile"] == "TOP"]) <= set(out.index[out["action"] == "LONG"])
        assert "BOTTOM" not in set(out.loc[out["action"] == "LONG", "tercile"])
        assert list(out.index[out["tercile"] == "TOP"]) == [f"S{i}" for i in sorted(range(n), key=str)][:10]


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
    assert m["rank_ic"]["sample_size"] == 0  # no expected excess: an uncalibrated record ranks nothing


def test_rank_ic_and_tercile_spread_read_the_expected_excess_and_the_products_terciles() -> None:
    """The API's ranking figures: the expected excess's daily Spearman correlation with the
    label (a day the expected excess is flat counts 0) beside the last move's, and the
    TOP Ranking Tercile's mean label minus the BOTTOM's, whatever the other columns say."""
    label = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]
    frame = pd.DataFrame(
        {
            "date": ["d1"] * 6 + ["d2"] * 6,
            "forward_return": label + label,
            "expected_return": [1, 2, 3, 4, 5, 6] + [0.2] * 6,
            "predicted_return": [0.0] * 12,  # the conditional median ranks nothing: not what rank IC reads
            "p_up": [0.5] * 12,
            "last_return": [0.06, 0.05, 0.04, 0.03, 0.02, 0.01] * 2,
            "tercile": ["BOTTOM", "BOTTOM", "MIDDLE", "ILLIQUID", "TOP", "TOP"]
            + ["TOP", "ILLIQUID", "MIDDLE", "MIDDLE", "BOTTOM", "BOTTOM"],
        }
    )
    m = evaluate(frame)
    assert m["rank_ic"]["value"] == pytest.approx(0.5)  # 1 on d1, 0 on the flat d2
    assert m["rank_ic"]["sample_size"] == 2 and m["rank_ic"]["base_rate"] == 0.0
    assert m["rank_ic"]["baselines"] == {"last_move": pytest.approx(-1.0)}
    # d1: 0.055 - 0.015 = 0.04; d2: 0.01 - 0.055 = -0.045
    assert m["tercile_spread"]["value"] == pytest.approx((0.04 - 0.045) / 2)
    assert m["tercile_spread"]["sample_size"] == 2
    reversed_ = evaluate(frame.assign(expected_return=[6, 5, 4, 3, 2, 1] * 2))
    assert reversed_["rank_ic"]["value"] == pytest.approx(-1.0)


def _by_day(frame: pd.DataFrame, rows: np.ndarray, key) -> dict:
    """Each row's place (0 first) in its day, read one day at a time with Python's sort."""
    places = {}
    for _, day in frame.iloc[rows].groupby("date", sort=False):
        for place, row in enumerate(sorted(day.index, key=lambda i: key(day.loc[i]))):
            places[row] = (place, len(day))
    return places


@pytest.mark.parametrize("seed", range(12))
def test_terciles_and_the_books_rank_are_their_definitions_day_by_day(seed: int) -> None:
    """Many ties (rounded values), names without an expected excess, illiquid rows, several
    days: the terciles sort each day's liquid names up by expected excess, Score, raw score;
    the book's rank sorts the eligible ones down; an exact tie ranks the earlier row (the
    symbol where there is one) better in both, so the terciles are the book's order reversed."""
    from models.decisions import _book_rank, _terciles

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    frame = pd.DataFrame(
        {
            "date": rng.choice(pd.date_range("2024-01-01", periods=4).date, n),
            "held_edge": np.round(rng.normal(0, 0.01, n), 3),
            "score": np.round(rng.uniform(40, 60, n), 0),
            "raw_score": np.round(rng.normal(0, 1, n), 1),
        }
    )
    frame.loc[rng.random(n) < 0.2, "held_edge"] = np.nan
    liquid = rng.random(n) < 0.7
    up = _by_day(
        frame,
        np.flatnonzero(liquid),
        lambda r: (np.nan_to_num(r.held_edge, nan=-np.inf), r.score, r.raw_score, -r.name),
    )
    share = {row: (place + 1) / size for row, (place, size) in up.items()}
    expected = [
        "ILLIQUID"
        if row not in share
        else "TOP"
        if share[row] > 2 / 3
        else "MIDDLE"
        if share[row] > 1 / 3
        else "BOTTOM"
        for row in range(n)
    ]
    assert list(_terciles(frame, liquid)) == expected
    eligible = liquid & frame["held_edge"].notna().to_numpy()
    down = _by_day(frame, np.flatnonzero(eligible), lambda r: (-r.held_edge, -r.score, -r.raw_score, r.name))
    ranks = _book_rank(frame, eligible)
    assert {row: int(ranks[row]) for row in np.flatnonzero(eligible)} == {row: p + 1 for row, (p, _) in down.items()}
    assert (ranks[~eligible] == np.iinfo(np.int64).max).all()


def test_the_monitor_and_the_records_count_a_p_up_of_one_half_alike() -> None:
    """One rule (models/metrics.binary_accuracy, P(up) > 0.5): a P(up) of exactly 0.5 is not a
    prediction of up, for the live record's metrics and for the monitor's live check alike."""
    from models.monitor import METRICS

    frame = pd.DataFrame(
        {
            "date": ["2026-11-02"] * 2,
            "forward_return": [-0.01, -0.02],
            "predicted_return": [0.0, 0.0],
            "p_up": [0.5, 0.5],
            "last_return": [0.0, 0.0],
        }
    )
    monitored = METRICS["live_accuracy"][0](np.array([0.5, 0.5]), np.array([0.0, 0.0]))
    assert monitored == evaluate(frame)["binary_accuracy"]["value"] == 1.0


def test_the_tercile_spread_shares_tied_places_whatever_order_the_rows_come_in() -> None:
    """Five names tied at 0 and one at 1: the top third's two places are the 1 and one of
    the five, the bottom third's two places two of the five; each of the five counts for a
    fifth of the top place and two fifths of the bottom ones (the mean over every order)."""
    from models.metrics import daily_tercile_spread

    f = pd.DataFrame(
        {
            "date": ["d"] * 6,
            "symbol": ["A", "B", "C", "D", "E", "F"],
            "expected_return": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
            "forward_return": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )
    top, bottom = (5.0 + 10.0 / 5) / 2, (10.0 * 2 / 5) / 2
    for rows in (f, f.iloc[::-1], f.iloc[[3, 0, 4, 1, 2, 5]]):
        assert daily_tercile_spread(rows, ["expected_return"]).tolist() == [pytest.approx(top - bottom)]
    # a tie the next column breaks is ranked by it, as before
    ranked = f.assign(p_up=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]).iloc[::-1]
    assert daily_tercile_spread(ranked, ["expected_return", "p_up"]).tolist() == [pytest.approx(4.5 - 0.5)]
