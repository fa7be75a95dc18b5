"""JSON request bodies, decoded strictly: an object that names a key twice is refused (422)
instead of silently keeping the last value, which would let a body say one thing to a
proxy or log that reads the first and another to the service. REST routers that take
JSON bodies use `StrictJSONRoute`; the GraphQL router decodes with `strict_json` too. The
same rule caps nesting at MAX_DEPTH levels (400), so a body of 2,000 nested arrays is a
clear refusal on REST and on /graphql alike, never a RecursionError; and a body that is not
UTF-8 text (RFC 8259's one encoding for JSON exchanged between systems) is a 400 naming
the first byte that is not, never a UnicodeDecodeError answered as a server error. A
number of more than MAX_NUMBER_DIGITS characters is a 400 saying so (`NumberTooLong`),
the same on REST and /graphql, in a body and in a GraphQL document's literals
(api/graphql/limits.py): Python's integer conversion refuses one past 4,300 digits with a
ValueError that REST answered "There was an error parsing the body" and /graphql a 500."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response

from api.security import KeyCheckedRoute
from market.money import WrittenNumber
from market.text import unprintable


class DuplicateKey(HTTPException):
    def __init__(self, key: str) -> None:
        super().__init__(
            status_code=422, detail=f"the JSON body names the key '{key[:60]}' more than once; send each key once"
        )


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(key)
        seen[key] = value
    return seen


MAX_DEPTH = 32  # arrays and objects inside one another; no body of this API needs more than a handful


class TooDeep(HTTPException):
    def __init__(self) -> None:
        super().__init__(
            status_code=400,
            detail=f"the JSON body nests arrays or objects more than {MAX_DEPTH} levels "
            "deep; no request of this API needs that",
        )


class ControlCharacter(HTTPException):
    def __init__(self, where: str) -> None:
        super().__init__(
            status_code=422,
            detail=f"the JSON body holds {where} in a key or "
            "string; send printable text (tab and line breaks are fine)",
        )


class NotUTF8(HTTPException):
    def __init__(self, error: UnicodeDecodeError) -> None:
        super().__init__(
            status_code=400,
            detail=f"the body is not UTF-8 text: byte 0x{error.object[error.start]:02x} at offset {error.start} "
            "is not UTF-8; send JSON encoded as UTF-8 (RFC 8259)",
        )


# The most characters a number may have, sign, point and exponent included: money is at most
# 14 + 6 digits and a count 15 (market/money.py), so 100 leaves every value this API takes
# its own refusal by range ("at most 1,000,000,000"), and is far below Python's 4,300.
MAX_NUMBER_DIGITS = 100


class NumberTooLong(HTTPException):
    def __init__(self, length: int, where: str = "the JSON body") -> None:
        super().__init__(
            status_code=400,
            detail=f"{where} holds a number of {length:,} characters; no value of this API needs "
            f"more than {MAX_NUMBER_DIGITS}",
        )


def _number(text: str, kind: type) -> int | float:
    """A JSON number's text as `kind` (int, or a WrittenNumber for one with a fraction or an
    exponent: a float that keeps its text, so money is read exactly, market/money.py), or
    NumberTooLong past MAX_NUMBER_DIGITS."""
    if len(text) > MAX_NUMBER_DIGITS:
        raise NumberTooLong(len(text))
    return kind(text)


def utf8_text(data: str | bytes) -> str:
    """A body's bytes as text: UTF-8 (a leading byte order mark skipped, as JSON decoders
    may), else NotUTF8 (400). json.loads would guess UTF-16 or UTF-32 from the first bytes
    and let a byte that is no UTF-8 escape as a UnicodeDecodeError."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise NotUTF8(error) from None


def _strings(value: Any) -> Any:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def depth(value: Any) -> int:
    """How many arrays and objects lie inside one another in a decoded value (iterative:
    a deep value cannot exhaust the interpreter's stack here)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                return level
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def strict_json(data: str | bytes, text_rule: bool = True) -> Any:
    """Decoded, refusing a body that is not UTF-8 (400), a key named twice (422), nesting
    deeper than MAX_DEPTH (400: the decoder's own recursion limit would otherwise surface
    as a server error), a number longer than MAX_NUMBER_DIGITS (400) and a key or
    string holding a control character (422, market/text.py). GraphQL decodes with
    `text_rule=False`: its variables are checked by the schema (api/graphql/limits.py) and
    refused as BAD_USER_INPUT in a GraphQL answer, as every GraphQL input error is."""
    try:
        value = json.loads(
            utf8_text(data),
            object_pairs_hook=_unique,
            parse_int=lambda text: _number(text, int),
            parse_float=lambda text: _number(text, WrittenNumber),
        )
    except RecursionError:
        raise TooDeep() from None
    if depth(value) > MAX_DEPTH:
        raise TooDeep()
    if text_rule:
        where = first_unprintable(value)
        if where is not None:
            raise ControlCharacter(where)
    return value


def first_unprintable(value: Any) -> str | None:
    """What and where the first control character or lone surrogate (market/text.py
    `unprintable`) of any key or string of a decoded value is."""
    return next((w for text in _strings(value) if (w := unprintable(text)) is not None), None)


class StrictJSONRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = strict_json(await self.body())
        return self._json


class StrictJSONRoute(KeyCheckedRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict
