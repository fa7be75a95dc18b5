"""The simulator has the stylised facts of the real NSE daily files (within the stated
tolerances), and the committed table is what those files measure."""

import json
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ingest.simulator.facts import (
    PREDICTABILITY_DEFINITIONS,
    PREDICTABILITY_HORIZON,
    PREDICTABILITY_TOLERANCE,
    SPREAD_TIER_TOLERANCE,
    SPREAD_TIERS,
    TOLERANCES,
    compare,
    predictability_facts,
    simulated_facts,
    simulated_predictability,
    simulated_prices,
    spread_tiers,
    stylised_facts,
)
from market.liquidity import MIN_ADV

TABLE = Path(__file__).resolve().parents[2] / "ingest" / "simulator" / "stylised_facts.json"


@pytest.fixture(scope="module")
def table() -> dict:
    return json.loads(TABLE.read_text())


def test_the_table_states_every_fact_its_tolerance_and_definition(table: dict) -> None:
    assert set(table["facts"]) == set(table["tolerances"]) == set(table["definitions"]) == set(TOLERANCES)
    assert table["tolerances"] == TOLERANCES
    assert table["adv_gate_shares"] == MIN_ADV
    assert table["n"]["instrument_days"] > 100_000 and table["period"][0] < table["period"][1]


def test_260_simulated_days_have_the_nse_stylised_facts(table: dict) -> None:
    simulated = simulated_facts(adv_gate=MIN_ADV)
    assert simulated["instrument_days"] > 15_000
    rows = compare(simulated, table["facts"], table["tolerances"])
    failed = [
        f"{r['fact']}: simulated {r['simulated']:.4f}, NSE {r['nse']:.4f}, tolerance {r['tolerance']}"
        for r in rows
        if not r["passes"]
    ]
    assert not failed, "; ".join(failed)


def test_the_committed_table_is_what_the_nse_files_measure(table: dict, nse_data: Path) -> None:
    from ingest.importers.formats import nse_daily_frame

    prices = nse_daily_frame(nse_data / "daily", ordinary=True)
    measured = stylised_facts(prices, adv_gate=MIN_ADV)
    assert [str(prices["date"].min()), str(prices["date"].max())] == table["period"]
    assert {k: measured[k] for k in table["n"]} == table["n"]
    for name, value in table["facts"].items():
        assert measured[name] == pytest.approx(value, abs=1e-6), name
    assert spread_tiers(prices) == table["spread_tiers"]
    predictability = predictability_facts(prices, adv_gate=MIN_ADV)
    assert {k: predictability[k] for k in table["predictability_n"]} == table["predictability_n"]
    for name, value in table["predictability"].items():
        assert predictability[name] == pytest.approx(value, abs=1e-6), name


def test_the_table_states_the_predictability_facts_their_tolerance_and_definitions(table: dict) -> None:
    assert set(table["predictability"]) == set(table["predictability_definitions"]) == set(PREDICTABILITY_DEFINITIONS)
    assert table["predictability_definitions"] == PREDICTABILITY_DEFINITIONS
    assert table["predictability_tolerance"] == PREDICTABILITY_TOLERANCE
    assert table["predictability_horizon"] == PREDICTABILITY_HORIZON == 10
    assert table["predictability_n"]["days"] > 3_000
    # What the NSE reads: reversal over weeks, larger and calmer names earning more.
    nse = table["predictability"]
    assert nse["ic_excess_return_20"] < 0 and nse["ic_excess_return_5"] < 0
    assert nse["ic_log_traded_value_20"] > 0 and nse["ic_volatility_60"] < 0


def test_the_simulator_has_the_nse_multi_week_predictability(table: dict) -> None:
    # Past returns, size and volatility tell the product's 10-session excess label what
    # they tell it on the NSE files (ingest/simulator/market.py: the transient gap and the
    # size and volatility premia), pooled over six seeds of the default market.
    simulated = simulated_predictability(adv_gate=MIN_ADV)
    assert simulated["days"] > 6_000
    failed = [
        f"{name}: simulated {simulated[name]:+.4f}, NSE {nse:+.4f}"
        for name, nse in table["predictability"].items()
        if abs(simulated[name] - nse) > table["predictability_tolerance"]
    ]
    assert not failed, "; ".join(failed)


