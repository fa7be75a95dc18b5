"""Small, hand-set markets written through the same append-only writers the stages use."""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import Engine, Table

from market.clock import default_calendar
from store import tables
from store.history import append_history

CALENDAR = default_calendar()
DAY = date(2026, 11, 20)  # a Friday and a trading day


def days_up_to(day: date, count: int) -> list[date]:
    return [CALENDAR.add_trading_days(day, -i) for i in range(count - 1, -1, -1)]


def price_row(
    symbol: str, day: date, close: float, volume: int, bid: float | None, ask: float | None, *, cents: bool = True
) -> dict[str, Any]:
    """One day's eod_prices row for `symbol`: it opens at its close, and its high and low lie
    1% either side of it, to the cent unless `cents` is false (`seed_market`'s markets)."""
    high, low = close * 1.01, close * 0.99
    if cents:
        high, low = round(high, 2), round(low, 2)
    return {
        "symbol": symbol,
        "trading_date": day,
        "open": close,
        "high": high,
        "low": low,
        "close": close,
        "volume": volume,
        "bid": bid,
        "ask": ask,
        "source": "test",
    }


def seed_market(engine: Engine, bars: dict[str, dict], day: date = DAY, history: int = 25) -> None:
    """`bars`: symbol -> close, volume (history volume), and optionally today_volume, bid, ask."""
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [{"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "currency": "JMD", "source": "test"} for s in bars],
        )
        rows = []
        for symbol, bar in bars.items():
            for d in days_up_to(day, history):
                today = d == day
                volume = bar.get("today_volume", bar["volume"]) if today else bar["volume"]
                bid, ask = (bar.get("bid"), bar.get("ask")) if today else (None, None)
                rows.append(price_row(symbol, d, bar["close"], volume, bid, ask, cents=False))
        append_history(conn, tables.eod_prices, rows)


def seed_predictions(
    engine: Engine, day: date, signals: dict[str, dict], model_id: str = "test-model", table: Table = tables.predictions
) -> None:
    with engine.begin() as conn:
        append_history(
            conn,
            table,
            [
                {
                    "symbol": s,
                    "trading_date": day,
                    "model_id": model_id,
                    "horizon_days": 1,
                    "predicted_return": p.get("predicted_return", 0.01),
                    "p_up": p["score"] / 100,
                    "score": p["score"],
                    "action": p["action"],
                    "weight": p.get("weight", 0.0),
                    "tercile": p["tercile"],
                    "layer1_p_up": 0.5,
                    "layer1_backend": "fallback-empirical-v1",
                    "held_edge": p.get("held_edge"),
                    "round_trip_cost": p.get("round_trip_cost"),
                    "decision_reason": p.get("decision_reason"),
                    "reasons": p.get("reasons"),
                    "raw_score": p.get("raw_score"),
                }
                for s, p in signals.items()
            ],
        )


def seed_long_and_avoid(engine: Engine) -> None:
    """The morning suggestions' market: LIQ (50, LONG in the TOP tercile) and OUT (20, AVOID),
    both liquid with a 0.2 spread, predicted on DAY."""
    seed_market(
        engine,
        {
            "LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1},
            "OUT": {"close": 20.0, "volume": 40_000, "bid": 19.9, "ask": 20.1},
        },
    )
    seed_predictions(
        engine,
        DAY,
        {
            "LIQ": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.1},
            "OUT": {"score": 30.0, "action": "AVOID", "tercile": "BOTTOM"},
        },
    )
