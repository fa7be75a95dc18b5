"""Paging of every list the API returns (issue 57), REST and GraphQL alike: one `Page` per
list (its name, default and largest page size, api/graphql/pagination.py) shared by both.

REST lists take `limit` (the page size: the list's default when absent, at most its
largest; stated in each parameter's description) and `cursor` (the previous page's
`next_cursor`), and answer `{items, next_cursor}` as market history does; `next_cursor` is
null on the last page. A cursor is opaque: base64url of the list's name and the key of the
page's last item (and, for a portfolio's list, the portfolio's tag), the same cursor
GraphQL's `pageInfo.endCursor` gives for that list, so a cursor of another list, of
another portfolio's list or with a key of the wrong kind (a forged one) is a 422 naming
the list (api/graphql/pagination.py `Page.key_after`). Paging is by key (a ledger row id,
a date), never by offset, so a row appended between two pages neither repeats nor skips
an item.

`PageQuery` is a page as asked (REST's `limit` and `cursor`, one dependency per list that
binds a portfolio's list to the caller's portfolio; GraphQL's `first` and `after`): it
reads the cursor's key and shapes the view's rows as the transport's page.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, Self, TypeVar

from fastapi import Depends, Query

from api.deps import CallerDep
from api.graphql.pagination import (
    CURSOR_LENGTH,
    GRAPH_CURSOR,
    Connection,
    Page,
    PageInfo,
    day,
    flag,
    keyed,
    moment,
    row_id,
    text,
)
from api.schemas.common import whole_query
from desk import BarMark
from market.text import asked_symbol

T = TypeVar("T")
REST_CURSOR = "next_cursor"  # the field a REST page hands its cursor out in (a refused cursor names it)
TRADES = Page("trades", default=100, largest=1000, key=row_id, owned=True)
CASH = Page("cashMovements", default=100, largest=1000, key=row_id, owned=True)
SUGGESTIONS = Page("suggestions", default=50, largest=200, key=keyed(day, flag, text), owned=True)
AI_DAYS = Page("aiDays", default=100, largest=500, key=day)
AI_TRADES = Page("aiTrades", default=100, largest=1000, key=row_id)
KEYS = Page("keys", default=100, largest=1000, key=keyed(moment, text))  # created_at, key_id
# One instrument's bars (GraphQL's `instrument { history }`, REST's /api/market/history forward
# from `start`) and, REST's alone, the same bars paged backward from the newest: their cursors
# name the instrument and the way they page (`bars_page`, `bars_after`).
HISTORY = Page("history", default=100, largest=2000, key=day, per_instrument=True)
OLDER_HISTORY = Page("olderHistory", default=250, largest=2000, key=day, per_instrument=True)


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
        description=f"`next_cursor` of the previous page, unchanged (a cursor of another list"
        f"{', or of another portfolio' if page.owned else ''}, is 422); absent: the first page. "
        f"GraphQL's `{page.name}` pageInfo.endCursor is the same cursor.",
    )


@dataclass(frozen=True)
class PageQuery:
    """A list's page as asked: REST's `limit` and `cursor` query parameters (GraphQL's
    `first` and `after`), on the list of the caller's portfolio where the list is one
    portfolio's. `issued_as`: the field the asking transport hands its cursors out in,
    which a refused cursor tells the client to pass back unchanged (REST's `next_cursor`,
    GraphQL's pageInfo.endCursor: `graph`)."""

    page: Page
    limit: int
    cursor: str | None
    issued_as: str = REST_CURSOR

    def after(self) -> Any:
        """The key the cursor carries, of the list's kind (`Page.key_after`); None: the first page."""
        return self.page.key_after(self.cursor, self.issued_as)

    def slice(self, items: Iterable[Any], key: Callable[[Any], Any]) -> dict[str, Any]:
        """The REST page of a list read whole, in its order by `key` (`Page.slice`)."""
        return listed(*self.page.slice(items, key, self.limit, self.cursor, issued_as=self.issued_as))

    def body(self, keyed: Sequence[tuple[Any, Any]]) -> dict[str, Any]:
        """The REST page of a view's `limit + 1` keyed rows (`body`)."""
        return body(self.page, keyed, self.limit)

    @classmethod
    def graph(cls, page: Page, first: int | None, after: str | None) -> Self:
        """A GraphQL field's `first` (checked against the list's bounds) and `after`, its
        cursors handed out as pageInfo.endCursor."""
        return cls(page, page.size(first), after, GRAPH_CURSOR)

    def connection(self, keyed: Sequence[tuple[Any, Any]], node: Callable[[Any], T]) -> Connection[T]:
        """The GraphQL page of a view's `limit + 1` keyed rows, each item as `node(item)`."""
        items, page_info = split(self.page, keyed, self.limit)
        return Connection(nodes=[node(i) for i in items], page_info=page_info)


def page_query(page: Page) -> Any:
    """`page`'s `limit` and `cursor` query parameters as one dependency, on the list of the
    caller's portfolio where it is one portfolio's; FastAPI documents them as the route's
    own. Async: a sync dependency would take a hop to the thread pool. (This module reads
    its annotations when it runs, not from text: `Limit` is this page's.)"""
    Limit = whole_query(limit_query(page))  # noqa: N806 (a type, named as one)

    async def query(
        caller: CallerDep,
        limit: Limit = page.default,
        cursor: str | None = cursor_query(page),
    ) -> PageQuery:
        return PageQuery(page.of(caller.portfolio_id) if page.owned else page, limit, cursor)

    return Depends(query)


TradesQuery = Annotated[PageQuery, page_query(TRADES)]
CashQuery = Annotated[PageQuery, page_query(CASH)]
SuggestionsQuery = Annotated[PageQuery, page_query(SUGGESTIONS)]
AIDaysQuery = Annotated[PageQuery, page_query(AI_DAYS)]
KeysQuery = Annotated[PageQuery, page_query(KEYS)]


def bars_after(symbol: str, cursor: str | None) -> tuple[date | None, date | None]:
    """(after, before): where the REST history page of `symbol`'s bars that `cursor` asks
    for starts. A cursor of OLDER_HISTORY continues backward before its date, HISTORY's
    (GraphQL's `history` endCursor too) forward after it; one of another instrument, of
    another list or that this API did not issue (a bare date, as this list's cursors once
    were) is a 422 naming it (`Page.key_after`), never read as a date in this list. `symbol`
    as the path gave it: a listed one is its upper case (`views.market.known_symbol`).
    Decision: a cursor is bound to its instrument and the way it pages, not to `start` and
    `end` (GraphQL's neither): a walk that changes them reads on from the cursor's date
    within the new span."""
    if cursor is None:
        return None, None
    symbol = asked_symbol(symbol)
    if OLDER_HISTORY.names(cursor):
        return None, OLDER_HISTORY.on(symbol).key_after(cursor, REST_CURSOR)
    return HISTORY.on(symbol).key_after(cursor, REST_CURSOR), None


def bars_page(history: Mapping[str, Any]) -> Mapping[str, Any]:
    """A REST history page as it is sent: the view's `next_cursor` (views.market `BarMark`)
    written as the opaque cursor of its instrument's bars, OLDER_HISTORY's backward and
    HISTORY's forward (the same cursor as GraphQL's `history` endCursor on that bar)."""
    mark: BarMark | None = history["next_cursor"]
    if mark is None:
        return history
    page = OLDER_HISTORY if mark.older else HISTORY
    return {**history, "next_cursor": page.on(history["symbol"]).cursor(mark.day)}


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
