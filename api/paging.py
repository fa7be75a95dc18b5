"""Paging of every list the API returns (issue 57), REST and GraphQL alike: one `Page` per
list (its name, default and largest page size, api/graphql/pagination.py) shared by both.

REST lists take `limit` (the page size: the list's default when absent, at most its
largest; stated in each parameter's description) and `cursor` (the previous page's
`next_cursor`), and answer `{items, next_cursor}` as market history does; `next_cursor` is
null on the last page. A cursor is opaque: base64url of the list's name and the key of the
page's last item, the same cursor GraphQL's `pageInfo.endCursor` gives for that list, so a
cursor of another list (or a forged one) is a 422 naming the list. Paging is by key (a
ledger row id, a date), never by offset, so a row appended between two pages neither
repeats nor skips an item.

`PageQuery` is a page as asked (REST's `limit` and `cursor`, one dependency per list;
GraphQL's `first` and `after`): it reads the cursor's key and shapes the view's rows as
the transport's page.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, Self, TypeVar

from fastapi import Depends, Query

from api.graphql.pagination import CURSOR_LENGTH, Connection, Page, PageInfo
from api.schemas.common import whole_query
from market.clock import supported_date
from market.errors import InvalidInputError

T = TypeVar("T")
TRADES = Page("trades", default=100, largest=1000)
CASH = Page("cashMovements", default=100, largest=1000)
SUGGESTIONS = Page("suggestions", default=50, largest=200)
AI_DAYS = Page("aiDays", default=100, largest=500)
AI_TRADES = Page("aiTrades", default=100, largest=1000)


def limit_query(page: Page) -> Any:
    """The `limit` query parameter of `page`'s list."""
    return Query(
        ge=1,
        le=page.largest,
        description=f"Items per page: {page.default} by default, at most {page.largest}.",
    )


def cursor_query(page: Page) -> Any:
    """The `cursor` query parameter of `page`'s list."""
    return Query(
        None,
        min_length=1,
        max_length=CURSOR_LENGTH,
        description=f"`next_cursor` of the previous page, unchanged (a cursor of another list is 422); "
        f"absent: the first page. GraphQL's `{page.name}` pageInfo.endCursor is the same cursor.",
    )


# Ledger row ids are the store's 64-bit integers: a key past them was never issued, and
# would reach the database as a value its column cannot hold.
ROW_IDS = range(0, 2**63)


def after_key(page: Page, cursor: str | None, kind: type[int] | type[date]) -> Any:
    """The key a cursor of `page` carries (None: the first page), checked to be a `kind`: a
    row id the store can hold, or a date within the supported dates (the history cursor's
    rule, `market.clock.supported_date`)."""
    key = page.key_after(cursor)
    if key is None:
        return None
    if kind is int and type(key) is int and key in ROW_IDS:
        return key
    if kind is date and isinstance(key, str):
        return supported_date(key, f"the {page.name} cursor")
    raise InvalidInputError(f"that cursor was not issued for {page.name}; pass next_cursor unchanged")


@dataclass(frozen=True)
class PageQuery:
    """A REST list's page as asked: its `limit` and `cursor` query parameters."""

    page: Page
    limit: int
    cursor: str | None

    def after(self, kind: type[int] | type[date]) -> Any:
        """The key the cursor carries (`after_key`)."""
        return after_key(self.page, self.cursor, kind)

    def body(self, keyed: Sequence[tuple[Any, Any]]) -> dict[str, Any]:
        """The REST page of a view's `limit + 1` keyed rows (`body`)."""
        return body(self.page, keyed, self.limit)

    @classmethod
    def graph(cls, page: Page, first: int | None, after: str | None) -> Self:
        """A GraphQL field's `first` (checked against the list's bounds) and `after`."""
        return cls(page, page.size(first), after)

    def connection(self, keyed: Sequence[tuple[Any, Any]], node: Callable[[Any], T]) -> Connection[T]:
        """The GraphQL page of a view's `limit + 1` keyed rows, each item as `node(item)`."""
        items, page_info = split(self.page, keyed, self.limit)
        return Connection(nodes=[node(i) for i in items], page_info=page_info)


def page_query(page: Page) -> Any:
    """`page`'s `limit` and `cursor` query parameters as one dependency; FastAPI documents
    them as the route's own. Async: a sync dependency would take a hop to the thread pool.
    (This module reads its annotations when it runs, not from text: `Limit` is this page's.)"""
    Limit = whole_query(limit_query(page))  # noqa: N806 (a type, named as one)

    async def query(
        limit: Limit = page.default,
        cursor: str | None = cursor_query(page),
    ) -> PageQuery:
        return PageQuery(page, limit, cursor)

    return Depends(query)


TradesQuery = Annotated[PageQuery, page_query(TRADES)]
CashQuery = Annotated[PageQuery, page_query(CASH)]
SuggestionsQuery = Annotated[PageQuery, page_query(SUGGESTIONS)]
AIDaysQuery = Annotated[PageQuery, page_query(AI_DAYS)]


def split(page: Page, keyed: Sequence[tuple[Any, Any]], size: int) -> tuple[list[Any], PageInfo]:
    """A view's `size + 1` keyed rows as a page's items and its PageInfo (the extra row only
    says that another page follows)."""
    items = keyed[:size]
    more = len(keyed) > size
    cursor = page.cursor(items[-1][0]) if items else None
    return [item for _, item in items], PageInfo(end_cursor=cursor, has_next_page=more)


def body(page: Page, keyed: Sequence[tuple[Any, Any]], size: int) -> dict[str, Any]:
    """A REST page of a view's `size + 1` keyed rows: `{items, next_cursor}`."""
    items, info = split(page, keyed, size)
    return listed(items, info)


def listed(items: list[Any], info: PageInfo) -> dict[str, Any]:
    """A REST page from a page's items and PageInfo: `next_cursor` only when one follows."""
    return {"items": items, "next_cursor": info.end_cursor if info.has_next_page else None}


def suggestion_key(suggestion: Any) -> tuple[str, bool, str]:
    """A pending suggestion's place in its list (`portfolio.suggestions.pending_at`'s order)."""
    return (str(suggestion.trading_date), suggestion.side != "SELL", suggestion.symbol)
