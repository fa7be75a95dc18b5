"""Shared pieces: the problem+json body and the error responses each endpoint documents."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import partial
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema

from api.contract import ApiModel, conform, shown
from market import money
from market.clock import supported_date
from market.errors import InvalidInputError
from market.money import DIGITS, MONEY_OUT, parse_money, parse_quantity, too_many_digits

T = TypeVar("T")


def _rule(parse: Callable[..., T], name: str, **options: Any) -> Callable[[Any], T]:
    """market's `parse(value, name)` as a pydantic validator: the InvalidInputError it raises
    becomes the ValueError pydantic reports as the field's 422 error, with the same detail."""

    def check(value: Any) -> T:
        try:
            return parse(value, name, **options)
        except InvalidInputError as error:
            raise ValueError(error.detail) from None

    return check


# Money and share quantities in request bodies: market.money's one strict rule (money in
# whole cents, a quantity a JSON integer), the rule GraphQL's scalars and the CLI apply too.
MoneyIn = Annotated[Decimal, BeforeValidator(_rule(parse_money, "the amount"))]
QuantityIn = Annotated[int, BeforeValidator(_rule(parse_quantity, "the quantity"))]


def _count_text(value: Any) -> Any:
    """A count as a query string gives it (a page's `limit`): its digits and nothing else,
    the rule a quantity in a query string follows (docs/api.md "Numbers in"); pydantic's lax
    integers took "1_0" as 10 and "+5", " 5" or "5.0" as 5. The int default passes as it is."""
    if isinstance(value, str) and not DIGITS.fullmatch(value):
        longer = too_many_digits(value)
        raise ValueError(longer or f"must be a whole number, its digits and nothing else, not {value[:40]!r}")
    return value


def whole_query(query: Any, shares: bool = False) -> Any:
    """A whole-number query parameter: `query` (FastAPI's `Query`, its bounds and words) read
    by the query string's number rule, its digits and nothing else: a count (a page's size),
    or with `shares` a quantity by market.money's rule and words. The bounds stand before
    the rule so that OpenAPI states them as `minimum`/`maximum`: after it pydantic could
    only copy them raw (`ge`, `le`), which no JSON Schema reader knows."""
    rule = _rule(parse_quantity, "the quantity", text=True) if shares else _count_text
    return Annotated[int, query, BeforeValidator(rule)]


def _decimal_text(kind: object, pattern: str, example: str, description: str) -> Any:
    """A field of type `kind` (market.money's `Money` or `Price`) as a response writes it:
    decimal text by the contract's rule for the type (market.contract `shown`), documented as such."""
    schema = {"type": "string", "pattern": pattern, "examples": [example], "description": description}
    return Annotated[kind, PlainSerializer(partial(shown, kind), return_type=str), WithJsonSchema(schema)]


# Money in every response: decimal text with the currency's 2 minor-unit digits, never a
# float and never "100000.000000" beside "0" (market.money.money_display).
Money = _decimal_text(
    money.Money,
    f"^{MONEY_OUT.pattern}$",
    "125000.00",
    "An amount in the market's currency, decimal text with 2 places.",
)
# A booked price per share (a trade's, a suggestion's limit, a preview's): two decimals where
# it is whole cents, else the decimals it was stored with, so price x quantity is the value
# to the cent (market.money.price_display).
Price = _decimal_text(
    money.Price,
    r"^-?[0-9]+\.[0-9]{2,6}$",
    "39.05",
    "A price per share, decimal text: 2 places where it is whole cents (every price booked now), else the "
    "places it was stored with (an older fill, a statement's average cost), at most 6, so that price x "
    "quantity is the value to the cent.",
)

# A fraction in every response: a number with at most six decimals (0.05 is 5%), by the
# contract's rule for the type; documented as any number.
Fraction = Annotated[money.Fraction, PlainSerializer(partial(shown, money.Fraction), return_type=float)]


@dataclass(frozen=True)
class Declared:
    """A document field's declared type, kept on its annotation for its readers (the
    contract test walks an answer by it)."""

    kind: Any


def document(kind: Any, json: Any = dict[str, Any]) -> Any:
    """A JSON document a response carries as it is (a trade's rationale, an AI day's
    summary, a statement's changes), documented as `json` (an object; a list of them), its
    money, prices and fractions printed by its declared type `kind` (a TypedDict, a union
    of them, `JsonOf[dataclass]`; market.contract `conform`)."""
    return Annotated[json, PlainSerializer(partial(conform, kind=kind), return_type=json), Declared(kind)]


# Every date a REST caller gives: YYYY-MM-DD within market.clock.SUPPORTED_DATES (422 otherwise).
# Read by that rule before pydantic's own, which takes a datetime at midnight (dropping its
# offset) or a Unix time as a date.
SupportedDate = Annotated[date, BeforeValidator(_rule(supported_date, "the date"))]

# An idempotency key (REST's Idempotency-Key header, GraphQL's idempotencyKey argument, one
# store): 1 to 200 printable ASCII characters, what an HTTP header carries as text. A byte
# past ASCII reached the app as Latin-1 text and was kept as a key; a control character
# other than tab is refused by the HTTP parser before the app sees it (docs/api.md).
LONGEST_IDEMPOTENCY_KEY = 200
IDEMPOTENCY_KEY = re.compile(f"[ -~]{{1,{LONGEST_IDEMPOTENCY_KEY}}}")


