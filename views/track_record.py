"""The AI portfolio's track record beside the equal-weighted liquid universe, read from the
store (portfolio/track_record.py computes; this view gathers).

The equity curve is the AI portfolio's `portfolio_days` (cash plus positions at each
close, dividends included), its first day measured against the opening cash; costs are
the parts each fill stored (spread, impact, fees) and turnover the value its trades moved.
The benchmark is the equal-weighted liquid universe over the same days, from the stored
closes, volumes and quotes (ADV_20 over each name's last 20 stored bars). The market's
index is not served here yet: the service's capitalisation-weighted index is computed per
day by views/breadth.py, not stored as a series (docs/portfolio.md).
"""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pandas as pd
from sqlalchemy import Connection

from portfolio import ledger
from portfolio.track_record import daily_returns, equal_weight_liquid, statistics
from store import tables
from store.history import current_rows
from views.portfolio import equity_curve


def ai_track_record(conn: Connection, starting_cash: float) -> dict[str, Any]:
    curve = equity_curve(conn)
    if not curve:
        return {"days": 0, "benchmarks": {}}
    dates = [row["trading_date"] for row in curve]
    equity = pd.Series([float(starting_cash), *(row["equity"] for row in curve)], index=range(len(curve) + 1))
    returns = daily_returns(equity)
    returns.index = dates
    trades = ledger.trade_rows(conn, ledger.AI_PORTFOLIO)
    costs = {"fees": 0.0, "spread": 0.0, "impact": 0.0}
    traded = 0.0
    for t in trades:
        traded += float(t["price"] * int(t["quantity"]))
        parts = ((t["rationale"] or {}).get("fill") or {}).get("costs") or {}
        costs["fees"] += float(t["fees"])
        costs["spread"] += float(Decimal(parts.get("spread", "0")))
        costs["impact"] += float(Decimal(parts.get("impact", "0")))
    benchmark = _equal_weight(conn, dates)
    out = statistics(returns, {"equal_weight_liquid": benchmark} if benchmark is not None else {}, traded_value=traded,
                     mean_equity=float(pd.Series([r["equity"] for r in curve]).mean()), costs=costs)
    out["trades"] = len(trades)
    return out


def _equal_weight(conn: Connection, dates: list) -> pd.Series | None:
    c = tables.eod_prices.c
    rows = current_rows(conn, tables.eod_prices, where=[c.trading_date >= dates[0] - timedelta(days=60),
                                                         c.trading_date <= dates[-1]])
    if not rows:
        return None
    frame = pd.DataFrame(rows).rename(columns={"trading_date": "date"}).sort_values(["symbol", "date"])
    for column in ("close", "volume", "bid", "ask", "high", "low"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    frame["adv_20"] = frame.groupby("symbol")["volume"].transform(lambda v: v.rolling(20, min_periods=20).mean())
    returns = equal_weight_liquid(frame)
    return returns.reindex(dates).fillna(0.0)
