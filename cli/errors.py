"""One-line CLI errors: a domain error becomes `error: <message>` on stderr, exit status 1.

The CLI's edge too: every text argument is held to the input rule the API's edge applies
(market/text.py: no NUL or other control character), before the command runs."""

from __future__ import annotations

import functools
from collections.abc import Callable

import typer

from market.errors import MarketIntelError
from market.text import checked_text


def one_line_errors(command: Callable) -> Callable:
    """Turn a domain error into `error: <message>` on stderr and exit status 1; a text
    argument holding a control character is one."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        try:
            for name, value in [*((f"argument {i + 1}", a) for i, a in enumerate(args)), *kwargs.items()]:
                if isinstance(value, str):
                    checked_text(value, name.replace("_", " "))
            return command(*args, **kwargs)
        except MarketIntelError as exc:
            typer.echo(f"error: {exc.detail}", err=True)
            raise typer.Exit(1) from None

    return wrapper
