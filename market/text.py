"""The one rule for text that reaches storage: no NUL and no other control character.

Postgres refuses a NUL in a text column (the request then failed with a server error) and
no field of this service means anything by a control character, so every text a client
sends (a URL's path and query, a JSON body's keys and strings, a GraphQL string, an
upload's filename, a plain-text note) is refused with the position of the first one.
Tab, line feed and carriage return are text. A lone surrogate (half of a UTF-16 pair,
which JSON's `\ud800` escape and an argument's undecodable byte give) is no character and
no UTF-8 text: it is refused the same way (`unprintable`). Text extracted from a PDF is not the
client's typing: its control characters are dropped instead (`printable`). Text written
where a line is one event (a log record, the CLI's one-line error) has its line breaks and
other control characters escaped instead (`one_line`: "a\nb" is written `a\nb`), so a
client's text cannot start a line of its own. A symbol a
client asks for is compared with the listed ones in capitals of ASCII letters only
(`asked_symbol`). A ticker is a letter or digit, then `SYMBOL_CHARACTERS`, at most
`SYMBOL_LENGTH` of them (`TICKER_PATTERN`: the importer's ticker rule). A stored symbol is a
ticker, or the earlier company on a reused ticker: the ticker, `~` and that company's last
day (`retired_symbol`, ABC~2025-09-30; ingest/importers/renames.py `Reuse`). `STORED_SYMBOL`
and `STORED_SYMBOL_LENGTH` say exactly that, for the API's path parameter: what the store
can hold is served, anything else refused. A declared content type is compared by its
`media_type` (lower-cased, without parameters): a PDF is one of `PDF_TYPES`. A feed's
text, HTML or not, is compared, stored and scored as `plain_text`, a link kept and
served only as a `web_link`, and an address or a feed's id stored only where it `fits_key`.
A URL shown or kept for display (a failure's message, its `ingest_failures` row, a log line,
a stage's summary, a delivery's manifest, a link the API serves) is `masked_urls`: an address
the operator configured may carry credentials (`https://user:secret@feeds.example/rss`,
`?apikey=...`), which only the request itself uses.
"""

from __future__ import annotations

import html
import re
import unicodedata
from datetime import date
from urllib.parse import urlsplit

from market.errors import InvalidInputError

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# half of a UTF-16 pair alone (JSON's "\ud800", an argument's undecodable byte as Python
# reads it): no character, and UTF-8 cannot encode it (the database driver, a JSON
# response and a log stream each raised UnicodeEncodeError)
SURROGATE = re.compile(r"[\ud800-\udfff]")
UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")  # either
SYMBOL_CHARACTERS = r"A-Za-z0-9.\-"  # a regular expression's class: KCB, KPLC-P4, JMMBGL7.25
SYMBOL_LENGTH = 20
# a ticker: first a letter or a digit ("-" is a file's empty cell)
TICKER_PATTERN = rf"[A-Za-z0-9][{SYMBOL_CHARACTERS}]{{0,{SYMBOL_LENGTH - 1}}}"
# a ticker as a broker's statement prints it: TICKER_PATTERN in capitals (KPLC-P4, 3MCO)
PRINTED_TICKER = rf"[A-Z0-9][A-Z0-9.\-]{{0,{SYMBOL_LENGTH - 1}}}"
RETIRED_MARK = "~"  # between a reused ticker and its earlier company's last day
# ASCII digits: the API's pattern runs in pydantic-core's Rust regex, whose \d is any script's
_RETIRED_DAY = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
STORED_SYMBOL = rf"^{TICKER_PATTERN}(?:{RETIRED_MARK}{_RETIRED_DAY})?$"
STORED_SYMBOL_LENGTH = SYMBOL_LENGTH + len(f"{RETIRED_MARK}2025-09-30")
_ASCII_CAPITALS = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})  # the media types a PDF is declared as


def media_type(declared: str | None) -> str:
    """A declared content type's media type: lower-cased, without its parameters
    (`Application/PDF; charset=binary` is `application/pdf`), to compare with PDF_TYPES."""
    return (declared or "").split(";")[0].strip().lower()


# a tag, a comment or a doctype; a lone "<" is text. A tag holds no "<": looking for the
# ">" of each "<a" to the end of a title of them took time quadratic in its length
_TAG = re.compile(r"</?[A-Za-z!][^<>]*>")


def plain_text(markup: str) -> str:
    """`markup` (HTML or plain text) as plain text: tags dropped (each a space: "a<br>b" is
    two words), entities read ("&amp;" is "&"), every run of whitespace one space."""
    return " ".join(html.unescape(_TAG.sub(" ", markup)).split())


# the longest address or feed id of an item stored, in UTF-8 bytes: each is an index entry,
# and Postgres refuses one over 2,704 bytes (a feed item's 8,000-byte link failed the day's
# whole text ingest)
MAX_KEY_BYTES = 2000


# the query parameters whose values are credentials, compared without regard to case
CREDENTIAL_PARAMETERS = (
    "key",
    "apikey",
    "api_key",
    "api-key",
    "token",
    "access_token",
    "auth_token",
    "secret",
    "client_secret",
    "password",
    "sig",
    "signature",
)
MASK = "***"
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
_USERINFO = re.compile(r"^([^:]+://)[^/?#]*@")
_CREDENTIAL_VALUE = re.compile(rf"([?&;](?:{'|'.join(map(re.escape, CREDENTIAL_PARAMETERS))})=)[^&;#]*", re.I)


