"""Whole answers of market queries, kept per data version (issue 23) as the bytes sent
(issue 65).

A query whose root fields are all market reads (`instruments`, `instrument`: listings,
quotes, predictions, fundamentals, news, sentiment, liquidity and the stored daily bars)
answers every caller alike: nothing under those fields depends on who asks. Its response
body is rendered once (`rendered`) and kept per process in the desk's cache, keyed by the
document, its variables, its operation name and the exchange's latest closed trading
day, for as long as the newest ids of the tables those fields read have not moved (the
desk's `instrument_version`, desk/versions.py INSTRUMENT_READS, one statement: the tables
are append-only, so a new row anywhere in them moves the version and the next request
executes the operation again). A request whose answer is kept is served before the
operation would take its client's heavy turn (api/graphql/schema.py `KeptAnswerRoute`,
`kept_answer`): the version read on the request's connection, the key check riding on it,
and the kept bytes, as a REST read's body. The 60-instrument screen then costs what a
bare endpoint sending its 78 KB costs, instead of a turn of its client's, a thread hop
and a JSON encoding each time.

Not kept: mutations, any operation with another root field (portfolios, the AI
portfolio, analysis, performance, macro: per caller, or read from tables not listed
here), results with errors, and documents this module cannot classify (a root fragment).
The key check, the rate limit and the cost limits run on every request as before: a
document is only ever kept after it passed them once, and they depend on the document and
the settings alone.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from graphql import ExecutionResult, FieldNode, OperationDefinitionNode, OperationType, parse
from graphql.error import GraphQLError
from sqlalchemy import Connection
from strawberry.http import process_result

from desk import Desk

MARKET_FIELDS = frozenset({"instruments", "instrument", "__typename"})
_PLANS: dict[tuple[str, str | None], bool] = {}
_PLANS_KEPT = 1024
_lock = threading.Lock()


def cacheable(query: str | None, operation_name: str | None) -> bool:
    """Whether the operation `operation_name` of `query` is a query whose root fields are
    all market reads (remembered per document)."""
    if not query:
        return False
    key = (query, operation_name)
    with _lock:
        known = _PLANS.get(key)
    if known is not None:
        return known
    verdict = _classify(query, operation_name)
    with _lock:
        if len(_PLANS) >= _PLANS_KEPT:
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[key] = verdict
    return verdict


def remembered(query: str, operation_name: str | None) -> bool:
    """Whether `cacheable` found the operation a market query before: a lookup only, so it
    may run before the request's key is checked (classifying parses the document, which a
    keyed request's operation does after its check)."""
    with _lock:
        return _PLANS.get((query, operation_name)) is True


def _classify(query: str, operation_name: str | None) -> bool:
    try:
        document = parse(query)
    except GraphQLError:
        return False  # executed (and refused) as usual
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [o for o in operations if operation_name is None or (o.name and o.name.value == operation_name)]
    if len(chosen) != 1 or (operation_name is None and len(operations) != 1):
        return False
    operation = chosen[0]
    return operation.operation == OperationType.QUERY and all(
        isinstance(s, FieldNode) and s.name.value in MARKET_FIELDS for s in operation.selection_set.selections
    )


class Asked(NamedTuple):
    """What a request asks: the document, its variables and the operation's name."""

    query: str
    variables: dict[str, object] | None
    operation_name: str | None


def key(query: str, variables: dict[str, Any] | None, operation_name: str | None, closed_day: object) -> tuple:
    """The kept answer's key: no variables (most screens) cost no encoding."""
    shown = json.dumps(variables, sort_keys=True, default=str) if variables else "{}"
    return ("graphql", query, shown, operation_name, closed_day)


@dataclass(frozen=True, slots=True)
class Rendered:
    """A market query's response body as it is sent, rendered once per data version.
    Strawberry's view takes it as a result without errors and sends its bytes as they are
    (api/graphql/schema.py `StrictGraphQLRouter.process_result`, `encode_json`)."""

    body: bytes
    errors: None = None  # what strawberry's view asks of a result


def rendered(result: ExecutionResult, encode: Callable[[object], str | bytes]) -> Rendered | ExecutionResult:
    """`result`'s response body (`encode`d as strawberry's view would), or the result itself
    when it has errors or no data: such a result is answered as usual and never kept."""
    if result.errors or result.data is None:
        return result
    body = encode(process_result(result))
    return Rendered(body.encode() if isinstance(body, str) else body)


def kept_size(answer: Rendered | ExecutionResult) -> int | None:
    """What an answer counts against the desk cache's bound: a body's length; None (not
    kept) for a result with errors."""
    return len(answer.body) if isinstance(answer, Rendered) else None


def kept_answer(desk: Desk, conn: Connection, kept: tuple) -> bytes | None:
    """The body kept under `kept` for the market tables' version read now on `conn` (the
    request's connection, so a key check riding on it is read in the same statement), or
    None when there is none for this version. Reads nothing else."""
    answer = desk.cache.kept(kept, desk.instrument_version(conn))
    return answer.body if isinstance(answer, Rendered) else None
