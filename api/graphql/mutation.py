"""Mutations for what a client can do over REST: a manual trade, cash in or out, confirm or
reject a suggestion. Expected failures are union members (InvalidInput, NotFound,
Conflict, NotReady); anything else is an unexpected error and is masked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Annotated, Any

import strawberry
from pydantic import BaseModel, ValidationError
from strawberry.types import Info

from api.graphql.context import GraphContext
from api.graphql.types.cash_moved import CashMoved
from api.graphql.types.inputs import ManualTradeInput
from api.graphql.types.suggestion import Suggestion
from api.graphql.types.trade_placed import TradePlaced
from api.graphql.types.user_errors import Conflict, FieldError, InvalidInput, NotFound, NotReady, UserError
from api.schemas.common import checked_idempotency_key
from api.schemas.portfolio import CashIn, ManualTradeIn
from api.security import caller_portfolio
from desk import ManualTrade
from market.errors import ConflictError, InvalidInputError, NotFoundError, NotReadyError

TradeResult = Annotated[TradePlaced | InvalidInput | Conflict | NotReady, strawberry.union("TradeResult")]
CashResult = Annotated[CashMoved | InvalidInput, strawberry.union("CashResult")]
SuggestionResult = Annotated[
    Suggestion | NotFound | Conflict | InvalidInput | NotReady, strawberry.union("SuggestionResult")
]
EXPECTED = {InvalidInputError: InvalidInput, NotFoundError: NotFound, ConflictError: Conflict, NotReadyError: NotReady}


def _validated(model: type[BaseModel], values: dict[str, Any]) -> BaseModel | InvalidInput:
    try:
        return model.model_validate(values)
    except ValidationError as error:
        fields = [
            FieldError(field=".".join(str(p) for p in e["loc"]) or "input", message=e["msg"]) for e in error.errors()
        ]
        return InvalidInput(
            message="the input failed validation: " + "; ".join(f"{f.field}: {f.message}" for f in fields),
            fields=fields,
        )


async def _expected(action: Callable[[], Awaitable[Any]]) -> Any:
    """The action's result, or its expected domain failure as a union member."""
    try:
        return await action()
    except tuple(EXPECTED) as error:
        return next(kind for cls, kind in EXPECTED.items() if isinstance(error, cls))(message=str(error))


async def _decided(
    ctx: GraphContext, decide: Callable[[str, str], Any], suggestion_id: strawberry.ID
) -> SuggestionResult:
    """The caller's suggestion after the desk's `decide(portfolio_id, suggestion_id)` (confirm
    or reject), or its expected failure as a union member."""

    async def act() -> Suggestion:
        portfolio_id = await ctx.call(caller_portfolio, ctx.svc, ctx.principal)
        return Suggestion.from_row(await ctx.call(decide, portfolio_id, str(suggestion_id)))

    return await _expected(act)


@strawberry.type
class Mutation:
    @strawberry.mutation(
        description="A manual trade (POST /api/portfolio/trade); a retried idempotency key returns "
        "the first result and trades once."
    )
    async def place_trade(self, info: Info, order: ManualTradeInput, idempotency_key: str | None = None) -> TradeResult:
        ctx = info.context
        checked = _validated(ManualTradeIn, vars(order))
        if isinstance(checked, UserError):
            return checked
        if idempotency_key is not None:
            try:  # REST's Idempotency-Key rule: the two share one store
                checked_idempotency_key(idempotency_key, "idempotencyKey")
            except InvalidInputError as error:
                return InvalidInput(message=error.detail)

        async def act() -> TradePlaced:
            portfolio_id = await ctx.call(caller_portfolio, ctx.svc, ctx.principal)
            trade = ManualTrade(checked.side, checked.symbol, checked.quantity, checked.price, checked.fees)
            return TradePlaced.from_placed(
                await ctx.call(ctx.svc.desk.place_trade, portfolio_id, trade, idempotency_key)
            )

        return await _expected(act)

    @strawberry.mutation(
        description="A deposit (positive amount) or withdrawal (negative); cash never goes below zero."
    )
    async def move_cash(self, info: Info, amount: Decimal, note: str | None = None) -> CashResult:
        ctx = info.context
        checked = _validated(CashIn, {"amount": amount, "note": note})
        if isinstance(checked, UserError):
            return checked

        async def act() -> CashMoved:
            portfolio_id = await ctx.call(caller_portfolio, ctx.svc, ctx.principal)
            balance = await ctx.call(ctx.svc.desk.move_cash, portfolio_id, checked.amount, checked.note)
            return CashMoved(portfolio_id=portfolio_id, balance=balance)

        return await _expected(act)

    @strawberry.mutation(description="Execute a pending suggestion after re-checking cash, holdings and the rails.")
    async def confirm_suggestion(self, info: Info, suggestion_id: strawberry.ID) -> SuggestionResult:
        return await _decided(info.context, info.context.svc.desk.confirm_suggestion, suggestion_id)

    @strawberry.mutation(description="Decline a pending suggestion.")
    async def reject_suggestion(self, info: Info, suggestion_id: strawberry.ID) -> SuggestionResult:
        return await _decided(info.context, info.context.svc.desk.reject_suggestion, suggestion_id)
