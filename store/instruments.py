"""Point-in-time reads of the instruments' kind of security (sql/*/0018).

The AI portfolio is a long-only mandate of ordinary shares: its book, the client
suggestions and the equal-weighted liquid benchmark read `ordinary_symbols` (or
`instrument_types`) and leave every other type out. A stored type wins; a version without
one (recorded before 0018, or first written by a source that does not say) gets the
market's inference from its code and name (`market.instruments.instrument_type`), the
rule migration 0018 filled the existing rows with.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Connection

from market.instruments import InstrumentType, instrument_type, is_ordinary
from store import tables
from store.history import current_rows


def instrument_types(conn: Connection, *, as_of: datetime | None = None) -> dict[str, InstrumentType]:
    """Every stored instrument's type (symbol -> InstrumentType), as known at `as_of`
    (default: now), listed or not."""
    return {
        row["symbol"]: instrument_type(row["symbol"], row["name"], row["instrument_type"])
        for row in current_rows(conn, tables.instruments, as_of=as_of)
    }


def ordinary_symbols(conn: Connection, day: date, *, as_of: datetime | None = None) -> set[str]:
    """The ordinary shares listed on `day` (listed on or before it, or no listing date;
    not delisted on or before it), as the instruments were known at `as_of` (default:
    now): the names the AI mandate, its suggestions and its benchmark may hold."""
    found = set()
    for row in current_rows(conn, tables.instruments, as_of=as_of):
        if row["listed_on"] is not None and row["listed_on"] > day:
            continue
        if row["delisted_on"] is not None and row["delisted_on"] <= day:
            continue
        if is_ordinary(instrument_type(row["symbol"], row["name"], row["instrument_type"])):
            found.add(row["symbol"])
    return found
