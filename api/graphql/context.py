"""What every resolver sees: the services, the caller and this request's DataLoaders.

The context is built by the REST key check's own function (api/security.py `check_key`),
so a GraphQL request is authenticated, tiered and rate limited exactly as a REST one: a
bad key is an HTTP 401 and an exhausted limit an HTTP 429, both problem+json, counted,
before the document is parsed (a mutation is then charged its writes, before it runs:
api/graphql/limits.py `WritesCharged`). The one exception is the GraphiQL page itself (a browser's
GET without a query), which executes nothing; its requests carry the key you set in its
headers pane. (A request whose answer may be kept reaches the same check earlier, in its
route: api/graphql/schema.py `KeptAnswerRoute`, which decodes a GET's parameters first to
find the answer and refuses nothing on them; the check's principal is then this one's.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from fastapi import Request
from strawberry.fastapi import BaseContext
from strawberry.types import Info

from api.deps import PresentedKey, ServicesDep
from api.graphql.loaders import Loaders, in_thread
from api.graphql.pagination import Connection, Page
from api.paging import PageQuery
from api.security import Principal, check_key
from api.services import Services
from desk import Versioned
from market.budget import Deadline
from market.errors import PermissionDeniedError

T = TypeVar("T")


class GraphContext(BaseContext):
    def __init__(self, svc: Services, caller: Principal | None) -> None:
        super().__init__()
        self.svc = svc
        self.caller = caller
        self.loaders = Loaders(svc)
        self.budget: Deadline | None = None  # the operation's wall-clock budget (api/graphql/limits.py OperationBudget)
        self._values: dict[tuple, asyncio.Future[Any]] = {}  # `value`'s reads of this operation, by read and arguments

    @property
    def principal(self) -> Principal:
        if self.caller is None:  # only the GraphiQL page has no caller, and it resolves nothing
            raise PermissionDeniedError("this request carries no API key")
        return self.caller

    async def read(self, read: Callable[..., T], *args: Any) -> T:
        """`read(conn, *args)` on a pooled connection, off the event loop."""

        def run() -> T:
            with self.svc.engine.connect() as conn:
                return read(conn, *args)

        return await in_thread(run)

    async def value(self, read: Callable[..., Versioned[T]], *args: Any) -> T:
        """The read model of the desk's `read(conn, *args)`, on a pooled connection, off the
        event loop (its version read with it; GraphQL keeps what the desk keeps). Read once
        per operation: a field asked twice (two aliases of a portfolio's `trackRecord`) shares
        the first read, where a second read of its own would be the client's second expensive
        read at once, refused RATE_LIMITED by its own operation (desk/cache.py `owned`)."""
        key = (read, args)
        try:
            shared = self._values.get(key)
        except TypeError:  # an argument that cannot be a key: read as asked
            return await self.read(lambda conn: read(conn, *args).value())
        if shared is None:
            shared = self._values[key] = asyncio.ensure_future(self.read(lambda conn: read(conn, *args).value()))
        return await asyncio.shield(shared)  # a field cancelled (its budget spent) leaves the others' read

    async def read_page(
        self,
        page: Page,
        first: int | None,
        after: str | None,
        node: Callable[[Any], T],
        view: Callable[..., Versioned[Sequence[tuple[Any, Any]]]],
        *args: Any,
    ) -> Connection[T]:
        """A ledger list's page as its REST route reads it (api/paging.py `PageQuery`), so both
        transports page it alike: `first` checked against `page`'s bounds, the `after` cursor's
        key checked to be of the list's kind (a row id, a date; a portfolio's list `page` is
        `Page.of` the portfolio), the desk's `view(conn, *args, key, limit)` read for the
        `limit + 1` keyed rows past it, each item shown as `node(item)`."""
        asked = PageQuery.graph(page, first, after)
        rows = await self.value(view, *args, asked.after(), asked.limit)
        return asked.connection(rows, node)

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """A service function that manages its own transaction, off the event loop."""
        return await in_thread(function, *args)


def is_ide_page(request: Request, svc: Services) -> bool:
    return (
        svc.settings.graphql_introspection
        and request.method == "GET"
        and "query" not in request.query_params
        and "text/html" in request.headers.get("accept", "")
    )


async def graph_context(request: Request, svc: ServicesDep, presented: PresentedKey) -> GraphContext:
    """The key is checked (`check_key`: in a worker thread on a connection taken as a REST
    request takes its one and given back before the operation runs, the admin key in
    memory); the operation's reads then take one connection per read or DataLoader batch,
    never two at once in one thread."""
    if is_ide_page(request, svc):
        return GraphContext(svc, None)
    return GraphContext(svc, await check_key(request, presented))


def context_of(info: Info) -> GraphContext:
    return info.context
