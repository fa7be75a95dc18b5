"""One-line CLI errors: a domain error becomes `error: <message>` on stderr, exit status 1."""
from __future__ import annotations

import functools
from typing import Callable

import typer

from market.errors import MarketIntelError


def one_line_errors(command: Callable) -> Callable:
    """Turn a domain error into `error: <message>` on stderr and exit status 1."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        try:
            return command(*args, **kwargs)
        except MarketIntelError as exc:
            typer.echo(f"error: {exc.detail}", err=True)
            raise typer.Exit(1) from None

    return wrapper
