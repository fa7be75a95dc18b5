from __future__ import annotations

import strawberry

from api.graphql.types.trade import Trade


@strawberry.type(
    description="A trade of the autonomous AI portfolio; `rationale` records the signal, gates and limits."
)
class AITrade(Trade):
    pass
