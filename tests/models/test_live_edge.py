"""The live stage's held edge: from the Scores the records stored and the panel's closes,
counting only exits known before the day."""

from __future__ import annotations

import pandas as pd
import pytest

from market.settings import Settings
from models.decisions import MIN_BAND_ROWS
from models.scoring import live_edge
from store.engine import service_engine
from tests.portfolio.seed import CALENDAR, DAY, days_up_to, seed_predictions


def test_the_live_held_edge_reads_stored_scores_and_only_known_exits(settings: Settings) -> None:
    engine = service_engine(settings)
    days = days_up_to(DAY, MIN_BAND_ROWS + 10)
    # One liquid name whose close rises 1% a session; then the session after DAY doubles it.
    closes = [10.0 * 1.01**i for i in range(len(days))]
    panel = pd.DataFrame(
        {
            "symbol": "LIQ",
            "date": days,
            "close": closes,
            "volume": 20_000,
            "adv_20": 20_000.0,
            "bid": [c * 0.999 for c in closes],
            "ask": [c * 1.001 for c in closes],
            "high": closes,
            "low": closes,
        }
    )
    later = CALENDAR.next_trading_day(DAY)
    panel = pd.concat([panel, pd.DataFrame([{**panel.iloc[-1].to_dict(), "date": later, "close": closes[-1] * 2}])])
    for day in days:
        seed_predictions(engine, day, {"LIQ": {"score": 72.0, "action": "HOLD", "tercile": "TOP"}})
    with engine.connect() as conn:
        edge = live_edge(conn, panel, DAY)
        early = live_edge(conn, panel, days[20])
    assert edge.lookup([72.0])[0] == pytest.approx(0.01)  # the doubling after DAY is not known on DAY
    # a row's exit is the close two sessions on, counted from the session after it: DAY counts the
    # rows up to three sessions before it
    assert edge.rows[edge_band(72.0)] == len(days) - 3
    assert pd.isna(early.lookup([72.0])[0])  # 18 known exits: too few for the band
    assert pd.isna(edge.lookup([50.0])[0])  # no stored Score in that band


def edge_band(score: float) -> int:
    from models.decisions import EDGE_BANDS

    return max(i for i, lo in enumerate(EDGE_BANDS[:-1]) if score >= lo)
