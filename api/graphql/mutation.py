"""Mutations for what a client can do over REST: a manual trade, cash in or out, confirm or
reject a suggestion. Expected failures are union members (InvalidInput, NotFound,
Conflict, NotReady); anything else is an unexpected error and is masked.

Every mutation's answer is built and rendered inside its write's transaction
(api/graphql/rendered.py, through the desk's `respond`): an answer that cannot be rendered
rolls the write back, so an error never follows a committed write."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Annotated, Any

import strawberry
from pydantic import BaseModel, ValidationError
from strawberry.types import Info

from api.graphql.rendered import rendered
from api.graphql.types.cash_moved import CashMoved
from api.graphql.types.inputs import ManualTradeInput
from api.graphql.types.suggestion import Suggestion
from api.graphql.types.trade_placed import TradePlaced
from api.graphql.types.user_errors import Conflict, FieldError, InvalidInput, NotFound, NotReady, UserError
from api.schemas.common import checked_idempotency_key
from api.schemas.portfolio import CashIn, ManualTradeIn
from api.security import caller_portfolio
from market.errors import ConflictError, InvalidInputError, NotFoundError, NotReadyError

TradeResult = Annotated[TradePlaced | InvalidInput | Conflict | NotReady, strawberry.union("TradeResult")]
CashResult = Annotated[CashMoved | InvalidInput | Conflict, strawberry.union("CashResult")]
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


async def _decided(info: Info, decide: Callable[..., Any], suggestion_id: strawberry.ID) -> SuggestionResult:
    """The caller's suggestion after the desk's `decide(portfolio_id, suggestion_id, respond)`
    (confirm or reject), or its expected failure as a union member."""
    ctx = info.context

    async def act() -> Suggestion:
        portfolio_id = await ctx.call(caller_portfolio, ctx.svc, ctx.principal)
        return await ctx.call(decide, portfolio_id, str(suggestion_id), _answer(info, Suggestion.from_row))

    return await _expected(act)


def _refused_key(idempotency_key: str | None) -> InvalidInput | None:
    """REST's Idempotency-Key rule for a mutation's `idempotencyKey` (the two share one
    store): None when the key is absent or keeps the rule."""
    if idempotency_key is not None:
        try:
            checked_idempotency_key(idempotency_key, "idempotencyKey")
        except InvalidInputError as error:
            return InvalidInput(message=error.detail)
    return None


def _answer(info: Info, build: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A write's `respond`: its result built into the union member the mutation answers and
    rendered as the response will render it, before the commit (api/graphql/rendered.py)."""
    schema = info.schema._schema  # graphql-core's schema: the scalars the response serialises with
    return lambda result: rendered(build(result), schema)


@strawberry.type(
    description="The writes. Each field answers its result, or null with an error only when it was not run "
    "(BUDGET_EXCEEDED: the operation's budget was spent before it began, so nothing was written for it): the "
    "fields run one after another, and a refused field does not take an earlier field's answer with it."
)
class Mutation:
    @strawberry.mutation(
        description="A manual trade (POST /api/portfolio/trade); a retried idempotency key returns "
        "the first result and trades once."
    )
    async def place_trade(
        self, info: Info, order: ManualTradeInput, idempotency_key: str | None = None
    ) -> TradeResult | None:
        ctx = info.context
        checked = _validated(ManualTradeIn, vars(order))
        if isinstance(checked, UserError):
            return checked
        refused = _refused_key(idempotency_key)
        if refused is not None:
            return refused

        async def act() -> TradePlaced:
            portfolio_id = await ctx.call(caller_portfolio, ctx.svc, ctx.principal)
            answer = _answer(info, TradePlaced.from_placed)
            return await ctx.call(ctx.svc.desk.place_trade, portfolio_id, checked.order(), idempotency_key, answer)

        return await _expected(act)

    @strawberry.mutation(
        description="A deposit (positive amount) or withdrawal (negative); cash never goes below zero, and a "
        "withdrawal may not take dividends credited but not yet paid (`portfolio { dividendsReceivable }`). "
        "A retried idempotency key returns the first balance and books once."
    )
    async def move_cash(
        self, info: Info, amount: Decimal, note: str | None = None, idempotency_key: str | None = None
    ) -> CashResult | None:
        ctx = info.context
        checked = _validated(CashIn, {"amount": amount, "note": note})
        if isinstance(checked, UserError):
            return checked
        refused = _refused_key(idempotency_key)
        if refused is not None:
            return refused

        async def act() -> CashMoved:
            portfolio_id = await ctx.call(caller_portfolio, ctx.svc, ctx.principal)
            answer = _answer(info, lambda balance: CashMoved(portfolio_id=portfolio_id, balance=balance))
            move = ctx.svc.desk.move_cash
            return await ctx.call(move, portfolio_id, checked.amount, checked.note, answer, idempotency_key)

        return await _expected(act)

    @strawberry.mutation(
        description="Execute a pending suggestion after re-checking cash, holdings and the rails; a retry of a "
        "confirmation already made answers it again (the same trade) and books nothing."
    )
    async def confirm_suggestion(self, info: Info, suggestion_id: strawberry.ID) -> SuggestionResult | None:
        return await _decided(info, info.context.svc.desk.confirm_suggestion, suggestion_id)

    @strawberry.mutation(description="Decline a pending suggestion.")
    async def reject_suggestion(self, info: Info, suggestion_id: strawberry.ID) -> SuggestionResult | None:
        return await _decided(info, info.context.svc.desk.reject_suggestion, suggestion_id)
