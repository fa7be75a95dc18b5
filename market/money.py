"""Money and share quantities as the service accepts them from outside, one strict rule
for REST bodies, GraphQL arguments and the CLI.

Money is decimal text of ASCII digits: an optional sign, at most 14 integer digits and 6
decimals, nothing else, and a whole number of cents (the currency's MONEY_PLACES: "6.480"
is 6.48, "52.001" is refused, never rounded), so a price and the cash its trade moves agree
to the cent. Python's Decimal() alone would also take full-width digits ("６.４８"),
underscores ("6_48" is 648), exponents, whitespace, NaN and infinities. A JSON number (a
REST body, a GraphQL variable) and a GraphQL number literal are read by the exact value
they denote, from their text (`WrittenNumber`), never from the float nearest it: 1e3 is the
number 1000, 51.999999999999999999 is not whole cents (docs/api.md, "Numbers in"). A
quantity is a whole number, never a boolean (true is not one share), text ("10") or a
float (1.0); where every value is text (a query string, the CLI) its digits and nothing
else ("1_0", "1.0", "+5" are refused).

What a number is, money, a price per share, a fraction or a count of shares, is a type
(`Money`, `Price`, `Fraction`, `Shares`), declared on the field that holds it in a read
model's dataclass or a document's TypedDict: every surface prints a field by its declared
type (market/contract.py `shown`), never by its name, so a fraction cannot print as money
nor money as a fraction (a `spread` is `Money` in a fill's costs and a `Fraction` of the
price in a prediction).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import NewType

from market.errors import ConfigurationError, InvalidInputError

MONEY_DIGITS = 14  # the most digits money may have before the point, as text or a number
MONEY_TEXT = re.compile(rf"[+-]?[0-9]{{1,{MONEY_DIGITS}}}(\.[0-9]{{1,6}})?")
# Amounts leave the service with the currency's minor-unit digits (ISO 4217): 2 for JMD,
# KES and USD, the currencies this service lists and reports in.
MONEY_PLACES = 2
MONEY_OUT = re.compile(rf"-?[0-9]+\.[0-9]{{{MONEY_PLACES}}}")
CENTS = Decimal("0.01")
PRICE_PLACES = Decimal("0.000001")  # the most places a price per share is shown with
# The largest cash movement (a deposit, or a withdrawal as its negative) one request may
# make, whichever way it comes: REST's CashIn and GraphQL's moveCash (api/schemas), the CLI's
# `portfolio open --cash` and the domain's move_cash (portfolio/trading.py) all apply it.
MAX_CASH_MOVEMENT = Decimal("1000000000")
# The largest amount of money the service books or charges: a manual trade's price or fees
# (portfolio/trading.py), a statement's cash or price (portfolio/statements.py) and a fee
# minimum in the settings or a fee file (`setting_amount`). The store keeps MONEY_DIGITS
# integer digits; nothing real comes near.
MAX_AMOUNT = Decimal("1000000000000")
# The largest share count one line may state (a statement's holding, a day's traded volume
# in a market file or on the exchange's page) and the largest price per share: far past any
# listing, far inside the store's BIGINT and every float's exact integers. A number past
# them is a misprint or an attack, refused with its line (portfolio/statements.py,
# ingest/importers/formats.py, ingest/exchange/validation.py), never a database error.
MAX_SHARES = 10**12
MAX_PRICE = 10**12
# The most shares one order may ask for: a manual trade (REST, GraphQL, the CLI) and its
# cost preview alike, so a preview never prices an order the trade would refuse.
MAX_ORDER_SHARES = 10**9

# The kinds of number the service prints, by type (the module docstring). NewTypes: no cost
# at run time; a field declared with one says what its value is wherever it goes, REST's
# schema, GraphQL's scalar, the CLI's JSON and the reports' columns. In a JSON document (a
# rationale, a day's summary) money and prices are kept as decimal text and declared so too.
Money = NewType("Money", Decimal)  # an amount in the currency: cash, values, PnL, fees, costs, a fill's touch
Price = NewType("Price", Decimal)  # a booked price per share: price x quantity is the value to the cent
Fraction = NewType("Fraction", float)  # a share of a whole: 0.05 is 5% (a return, a weight, a spread of a price)
Shares = NewType("Shares", int)  # a whole number of shares, or a traded volume


class WrittenNumber(float):
    """A number a client wrote with a fraction or an exponent (a JSON number, a GraphQL number
    literal): the float a decoder reads, which every input but money takes as before, and
    the text it was written as, from which money is read exactly (`parse_money`):
    51.999999999999999999 is not whole cents, though its nearest float prints as 52.0. Its
    repr is that text, so a refusal names the number as it was sent."""

    text: str

    def __new__(cls, text: str) -> WrittenNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __repr__(self) -> str:
        return self.text


def parse_money(value: object, name: str) -> Decimal:
    """`value` as an exact Decimal of whole cents, or InvalidInputError saying what a money
    value looks like. `value` is whatever the client sent (a JSON value, a GraphQL literal,
    the CLI's text): checking its type is this function's job, so it takes any object. Text
    is read by its characters (`MONEY_TEXT`), a number by the value it denotes (`_denoted`)."""
    if isinstance(value, str):
        amount = Decimal(value) if MONEY_TEXT.fullmatch(value) else None
    else:
        amount = _denoted(value)
    if amount is None:
        raise InvalidInputError(
            f"{name} must be a decimal number like 101.50 (ASCII digits, at most 14 before "
            f"and 6 after the point), not {repr(value)[:40]}"
        )
    return whole_cents(amount, name).quantize(CENTS)


def _denoted(value: object) -> Decimal | None:
    """The exact value of a number (a written number by its text, a float by the shortest
    text that reads back as it, as a JSON decoder prints it), or None for anything else, a
    value that is not finite and one of more than MONEY_DIGITS digits before the point."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    written = value.text if isinstance(value, WrittenNumber) else repr(value) if isinstance(value, float) else value
    try:
        amount = Decimal(written)
    except InvalidOperation:  # an exponent past what a Decimal holds: no amount of money
        return None
    return amount if amount.is_finite() and amount.adjusted() < MONEY_DIGITS else None


def setting_amount(value: object, name: str) -> Decimal:
    """A configured amount of money (a fee minimum: a setting, a fee file's field) as an
    exact Decimal: a number, finite, from 0 up to MAX_AMOUNT; else ConfigurationError, one
    line naming `name` and the value as it was given. An infinite or huge minimum would
    load and then break every fee (to_cents of it) on every priced request."""
    amount = None if isinstance(value, str) else _denoted(value)
    if amount is None or not 0 <= amount <= MAX_AMOUNT:
        shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:20]}... ({len(repr(value))} characters)"
        raise ConfigurationError(
            f"{name} = {shown} is not an amount of money: a finite number from 0 up to {MAX_AMOUNT:,}"
        )
    return amount


