"""The product's label is what a position decided after a close can earn: it starts at the
next session's close, runs over the holding horizon and is measured against the
equal-weighted liquid universe; it never reads the close the decision was made from."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pandas as pd
import pytest

from market.labels import with_labels
from models.dataset import build_panel
from models.features import FEATURE_NAMES
from models.risk import RiskModel, Training


def bounce_market(names: int = 30, days: int = 420, spread: float = 0.04, seed: int = 3) -> pd.DataFrame:
    """An efficient market observed through a bid-ask bounce: each name's value is a random
    walk nobody can predict, and each close prints at its bid or its ask at random; the
    day's high and low straddle both. All the predictability there is lives in the bounce
    of each close."""
    rng = np.random.default_rng(seed)
    rows = []
    start = date(2024, 1, 1)
    for n in range(names):
        value = 20 * np.exp(np.cumsum(rng.normal(0, 0.01, days)))
        side = rng.choice([-1.0, 1.0], days)
        close = value * (1 + side * spread / 2)
        for i in range(days):
            rows.append(
                {
                    "symbol": f"N{n:02d}",
                    "date": start + timedelta(days=i),
                    "close": close[i],
                    "volume": 50_000,
                    "high": value[i] * (1 + spread / 2) * 1.002,
                    "low": value[i] * (1 - spread / 2) * 0.998,
                    "bid": np.nan,
                    "ask": np.nan,
                }
            )
    return pd.DataFrame(rows)


def out_of_sample_ic(panel: pd.DataFrame) -> float:
    """One model fitted on the first half of the days, its mean daily rank IC on the rest."""
    dates = sorted(panel["date"].unique())
    panel = panel[panel["forward_return"].notna() & (panel["date"] >= dates[60])]
    cut = dates[len(dates) // 2]
    train, test = panel[panel["label_end"] < cut], panel[panel["date"] > cut + timedelta(days=25)]
    model = RiskModel().fit(
        train[FEATURE_NAMES].to_numpy(float),
        train["forward_return"].to_numpy(float),
        Training(60),
        days=train["date"].to_numpy(),
    )
    scored = test.assign(raw=model.raw_score(test[FEATURE_NAMES].to_numpy(float)))
    return float(scored.groupby("date").apply(lambda d: d["raw"].corr(d["forward_return"], method="spearman")).mean())


def test_a_bounce_only_market_gives_the_product_label_no_edge_and_the_next_day_label_one() -> None:
    prices = bounce_market()
    next_day = out_of_sample_ic(build_panel(prices, horizon=1, label="next_day"))
    excess = out_of_sample_ic(build_panel(prices, horizon=5, label="excess"))
    assert next_day > 0.3  # the next close undoes this close's bounce: a model reading it "predicts" that
    assert abs(excess) < 0.05  # nothing a position bought at the next close can earn


def test_the_label_starts_at_the_next_close_and_is_net_of_the_liquid_universe() -> None:
    prices = bounce_market(names=6, days=120)
    labelled = with_labels(prices, horizon=5)
    row = labelled[(labelled["symbol"] == "N00")].iloc[80]
    closes = prices[prices["symbol"] == "N00"].set_index("date")["close"]
    position = list(closes.index).index(row["date"])
    held = closes.iloc[position + 6] / closes.iloc[position + 1] - 1
    assert row["held_return"] == pytest.approx(held)
    assert row["label_end"] == closes.index[position + 6]
    same_day = labelled[labelled["date"] == row["date"]]
    assert row["forward_return"] == pytest.approx(held - same_day["held_return"].mean())
    moved = prices.copy()
    moved.loc[(moved["symbol"] == "N00") & (moved["date"] == row["date"]), "close"] *= 1.5
    again = with_labels(moved, horizon=5)
    again_row = again[(again["symbol"] == "N00") & (again["date"] == row["date"])].iloc[0]
    assert again_row["held_return"] == pytest.approx(row["held_return"])  # the decision's own close is never read


def test_names_outside_the_liquid_ordinary_universe_do_not_move_the_benchmark() -> None:
    prices = bounce_market(names=6, days=120)
    base = with_labels(prices, horizon=5)
    prices["ordinary"] = prices["symbol"] != "N05"
    typed = with_labels(prices, horizon=5)
    day = base["date"].iloc[90]
    held = base[base["date"] == day].set_index("symbol")["held_return"]
    universe = held.drop("N05").mean()
    assert typed[(typed["date"] == day) & (typed["symbol"] == "N00")]["forward_return"].iloc[0] == pytest.approx(
        held["N00"] - universe
    )


def gappy_market(days: int = 60) -> pd.DataFrame:
    """Four liquid names on business days; N3's file leaves out its seven untraded days
    after session 41 (as the NSE's files did before 2009) and N2's rows stop after session
    50 (delisted)."""
    sessions = list(pd.bdate_range("2024-01-01", periods=days).date)
    rng = np.random.default_rng(0)
    rows = []
    for k in range(4):
        close = 10.0
        for i, day in enumerate(sessions):
            close *= float(np.exp(rng.normal(0, 0.01)))
            if (k == 3 and 42 <= i <= 48) or (k == 2 and i > 50):
                continue
            rows.append(
                {"symbol": f"N{k}", "date": day, "close": close, "volume": 100_000, "bid": close * 0.999}
                | {"ask": close * 1.001, "high": close * 1.005, "low": close * 0.995}
            )
    return pd.DataFrame(rows)


def test_the_label_runs_over_the_markets_sessions_and_reads_no_close_after_its_end() -> None:
    """A name without rows on its untraded days is held at its last close, not carried to
    its next row: every row of a day ends on the same session (t+1+H of the market), so
    no label of the day moves when a close after that session does, and a panel cut at the
    end gives the same label (what the live stage stores)."""
    prices = gappy_market()
    sessions = sorted(prices["date"].unique())
    labelled = with_labels(prices, horizon=5)
    day = sessions[40]
    rows = labelled[labelled["date"] == day].set_index("symbol")
    assert set(rows["label_end"]) == {sessions[46]}
    n3 = prices[prices["symbol"] == "N3"].set_index("date")["close"]
    assert rows.loc["N3", "held_return"] == pytest.approx(n3[sessions[41]] / n3[sessions[41]] - 1)  # no trade since
    moved = prices.copy()
    moved.loc[(moved["symbol"] == "N3") & (moved["date"] == sessions[49]), "close"] *= 1.5
    again = with_labels(moved, horizon=5).query("date == @day").set_index("symbol")
    pd.testing.assert_series_equal(again["forward_return"], rows["forward_return"])
    cut = with_labels(prices[prices["date"] <= sessions[46]], horizon=5).query("date == @day").set_index("symbol")
    pd.testing.assert_series_equal(cut["forward_return"], rows["forward_return"])


def test_a_name_whose_rows_stop_keeps_its_label_and_its_place_in_the_universe() -> None:
    """Survivorship: a delisted name's label runs to its last close (it does not vanish from
    the training rows and its day's universe), while the panel's last sessions, whose end
    is not known yet, stay unlabelled."""
    prices = gappy_market()
    sessions = sorted(prices["date"].unique())
    labelled = with_labels(prices, horizon=5)
    rows = labelled[labelled["date"] == sessions[48]].set_index("symbol")
    n2 = prices[prices["symbol"] == "N2"].set_index("date")["close"]
    assert rows.loc["N2", "held_return"] == pytest.approx(n2[sessions[50]] / n2[sessions[49]] - 1)
    assert rows.loc["N0", "forward_return"] == pytest.approx(rows.loc["N0", "held_return"] - rows["held_return"].mean())
    assert labelled[labelled["date"] >= sessions[-6]]["forward_return"].isna().all()
    assert labelled[labelled["date"] == sessions[-7]]["forward_return"].notna().all()
