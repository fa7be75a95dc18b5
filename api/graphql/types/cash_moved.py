from __future__ import annotations

from decimal import Decimal

import strawberry


@strawberry.type(description="A deposit or withdrawal recorded; the new cash balance.")
class CashMoved:
    portfolio_id: str
    balance: Decimal