def checked_idempotency_key(value: str, name: str) -> str:
    """`value` unchanged, or InvalidInputError naming `name` and what is wrong with it."""
    if IDEMPOTENCY_KEY.fullmatch(value):
        return value
    wrong = next((f"U+{ord(c):04X} at position {i}" for i, c in enumerate(value) if not " " <= c <= "~"), None)
    found = f"holds {wrong}" if wrong else f"is {len(value)} characters"
    raise InvalidInputError(
        f"{name} must be 1 to {LONGEST_IDEMPOTENCY_KEY} printable ASCII characters (letters, digits, "
        f"punctuation, space); this one {found}"
    )


IdempotencyKeyIn = Annotated[
    str,
    AfterValidator(_rule(checked_idempotency_key, "Idempotency-Key")),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": f"^{IDEMPOTENCY_KEY.pattern}$",
            "minLength": 1,
            "maxLength": LONGEST_IDEMPOTENCY_KEY,
        }
    ),
]


class Problem(ApiModel):
    """RFC 9457 problem details; every non-2xx response has this body."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "example": {
                "type": "/problems/not-found",
                "title": "Not Found",
                "status": 404,
                "detail": "no instrument 'XYZ'",
                "instance": "/api/market/symbol/XYZ",
                "request_id": "5f0c6d3e9b2a4f1e8d7c6b5a49382716",
            }
        },
    )

    type: str = Field(
        description="URI reference, relative to the service, of the page documenting this problem type "
        "(GET it: no key needed)."
    )
    title: str
    status: int
    detail: str
    instance: str
    request_id: str
    errors: list[dict[str, Any]] | None = Field(default=None, description="422 only: the failing fields.")


DESCRIPTIONS = {
    400: "The body could not be read: not UTF-8, JSON nested more than 32 levels, a number of more "
    "than 100 characters, or an unreadable multipart form; the detail names what.",
    401: "The X-API-Key header is absent, malformed, unknown or revoked.",
    403: "The key is valid but lacks the right (admin-only endpoint, tier, macro access).",
    404: "Nothing with that identifier is visible to this key.",
    409: "The request is valid but the current state forbids it.",
    413: "The body is over its size limit (`MARKETINTEL_MAX_BODY_BYTES`; an upload's `MARKETINTEL_PDF_MAX_BYTES`).",
    414: "The URL is over `MARKETINTEL_MAX_URL_BYTES` (8,192 bytes by default).",
    415: "The body is not of a media type this endpoint reads (application/json; multipart/form-data for an "
    "upload), whatever the method, or is sent with a content coding (Content-Encoding: gzip; none is decoded); an "
    "upload's file that is not a PDF or text.",
    422: "The request does not match the schema or the domain rules; `errors` names the fields.",
    429: "Over the key's rate limit; see Retry-After and RateLimit headers.",
    503: "The data the request needs is not ready yet.",
}
RATE_HEADERS = {
    "RateLimit-Policy": {"description": "The key's policy: quota per window.", "schema": {"type": "string"}},
    "RateLimit": {"description": "Remaining requests and seconds to the window's end.", "schema": {"type": "string"}},
}


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the given error statuses (401, 422 and 429 are added to all keyed endpoints)."""
    result: dict[int | str, dict[str, Any]] = {}
    for status in sorted(set(statuses)):
        # api/openapi.py moves the body under application/problem+json
        entry: dict[str, Any] = {"description": DESCRIPTIONS[status], "model": Problem}
        if status == 401:
            entry["headers"] = {
                "WWW-Authenticate": {
                    "description": 'The challenge: APIKey header="X-API-Key".',
                    "schema": {"type": "string"},
                }
            }
        if status == 429:
            entry["headers"] = {
                **RATE_HEADERS,
                "Retry-After": {"description": "Seconds to wait.", "schema": {"type": "string"}},
            }
        result[status] = entry
    return result


KEYED = (401, 422, 429)


def example(sample: dict[str, Any], **config: Any) -> ConfigDict:
    """A documented body's config: its one OpenAPI example, `sample` as a response shows it
    (`conform`, the rule every response passes: a timestamp written "2026-11-20T15:31:05Z"
    is documented as the exchange time a response serves, "2026-11-20T10:31:05", the
    pattern its field declares), what `example_of` reads back, and any other settings in
    `config`; written once for every schema with an example."""
    return ConfigDict(json_schema_extra={"examples": [conform(sample)]}, **config)


def example_of(model: type[BaseModel]) -> dict[str, Any]:
    """The first example `model` declares, for the examples of the bodies that hold it."""
    return model.model_config["json_schema_extra"]["examples"][0]  # type: ignore[index]


def page_example(item: type[BaseModel]) -> ConfigDict:
    """A page's config whose example is one `item` (its own example) and no next page."""
    return example({"items": [example_of(item)], "next_cursor": None})


class CursorPage(ApiModel):
    """A REST list's page (api/paging.py): `items`, typed and described by each list's page,
    then `next_cursor`."""

    items: list[Any]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")
