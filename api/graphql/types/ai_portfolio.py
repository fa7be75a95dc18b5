from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from api.graphql.pagination import REFUSED_ARGUMENTS, Connection, Page, connection_field, text
from api.graphql.permissions import admin_field
from api.graphql.types.ai_day import AIDay
from api.graphql.types.ai_position import AIPosition
from api.graphql.types.ai_trade import AITrade
from api.graphql.types.derived import document, printed
from api.graphql.types.portfolio import DISCOUNTS
from api.graphql.types.track_record import TrackRecord
from api.paging import AI_DAYS, AI_TRADES
from desk import AI_PORTFOLIO, ILLIQUID_DISCOUNTS

AI_POSITIONS = Page("aiPositions", default=100, largest=500, key=text)


@strawberry.type(
    description="The autonomous AI portfolio at the latest close (GET /api/ai-portfolio/summary and positions)."
)
class AIPortfolio:
    as_of: date
    started: bool = strawberry.field(description="False until the AI portfolio's first executed day.")
    starting_cash: Decimal
    total_return_pct: float | None
    cash: Decimal
    market_value: Decimal
    equity: Decimal
    liquid_equity: Decimal
    illiquid_discounts: JSON = document(DISCOUNTS, ILLIQUID_DISCOUNTS)
    unrealized_pnl: Decimal
    realized_pnl: Decimal
    positions_count: int
    dividends_receivable: Decimal = strawberry.field(
        description="The part of cash credited for dividends whose payment date is still to come."
    )
    open_positions: strawberry.Private[list[dict[str, Any]]]

    @classmethod
    def build(cls, summary: dict[str, Any], positions: list[dict[str, Any]]) -> AIPortfolio:
        fields = {name: summary[name] for name in cls.__annotations__ if name in summary}
        fields["illiquid_discounts"] = printed(cls, "illiquid_discounts", summary["illiquid_discounts"])
        return cls(**fields, open_positions=positions)

    @connection_field("Open positions by ticker, each with the rationale of its opening trade.")
    def positions(
        self, first: int | None = AI_POSITIONS.default, after: str | None = None
    ) -> Connection[AIPosition] | None:
        return AI_POSITIONS.connection(
            self.open_positions, lambda p: p["symbol"], first, after, lambda p: AIPosition.from_row(p, self.equity)
        )

    @strawberry.field(
        description="Return, risk, turnover and costs beside the equal-weighted liquid universe "
        "(GET /api/ai-portfolio/track-record)."
    )
    async def track_record(self, info: Info) -> TrackRecord:
        return TrackRecord.from_record(await info.context.value(info.context.svc.desk.ai_track_record))

    @admin_field(f"the AI trades with their rationale, in the order the book recorded them. {REFUSED_ARGUMENTS}")
    async def trades(
        self, info: Info, first: int | None = AI_TRADES.default, after: str | None = None
    ) -> Connection[AITrade] | None:
        desk = info.context.svc.desk
        return await info.context.read_page(AI_TRADES, first, after, AITrade.from_row, desk.trades, AI_PORTFOLIO)

    @admin_field(f"the executed days, oldest first (GET /api/ai-portfolio/history's pages). {REFUSED_ARGUMENTS}")
    async def days(
        self, info: Info, first: int | None = AI_DAYS.default, after: str | None = None
    ) -> Connection[AIDay] | None:
        return await info.context.read_page(AI_DAYS, first, after, AIDay.from_row, info.context.svc.desk.ai_days)