def whole_cents(amount: Decimal, name: str) -> Decimal:
    """`amount` when it is a whole number of cents (the currency's MONEY_PLACES), else
    InvalidInputError: money a client gives (a price, fees, a deposit) is never rounded, so
    the price a trade stores and the cash it moves agree to the cent. The domain applies it
    to a manual trade's terms too (portfolio/ledger.py), whichever way they came."""
    if not amount.is_finite() or amount != amount.quantize(CENTS):
        raise InvalidInputError(
            f"{name} must be a whole number of cents (at most {MONEY_PLACES} decimals that are "
            f"not zero), not {_written(amount)}"
        )
    return amount


def _written(amount: Decimal) -> str:
    """`amount` in plain digits where that is short, else as Decimal prints it (1E-999999999)."""
    return format(amount, "f") if amount.is_finite() and -40 < amount.adjusted() < 40 else str(amount)


def parse_quantity(value: object, name: str, text: bool = False) -> int:
    """`value` (whatever the client sent) as a whole number of shares. The one rule for a
    JSON body, a GraphQL argument, a query string and the CLI alike: the digits of a whole
    number and nothing else. In a body or GraphQL that is a JSON integer (not a boolean,
    text or float: 1.0 is refused); in a query string or a CLI argument (`text`), where
    every value is text, the same digits (so "1000.0", "1e3", "1_0", "+5" and " 5" are
    refused there as 1.0 is in a body)."""
    if text and isinstance(value, str) and DIGITS.fullmatch(value):
        return int(value)
    longer = too_many_digits(value) if text else None
    if longer is not None:
        raise InvalidInputError(f"{name} {longer}")
    if text or isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{name} must be a whole number of shares, not {repr(value)[:40]}")
    return value


