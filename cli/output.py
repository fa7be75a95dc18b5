"""What the CLI prints, under the same contract as the API's answers (market/contract.py):
timestamps in exchange time without offset or microseconds, money, prices and fractions
by their declared types (a dataclass's own, or the TypedDict the command names: money as
decimal text to the cent), percents by their names. JSON goes through `contract_json`; a
value the JSON encoder does not know (a moment, a date, a Decimal without a type) is
written as the API writes it: a moment as the contract's timestamp, a date as ISO 8601, a
Decimal as a number. A value in a line of text goes through `shown`, the same rule."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import typer

from market.contract import conform, exchange_timestamp


def shown(value: Any) -> str:
    """A value in a line of text as the contract writes it: a moment (stored in UTC) in
    exchange time, ISO 8601 without offset, to the second; a date as ISO 8601; nothing as
    "-"; anything else as its text."""
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return exchange_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    return shown(value)


def contract_json(value: Any, kind: Any = None) -> str:
    """`value` (a dataclass, walked by its fields' types; a mapping or a list, by `kind`,
    its declared type, where it has one) as the contract's indented JSON."""
    return json.dumps(conform(value, kind), indent=2, default=_plain)


def echo_json(value: Any, kind: Any = None) -> None:
    typer.echo(contract_json(value, kind))