def masked_urls(text: str) -> str:
    """`text`, a URL or a message holding URLs, as it is shown: each URL's userinfo replaced
    (`https://***@feeds.example/rss`) and the value of each of its `CREDENTIAL_PARAMETERS`
    masked (`?apikey=***&date=2026-11-20`), the rest as written. A URL is absolute (a scheme
    and `://`); a path and query alone (an access log's) is left as it is. For display only:
    the request itself uses the URL as configured."""
    return _URL.sub(_masked, text)


def _masked(url: re.Match[str]) -> str:
    return _CREDENTIAL_VALUE.sub(rf"\1{MASK}", _USERINFO.sub(rf"\1{MASK}@", url.group()))


def fits_key(text: str) -> bool:
    """Whether `text` is short enough to be stored as an address or id (`MAX_KEY_BYTES`)."""
    return len(text.encode("utf-8", "surrogatepass")) <= MAX_KEY_BYTES


def key_cut(text: str) -> str:
    """`text` cut to `MAX_KEY_BYTES` and marked "…" where it is longer: an address kept to
    say what was refused, which `fits_key` then refuses too."""
    if fits_key(text):
        return text
    return text.encode("utf-8", "surrogatepass")[:MAX_KEY_BYTES].decode("utf-8", "ignore") + "…"


def web_link(link: str | None) -> str | None:
    """A link as the service stores and serves it: a web address (http, https, or relative
    as written) that `fits_key`, else none: a feed's `javascript:` or `data:` link reached
    every client that shows the news as links; one that is no URL at all (an unclosed IPv6
    bracket) or too long to store stopped the whole feed's ingest."""
    try:
        web = bool(link) and urlsplit(link.strip()).scheme.lower() in ("", "http", "https")
    except ValueError:
        return None
    return link if web and fits_key(link) else None


def retired_symbol(ticker: str, last_day: date) -> str:
    """The symbol of the earlier company on a reused `ticker`, whose rows end on `last_day`
    (ABC~2025-09-30): `STORED_SYMBOL` reads it back."""
    return f"{ticker}{RETIRED_MARK}{last_day.isoformat()}"


def asked_symbol(text: str) -> str:
    """A symbol as a client asks for it (a trade, a cost preview, GraphQL's `instrument`),
    to compare with the listed ones: case-insensitive in ASCII letters only. str.upper()
    also capitalises other scripts into ASCII (a dotless "ı" is "I", the ligature "ﬁ" is
    "FI"), so "lıq" booked a trade of LIQ; any other character is kept, and a symbol
    holding one is no listed symbol."""
    return text.translate(_ASCII_CAPITALS)


def unprintable(text: str) -> str | None:
    """What the first control character or lone surrogate (`UNPRINTABLE`) of `text` is and
    where, as a phrase ("a control character (U+0007 at position 3)"), or None."""
    found = UNPRINTABLE.search(text)
    if found is None:
        return None
    where = f"U+{ord(found.group()):04X} at position {found.start()}"
    if SURROGATE.match(found.group()):
        return f"a lone surrogate ({where}: half of a UTF-16 pair, not a character)"
    return f"a control character ({where})"


def checked_text(text: str, what: str) -> str:
    """`text` unchanged, or InvalidInputError naming `what` and the character."""
    found = unprintable(text)
    if found is not None:
        raise InvalidInputError(f"{what} contains {found}; send printable text")
    return text


def format_character(text: str) -> str | None:
    """A sentence naming the first Unicode format character (category Cf: the bidirectional
    controls such as U+202E RIGHT-TO-LEFT OVERRIDE, zero-width spaces and joiners, a
    byte-order mark) and where it is, or None. Invisible, and a bidirectional control
    reorders what follows it: `invoice<U+202E>fdp.exe` displays as `invoiceexe.pdf`."""
    for position, character in enumerate(text):
        if unicodedata.category(character) == "Cf":
            named = unicodedata.name(character, "")
            return f"U+{ord(character):04X}{f' {named}' if named else ''} at position {position}"
    return None


def checked_name(text: str, what: str, max_length: int) -> str:
    """A name a client gives that the service stores and shows back (an upload's filename):
    `checked_text`, then at most `max_length` characters, then no format character
    (`format_character`: a name that displays as another); InvalidInputError naming `what`
    and the cause otherwise. Free text (a note, a research note's body) keeps its format
    characters: joiners and marks are part of some scripts' writing."""
    checked_text(text, what)
    if len(text) > max_length:
        raise InvalidInputError(
            f"{what} is {len(text):,} characters, more than the limit of {max_length:,}; send a shorter name"
        )
    where = format_character(text)
    if where is not None:
        raise InvalidInputError(
            f"{what} contains an invisible format character ({where}), which can make it display as another "
            "name; send it without"
        )
    return text


def encodable(text: str) -> str:
    """`text` with each lone surrogate written as its escape ("\\ud800"): text UTF-8 can
    write, for an answer that quotes what a client sent (a problem's detail)."""
    return SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def printable(text: str) -> str:
    """`text` without its control characters and lone surrogates (tab, line feed and
    carriage return kept)."""
    return UNPRINTABLE.sub("", text)


# every character that ends a line somewhere (a terminal, `str.splitlines`, a log viewer)
# or moves the cursor, tab aside: written as its escape by `one_line`
_ONE_LINE = {
    code: {0x0A: "\\n", 0x0D: "\\r"}.get(code, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    for code in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029, *range(0xD800, 0xE000))
    if code != 0x09
}


def one_line(text: str) -> str:
    """`text` as one line: each control character but tab, each Unicode line or paragraph
    separator and each lone surrogate (which no stream can write) written as its escape
    ("\\n", "\\r", "\\x1b", "\\u2028", "\\ud800");
    what a log record and the CLI's error write (market/logging.py, cli/errors.py)."""
    return text.translate(_ONE_LINE)
