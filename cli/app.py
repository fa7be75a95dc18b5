"""How every `marketintel` command group is made, so they all look alike.

Help is click's plain layout (`rich_markup_mode=None`): Typer 0.29's rich layout prints
a type placeholder after every flag (`--notebook <bool>`, even `--help <bool>`), which
reads as if the flag took a value; the plain layout prints flags bare and options with
their value type (`--date <str>`).
"""

from __future__ import annotations

import typer


def command_group(help: str) -> typer.Typer:  # noqa: A002 - Typer's own parameter name
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=None)