def test_each_predictability_fact_follows_its_definition_on_a_hand_made_market() -> None:
    # Twelve names, k = 1..12, from 10.0: name k's daily return is 0.1% x k plus an
    # alternating 0.2% x (13 - k), and it trades 10,000 x k shares a day. Past returns, the
    # label (the next 10 sessions from t+1, less the universe's) and traded value all rank
    # the names by k; volatility ranks them the other way.
    days = pd.bdate_range("2025-01-01", periods=100).date
    rows = []
    for k in range(1, 13):
        close = 10.0
        for t, d in enumerate(days):
            close *= 1 + 0.001 * k + 0.002 * (13 - k) * (-1) ** t
            rows.append(
                {"symbol": f"N{k:02d}", "date": d, "close": close, "volume": 10_000 * k}
                | {"bid": close * 0.995, "ask": close * 1.005, "high": close * 1.005, "low": close * 0.995}
            )
    facts = predictability_facts(pd.DataFrame(rows), adv_gate=MIN_ADV)
    assert facts["days"] == 100 - 19 - (PREDICTABILITY_HORIZON + 1)  # an ADV_20 and a label: 20 rows back, H + 1 ahead
    for name in ("ic_excess_return_60", "ic_excess_return_20", "ic_excess_return_5", "ic_log_traded_value_20"):
        assert facts[name] == pytest.approx(1.0), name
    assert facts["ic_volatility_60"] == pytest.approx(-1.0)
    # names under the ADV gate are left out: no day has ten liquid names
    thin = predictability_facts(pd.DataFrame(rows), adv_gate=60_000)
    assert thin["days"] == 0 and np.isnan(thin["ic_excess_return_20"])


def test_the_simulators_quotes_read_like_the_nse_through_the_spread_estimator(table: dict) -> None:
    # The same Abdi-Ranaldo estimator on the simulated bars reads, per ADV_20 band, what it
    # reads on the NSE files (the simulator's quotes were calibrated to that, not to the range).
    simulated = spread_tiers(simulated_prices())
    assert list(table["spread_tiers"]) == [name for name, _, _ in SPREAD_TIERS]
    for tier, nse in table["spread_tiers"].items():
        sim = simulated[tier]
        assert sim["days"] > 1_000, tier
        assert sim["ar60"] == pytest.approx(nse["ar60"], abs=SPREAD_TIER_TOLERANCE), tier
        # the simulator has quotes; behind its averaged closes they are wider than AR reads
        assert sim["quoted"] > sim["ar60"], tier


def test_each_fact_follows_its_definition_on_a_hand_made_frame() -> None:
    # A: traded every day, prints alternate between the bid (10.0) and the ask (10.2):
    # closes at the top of the range are followed by a fall and at the bottom by a rise.
    days = [date(2025, 1, d) for d in range(1, 31)]
    a = [
        {"symbol": "A", "date": d, "close": 10.2 if i % 2 else 10.0, "volume": 6000, "high": 10.2, "low": 10.0}
        for i, d in enumerate(days)
    ]
    # B: trades every fourth day at an unchanged price, no high/low reported.
    b = [
        {"symbol": "B", "date": d, "close": 5.0, "volume": 1200 if i % 4 == 0 else 0, "high": np.nan, "low": np.nan}
        for i, d in enumerate(days)
    ]
    index = [
        {"symbol": "^IDX", "date": d, "close": 100.0 + i, "volume": 0, "high": np.nan, "low": np.nan}
        for i, d in enumerate(days)
    ]
    facts = stylised_facts(pd.DataFrame(a + b + index), adv_gate=5000)
    assert facts["instruments"] == 2 and facts["instrument_days"] == 60  # the index row is no instrument
    assert facts["zero_volume_share"] == pytest.approx(22 / 60)
    assert facts["unchanged_close_share"] == pytest.approx(29 / 58)  # all of B's 29 returns, none of A's
    assert facts["unchanged_close_share_traded"] == pytest.approx(7 / 36)  # B's 7 traded days after its first
    assert facts["return_autocorr_lag1"] == pytest.approx(-1.0)  # A alternates; B never moves
    assert facts["median_range"] == pytest.approx((0.2 / 10.0 + 0.2 / 10.2) / 2)  # A: 15 days each; B has none
    assert facts["close_location_next_up_spread"] == pytest.approx(-1.0)
    assert facts["close_location_next_spearman"] == pytest.approx(-1.0)
    assert facts["adv_gate_share"] == pytest.approx(0.5)  # A's ADV_20 is 6,000, B's 300
    assert facts["adv_iqr_decades"] == pytest.approx(0.5 * np.log10(6000 / 300))


def test_liquid_names_still_pass_the_liquidity_gates() -> None:
    # The demo needs LONG candidates: names with ADV_20 >= 5,000 shares and closing quotes
    # within the rail's 5% spread on the demo day.
    from ingest.simulator.market import SimulatedMarket, price_history
    from market.liquidity import MAX_ENTRY_SPREAD

    prices = price_history(SimulatedMarket(), date(2026, 11, 20), 20)
    last = prices[prices["date"] == prices["date"].max()].set_index("symbol")
    adv = prices.groupby("symbol")["volume"].mean()
    spread = (last["ask"] - last["bid"]) / ((last["ask"] + last["bid"]) / 2)
    liquid = (adv.reindex(last.index) >= MIN_ADV) & (spread <= MAX_ENTRY_SPREAD) & (last["volume"] > 0)
    assert liquid.sum() >= 10, sorted(last.index[liquid])
