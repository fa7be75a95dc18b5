"""Money logic: the ledger, liquidity rails (exit flags, position size; the per-instrument
gates are market/liquidity.py's), the autonomous AI executor, user portfolios and
manual trades, statement sync, suggestions and the backtest.

May import: market, store, ingest, models."""
