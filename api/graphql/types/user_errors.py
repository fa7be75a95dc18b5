"""Expected failures of a mutation, returned as members of its result union (not as
GraphQL errors): the client switches on `__typename` and reads `message`."""

from __future__ import annotations

import strawberry


@strawberry.interface(description="An expected failure; `message` says what to change.")
class UserError:
    message: str


@strawberry.type(description="One input field that failed validation.")
class FieldError:
    field: str
    message: str


@strawberry.type(description="The input was refused (validation, price band, holdings, cash, market state).")
class InvalidInput(UserError):
    fields: list[FieldError] = strawberry.field(
        default_factory=list, description="Failing fields, when validation failed."
    )


@strawberry.type(description="Nothing with that id in the caller's portfolio.")
class NotFound(UserError):
    pass


@strawberry.type(
    description="The current state forbids it (no longer pending; idempotency key reused for another order)."
)
class Conflict(UserError):
    pass


@strawberry.type(description="The data the request needs has not been delivered yet.")
class NotReady(UserError):
    pass
