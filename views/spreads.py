"""The spread estimate of one day, read from stored history: moved to
`portfolio.market.stored_estimates` (one implementation, importable by the portfolio code
that builds its `MarketDay`s with it). Re-exported here for existing importers."""

from __future__ import annotations

from portfolio.market import ESTIMATE_LOOKBACK_CALENDAR_DAYS, stored_estimates

__all__ = ["ESTIMATE_LOOKBACK_CALENDAR_DAYS", "stored_estimates"]
