"""What ingest asks of the books it may not read (the layers: portfolio/ is above it): a
capital change stored late, its ex-date before trades a client has already recorded on
the old count, can leave that client's ledger unreplayable for good (the store keeps
every action it is given). The import (`ingest.importers.files.import_path`) and T0
(`ingest.exchange.delivery.deliver_day`) append their corporate actions through
`append_actions`, which hands the symbols of the SPLIT actions it stored to the caller's
`BooksCheck` (the desk's `desk.desk.keep_books`) inside the same transaction; the check
refuses by raising InvalidInputError, and nothing of the import or the day is kept."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, func, select

from store import tables
from store.history import append_history

BooksCheck = Callable[[Connection, list[str], int], None]
"""Called in an import's or a T0 day's transaction once it has stored SPLIT actions,
before it commits: the symbols of the splits stored and the id of the last corporate
action stored before them; raises InvalidInputError to refuse them (the desk's
`keep_books`: every client's ledger still replays)."""


def append_actions(conn: Connection, actions: list[dict], keep_books: BooksCheck | None) -> int:
    """Append `actions` to the corporate actions (`append_history`: one already stored is
    not stored again), then, where SPLIT actions were stored, `keep_books`'s check of
    them; returns the actions stored."""
    c = tables.corporate_actions.c
    before = conn.execute(select(func.coalesce(func.max(c.id), 0))).scalar_one()
    inserted = append_history(conn, tables.corporate_actions, actions).inserted
    splits = conn.execute(select(c.symbol).where(c.id > before, c.kind == "SPLIT").distinct()).scalars().all()
    if keep_books is not None and splits:
        keep_books(conn, sorted(splits), before)
    return inserted
