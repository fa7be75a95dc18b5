"""One-line CLI errors: a domain error becomes `error: <message>` on stderr, exit status 1.

The CLI's edge too: every text argument is held to the input rule the API's edge applies
(market/text.py: no NUL or other control character, no lone surrogate; an argument's byte
that is not UTF-8 is named as such), before the command runs. A line feed
or carriage return is text to that rule, and an error may quote the argument that holds
it: the line is written through `one_line` (market/text.py: `\n` for a line feed), so an
error is one line whatever it quotes (`say_error`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import typer
from pydantic import ValidationError
from sqlalchemy.exc import DatabaseError, OperationalError

from market.errors import InvalidInputError, MarketIntelError
from market.text import checked_text, one_line


def one_line_errors(command: Callable) -> Callable:
    """Turn a domain error into `error: <message>` on stderr and exit status 1; a text
    argument holding a control character is one. So are the failures of what the command
    stands on rather than of its input (`environment_error`): settings that do not
    validate, a database that cannot be reached, is locked or is not a database at all (a
    file of something else, a damaged one: the driver's plain DatabaseError, raised by the
    first statement on the connection), a folder that cannot be written; their tracebacks
    said nothing a person could act on that the line does not. The database's narrower
    errors (a constraint broken, a statement it cannot parse) are the program's, not the
    environment's, and keep their traceback."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        try:
            for name, value in [*((f"argument {i + 1}", a) for i, a in enumerate(args)), *kwargs.items()]:
                if isinstance(value, str):
                    checked_argument(value, name.replace("_", " "))
            return command(*args, **kwargs)
        except MarketIntelError as exc:
            say_error(exc.detail)
            raise typer.Exit(1) from None
        except (ValidationError, DatabaseError, OSError) as exc:
            if isinstance(exc, DatabaseError) and not stands_on_database(exc):
                raise
            say_error(environment_error(exc))
            raise typer.Exit(1) from None

    return wrapper


# a byte of an argument that is not UTF-8, as Python reads it (its "surrogateescape")
_UNDECODED = re.compile(r"[\udc80-\udcff]")


def checked_argument(value: str, what: str) -> str:
    """A text argument held to the input rule (`checked_text`); a byte that is not UTF-8
    (which Python reads as a lone surrogate, and the database then failed to write, a
    traceback) is named as the byte it is."""
    found = _UNDECODED.search(value)
    if found is not None:
        byte = ord(found.group()) - 0xDC00
        raise InvalidInputError(
            f"{what} is not UTF-8 text (the byte 0x{byte:02X} at position {found.start()}); send it in UTF-8"
        )
    return checked_text(value, what)


def say_error(message: str) -> None:
    """`error: <message>` on stderr, as one line: the message's line breaks and other
    control characters escaped (`one_line`), the text it quotes a client's or a file's."""
    typer.echo(f"error: {one_line(message)}", err=True)


def stands_on_database(exc: DatabaseError) -> bool:
    """Whether a database error is the store failing the command (it cannot be reached,
    is locked, is not a database: OperationalError, or the driver's plain DatabaseError)
    rather than the program (IntegrityError, ProgrammingError and the other subclasses)."""
    return isinstance(exc, OperationalError) or type(exc) is DatabaseError


def environment_error(exc: Exception) -> str:
    """One line for a failure of the command's environment: which setting is wrong and
    why (a pydantic ValidationError of the settings, named by its environment variable),
    the database driver's own first line and the store it was said of (the SQLite file,
    else the URL without its password: MARKETINTEL_DATABASE_URL), or the operating
    system's reason and path."""
    if isinstance(exc, ValidationError):
        wrong = "; ".join(
            f"MARKETINTEL_{'_'.join(str(part) for part in e['loc']).upper()}: {e['msg']}" for e in exc.errors()
        )
        return f"the settings are not valid: {wrong}"
    if isinstance(exc, DatabaseError):
        first = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
        return f"the database refused: {first} ({_store_named()})"
    assert isinstance(exc, OSError)
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or exc}{where}"


def _store_named() -> str:
    """The store the command opened, as a person finds it: a SQLite database's file, else
    MARKETINTEL_DATABASE_URL without its password."""
    from sqlalchemy.engine import make_url

    from market.settings import get_settings

    url = make_url(get_settings().database_url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return f"database file {url.database}"
    return f"database {url.render_as_string(hide_password=True)}"
