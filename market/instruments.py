"""What kind of security an instrument is, and whether the AI mandate may hold it.

The AI portfolio is a long-only mandate of liquid ORDINARY shares: a fund or ETF, a debt
security, a preference share, a rights entitlement or locked-in (promoter) shares stays
out of its book, the client suggestions and the equal-weighted liquid benchmark. One
small closed vocabulary (`InstrumentType`) and one rule decide it:

1. A type the source states (the generic OHLCV file's `instrument_type` or `type`
   column, a store row's `instrument_type`) wins over any inference. A stated type this
   vocabulary does not know is UNKNOWN (`parse_instrument_type`).
2. Otherwise the type is inferred from the code and the name (`infer_instrument_type`),
   a rule read off the NSE Kenya files (every code and name of 2006-2022, see
   docs/pipeline.md "Instrument types"):
   - a `^` prefix is a market INDEX (`^NASI`, `^N20I`, `^N25I`, `^FNK15`, `^FNK25`,
     `^ZKEQTK`, `^ZKEQTU`; ingest.importers.formats.is_index, the same prefix);
   - a `-P<digits>` suffix is a PREFERENCE share (`KPLC-P4`, `KPLC-P7`: Kenya Power's 4%
     and 7% cumulative preference shares, whose files name them by the code alone);
   - the word ETF or REIT in the name is a FUND (`GLD` "ABSA NewGold ETF" / "Barclays
     NewGold ETF", `FAHR` "Stanlib Fahari Income-REIT"), and so are the codes of those two
     (`KNOWN_CODES`), since the per-company files carry no names;
   - the other words of `NAME_WORDS` in the name, tried in order after ETF and REIT: Index
     is an INDEX, Pref, Preference or Preferred a PREFERENCE share, Bond, Debenture, Notes
     or Loan Stock DEBT, Right or Rights RIGHTS: the lines a smaller market's daily file
     carries beside its shares under codes that say nothing ("JMMBGL7.25" "JMMB Group
     7.25% Preference", "GSE-CI" "GSE Composite Index"). No NSE name holds one of these
     words but its indices' (which the `^` already marks);
   - anything else is ORDINARY. The simulator's instruments are all ordinary shares.
3. `is_ordinary` is True for ORDINARY alone: UNKNOWN (a type stated but not understood)
   is treated like every other non-ordinary type and kept out of the mandate, because the
   mandate needs evidence of an ordinary share, not the absence of a contrary one. Such
   instruments are still stored, priced and served; only the AI book, the suggestions and
   the benchmark leave them out.

No exchange file seen so far marks DEBT, RIGHTS or LOCKED_IN in a column of their own;
DEBT and RIGHTS are inferred from a name's words alone, LOCKED_IN never (a source states it).
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache


class InstrumentType(StrEnum):
    ORDINARY = "ORDINARY"  # ordinary (common) shares: the only type the AI mandate holds
    PREFERENCE = "PREFERENCE"  # preference shares
    FUND = "FUND"  # a fund's units: ETF, REIT, unit trust
    DEBT = "DEBT"  # bonds, debentures, notes
    RIGHTS = "RIGHTS"  # rights entitlements
    LOCKED_IN = "LOCKED_IN"  # promoter or locked-in shares, not freely tradable
    INDEX = "INDEX"  # a market index's level, not a security
    UNKNOWN = "UNKNOWN"  # stated by a source, but not a type this vocabulary knows


# What a source may write in a type column, lower-cased, spaces, '-' and '_' removed.
_SYNONYMS: dict[str, InstrumentType] = {
    **{w: InstrumentType.ORDINARY for w in ("ordinary", "ord", "equity", "common", "commonstock", "share", "shares")},
    **{w: InstrumentType.PREFERENCE for w in ("preference", "pref", "preferred", "preferredstock", "preferenceshares")},
    **{w: InstrumentType.FUND for w in ("fund", "etf", "reit", "unittrust", "mutualfund", "cis")},
    **{w: InstrumentType.DEBT for w in ("debt", "bond", "bonds", "debenture", "debentures", "note", "notes")},
    **{w: InstrumentType.RIGHTS for w in ("rights", "right", "rightsissue")},
    **{w: InstrumentType.LOCKED_IN for w in ("lockedin", "locked", "promoter", "promotershares")},
    "index": InstrumentType.INDEX,
    "unknown": InstrumentType.UNKNOWN,
}

PREFERENCE_SUFFIX = re.compile(r"-P\d+$")  # KPLC-P4, KPLC-P7
# The words of a name that say it is not an ordinary share, in the order they are tried (a
# "Top 40 Index ETF" is a fund, a "Preference Share Index" an index): a file's name column
# says what its code cannot ("JMMB Group 7.25% Preference", "GSE Composite Index").
NAME_WORDS: tuple[tuple[re.Pattern[str], InstrumentType], ...] = (
    (re.compile(r"\b(ETF|REIT)\b", re.IGNORECASE), InstrumentType.FUND),  # "ABSA NewGold ETF", "Fahari Income-REIT"
    (re.compile(r"\bindex\b", re.IGNORECASE), InstrumentType.INDEX),
    (re.compile(r"\b(pref|prefs|preference|preferred)\b", re.IGNORECASE), InstrumentType.PREFERENCE),
    (re.compile(r"\b(bonds?|debentures?|notes|loan stock)\b", re.IGNORECASE), InstrumentType.DEBT),
    (re.compile(r"\brights?\b", re.IGNORECASE), InstrumentType.RIGHTS),
)
KNOWN_CODES: dict[str, InstrumentType] = {  # NSE codes whose code alone does not say (company files have no names)
    "GLD": InstrumentType.FUND,
    "FAHR": InstrumentType.FUND,
}


_SECURITY_WORD = re.compile(r"(shares?|stocks?)$")  # "Ordinary Shares" says what "Ordinary" says


def parse_instrument_type(text: str | None) -> InstrumentType | None:
    """The type a source states: None for a blank cell (the source did not say), UNKNOWN
    for a word outside the vocabulary and its synonyms (see `_SYNONYMS`). A synonym
    followed by share(s) or stock(s) is that synonym: "Ordinary Shares", "Common Shares",
    "Preferred Shares" and "Equity Shares" were UNKNOWN, so a file whose type column
    said "Ordinary Shares" kept every share out of the AI book and the benchmark."""
    if text is None:
        return None
    word = re.sub(r"[\s_\-]+", "", str(text)).lower()
    if not word:
        return None
    security = _SYNONYMS.get(_SECURITY_WORD.sub("", word))  # not an index: "Index Shares" is no level
    if word not in _SYNONYMS and security not in (None, InstrumentType.INDEX, InstrumentType.UNKNOWN):
        return security
    return _SYNONYMS.get(word, InstrumentType.UNKNOWN)


@lru_cache(maxsize=65_536)  # read once per row of a file: a market has a few hundred codes and names
def infer_instrument_type(symbol: str, name: str | None = None) -> InstrumentType:
    """The type the code and the name imply, where no source states one (module docstring)."""
    code = symbol.strip().upper()
    if code.startswith("^"):
        return InstrumentType.INDEX
    if PREFERENCE_SUFFIX.search(code):
        return InstrumentType.PREFERENCE
    named = next((kind for words, kind in NAME_WORDS if name and words.search(name)), None)
    return named or KNOWN_CODES.get(code, InstrumentType.ORDINARY)


def instrument_type(symbol: str, name: str | None = None, stated: str | None = None) -> InstrumentType:
    """The one rule: the stated type when there is one, else the inference."""
    return parse_instrument_type(stated) or infer_instrument_type(symbol, name)


def is_ordinary(kind: str | None) -> bool:
    """Whether an instrument of this type may be held by the AI mandate: ORDINARY only."""
    return kind == InstrumentType.ORDINARY
