"""Mutation inputs. Their rules are the REST bodies' Pydantic models (api/schemas), applied
to the same values, so a request refused over REST is refused here with the same reasons."""

from __future__ import annotations

from decimal import Decimal

import strawberry


@strawberry.input(description="A manual trade at a price within the day's band around the latest close.")
class ManualTradeInput:
    side: str = strawberry.field(description="BUY or SELL.")
    symbol: str
    quantity: int
    price: Decimal
    fees: Decimal = Decimal(0)
