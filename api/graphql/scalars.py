"""Scalars whose input the service checks beyond their format.

`Decimal` (money) follows market.money.parse_money, the rule of the REST bodies, and
answers as market.money.money_display, the text REST answers with ("125000.00").
`Date` is Strawberry's own (ISO 8601 text) with one more rule: an argument or variable
must lie within market.clock.SUPPORTED_DATES, the same rule as every REST date parameter,
so `history(start: "0001-01-01")` is a validation error with code BAD_USER_INPUT, never a
masked unexpected error.
"""
from __future__ import annotations

import dataclasses
from datetime import date

from decimal import Decimal

from strawberry.schema.types.base_scalars import DateDefinition, DecimalDefinition

from market.clock import SUPPORTED_DATES, supported_date
from market.money import money_display, parse_money

SupportedDate = dataclasses.replace(
    DateDefinition,
    description=f"Date (isoformat); as an argument, between {SUPPORTED_DATES[0].isoformat()} and "
                f"{SUPPORTED_DATES[1].isoformat()}",
    parse_value=lambda value: supported_date(value, "a Date"))

# Money in (placeTrade's price and fees, moveCash's amount) follows market.money's one rule.
StrictDecimal = dataclasses.replace(DecimalDefinition, parse_value=lambda value: parse_money(value, "a Decimal"),
                                    serialize=money_display,
                                    description="An amount in the market's currency: decimal text with 2 places")

SCALAR_OVERRIDES = {date: SupportedDate, Decimal: StrictDecimal}
