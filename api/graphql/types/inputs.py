"""Mutation inputs. Their rules are the REST bodies' Pydantic models (api/schemas), applied
to the same values, so a request refused over REST is refused here with the same reasons.
Their scalars apply market.money's rule before that (api/graphql/scalars.py): a quantity is
`Shares`, not GraphQL's `Int`, whose coercion takes a variable's 1.0 as 1 where REST
refuses it."""

from __future__ import annotations

from decimal import Decimal

import strawberry

from api.graphql.scalars import Shares


@strawberry.input(description="A manual trade at a price within the day's band around the latest close.")
class ManualTradeInput:
    side: str = strawberry.field(description="BUY or SELL.")
    symbol: str
    quantity: Shares
    price: Decimal
    fees: Decimal | None = strawberry.field(
        default=None,
        description="What the broker charged (0: nothing). Omitted or null: the fee schedule's fees on the trade's "
        "value, as GET /api/portfolio/trade/preview computes them; TradePlaced.feesFrom says which.",
    )
