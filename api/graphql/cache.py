"""Whole results of market queries, kept per data version (issue 23).

A query whose root fields are all market reads (`instruments`, `instrument`: listings,
quotes, predictions, fundamentals, news, sentiment, liquidity and the stored daily bars)
answers every caller alike: nothing under those fields depends on who asks. Its result
is kept per process, keyed by the document, its variables, its operation name and the
exchange's latest closed trading day, for as long as the newest ids of the tables those
fields read have not moved (the desk's `instrument_version`, desk/versions.py
INSTRUMENT_READS, one statement: the tables are append-only, so a new row anywhere in
them moves the version and the next request executes the operation again). The
60-instrument screen then costs the version read and the JSON encoding instead of
resolving ~1,300 objects.

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
from typing import Any

from graphql import FieldNode, OperationDefinitionNode, OperationType, parse
from graphql.error import GraphQLError

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


def key(query: str, variables: dict[str, Any] | None, operation_name: str | None, closed_day: object) -> tuple:
    return ("graphql", query, json.dumps(variables or {}, sort_keys=True, default=str), operation_name, closed_day)
