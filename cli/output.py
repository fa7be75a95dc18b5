"""What the CLI prints, under the same contract as the API's answers (market/contract.py):
timestamps in exchange time without offset or microseconds, money, prices and fractions
by their declared types (a dataclass's own, or the TypedDict the command names: money as
decimal text to the cent), percents by their names. JSON goes through `contract_json`; a
value the JSON encoder does not know (a moment, a date, a Decimal without a type) is
written as the API writes it: a moment as the contract's timestamp, a date as ISO 8601, a
Decimal as a number. A value in a line of text goes through `shown`, the same rule."""

from __future__ import annotations

import io
import json
import os
from datetime import date, datetime
from decimal import Decimal
from typing import Any, TextIO

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


class UnreadOutput(io.TextIOBase):
    """Standard output that keeps a command going when its reader goes away (`... | jq`
    with no jq installed, a `head` that has read its lines): the first write or flush that
    meets the broken pipe says so once on stderr and points the output at the null device,
    so the command does what it would have (store, exit with its own status). It was
    `error: Broken pipe` and exit 1 after a trade was booked, and a retry booked it twice;
    every command prints after it has written, so the pipe cannot stop a write half-way."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._gone = False

    @property
    def encoding(self) -> str:  # type: ignore[override]  # the stream's, so click writes text here as is
        return self._stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._stream.errors

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._discard()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._discard()

    def _discard(self) -> None:
        if self._gone:
            return
        self._gone = True
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, self._stream.fileno())  # what the stream still holds is written there too
        os.close(null)
        typer.echo(
            "warning: the output's reader went away (broken pipe): the command ran on, its output discarded", err=True
        )
