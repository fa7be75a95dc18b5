"""What a day without a two-sided quote reads as its spread, from the recent quotes and
from the bars alone, on the store of the settings (after `make demo`):

    python benchmarks/one_sided_spreads.py

Every stored name-day whose closing quote is one-sided or missing: how many there are (and
how many of them traded), how many have a two-sided quote among the name's last
QUOTE_CARRY stored sessions (`market.liquidity.recent_quotes`), the median spread the rule
reads there and the one the bars' estimator alone reads (`estimate_spreads` without the
quote columns), and how many pass the 5% entry gate on each. The last line is JSON.
"""

from __future__ import annotations

import json

import pandas as pd


def figures(bars: pd.DataFrame) -> dict[str, float | int | None]:
    """The figures of the module docstring on `bars` (symbol, date, close, high, low,
    volume, bid, ask: one row per name and day)."""
    from market.liquidity import MAX_ENTRY_SPREAD, RECENT_QUOTES, SPREAD_DECIMALS, estimate_spreads, quoted_spreads

    rule = estimate_spreads(bars)
    bars_only = estimate_spreads(bars.drop(columns=["bid", "ask"]))
    one_sided = quoted_spreads(bars).isna()
    carried = one_sided & (rule["spread_source"] == RECENT_QUOTES)

    def median(values: pd.Series) -> float | None:
        return None if values.dropna().empty else round(float(values.median()), 6)

    def passing(values: pd.Series) -> int:
        return int((values.round(SPREAD_DECIMALS) <= MAX_ENTRY_SPREAD).sum())

    return {
        "name_days": len(bars),
        "without_two_sided_quote": int(one_sided.sum()),
        "of_which_traded": int((one_sided & (bars["volume"] > 0)).sum()),
        "with_recent_quote": int(carried.sum()),
        "median_recent_quote": median(rule.loc[carried, "spread_estimate"]),
        "median_bars_estimate": median(bars_only.loc[carried, "spread_estimate"]),
        "pass_gate_recent_quote": passing(rule.loc[carried, "spread_estimate"]),
        "pass_gate_bars_estimate": passing(bars_only.loc[carried, "spread_estimate"]),
    }


def stored_bars() -> pd.DataFrame:
    """The current stored bars of the settings' store, one row per name and day."""
    from market.settings import get_settings
    from store import tables
    from store.engine import service_engine
    from store.history import current_frame
    from store.panels import PRICE_ROW_COLUMNS

    with service_engine(get_settings()).connect() as conn:
        frame = current_frame(conn, tables.eod_prices, PRICE_ROW_COLUMNS)
    bars = frame[["symbol", "trading_date", "close", "high", "low", "volume", "bid", "ask"]]
    bars = bars.rename(columns={"trading_date": "date"}).reset_index(drop=True)
    for column in ("close", "high", "low", "volume", "bid", "ask"):
        bars[column] = pd.to_numeric(bars[column], errors="coerce").astype(float)
    return bars


def main() -> None:
    result = figures(stored_bars())
    for key, value in result.items():
        print(f"{key:>26}: {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
