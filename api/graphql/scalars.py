"""Scalars whose input the service checks beyond their format.

The kinds of number of market/money.py are GraphQL types by their Python type, declared on
each field (`SCALAR_OVERRIDES`): `Money` (and a bare `Decimal`) is the `Decimal` scalar,
`Price` the `Price` scalar, `Fraction` a `Float`, `Shares` the `Shares` scalar. Each
answers by the output contract's rule for its type (market.contract `shown`): a price
keeps the decimals it was stored with where it is not whole cents, as REST's does.

`Decimal` (money) follows market.money.parse_money, the rule of the REST bodies and the
CLI (whole cents: 52.001 is refused), and answers as money, the text REST answers with
("125000.00"). `Shares` follows market.money.parse_quantity, as REST's
quantities do: placeTrade's quantity is `Shares`, so a variable's 1.0 is refused as REST
refuses it (GraphQL's `Int` would take it as 1). A literal and a variable are read alike
(graphql-core parses a literal to the value a variable would give, then `parse_value`):
a number by the exact value it denotes, as REST reads a JSON number (1e3 is 1000;
money's scalars read a number literal from its text, `_written`, as the JSON decoder
reads a variable's, so 51.999999999999999999 is not whole cents), text by its characters
("1e3" is refused), docs/api.md "Numbers in".
`Date` is Strawberry's own (ISO 8601 text) with one more rule: an argument or variable
must lie within market.clock.SUPPORTED_DATES, the same rule as every REST date parameter,
so `history(start: "0001-01-01")` is a validation error with code BAD_USER_INPUT, never a
masked unexpected error.
"""

from __future__ import annotations

import dataclasses
from datetime import date, datetime
from decimal import Decimal
from functools import partial

import strawberry
from graphql import FloatValueNode, ValueNode, value_from_ast_untyped
from strawberry.schema.types.base_scalars import DateDefinition, DateTimeDefinition, DecimalDefinition
from strawberry.schema.types.scalar import DEFAULT_SCALAR_REGISTRY

from api.contract import exchange_timestamp, shown
from market.clock import SUPPORTED_DATES, supported_date
from market.money import Fraction, Money, Price, Shares, WrittenNumber, parse_money, parse_quantity

__all__ = ["SCALAR_OVERRIDES", "Fraction", "Money", "Price", "Shares", "StrictDecimal", "SupportedDate"]

SupportedDate = dataclasses.replace(
    DateDefinition,
    description="Date, YYYY-MM-DD (no time, offset or other ISO form); as an argument, between "
    f"{SUPPORTED_DATES[0].isoformat()} and {SUPPORTED_DATES[1].isoformat()}",
    parse_value=lambda value: supported_date(value, "a Date"),
)


def _written(node: ValueNode, variables: dict[str, object] | None = None) -> object:
    """A literal as graphql-core reads it, but a number with a fraction or an exponent as it
    is written (market.money.WrittenNumber, what a JSON number in a variable is read as), so
    money is read from its text: graphql-core reads it as the float nearest it."""
    if isinstance(node, FloatValueNode):
        return WrittenNumber(node.value)
    return value_from_ast_untyped(node, variables)


# Money in (placeTrade's price and fees, moveCash's amount) follows market.money's one rule.
StrictDecimal = dataclasses.replace(
    DecimalDefinition,
    parse_value=lambda value: parse_money(value, "a Decimal"),
    parse_literal=lambda node, variables=None: parse_money(_written(node, variables), "a Decimal"),
    serialize=partial(shown, Money),
    description="An amount in the market's currency: decimal text with 2 places",
)

# A booked price per share, as REST's `Price`: price x quantity is the value to the cent.
PriceScalar = strawberry.scalar(
    name="Price",
    description="A price per share, decimal text: 2 places where it is whole cents (every price booked now), else "
    "the places it was stored with (an older fill), at most 6, so that price x quantity is the value to the cent",
    serialize=partial(shown, Price),
    parse_value=lambda value: parse_money(value, "a Price"),
    parse_literal=lambda node, variables=None: parse_money(_written(node, variables), "a Price"),
)

# Timestamps answer as every answer does (api/contract.py): exchange time, no offset, to the second.
ExchangeDateTime = dataclasses.replace(
    DateTimeDefinition,
    serialize=exchange_timestamp,
    description="Exchange time (EST, UTC-5 all year), ISO 8601 without offset, to the second",
)

# Share quantities and volumes: GraphQL's Int is 32 bits, and a listing's shares outstanding
# (3,850,000,000 on the demo) or a line of up to 10^12 shares (market/money.py) is more.
SharesScalar = strawberry.scalar(
    name="Shares",
    description="A whole number of shares or a traded volume, up to 64 bits (a JSON number)",
    serialize=int,
    parse_value=lambda value: parse_quantity(value, "a Shares value"),
)

SCALAR_OVERRIDES = {
    date: SupportedDate,
    Decimal: StrictDecimal,
    Money: StrictDecimal,
    Price: PriceScalar,
    Fraction: DEFAULT_SCALAR_REGISTRY[float],  # a Float; the contract's number rule is the fraction's
    Shares: SharesScalar,
    datetime: ExchangeDateTime,
}
