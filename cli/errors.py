"""One-line CLI errors: a domain error becomes `error: <message>` on stderr, exit status 1.

The CLI's edge too: every text argument is held to the input rule the API's edge applies
(market/text.py: no NUL or other control character), before the command runs."""

from __future__ import annotations

import functools
from collections.abc import Callable

import typer
from pydantic import ValidationError
from sqlalchemy.exc import OperationalError

from market.errors import MarketIntelError
from market.text import checked_text


def one_line_errors(command: Callable) -> Callable:
    """Turn a domain error into `error: <message>` on stderr and exit status 1; a text
    argument holding a control character is one. So are the failures of what the command
    stands on rather than of its input (`environment_error`): settings that do not
    validate, a database that cannot be reached or is locked, a folder that cannot be
    written; their tracebacks said nothing a person could act on that the line does not."""

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
        except (ValidationError, OperationalError, OSError) as exc:
            typer.echo(f"error: {environment_error(exc)}", err=True)
            raise typer.Exit(1) from None

    return wrapper


def environment_error(exc: Exception) -> str:
    """One line for a failure of the command's environment: which setting is wrong and
    why (a pydantic ValidationError of the settings, named by its environment variable),
    the database driver's own first line, or the operating system's reason and path."""
    if isinstance(exc, ValidationError):
        wrong = "; ".join(
            f"MARKETINTEL_{'_'.join(str(part) for part in e['loc']).upper()}: {e['msg']}" for e in exc.errors()
        )
        return f"the settings are not valid: {wrong}"
    if isinstance(exc, OperationalError):
        first = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
        return f"the database refused: {first}"
    assert isinstance(exc, OSError)
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or exc}{where}"
