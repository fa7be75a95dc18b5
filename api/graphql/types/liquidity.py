from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.graphql.scalars import Fraction, Shares


@strawberry.type(
    description="The liquidity rail's per-instrument entry gates on the latest market day (portfolio/rails.py)."
)
class Liquidity:
    trading_date: date
    as_of: date = strawberry.field(
        description="The instrument's last session with a row, which adv20 and spread are read through: tradingDate "
        "while it trades; an earlier day for a name that stopped trading or was delisted (its figures are that "
        "day's, and its volume on tradingDate is 0)."
    )
    adv_20: float | None = strawberry.field(description="Mean volume of the last 20 bars; null with fewer than 20.")
    volume: Shares
    spread: Fraction | None = strawberry.field(
        description="The spread as a fraction (market/liquidity.py): the closing quotes' (ask - bid) / mid; else the "
        "estimate from the name's stored bars (Abdi-Ranaldo over 60 traded sessions, else Corwin-Schultz or one tick, "
        "else the window's mean range); else the day's range over the close; null where none is known."
    )
    spread_source: str = strawberry.field(
        description="Where the spread came from: quotes; the estimator's label (abdi_ranaldo, corwin_schultz, "
        "range_window, tick); range (the day's range); or none."
    )
    passes_entry_gates: bool
    failed_gates: list[str] = strawberry.field(description="adv_20, volume_today, spread: the gates that failed.")

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Liquidity:
        return cls(**{name: row[name] for name in cls.__annotations__})
