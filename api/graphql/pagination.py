"""Cursor pagination for every GraphQL list: `first` (page size, bounded per field) and
`after` (the `pageInfo.endCursor` of the previous page).

A cursor is opaque to clients: base64url of the list's name and the sort key of the last
item returned. A cursor handed to another list is refused with a clear error rather than
silently read as a position in the wrong list. Paging is by key, not offset, so a row
appended between two pages neither repeats nor skips an item.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import strawberry

from market.errors import InvalidInputError

T = TypeVar("T")
# The longest cursor accepted, REST's and GraphQL's alike: those issued are under 100.
CURSOR_LENGTH = 200
Item = TypeVar("Item")


@strawberry.type(description="Where a page ends and whether another follows.")
class PageInfo:
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page; null on an empty page.")
    has_next_page: bool


@strawberry.type(description="One page of a list.")
class Connection(Generic[T]):
    nodes: list[T]
    page_info: PageInfo


@dataclass(frozen=True)
class Page:
    """A list's paging rules: its name (in cursors), default and largest page size."""

    name: str
    default: int
    largest: int

    def size(self, first: int | None) -> int:
        size = self.default if first is None else first
        if not 1 <= size <= self.largest:
            raise InvalidInputError(f"`first` must be between 1 and {self.largest} for {self.name}, not {size}")
        return size

    def cursor(self, key: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps([self.name, key], default=str).encode()).decode()

    def key_after(self, after: str | None) -> Any:
        """The key a cursor of this list carries. A cursor longer than any this API issues
        is refused before it is decoded (a deeply nested one would exhaust the decoder)."""
        if after is None:
            return None
        if len(after) > CURSOR_LENGTH:
            raise InvalidInputError(
                f"a cursor is at most {CURSOR_LENGTH} characters, not {len(after)}; pass pageInfo.endCursor unchanged"
            )
        try:
            name, key = json.loads(base64.urlsafe_b64decode(after.encode()))
        except (ValueError, TypeError, RecursionError):
            raise InvalidInputError(
                f"cursor '{after[:60]}' was not issued by this API; pass pageInfo.endCursor unchanged"
            ) from None
        if name != self.name:
            owner = name[:40] if isinstance(name, str) else "no list"
            raise InvalidInputError(f"that cursor belongs to {owner}, not {self.name}")
        return key

    def slice(
        self,
        items: Iterable[Item],
        key: Callable[[Item], Any],
        first: int | None,
        after: str | None,
        order: str = "ascending",
    ) -> tuple[list[Item], PageInfo]:
        """A page of `items` (already in list order) after the cursor's item.

        `order` says how the list is sorted by `key`: "ascending" or "descending" (the page
        starts at the first key beyond the cursor's, so it holds even if that item is gone),
        or "as-listed" for a list in its own stable order with unique keys (an append-only
        ledger): the page starts after the item whose key is the cursor's.
        """
        size, last_key = self.size(first), self.key_after(after)
        items = list(items)
        if last_key is not None:
            bound = _comparable(last_key)
            if items and _shape(bound) != _shape(_comparable(key(items[0]))):
                raise InvalidInputError(
                    f"that cursor was not issued for {self.name}; pass pageInfo.endCursor unchanged"
                )
            if order == "as-listed":
                keys = [_comparable(key(i)) for i in items]
                if bound not in keys:
                    raise InvalidInputError(f"the item that cursor points at is no longer in {self.name}; start again")
                items = items[keys.index(bound) + 1 :]
            elif order == "descending":
                items = [i for i in items if _comparable(key(i)) < bound]
            else:
                items = [i for i in items if _comparable(key(i)) > bound]
        page = items[:size]
        return page, PageInfo(end_cursor=self.cursor(key(page[-1])) if page else None, has_next_page=len(items) > size)

    def connection(
        self,
        items: Iterable[Item],
        key: Callable[[Item], Any],
        first: int | None,
        after: str | None,
        node: Callable[[Item], T],
        order: str = "ascending",
    ) -> Connection[T]:
        """`slice`'s page of `items` as a Connection of their GraphQL type, `node(item)`."""
        page, page_info = self.slice(items, key, first, after, order)
        return Connection(nodes=[node(i) for i in page], page_info=page_info)


def _shape(key: Any) -> Any:
    """What kind of key a comparable key is (a forged cursor's key may be of another kind)."""
    if isinstance(key, list):
        return tuple(_shape(k) for k in key)
    return "number" if isinstance(key, (int, float)) else "text"


def _comparable(key: Any) -> Any:
    """Keys travel as JSON: dates become ISO strings, tuples lists; compare them the same way."""
    if isinstance(key, (list, tuple)):
        return [_comparable(k) for k in key]
    return key if isinstance(key, (int, float)) else str(key)
