"""The monitor's day checks (models/monitor.py) on small made-up panels: what a reader of
a check's level would notice on ordinary stores (a market-wide input whose names differ
today, a thin day, a short validation record)."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pandas as pd

from models import monitor
from models.features import FEATURE_NAMES
from models.monitor import ALERT, OK, Thresholds, input_checks

NAMES = [f"S{i:02d}" for i in range(12)]
REFERENCE_DAYS = [date(2025, 1, 1) + timedelta(days=i) for i in range(120)]
CURRENT_DAYS = [date(2025, 6, 1) + timedelta(days=i) for i in range(20)]


def _panel(days: list[date], rng: np.random.Generator, zero_volume=lambda s: 0.0, traded_on_last=None) -> pd.DataFrame:
    """Every name trades every day; market_breadth one value a day; sentiment 0 before news;
    zero_volume_share_20 per name by `zero_volume`; on the last day only `traded_on_last` trade."""
    rows = []
    for d in days:
        breadth = rng.uniform(-0.5, 0.5)
        for s in NAMES:
            row = {"symbol": s, "date": d, "traded": True, **{n: rng.normal() for n in FEATURE_NAMES}}
            row.update(market_breadth=breadth, sentiment=0.0, market_sentiment=0.0)
            row["zero_volume_share_20"] = zero_volume(s)
            if traded_on_last is not None and d == days[-1]:
                row["traded"] = s in traded_on_last
            rows.append(row)
    return pd.DataFrame(rows)


def _checks(reference: pd.DataFrame, current: pd.DataFrame) -> dict[str, monitor.Check]:
    return {c.check_name: c for c in input_checks(reference, current, CURRENT_DAYS[-1], Thresholds())}


def test_an_input_constant_across_names_in_the_reference_is_read_on_every_name_today() -> None:
    """zero_volume_share_20 was 0 for every name in the reference (every name traded every
    day): the check reads the names' median today, not whichever name comes first."""
    rng = np.random.default_rng(1)
    reference = _panel(REFERENCE_DAYS, rng)
    most_thin = _panel(CURRENT_DAYS, rng, lambda s: 0.0 if s == NAMES[0] else 0.3)
    check = _checks(reference, most_thin)["input:zero_volume_share_20"]
    assert check.level == ALERT and check.figures["value"] == 0.3
    assert check.figures["names_range"] == [0.0, 0.3]
    for odd in (NAMES[0], NAMES[5]):  # one name at 5% no-trade days is not the market's value, wherever it sorts
        one_thin = _panel(CURRENT_DAYS, rng, lambda s, odd=odd: 0.05 if s == odd else 0.0)
        check = _checks(reference, one_thin)["input:zero_volume_share_20"]
        assert check.level == OK and check.figures["value"] == 0.0