# A number as an exchange page, a market file or a broker's statement prints it: ASCII
# digits with thousands commas in threes, an optional point ("1,234.50"), and an optional
# sign, written as accountants print one too: a leading "+", "-" or the minus sign U+2212
# before the digits, or the whole figure in parentheses ("(1,000.00)"), both read as
# negative (`printed_number`). So "12,50" (a decimal comma), "0,325" (one: no thousands
# group starts with 0, and it was read as 325), "1e5", "inf" and "nan" are not numbers,
# never read as 1250 or guessed, and neither are other scripts' digits (`\d` and
# Decimal() take "1,৪00.00", a Bengali four drawn like an eight, as 1,400; full-width and
# Arabic-Indic digits alike), as money is ASCII digits everywhere else (`MONEY_TEXT`), nor
# half a sign ("(1,000.00", "-(5.00)"). ingest/exchange/parsers.py and
# portfolio/statements.py read by it; whether a negative figure is meaningful is theirs to
# say (a statement's cash movement, yes; a price or a share count, no).
_UNSIGNED = r"(?:[1-9][0-9]{0,2}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?"
PRINTED_NUMBER = re.compile(rf"(?P<sign>[+\-\u2212]?)(?P<digits>{_UNSIGNED})|\((?P<owed>{_UNSIGNED})\)")
WHOLE_DIGITS = 15  # the most digits a whole number as text may have
DIGITS = re.compile(rf"[0-9]{{1,{WHOLE_DIGITS}}}")  # a whole number as text: ASCII digits, nothing else


def too_many_digits(value: object) -> str | None:
    """What is wrong with text that is a whole number's ASCII digits but more of them than
    DIGITS takes ("has 19 digits; ..."), else None: such a number was refused as not being
    a whole number, which it is."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) > WHOLE_DIGITS:
        return f"has {len(value)} digits; a whole number here has at most {WHOLE_DIGITS}"
    return None


def printed_number(text: str) -> Decimal | None:
    """The value of a figure printed by `PRINTED_NUMBER`, exactly, or None when `text` is
    not one: "1,234.50" is 1234.50; "-1,000.00", the same after
    the minus sign U+2212, and "(1,000.00)" are -1000.00."""
    found = PRINTED_NUMBER.fullmatch(text)
    if found is None:
        return None
    if found["owed"] is not None:
        return -Decimal(found["owed"].replace(",", ""))
    value = Decimal(found["digits"].replace(",", ""))
    return -value if found["sign"] in ("-", "\u2212") else value


def money_text(value: Decimal) -> str:
    """The canonical text of an amount: the same for 6.48 and 6.480 (idempotency fingerprints)."""
    normalised = value.normalize()
    return format(normalised, "f") if normalised != 0 else "0"


def money_display(value: Decimal | float | int) -> str:
    """An amount as the API and the reports show it: decimal text with exactly
    MONEY_PLACES digits after the point, half-up ("100000.00", "0.00", "-12.35"). Stored
    amounts keep their full precision; only the answer is rounded."""
    amount = value if isinstance(value, Decimal) else Decimal(str(value))
    shown = amount.quantize(Decimal(1).scaleb(-MONEY_PLACES), rounding=ROUND_HALF_UP)
    return format(shown + 0, "f")  # + 0 turns -0.00 into 0.00


def price_display(value: Decimal | float | int) -> str:
    """A booked price per share as every surface shows it: with the currency's two decimals
    where it is whole cents (every fill, manual trade and suggestion since prices became
    cents, market/costs.py), else with the decimals it was stored with, at most six (an
    older AI fill, a statement's average cost per share), so that price x quantity is the
    trade's value to the cent wherever it is printed (docs/api.md, "Prices that multiply")."""
    amount = shown_price(value)
    if not amount.is_finite() or amount == amount.quantize(CENTS):
        return money_display(amount)
    return format(amount.normalize(), "f")


def shown_price(value: Decimal | float | int) -> Decimal:
    """A price per share at the places every surface shows it (`price_display`): at most
    PRICE_PLACES, half up. A value worked out from a price that is no whole number of cents
    (a close divided by a split's ratio) is this price times the quantity, so that the price
    shown times the quantity shown is the value shown, to the cent."""
    amount = value if isinstance(value, Decimal) else Decimal(str(value))
    return amount.quantize(PRICE_PLACES, rounding=ROUND_HALF_UP) if amount.is_finite() else amount


def to_cents(value: Decimal | int | str) -> Decimal:
    """Money as it is stored: rounded to the cent, half up. Every cash entry (a trade's
    gross and fee, a deposit, a dividend) is stored so, so what a balance shows is what the
    ledger holds (a fee of 294.7825 once left a balance shown as 21,520.93 that could not
    be withdrawn). Prices keep their own precision: a price is not money moved."""
    return Decimal(value).quantize(CENTS, rounding=ROUND_HALF_UP)
