"""Cursor pagination for every GraphQL list: `first` (page size, bounded per field) and
`after` (the `pageInfo.endCursor` of the previous page).

A cursor is opaque to clients: base64url of the list's name and the sort key of the last
item returned, for a list of one portfolio (its trades, cash movements, suggestions,
positions) a tag of that portfolio, and for a list of one instrument (its history,
predictions, news, sentiment) that instrument's symbol. A cursor is taken only as it was
issued: handed to another list, to another portfolio's list (another client's, the
house's) or to another instrument's, it is refused with a clear error rather than silently
read as a position in the wrong list; its
key must be of the list's kind (`Page.key`: a ledger row id, a real date within the
supported dates, a timestamp, text, a flag) or it is refused too, never read as the first
page or past the end. Paging is by key, not offset, so a row appended between two pages
neither repeats nor skips an item.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, Generic, TypeVar

import strawberry

from market.clock import supported_date
from market.errors import InvalidInputError
from market.text import unprintable

T = TypeVar("T")
# The longest cursor accepted, REST's and GraphQL's alike: those issued are under 100.
CURSOR_LENGTH = 200
GRAPH_CURSOR = "pageInfo.endCursor"  # the field a connection hands its cursor out in (a refused cursor names it)
Item = TypeVar("Item")


@strawberry.type(description="Where a page ends and whether another follows.")
class PageInfo:
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page; null on an empty page.")
    has_next_page: bool


@strawberry.type(description="One page of a list.")
class Connection(Generic[T]):
    nodes: list[T]
    page_info: PageInfo


REFUSED_ARGUMENTS = (
    "Null with a BAD_USER_INPUT error at its path when its arguments are refused (`first` out of bounds, a "
    "cursor not issued for this list, a start after the end); the fields asked for beside it still arrive."
)


def connection_field(description: str) -> Any:
    """A list field whose arguments may be refused: declared nullable (`Connection[X] | None`),
    so a refusal nulls the field alone, where a non-null one nulled its parent and every
    field asked for beside it; its description ends with that rule (`REFUSED_ARGUMENTS`)."""
    return strawberry.field(description=f"{description} {REFUSED_ARGUMENTS}")


# --- the kinds of key a cursor carries -----------------------------------------------------------
# Each takes a cursor's key as JSON gave it and `what` (the cursor, for the message), and
# answers the key as the list compares it, or InvalidInputError: a key of another kind, or
# out of range, is a cursor this API did not issue for the list.
KeyRule = Callable[[Any, str], Any]
ROW_IDS = range(1, 2**63)  # the store's 64-bit ledger row ids; a key past them was never issued
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
LONGEST_TEXT = 100  # a symbol, a news kind, a macro source or code


def _not_issued(what: str, value: Any, kind: str) -> InvalidInputError:
    shown = json.dumps(value, allow_nan=True)[:40]
    return InvalidInputError(f"{what} was not issued by this API: its key {shown} is not {kind}; pass it unchanged")


def row_id(value: Any, what: str) -> int:
    """A ledger row id (a trade's, a cash movement's, a document's)."""
    if type(value) is int and value in ROW_IDS:
        return value
    raise _not_issued(what, value, "a ledger row id")


def day(value: Any, what: str) -> date:
    """A trading date as issued (YYYY-MM-DD), real and within the supported dates."""
    if isinstance(value, str) and DAY.fullmatch(value):
        return supported_date(value, what)
    raise _not_issued(what, value, "a date YYYY-MM-DD")


def moment(value: Any, what: str) -> datetime:
    """A timestamp, its date within the supported dates."""
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise _not_issued(what, value, "a timestamp") from None
    supported_date(parsed.date(), what)
    return parsed


def text(value: Any, what: str) -> str:
    """A name (a symbol, a news kind, a macro source or code): printable text."""
    if isinstance(value, str) and 0 < len(value) <= LONGEST_TEXT and unprintable(value) is None:
        return value
    raise _not_issued(what, value, "a name")


def flag(value: Any, what: str) -> bool:
    """A yes or no (a suggestion's side: buy after sell)."""
    if isinstance(value, bool):
        return value
    raise _not_issued(what, value, "true or false")


def keyed(*parts: KeyRule) -> KeyRule:
    """A key of several parts, each of its own kind (a suggestion's day, side and symbol)."""

    def rule(value: Any, what: str) -> list[Any]:
        if not isinstance(value, list) or len(value) != len(parts):
            raise _not_issued(what, value, f"a list of {len(parts)}")
        return [part(item, what) for part, item in zip(parts, value)]

    return rule


@dataclass(frozen=True)
class Page:
    """A list's paging rules: its name (in cursors), default and largest page size, the
    kind of its key (`key`), and whether it is one portfolio's list (`owned`) or one
    instrument's (`per_instrument`): then its cursors are read and written by the page
    `of` that portfolio or `on` that instrument, and name it."""

    name: str
    default: int
    largest: int
    key: KeyRule
    owned: bool = False
    owner: str | None = None
    per_instrument: bool = False
    instrument: str | None = None

    def of(self, portfolio_id: str) -> Page:
        """This list of `portfolio_id`'s: its cursors carry the portfolio's tag."""
        return replace(self, owner=portfolio_id)

    def on(self, symbol: str) -> Page:
        """This list of instrument `symbol`'s: its cursors carry the symbol."""
        return replace(self, instrument=symbol)

    @property
    def _tags(self) -> list[str]:
        """What a cursor carries after its key: the owner's tag (a digest: a cursor travels
        in URLs and logs, the portfolio id need not), the instrument's symbol (market data,
        everyone's: named as it is, so a refusal can say whose list the cursor pages), or
        nothing for a list of everyone's."""
        if self.owner is not None:
            return [hashlib.blake2b(self.owner.encode(), digest_size=6, person=b"cursor").hexdigest()]
        return [self.instrument] if self.instrument is not None else []

    def size(self, first: int | None) -> int:
        size = self.default if first is None else first
        if not 1 <= size <= self.largest:
            raise InvalidInputError(f"`first` must be between 1 and {self.largest} for {self.name}, not {size}")
        return size

    def cursor(self, key: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps([self.name, key, *self._tags], default=str).encode()).decode()

    def key_after(self, after: str | None, issued_as: str = GRAPH_CURSOR) -> Any:
        """The key a cursor of this list (of this portfolio) carries, of the list's kind
        (`key`); None for no cursor, the first page. A cursor longer than any this API
        issues is refused before it is decoded (a deeply nested one would exhaust the
        decoder). `issued_as`: the field the caller's surface hands cursors out in, which a
        refusal tells it to pass back unchanged (REST's `next_cursor`)."""
        if after is None:
            return None
        if self.owned and self.owner is None:
            raise TypeError(f"{self.name} is one portfolio's list: read its cursors on Page.of(portfolio_id)")
        if self.per_instrument and self.instrument is None:
            raise TypeError(f"{self.name} is one instrument's list: read its cursors on Page.on(symbol)")
        name, key, *tags = _opened(after, issued_as)
        if name != self.name:
            owner = name[:40] if isinstance(name, str) else "no list"
            raise InvalidInputError(f"that cursor belongs to {owner}, not {self.name}")
        if tags != self._tags and self.instrument is not None:
            raise InvalidInputError(_not_this_instrument(tags, self.name, self.instrument))
        if tags != self._tags:
            raise InvalidInputError(
                f"that cursor was not issued for this portfolio's {self.name} (a cursor pages the list of the "
                "portfolio it was issued for, another client's is refused); start from the first page"
            )
        return self.key(key, f"the {self.name} cursor")

    def names(self, cursor: str) -> bool:
        """Whether `cursor` is one of this list's (of any portfolio or instrument): for a
        transport whose one parameter takes the cursors of two lists (REST's market history,
        forward and backward), to tell which list reads it; a cursor that is no list's is
        not."""
        try:
            return _opened(cursor, GRAPH_CURSOR)[0] == self.name
        except InvalidInputError:
            return False

    def slice(
        self,
        items: Iterable[Item],
        key: Callable[[Item], Any],
        first: int | None,
        after: str | None,
        order: str = "ascending",
        issued_as: str = GRAPH_CURSOR,
    ) -> tuple[list[Item], PageInfo]:
        """A page of `items` (already in list order) after the cursor's item.

        `order` says how the list is sorted by `key`: "ascending" or "descending" (the page
        starts at the first key beyond the cursor's, so it holds even if that item is gone),
        or "as-listed" for a list in its own stable order with unique keys (an append-only
        ledger): the page starts after the item whose key is the cursor's. `issued_as`: as
        `key_after`'s.
        """
        size, last_key = self.size(first), self.key_after(after, issued_as)
        items = list(items)
        if last_key is not None:
            bound = _comparable(last_key)
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


def _opened(cursor: str, issued_as: str) -> list[Any]:
    """A cursor's parts as issued (its list's name, its key, its tags), or InvalidInputError
    for one this API did not issue. One longer than any this API issues is refused before it
    is decoded (a deeply nested one would exhaust the decoder)."""
    if len(cursor) > CURSOR_LENGTH:
        raise InvalidInputError(
            f"a cursor is at most {CURSOR_LENGTH} characters, not {len(cursor)}; pass {issued_as} unchanged"
        )
    try:
        parts = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, TypeError, RecursionError):
        parts = None
    if not isinstance(parts, list) or len(parts) < 2:
        raise InvalidInputError(f"cursor '{cursor[:60]}' was not issued by this API; pass {issued_as} unchanged")
    return parts


def _not_this_instrument(tags: list[Any], name: str, symbol: str) -> str:
    """Why a cursor tagged `tags` does not page instrument `symbol`'s list `name`: it names
    another instrument (its first 40 characters), or none (a cursor without its symbol
    cannot say which instrument's list it pages)."""
    theirs = tags[0] if len(tags) == 1 and isinstance(tags[0], str) else None
    if theirs:
        return f"that cursor belongs to {theirs[:40]}'s {name}, not {symbol}'s; start from the first page"
    return f"that cursor names no instrument, so it does not page {symbol}'s {name}; start from the first page"


def _comparable(key: Any) -> Any:
    """Keys travel as JSON: dates become ISO strings, tuples lists; compare them the same way."""
    if isinstance(key, (list, tuple)):
        return [_comparable(k) for k in key]
    return key if isinstance(key, (int, float)) else str(key)
