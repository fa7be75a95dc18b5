"""Append-only writes and point-in-time reads over the history tables.

A history table's natural key (`table.info["key"]`) identifies one thing (an instrument,
a day's price of an instrument, a suggestion's state). Its rows are versions of that
thing; the current version is the one with the latest `recorded_at` (ties broken by
`id`), and the version "as known at T" is the latest one recorded at or before T.

`append_history` is how every stage writes: it compares each new row with the current
version of its key and inserts only what differs, so re-running a stage for a date with
the same content inserts nothing, while a correction becomes a new version. Inside
`counting_writes()` it also tallies the rows it inserts per table, which is how a stage
run reports what it wrote without each stage counting for itself.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import (
    Column,
    Connection,
    Date,
    Select,
    Table,
    and_,
    bindparam,
    case,
    func,
    literal,
    or_,
    select,
    tuple_,
)
from sqlalchemy import column as named_column
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.util import ClauseAdapter
from sqlalchemy.util import await_only

from market.clock import utc_now
from market.errors import InvalidInputError
from store.shared_reads import SHARED_READS
from store.types import Money, UTCDateTime, as_utc

if TYPE_CHECKING:
    import pandas as pd

_BOOKKEEPING = ("id", "recorded_at")
# the values one `IN (...)` binds: far under each driver's limit on a statement's
# parameters (Postgres 65,535; SQLite 32,766), which a long list passed whole went over
_KEYS_PER_QUERY = 400
_Key = TypeVar("_Key")


_written: ContextVar[Counter[str] | None] = ContextVar("rows_written", default=None)


@contextmanager
def counting_writes() -> Iterator[Counter[str]]:
    """Rows inserted per table by `append_history` inside the block, in this thread's
    context (a worker thread started inside is not counted; stages write from their own
    thread). Counted when the INSERT runs: a transaction that then rolls back still shows,
    so read the tally only after the block committed, as the stage runner does."""
    tally: Counter[str] = Counter()
    token = _written.set(tally)
    try:
        yield tally
    finally:
        _written.reset(token)


@dataclass(frozen=True)
class AppendResult:
    """What `append_history` wrote: `inserted` rows (new keys and new versions alike),
    `unchanged` ones, and of the inserted, `replaced`: (the current version it replaced,
    the row) for each key that had a current version, so a writer can say what it changed."""

    table: str
    inserted: int
    unchanged: int
    replaced: tuple[tuple[dict, dict], ...] = ()


def append_history(
    conn: Connection,
    table: Table,
    rows: Iterable[Mapping[str, Any]],
    *,
    recorded_at: datetime | None = None,
    scope: Sequence[ColumnElement[bool]] | None = None,
) -> AppendResult:
    """Insert each row whose content differs from the current version of its key (a
    column marked `provenance`, the row's source, is not content: `_same_content`).

    `scope` (optional) is a filter that covers every key in `rows`, for instance the date
    range of a batch: the current versions are then read with one indexed query instead
    of key lookups, which is much faster for large batches.

    A column marked `kept_when_absent` that a row does not give takes the current
    version's value (its default when the key is new): a writer whose source does not
    know it neither erases it nor makes a new version by leaving it out.
    """
    kept = _kept_columns(table)
    absent: dict[tuple, list[str]] = {}  # key -> the kept columns its row does not give
    prepared = []
    key_names = table.info["key"]
    by_key: dict[tuple, dict] = {}
    for given in rows:
        row = normalise_row(table, given)
        prepared.append(row)
        key = tuple(row[k] for k in key_names)
        if key in by_key:
            raise InvalidInputError(f"{table.name}: two rows for the same key {dict(zip(key_names, key))}")
        by_key[key] = row
        if kept and (missing := [name for name in kept if name not in given]):
            absent[key] = missing
    stored = (
        current_rows(conn, table, where=scope) if scope is not None else _current_for_keys(conn, table, list(by_key))
    )
    current = {tuple(row[k] for k in key_names): row for row in stored}
    for key, missing in absent.items():  # a column the writer does not know keeps its stored value
        if key in current:
            by_key[key].update({name: current[key][name] for name in missing})
    provenance = _provenance_columns(table)
    differ = [key for key, row in by_key.items() if not _same_content(provenance, current.get(key), row)]
    changed = [by_key[key] for key in differ]
    if changed:
        _insert_stamped(conn, table, changed, recorded_at or utc_now())
        tally = _written.get()
        if tally is not None:
            tally[table.name] += len(changed)
    replaced = tuple((current[key], by_key[key]) for key in differ if key in current)
    return AppendResult(table.name, inserted=len(changed), unchanged=len(prepared) - len(changed), replaced=replaced)


_INSERTED_PER_STATEMENT = 5_000  # rows per executemany: the driver's copy of the parameters stays this size


def _insert_stamped(conn: Connection, table: Table, rows: list[dict], stamp: datetime) -> None:
    """Insert `rows` (`append_history`'s own normalised rows) recorded at `stamp`: the stamp
    is set on each row for its statement and taken off again, rather than each row copied
    with it (on a 50,000-row import, a copy of every row held at once), and the rows go
    in statements of _INSERTED_PER_STATEMENT."""
    for start in range(0, len(rows), _INSERTED_PER_STATEMENT):
        chunk = rows[start : start + _INSERTED_PER_STATEMENT]
        for row in chunk:
            row["recorded_at"] = stamp
        try:
            conn.execute(table.insert(), chunk)
        finally:
            for row in chunk:
                del row["recorded_at"]


def _kept_columns(table: Table) -> tuple[str, ...]:
    """The columns a writer may leave out and keep the current version's value of
    (`Column(info={"kept_when_absent": True})`): reference data that some sources state
    and others do not know (an instrument's type)."""
    return tuple(c.name for c in table.c if c.info.get("kept_when_absent"))


def current_query(
    table: Table,
    *,
    as_of: datetime | None = None,
    where: Sequence[ColumnElement[bool]] = (),
    columns: Sequence[str] | None = None,
    backdate_first: bool = False,
    dialect: str | None = None,
) -> Select:
    """SELECT of the latest version per natural key, optionally as known at `as_of`.

    `where` filters the versions before the latest is picked (use it for the natural key
    or a date range; a filter on a non-key column would pick the latest matching version).
    `columns`: the columns selected, in that order (default: every column of the table).
    `backdate_first` (with `as_of`): a key whose first version was recorded after `as_of`
    is read in that first version rather than left out. For rows that carry the date they
    became known (a macro release's release date, which the reader filters on), loading
    them late does not make them unknown; only a later version of the key, a correction,
    waits for its `recorded_at`.
    `dialect`: the name of the dialect it runs on (`conn.dialect.name`), which chooses the
    form read, with the same rows: the versions no later one supersedes where that is
    faster (`UNSUPERSEDED_ON`), a row_number() over each key's versions elsewhere, and
    always with `backdate_first`.
    """
    picked = [table.c[name] for name in columns] if columns is not None else list(table.c)
    if dialect in UNSUPERSEDED_ON and not backdate_first:
        return _unsuperseded(table, picked, as_of=as_of, where=where)
    return _ranked(table, picked, as_of=as_of, where=where, backdate_first=backdate_first)


# The dialects `current_query` reads with NOT EXISTS (`_unsuperseded`): on SQLite it reads
# 200,000 prices in 0.50 s against the window's 1.29 s; on Postgres it is no faster overall
# (benchmarks/current_read.py; docs/performance.md, "Reads of current rows").
UNSUPERSEDED_ON = frozenset({"sqlite"})


def _ranked(
    table: Table,
    picked: Sequence[Column],
    *,
    as_of: datetime | None,
    where: Sequence[ColumnElement[bool]],
    backdate_first: bool,
) -> Select:
    """`current_query` as a row_number() over each key's versions: the version ranked first."""
    key_columns = [table.c[name] for name in table.info["key"]]
    rank = (
        func.row_number()
        .over(partition_by=key_columns, order_by=_version_order(table, as_of if backdate_first else None))
        .label("version_rank")
    )
    versions = select(table, rank)
    if as_of is not None and not backdate_first:
        versions = versions.where(table.c.recorded_at <= as_utc(as_of))
    for clause in where:
        versions = versions.where(clause)
    # The outer columns are named, typed columns of the one subquery it reads, not that
    # subquery's column collection: building the collection took 0.55 of the 0.84 ms that
    # building this query took, and the store builds it for every read of current rows.
    return (
        select(*[named_column(c.name, c.type) for c in picked])
        .select_from(versions.subquery())
        .where(named_column("version_rank") == 1)
    )


def _unsuperseded(
    table: Table, picked: Sequence[Column], *, as_of: datetime | None, where: Sequence[ColumnElement[bool]]
) -> Select:
    """`current_query` as the versions no later version of the same key supersedes (NOT
    EXISTS on the key's index): each `where` clause and `as_of` bound both the versions
    and the later ones, so the same versions compete as in `_ranked`."""
    later = table.alias("later_version")
    adapt = ClauseAdapter(later).traverse
    bounds = list(where)
    if as_of is not None:
        bounds.append(table.c.recorded_at <= as_utc(as_of))
    c, newer = table.c, later.c
    superseding = select(literal(1)).where(
        *[newer[name] == c[name] for name in table.info["key"]],
        or_(newer.recorded_at > c.recorded_at, and_(newer.recorded_at == c.recorded_at, newer.id > c.id)),
        *[adapt(clause) for clause in bounds],
    )
    return select(*picked).where(*bounds, ~superseding.exists())


def _version_order(table: Table, backdated_at: datetime | None) -> tuple[ColumnElement[Any], ...]:
    """The order of a key's versions, the one read first: the latest recorded, or with
    `backdated_at`, the latest recorded by then and, when none was, the first recorded."""
    c = table.c
    if backdated_at is None:
        return (c.recorded_at.desc(), c.id.desc())
    known = c.recorded_at <= as_utc(backdated_at)
    return (
        case((known, c.recorded_at)).desc().nulls_last(),
        case((known, c.id)).desc().nulls_last(),
        c.recorded_at.asc(),
        c.id.asc(),
    )


def current_rows(
    conn: Connection,
    table: Table,
    *,
    as_of: datetime | None = None,
    where: Sequence[ColumnElement[bool]] = (),
    columns: Sequence[str] | None = None,
    backdate_first: bool = False,
) -> list[dict[str, Any]]:
    """The current version of each key (`current_query`) as a dict per row: every column,
    or `columns` only."""
    query = current_query(
        table, as_of=as_of, where=where, columns=columns, backdate_first=backdate_first, dialect=conn.dialect.name
    )
    result = conn.execute(query)
    names = list(result.keys())  # once, not a mapping view per row: a fifth of the read on 60,000 prices
    return [dict(zip(names, row, strict=True)) for row in result]


def current_frame(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    *,
    where: Sequence[ColumnElement[bool]] = (),
) -> pd.DataFrame:
    """`current_rows` of `columns` only, as a DataFrame (one column each, in that order):
    the same versions, without the row dictionaries and the columns a reader does not use
    (a price panel's 120,000 rows read in a third of the time, most of it the conversion of
    every `recorded_at`)."""
    import pandas as pd  # here: the store's writers and most readers never build a frame

    rows = [
        tuple(row)
        for row in conn.execute(current_query(table, where=where, columns=columns, dialect=conn.dialect.name))
    ]
    return pd.DataFrame.from_records(rows, columns=list(columns))  # plain tuples: pandas reads them fastest


def row_counts(conn: Connection, tables: Iterable[Table]) -> dict[str, int]:
    return {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in tables}


def normalise_row(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    """Complete a row with column defaults and coerce values to the column's Python type
    (`_coerce`; a column of a type it leaves as it is only has a NaN made None, checked
    here: the writes normalise every row of every batch)."""
    names, written = _row_plan(table)
    if not names.issuperset(row):
        raise InvalidInputError(f"{table.name}: unknown columns {sorted(set(row) - names)}")
    result: dict[str, Any] = {}
    for name, column_type, default, nullable in written:
        if name in row:
            value = row[name]
        elif default is not None:
            value = default.arg(None) if default.is_callable else default.arg
        else:
            value = None
        if column_type is None:  # `_coerce` of such a column: a NaN is None, the rest as it is
            if isinstance(value, float) and math.isnan(value):
                value = None
        else:
            value = _coerce(column_type, value)
        if value is None and not nullable:
            raise InvalidInputError(f"{table.name}.{name} is required")
        result[name] = value
    return result


_PLANS: dict[Table, tuple[frozenset[str], tuple[tuple[str, Any, Any, bool], ...]]] = {}
_CONVERTED = (Date, Money, UTCDateTime)  # the column types whose values `_coerce` converts


def _row_plan(table: Table) -> tuple[frozenset[str], tuple[tuple[str, Any, Any, bool], ...]]:
    """A table's column names, and (name, type, default, nullable) of each column a writer
    gives, read once per table rather than from the table's column collection for every
    row (a third of the time to import the NSE files went there). The type is None where
    `_coerce` converts nothing (`_CONVERTED`): a number, a text, a flag."""
    plan = _PLANS.get(table)
    if plan is None:
        written = tuple(
            (c.name, c.type if isinstance(c.type, _CONVERTED) else None, c.default, c.nullable)
            for c in table.c
            if c.name not in _BOOKKEEPING
        )
        plan = _PLANS[table] = (frozenset(table.c.keys()), written)
    return plan


_PROVENANCE: dict[Table, frozenset[str]] = {}


def _provenance_columns(table: Table) -> frozenset[str]:
    """The columns marked `provenance` (where a row came from: store/tables.py PROVENANCE),
    read once per table: `_same_content` compares every row of a batch without them."""
    found = _PROVENANCE.get(table)
    if found is None:
        found = _PROVENANCE[table] = frozenset(c.name for c in table.c if c.info.get("provenance"))
    return found


def _coerce(column_type: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None  # SQLite cannot keep NaN; "missing" means the same on both databases
    if isinstance(column_type, Date) and isinstance(value, str):
        return date.fromisoformat(value)
    if isinstance(column_type, Date) and isinstance(value, datetime):
        raise InvalidInputError(f"expected a date, got the datetime {value.isoformat()}")
    if isinstance(column_type, Money):
        return Decimal(str(value)).quantize(Decimal("0.000001"))
    if isinstance(column_type, UTCDateTime):
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            raise InvalidInputError(f"naive datetime {value.isoformat()}: give a timezone")
        return as_utc(value)
    return value


def _same_content(provenance: frozenset[str], stored: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether `new` says what the stored version says: every column but those marked
    `provenance` (where the row came from: `_provenance_columns`)."""
    if stored is None:
        return False
    for name, value in new.items():
        if name in provenance:
            continue
        held = stored.get(name)
        if isinstance(value, _DOCUMENTS) or isinstance(held, _DOCUMENTS):
            held, value = _comparable(held), _comparable(value)
        if not held == value:  # a value that is no document is compared as it is (`_comparable`), without a call
            return False
    return True


_DOCUMENTS = (dict, list, tuple)  # the values `_comparable` compares as JSON


def _comparable(value: Any) -> Any:
    # Numbers compare across int/float/Decimal as Python does (10 == 10.0 == Decimal("10.000000"));
    # JSON documents compare by content, whatever the key order they were stored in.
    if isinstance(value, _DOCUMENTS):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def key_chunks(keys: Sequence[_Key]) -> Iterator[Sequence[_Key]]:
    """`keys` in slices of at most `_KEYS_PER_QUERY`: the values of one `IN (...)` each, so
    a look-up of any number of keys stays under the driver's limit on parameters."""
    for start in range(0, len(keys), _KEYS_PER_QUERY):
        yield keys[start : start + _KEYS_PER_QUERY]


def _current_for_keys(conn: Connection, table: Table, keys: list[tuple]) -> list[dict[str, Any]]:
    if not keys:
        return []
    key_columns = [table.c[name] for name in table.info["key"]]
    found: list[dict[str, Any]] = []
    for chunk in key_chunks(keys):
        if len(key_columns) == 1:
            condition = key_columns[0].in_([k[0] for k in chunk])
        else:
            condition = tuple_(*key_columns).in_(chunk)
        found.extend(current_rows(conn, table, where=[condition]))
    return found


Part = Table | tuple[Table, str, Any]  # a whole table, or (table, column name, value): the rows where column == value
_NEWEST_STATEMENTS: dict[tuple, Select] = {}


def newest_ids(conn: Connection, *parts: Part) -> tuple:
    """The newest `id` of each part (a table, or a table narrowed to the rows whose column
    equals a value) in one statement.

    A history table is append-only and its ids only grow, so these numbers change exactly
    when a row that the part covers is appended: a data version that a cache of derived
    results can be keyed by in any process (the ids are read from the database, not held
    in memory). The rule this rests on is the ids' commit order: a Postgres transaction
    that took an id and commits after one that took a later id would not raise the
    maximum, and a read kept in between under the later id would never be rebuilt. So
    every part a kept read names has one writer at a time, holding one lock from before
    its first append to its commit, and a filter narrows a part to such a writer's rows:
    a portfolio's trades, cash, suggestions and suggestion events (by their `portfolio_id`)
    under the portfolio's lock (T2, a client's confirmation or rejection, `expire_stale`
    for each portfolio it expires); the closes and corporate
    actions under the market files' lock (store/transactions.py `MARKET_FILES`: T0's day,
    the file import); a stage's rows under its lock for the day, one day at a time (the
    DAGs run one at a time: max_active_runs=1). docs/performance.md ("Versions and read
    models") lists them.

    It runs on every cached read, so the statement is built once per shape (which tables,
    which filter columns) and the filter values are bound parameters: building a SQLAlchemy
    select costs several times what SQLite takes to answer it. A `Rider` on the connection
    is read in the same statement."""
    rider = getattr(conn, "rider", None)
    if rider is not None and rider.moved is None:
        values = _newest(conn, parts + rider.parts)
        rider.settle(values[len(parts) :])
        return values[: len(parts)]
    return _newest(conn, parts)


class VersionMoved(Exception):
    """A `Rider`'s parts moved from what the request assumed: what it did under that
    assumption is void, and the request starts over from its check."""


class Rider:
    """A version check deferred to ride on the next statement a request makes anyway.

    A request that assumed something about `parts` (an API key's check answered from a
    cache kept per keys' version: desk/keys.py) puts a rider on its connection (the
    connection's `rider` attribute: api/services.py LazyConnection). The next `newest_ids`
    on that connection reads the rider's parts in the same statement, so the check costs
    no round trip of its own; `settle` reads them alone when no such statement came, and
    `store.transactions.transactional` does so before any write of data. Either way the
    parts are read before data is written or anything is answered, and `VersionMoved` is
    raised when they differ from `expected`. (A writer may choose not to wait: the
    rate-limit count on Postgres counts the request itself, api/ratelimit.py.)"""

    __slots__ = ("parts", "expected", "moved")

    def __init__(self, parts: tuple[Part, ...], expected: tuple) -> None:
        self.parts, self.expected = parts, expected
        self.moved: bool | None = None  # None: not read yet

    def settle(self, values: tuple) -> None:
        self.moved = tuple(values) != tuple(self.expected)
        if self.moved:
            raise VersionMoved(self.parts)


def settle(conn: Connection) -> None:
    """Read the connection's pending rider, if any, on its own (see `Rider`)."""
    rider = getattr(conn, "rider", None)
    if rider is not None and rider.moved is None:
        rider.settle(_newest(conn, rider.parts))


def _newest(conn: Connection, parts: tuple[Part, ...]) -> tuple:
    shape = tuple(part.name if isinstance(part, Table) else (part[0].name, part[1]) for part in parts)
    statement = _NEWEST_STATEMENTS.get(shape)
    if statement is None:
        columns = []
        for n, part in enumerate(parts):
            table = part if isinstance(part, Table) else part[0]
            query = select(func.max(table.c.id))
            if not isinstance(part, Table):
                query = query.where(table.c[part[1]] == bindparam(f"v{n}"))
            columns.append(query.scalar_subquery())
        statement = _NEWEST_STATEMENTS.setdefault(shape, select(*columns))
    values = {f"v{n}": part[2] for n, part in enumerate(parts) if not isinstance(part, Table)}
    options = conn.get_execution_options()
    if (
        options.get("isolation_level") == "AUTOCOMMIT"
        or ("sqlite_begin" in options and options["sqlite_begin"] is None)
        or conn.in_transaction()
    ):
        return _on_driver(conn, shape, statement, values)
    return tuple(conn.execute(statement, values).one())  # SQLAlchemy begins the transaction this connection expects


_DRIVER_SQL: dict[tuple, tuple[str, tuple[str, ...] | None]] = {}


def _on_driver(conn: Connection, shape: tuple, statement: Select, values: dict[str, Any]) -> tuple:
    """`statement` run on the driver's own cursor, its SQL compiled once per dialect and
    shape. It runs on every cached read (on an API request, the only statement), and
    SQLAlchemy's execution path (context, result, events) cost more CPU than the database
    took to answer: 10% of a cached read's. Only where no transaction has to begin first
    (autocommit, SQLite without BEGIN, or a transaction already open), so it reads in
    exactly the state a SQLAlchemy execute would. The ids are integers (or None): nothing
    for SQLAlchemy's result processing to convert. Not seen by SQLAlchemy's statement
    events or echo, as desk/keys.py's keys' version before it. The DBAPI connection, not
    the driver's: under SQLAlchemy's asyncio extension (store/engine.py `ServerReader`) the
    adapted one, whose cursor awaits the driver's on the loop; the same object otherwise.
    There, identical reads awaited at once share one statement sent after each began
    (store/shared_reads.py; the reader puts its `SharedReads` in the connection's `info`)."""
    dialect = conn.dialect
    compiled = _DRIVER_SQL.get((dialect.name, shape))
    if compiled is None:
        built = statement.compile(dialect=dialect)
        compiled = _DRIVER_SQL.setdefault(
            (dialect.name, shape), (str(built), tuple(built.positiontup or ()) if built.positional else None)
        )
    sql, order = compiled
    params = [values[name] for name in order] if order is not None else values
    shared = conn.info.get(SHARED_READS) if conn.dialect.is_async else None
    if shared is None:
        return _fetched(conn, sql, params)
    key = (sql, tuple(params) if order is not None else tuple(sorted(values.items())))
    return shared.read(key, lambda: _fetched(conn, sql, params), await_only)


def _fetched(conn: Connection, sql: str, params: Any) -> tuple:
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(sql, params)
        return tuple(cursor.fetchone())
    finally:
        cursor.close()
