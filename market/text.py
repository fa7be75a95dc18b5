"""The one rule for text that reaches storage: no NUL and no other control character.

Postgres refuses a NUL in a text column (the request then failed with a server error) and
no field of this service means anything by a control character, so every text a client
sends (a URL's path and query, a JSON body's keys and strings, a GraphQL string, an
upload's filename, a plain-text note) is refused with the position of the first one.
Tab, line feed and carriage return are text. Text extracted from a PDF is not the
client's typing: its control characters are dropped instead (`printable`). A symbol a
client asks for is compared with the listed ones in capitals of ASCII letters only
(`asked_symbol`); a symbol is made of `SYMBOL_CHARACTERS`, at most `SYMBOL_LENGTH` of them
(the API's path parameter and the importer's ticker rule).
"""

from __future__ import annotations

import re

from market.errors import InvalidInputError

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
SYMBOL_CHARACTERS = r"A-Za-z0-9.\-"  # a regular expression's class: KCB, KPLC-P4, JMMBGL7.25
SYMBOL_LENGTH = 20
_ASCII_CAPITALS = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def asked_symbol(text: str) -> str:
    """A symbol as a client asks for it (a trade, a cost preview, GraphQL's `instrument`),
    to compare with the listed ones: case-insensitive in ASCII letters only. str.upper()
    also capitalises other scripts into ASCII (a dotless "ı" is "I", the ligature "ﬁ" is
    "FI"), so "lıq" booked a trade of LIQ; any other character is kept, and a symbol
    holding one is no listed symbol."""
    return text.translate(_ASCII_CAPITALS)


def control_character(text: str) -> str | None:
    """A sentence naming the first control character and where it is, or None."""
    found = CONTROL.search(text)
    if found is None:
        return None
    return f"U+{ord(found.group()):04X} at position {found.start()}"


def checked_text(text: str, what: str) -> str:
    """`text` unchanged, or InvalidInputError naming `what` and the character."""
    where = control_character(text)
    if where is not None:
        raise InvalidInputError(f"{what} contains a control character ({where}); send printable text")
    return text


def printable(text: str) -> str:
    """`text` without its control characters (tab, line feed and carriage return kept)."""
    return CONTROL.sub("", text)
