"""The bottom layer: vocabulary every package shares: settings, the exchange clock and
calendars, errors, money, logging, the liquidity rule (spread and per-instrument entry
gates, market/liquidity.py) and the macro catalogue with its point-in-time rule.

May import: the standard library and third-party packages only; no package of this
project."""
