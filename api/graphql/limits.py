"""Protection of the GraphQL endpoint and its error policy.

Limits (settings `graphql_max_*`): depth, lexical tokens and aliases use Strawberry's
extensions; the cost cap is ours. The cost of an operation is an upper bound of the
objects it can return: every field costs 1, times the page size (`first`, or the field's
default page size) of each list above it. So `instruments(first: 60) { nodes {
recentBars(first: 20) { nodes { close } } } }` costs 1 + 60 x (1 + 1 + 20 x (1 + 1)) =
2,521. It is computed before execution from the document and the variables, coerced
exactly as execution will coerce them (so a variable's default in the operation counts
like the value sent, and both like a literal), and an operation over the cap is refused
whole (code QUERY_TOO_COSTLY) without touching the store.

Errors: a domain error a resolver raises on purpose (bad argument, not ready, forbidden,
another expensive read of the client's still running: RATE_LIMITED) keeps its message
and gains `extensions.code`; GraphQL syntax and validation errors are returned as they
are; anything else is masked ("Unexpected error") and logged with the request id, so no
stack detail or SQL reaches a client.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FloatValueNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLNamedType,
    GraphQLSchema,
    GraphQLSyntaxError,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    StringValueNode,
    VariableNode,
    get_named_type,
    get_operation_ast,
    type_from_ast,
    value_from_ast,
)
from graphql.execution import Executor
from graphql.execution.collect_fields import collect_fields
from graphql.execution.values import get_variable_values
from strawberry.extensions import MaskErrors, SchemaExtension
from strawberry.schema.exceptions import CannotGetOperationTypeError

from api.jsonbody import MAX_NUMBER_DIGITS, first_unprintable
from api.security import charge, refund, refunded_refusal
from market.errors import (
    BudgetExceededError,
    ConflictError,
    InvalidInputError,
    MarketIntelError,
    NotFoundError,
    NotReadyError,
    PermissionDeniedError,
    RateLimitedError,
    SourceUnavailableError,
)
from market.text import unprintable

log = logging.getLogger(__name__)
CODES = {
    BudgetExceededError: "BUDGET_EXCEEDED",
    InvalidInputError: "BAD_USER_INPUT",
    NotFoundError: "NOT_FOUND",
    ConflictError: "CONFLICT",
    NotReadyError: "NOT_READY",
    PermissionDeniedError: "FORBIDDEN",
    RateLimitedError: "RATE_LIMITED",
}
INTERNAL = "INTERNAL_SERVER_ERROR"  # a masked error's code: the service failed, not the request
PAGE_ARGUMENT = "first"
SUGGESTION = re.compile(r"\s*Did you mean [^?]*\?")


def operation_cost(
    schema: GraphQLSchema, document: DocumentNode, variables: dict[str, Any] | None, operation_name: str | None
) -> int:
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [o for o in operations if operation_name is None or (o.name and o.name.value == operation_name)]
    if not chosen:
        return 0
    operation = chosen[0]
    root = schema.get_root_type(operation.operation)
    walk = _Walk(schema, fragments, _coerced(schema, operation, variables), {})
    return _cost(walk, operation.selection_set, root, 1, frozenset())


def _coerced(schema: GraphQLSchema, operation: OperationDefinitionNode, sent: dict[str, Any] | None) -> dict[str, Any]:
    """The operation's variables as execution will see them: the values sent, coerced to
    their declared types, and each declared default where nothing was sent. Variables that
    do not coerce fail execution anyway; their defaults still count, so an invalid value
    cannot hide a costly default."""
    definitions = operation.variable_definitions or ()
    coerced = get_variable_values(schema, definitions, sent or {})
    if not isinstance(coerced, list):  # a list holds the coercion errors
        return dict(coerced.coerced)
    defaults = {}
    for definition in definitions:
        kind = type_from_ast(schema, definition.type)
        if definition.default_value is not None and kind is not None:
            defaults[definition.variable.name.value] = value_from_ast(definition.default_value, kind)
    return defaults


@dataclass(frozen=True)
class _Walk:
    """What a cost walk of one operation reads throughout: the schema, the document's
    fragments by name, the coerced variables, and each fragment's cost at a multiplier of 1
    once walked (`unit`, filled as the walk goes)."""

    schema: GraphQLSchema
    fragments: dict[str, FragmentDefinitionNode]
    variables: dict[str, Any]
    unit: dict[str, int]


def _cost(
    walk: _Walk, selections: SelectionSetNode, parent: GraphQLNamedType | None, multiplier: int, seen: frozenset[str]
) -> int:
    """The cost is linear in `multiplier`, so a fragment's cost is walked once, at a
    multiplier of 1, and remembered (`unit`): a document whose fragments spread one
    another many times (F1 spreads F2 twice, F2 spreads F3 twice, ...) costs a walk per
    fragment, not one per path (2^depth). `seen` stops a cycle (invalid GraphQL, which
    validation refuses after this)."""
    schema, unit = walk.schema, walk.unit
    total = 0
    for selection in selections.selections:
        if isinstance(selection, FieldNode):
            total += multiplier
            definition = getattr(parent, "fields", {}).get(selection.name.value)
            if selection.selection_set and definition is not None:
                inner = multiplier * _page_size(selection, definition, walk.variables)
                total += _cost(walk, selection.selection_set, get_named_type(definition.type), inner, seen)
        elif isinstance(selection, InlineFragmentNode):
            kind = schema.get_type(selection.type_condition.name.value) if selection.type_condition else parent
            total += _cost(walk, selection.selection_set, kind, multiplier, seen)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = walk.fragments.get(name)
            if fragment is not None and name not in seen:
                if name not in unit:
                    kind = schema.get_type(fragment.type_condition.name.value)
                    unit[name] = _cost(walk, fragment.selection_set, kind, 1, seen | {name})
                total += multiplier * unit[name]
    return total


def _page_size(node: FieldNode, definition: Any, variables: dict[str, Any]) -> int:
    argument = definition.args.get(PAGE_ARGUMENT)
    if argument is None:
        return 1
    given = next((a.value for a in node.arguments or () if a.name.value == PAGE_ARGUMENT), None)
    value = None
    if isinstance(given, VariableNode):
        value = variables.get(given.name.value)
    elif given is not None:
        value = value_from_ast(given, argument.type)
    if value is None:
        value = argument.default_value
    return value if isinstance(value, int) and value > 0 else 1


class CostLimiter(SchemaExtension):
    """Refuses an operation whose estimated cost is over `max_cost`, before validation and execution."""

    def __init__(self, max_cost: int) -> None:
        self.max_cost = max_cost

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is not None and not context.pre_execution_errors:
            cost = operation_cost(
                context.schema._schema, context.graphql_document, context.variables, context.operation_name
            )
            if cost > self.max_cost:
                context.pre_execution_errors = [
                    GraphQLError(
                        f"the query's estimated cost is {cost:,}, over the limit of {self.max_cost:,}; ask for smaller "
                        "pages (`first`) or fewer nested lists",
                        extensions={"code": "QUERY_TOO_COSTLY", "cost": cost, "limit": self.max_cost},
                    )
                ]
        yield


class OperationBudget(SchemaExtension):
    """Every field checks the operation's wall-clock budget (`GraphContext.budget`, set to
    `graphql_timeout_seconds` when the operation's turn comes, and stopped when its client
    disconnects: api/graphql/schema.py) before it resolves: once it is spent the remaining
    fields are not resolved and the answer carries one BUDGET_EXCEEDED error, so no
    operation keeps a worker thread past its budget or after its client left. Except the
    values of a write's answer (`_written_answer`): a mutation that started has written, and
    its answer, rendered before the commit (api/graphql/rendered.py), reaches the client
    whatever the clock says; a write that outlasted the budget (it waited for its
    portfolio's lock) was answered null with BUDGET_EXCEEDED, and a client that retried
    bought twice. A mutation not yet started is still refused, and writes nothing: its
    error says so, and, the root fields being nullable (api/graphql/mutation.py), it nulls
    that field alone (a non-null root field nulled the whole `data`, an earlier write's
    answer with it)."""

    def resolve(self, _next: Any, root: Any, info: Any, *args: Any, **kwargs: Any) -> Any:
        budget = getattr(info.context, "budget", None)
        if budget is not None and not _written_answer(info):
            try:
                budget.check()
            except BudgetExceededError as spent:
                if not _a_write(info):
                    raise
                raise BudgetExceededError(
                    f"`{info.path.key}` was not run: the operation's {budget.seconds:g} s were spent before it began, "
                    "so nothing was written for it; send it again (the writes before it in this operation were made "
                    "and answered)"
                ) from spent
        return _next(root, info, *args, **kwargs)


def unrun_writes(execution: Any, errors: list[GraphQLError]) -> int:
    """How many of a mutation's writes were not run: its root fields refused because the
    operation's budget was spent before they began (`OperationBudget`), each charged as a
    request (`WritesCharged`) and given back, as a request refused without its work done is
    (api/security.py `refund`). 0 for a query, whose one request did its work."""
    unrun = sum(1 for e in errors if _at_a_root(e) and isinstance(_cause(e), BudgetExceededError))
    if not unrun or execution.graphql_document is None:
        return 0
    return unrun if execution.operation_type.value == OperationType.MUTATION.value else 0


def _a_write(info: Any) -> bool:
    """Whether the field resolving is a mutation's root field: a write."""
    return info.operation.operation == OperationType.MUTATION and info.path.prev is None


def _written_answer(info: Any) -> bool:
    """Whether the field resolving is a value of a mutation's answer: below a root field
    of a mutation, with no resolver of its own (`__typename` included). A field with its
    own resolver there is a read the client selected, checked as any query's."""
    if info.operation.operation != OperationType.MUTATION or info.path.prev is None:
        return False
    field = info.parent_type.fields.get(info.field_name)
    declared = (field.extensions or {}).get("strawberry-definition") if field is not None else None
    return declared is None or declared.base_resolver is None


class WritesCharged(SchemaExtension):
    """A mutation is charged one request per write it will make (`mutation_writes`), on its
    key's count, once it is valid and before anything executes (`charge`): the request's
    admission counted one, and a mutation of 15 aliased `moveCash` made 15 writes for that
    one. An operation whose writes do not all fit is refused whole, and answered as REST's
    429 (`refused_whole`); a query stays one request, its cost bounded by `CostLimiter`."""

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is not None:
            writes = mutation_writes(
                context.schema._schema, context.graphql_document, context.variables, context.operation_name
            )
            if writes > 1:
                charge(context.context.request, context.context.svc, writes, f"the operation makes {writes} writes")
        yield


def mutation_writes(
    schema: GraphQLSchema, document: DocumentNode, variables: dict[str, object] | None, operation_name: str | None
) -> int:
    """The root fields a mutation will execute, as graphql-core's execution collects them
    (its own `collect_fields`, on the variables coerced as execution coerces them): fields
    under @skip(if: true) or @include(if: false) are not counted, fragments are, and each
    response name (an alias) is one execution. `__typename` there is no write and is not
    counted (it was, so two deposits asked beside it were charged three). 0 for a query, or
    for variables that do not coerce (execution refuses them and runs nothing)."""
    executor = Executor.build(schema, document, raw_variable_values=variables, operation_name=operation_name)
    if isinstance(executor, list) or executor.operation.operation != OperationType.MUTATION:
        return 0
    root = schema.mutation_type
    if root is None:
        return 0
    fields = collect_fields(schema, executor.fragments, executor.variable_values, root, executor.operation)[0]
    return sum(1 for found in fields.values() if found[0].node.name.value in root.fields)


def refused_whole(result: Any) -> MarketIntelError | None:
    """An operation's refusal by its key's rate limit before it executed (`WritesCharged`:
    over the limit, or the limiter's store not answering), which the router answers as
    REST does (429, 503, with Retry-After); None for any other result (a field's
    RATE_LIMITED, another expensive read of the client running, is the field's error)."""
    for error in getattr(result, "errors", None) or ():
        cause = _cause(error)
        if error.path is None and isinstance(cause, (RateLimitedError, SourceUnavailableError)):
            return cause
    return None


class OperationNotNamed(CannotGetOperationTypeError):
    """A document of several operations sent without `operationName`: Strawberry's own
    refusal of an operation it cannot pick (400 problem+json, as for an unknown name)."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(None)
        self.names = names

    def as_http_error_reason(self) -> str:
        return (
            f"the document holds {len(self.names)} operations ({', '.join(self.names)}); name the one to run in "
            "`operationName`"
        )


class OneOperation(SchemaExtension):
    """GraphQL's GetOperation (spec, section 6.1): a request whose document holds several
    operations runs the one its `operationName` names, and without a name it is refused
    before anything runs or is costed. Strawberry ran the first one, a mutation included,
    so a document that meant its second operation wrote with its first."""

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        named = getattr(
            context, "_provided_operation_name", None
        )  # Strawberry's `operation_name` falls back to the first
        document = context.graphql_document
        if named is None and document is not None:
            operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
            if len(operations) > 1:
                raise OperationNotNamed([o.name.value if o.name else "an anonymous one" for o in operations])
        yield


SCHEMA_FIELD = "__schema"


def schema_reads(
    schema: GraphQLSchema, document: DocumentNode, variables: dict[str, object] | None, operation_name: str | None
) -> list[str]:
    """The response names under which a query asks for `__schema` at its root, as execution
    collects them (aliases, fragments, @skip and @include as `mutation_writes` reads them);
    none for variables that do not coerce (execution runs nothing)."""
    executor = Executor.build(schema, document, raw_variable_values=variables, operation_name=operation_name)
    if isinstance(executor, list) or executor.operation.operation != OperationType.QUERY:
        return []
    fields = collect_fields(schema, executor.fragments, executor.variable_values, schema.query_type, executor.operation)
    return [name for name, found in fields[0].items() if found[0].node.name.value == SCHEMA_FIELD]


class OneSchemaRead(SchemaExtension):
    """Refuses a query that asks for `__schema` more than once, as BAD_USER_INPUT before it
    runs: introspection is outside the cost walk (its types are not the schema's own) and
    Strawberry's depth limit, so 14 aliases of a nested `__schema` returned 1.4 MB in 3.5 s
    for one counted request. The schema is the same each time; GraphiQL and code generators
    ask once. `__type` (one named type) stays under the alias limit."""

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        if document is not None and not context.pre_execution_errors:
            names = schema_reads(context.schema._schema, document, context.variables, context.operation_name)
            if len(names) > 1:
                context.pre_execution_errors = [
                    GraphQLError(
                        f"the query asks for __schema {len(names)} times ({', '.join(names)}); it is the same "
                        "schema each time: ask for it once",
                        extensions={"code": "BAD_USER_INPUT"},
                    )
                ]
        yield


class LongNumbers(SchemaExtension):
    """Refuses an operation with a number literal longer than api/jsonbody.py's
    MAX_NUMBER_DIGITS (the rule a JSON body's numbers keep), as BAD_USER_INPUT before the
    cost walk, validation and execution: graphql-core converts an Int literal with int(),
    which raises a ValueError past 4,300 digits (`first: 999...` was a masked "Unexpected
    error"), and a Decimal argument of 5,000 digits was refused as "not nan"."""

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is not None:
            longest = max((len(n.value) for n in _literals(context.graphql_document, NUMBER_LITERALS)), default=0)
            if longest > MAX_NUMBER_DIGITS:
                context.pre_execution_errors = [
                    GraphQLError(
                        f"a number literal has {longest:,} characters; no argument of this API needs more "
                        f"than {MAX_NUMBER_DIGITS}",
                        extensions={"code": "BAD_USER_INPUT"},
                    )
                ]
        yield


NUMBER_LITERALS = (IntValueNode, FloatValueNode)


IDEMPOTENCY_HEADER = "Idempotency-Key"  # REST's; a GraphQL mutation takes the `idempotencyKey` argument
HEADER_KEY_REFUSAL = (
    "a mutation takes no Idempotency-Key header (it was never read: a retry would book again); pass the key "
    "as the mutation's `idempotencyKey` argument (placeTrade, moveCash), one per write; nothing was run"
)


class HeaderKeyRefused(SchemaExtension):
    """Refuses a mutation sent with REST's `Idempotency-Key` header, as BAD_USER_INPUT
    before validation and execution, so before it is charged (`WritesCharged`) or writes.
    GraphQL takes the key as each mutation's `idempotencyKey` argument (a document may
    make several writes, each with its own key); the header was ignored, and a client that
    sent it, as it sends the same deposit over REST, was booked once per retry. A query
    with the header is a read, safe to retry: it answers as ever (some clients send the
    header with every POST)."""

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        request = getattr(context.context, "request", None)
        document = context.graphql_document
        if request is not None and document is not None and IDEMPOTENCY_HEADER in request.headers:
            operation = get_operation_ast(document, context.operation_name)
            if operation is not None and operation.operation == OperationType.MUTATION:
                context.pre_execution_errors = [GraphQLError(HEADER_KEY_REFUSAL, extensions={"code": "BAD_USER_INPUT"})]
        yield


class ControlCharacters(SchemaExtension):
    """Refuses an operation with a control character in a string literal of the document
    (GraphQL's own escapes, `"\\u0000"`, put one there) or in a variable (market/text.py:
    Postgres cannot store a NUL, and no field means anything by one), as BAD_USER_INPUT
    before validation and execution."""

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        where = None
        if context.graphql_document is not None:
            where = next(
                (
                    w
                    for node in _literals(context.graphql_document, (StringValueNode,))
                    if (w := unprintable(node.value)) is not None
                ),
                None,
            )
        if where is None and context.variables:
            where = first_unprintable(context.variables)
        if where is not None:
            context.pre_execution_errors = [
                GraphQLError(
                    f"a string argument holds {where}; send printable text",
                    extensions={"code": "BAD_USER_INPUT"},
                )
            ]
        yield


def _literals(document: DocumentNode, kinds: tuple[type, ...]) -> Iterator[Any]:
    """The document's literal nodes of `kinds` (their `value` is the literal's text)."""
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            yield node
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif hasattr(node, "keys"):
            stack.extend(getattr(node, key) for key in node.keys if key != "loc")


# graphql-core's coercion of the request's variables (its validation of the document's
# variables, "Variable '$x' is never used", is validation, not input)
VARIABLE_ERROR = re.compile(
    r"^Variable '\$[^']+' (?:got invalid value|has invalid value|of required type .+ was not provided"
    r"|of non-null type .+ must not be null)"
)


def _at_a_root(error: GraphQLError) -> bool:
    """Whether the error is a root field's (each write that was not run says so at its own path)."""
    return error.path is not None and len(error.path) == 1


def _request_code(error: GraphQLError) -> str | None:
    """The code of an error about the request itself, which graphql-core raises without
    one: GRAPHQL_PARSE_FAILED for a document that does not parse (or is over the token
    limit), BAD_USER_INPUT for a variable missing or of the wrong type,
    GRAPHQL_VALIDATION_FAILED for one the schema's or the limits' validation rules refuse
    (an unknown field or argument, too many aliases); None for an error that already has a
    code (the cost limit's) or that came from a field (its cause says)."""
    if (error.extensions or {}).get("code") or error.path is not None:
        return None
    if VARIABLE_ERROR.match(error.message):  # graphql-core keeps the coercion's own error underneath
        return "BAD_USER_INPUT"
    if error.original_error is not None:
        return None
    if isinstance(error, GraphQLSyntaxError) or error.message.startswith("Syntax Error:"):
        return "GRAPHQL_PARSE_FAILED"
    return "GRAPHQL_VALIDATION_FAILED"


def _cause(error: GraphQLError) -> Exception | None:
    """What went wrong underneath: graphql-core wraps an input coercion failure (a domain
    error raised by a scalar, e.g. a date out of range) in one or two GraphQLErrors."""
    original = error.original_error
    while isinstance(original, GraphQLError) and original.original_error is not None:
        original = original.original_error
    return original


def unexpected(error: GraphQLError) -> bool:
    """Whether an error is the service's fault (masked and logged with its traceback), not
    the client's."""
    original = _cause(error)
    return original is not None and not isinstance(original, (GraphQLError, *CODES))


def _retry_after(cause: Exception | None) -> dict[str, int]:
    """`retryAfter`, the seconds a refusal's Retry-After says (REST sends the header)."""
    said = (getattr(cause, "context", None) or {}).get("headers", {}).get("Retry-After")
    return {"retryAfter": int(said)} if said and str(said).isdigit() else {}


def error_code(error: GraphQLError) -> str | None:
    """The `extensions.code` of a domain error (CODES), else the code already set, if any."""
    cause = _cause(error)
    return next((c for cls, c in CODES.items() if isinstance(cause, cls)), (error.extensions or {}).get("code"))


class ErrorPolicy(MaskErrors):
    """Codes for domain errors, masking for the unexpected (see the module docstring).
    With `hide_suggestions` (introspection off) validation errors lose their "Did you mean
    ...?" hints, which would otherwise spell out the schema that introspection hides."""

    def __init__(self, hide_suggestions: bool = False) -> None:
        super().__init__(
            should_mask_error=unexpected,
            error_message="Unexpected error; the server log has the details under this response's X-Request-ID",
        )
        self.hide_suggestions = hide_suggestions

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        """The masked error, with the code that says it is the service's fault, not the
        client's (INTERNAL_SERVER_ERROR): every error of an answer carries a code."""
        masked = super().anonymise_error(error)
        masked.extensions = {"code": INTERNAL}
        return masked

    @classmethod
    def coded_strays(cls, result: Any) -> None:
        """The errors of an operation that failed outside every resolver, where a schema
        extension raised (the writes' charge on a counter store that failed, the cost walk),
        given their code and the unexpected masked and logged as a resolver's are: Strawberry
        answers such an error without passing it through this policy, so it reached the
        client as raised (a failing statement's SQL and its database server in the message),
        with no code, and was logged nowhere. An error with its code is kept."""
        errors = getattr(result, "errors", None) or []
        if all((e.extensions or {}).get("code") for e in errors):
            return
        policy = cls()
        result.errors = [
            kept for e in errors for kept in ([e] if (e.extensions or {}).get("code") else policy._process_errors([e]))
        ]

    def _process_result(self, result: object) -> None:
        """The errors coded and masked; an operation that answered nothing because it was
        refused after admission (another expensive read of the client running, the
        uploads busy) is not counted against the key's limit, as on REST, nor is a
        mutation's write that was not run (`unrun_writes`)."""
        super()._process_result(result)
        errors = getattr(result, "errors", None) or []
        data = getattr(result, "data", None)
        context = self.execution_context.context
        if any(refunded_refusal(_cause(e)) for e in errors) and not any((data or {}).values()):
            refund(context.request, context.svc)
        elif unrun := unrun_writes(self.execution_context, errors):
            refund(context.request, context.svc, unrun)

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        processed, over_budget = [], False
        for error in errors:
            if self.should_mask_error(error):
                log.error("GraphQL resolver failed at %s", error.path, exc_info=error.original_error)
                processed.append(self.anonymise_error(error))
                continue
            code = next((c for cls, c in CODES.items() if isinstance(_cause(error), cls)), None) or _request_code(error)
            if code == "BUDGET_EXCEEDED" and not _at_a_root(error):  # a query's unresolved fields: once is enough
                if over_budget:
                    continue
                over_budget = True
            if code is not None:
                error.extensions = {**(error.extensions or {}), "code": code, **_retry_after(_cause(error))}
            if self.hide_suggestions and SUGGESTION.search(error.message):
                error = GraphQLError(
                    SUGGESTION.sub("", error.message),
                    error.nodes,
                    error.source,
                    error.positions,
                    error.path,
                    error.original_error,
                    error.extensions,
                )
            processed.append(error)
        return processed
