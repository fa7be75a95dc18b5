"""What the CLI prints as JSON, under the same contract as the API's answers
(market/contract.py): timestamps in exchange time without offset or microseconds, money as
decimal text to the cent, percents and fractions rounded by their names. A value the JSON
encoder does not know (a date, a Decimal outside a money field) is written as the API
writes it: a date as ISO 8601, a Decimal as a number."""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import typer

from market.contract import conform


def _plain(value: Any) -> Any:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def contract_json(value: Any) -> str:
    """`value` (a mapping, a list or a dataclass) as the contract's indented JSON."""
    if is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    return json.dumps(conform(value), indent=2, default=_plain)


def echo_json(value: Any) -> None:
    typer.echo(contract_json(value))
