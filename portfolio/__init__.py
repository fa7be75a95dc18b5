"""Money logic: liquidity rails, the autonomous AI executor, user portfolios, suggestions
and the backtest."""
