"""Which instruments a text names: by symbol, by company name, or by a known alias.

- A symbol counts when it stands as its own upper-case token ("KCB", "(KCB)", "KCB:"),
  never inside a word and never in lower case ("win" is not the symbol WIN). Beside
  another upper-case word (a headline in capitals, a PDF's heading) a word and a symbol
  look alike ("WE EXPECT TO WIN MORE"), so there it counts only in brackets or before a
  colon ("(WIN)", "WIN:"); another symbol is not such a word ("KCB, ISB and NCT").
- A name counts case-insensitively as a whole phrase, with or without its legal suffix
  ("Kingston Commercial Bank Limited", "Kingston Commercial Bank").
  The legal suffix is a legal form (Limited, Ltd, plc, Inc, Company, Co, Corporation,
  Corp), never "Group" or "Holdings", without which a name may be a common phrase.
- A name without its "Group" or "Holdings" (its short name, of two words or more: "Harbour
  Retail") counts only as a company is written: with the name's capitals, not after "the"
  (a place: "the Blue Lagoon") and not followed by another capitalised word on its line
  (a longer name: "Caribbean Financial Action Task Force").
- ALIASES holds the short names the press uses, each distinctive (never a place: "Blue
  Mountain", "Kingston Commercial" district); each alias is tested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from market.budget import Deadline

# legal forms only: "Group" and "Holdings" are part of a name ("Caribbean Financial" and
# "Blue Lagoon" alone are a task force's and a bay's)
_SUFFIXES = re.compile(r"\s+(limited|ltd\.?|plc|inc\.?|company|co\.?|corporation|corp\.?)$", re.I)
_GROUP = re.compile(r"\s+(group|holdings)$", re.I)  # dropped for the short name, as a company is written

ALIASES: dict[str, list[str]] = {
    "KCB": ["KC Bank"],
    "CFG": ["Caribbean Fin.", "CaribFin"],
    "ISB": ["Island Savings"],
    "NCT": ["North Coast Tel", "NC Telecom"],
    "JPC": ["Jamaica Power", "JP&C"],
    "SLA": ["Sandals Leisure"],
    "MBI": ["MoBay Insurance"],
}


# the word next to a symbol on its line, across spaces and punctuation other than brackets
_WORD_BEFORE = re.compile(r"([A-Za-z]{2,})[^\w\n()\[\]]{1,3}$")
_WORD_AFTER = re.compile(r"[^\w\n()\[\]:]{1,3}([A-Za-z]{2,})")


def _among_capitals(text: str, start: int, end: int, symbols: set[str]) -> bool:
    """Whether the token at text[start:end] stands beside an upper-case word that is not a
    symbol ("KCB, ISB and NCT" is a list), and is not marked as a symbol by brackets or a
    colon after it."""
    if text[start - 1 : start] in "([" and start > 0 or text[end : end + 1] == ":":
        return False
    before = _WORD_BEFORE.search(text, max(0, start - 40), start)
    after = _WORD_AFTER.match(text, end)
    words = (word.group(1) for word in (before, after) if word is not None)
    return any(word.isupper() and word not in symbols for word in words)


@dataclass(frozen=True)
class _Needle:
    """What a text must hold for a phrase's pattern to match in it (a plain substring look-up,
    far faster than the pattern's search: a 1 MB disclosure took 10 s against 100 names'
    patterns): the phrase, `folded` (`_folded`) where its pattern ignores case."""

    text: str
    folded: bool


def _folded(text: str) -> str:
    """`text` case-folded so that wherever a pattern compiled with re.I matches a phrase, the
    folded phrase is in the folded text (re.I also matches the dotted and dotless i, long s
    and Kelvin sign with their ASCII letters)."""
    return text.replace("\u0130", "i").replace("\u0131", "i").casefold()


def _phrase(phrase: str) -> re.Pattern[str]:
    """A name or an alias as a whole phrase, in any case."""
    return re.compile(r"(?<![\w&])" + re.escape(phrase) + r"(?![\w&])", re.I)


def _short_name(short: str) -> re.Pattern[str]:
    """A name without its "Group" or "Holdings" as a company is written (module docstring):
    its own capitals, not after "the", not before another capitalised word on its line."""
    return re.compile(r"(?<![\w&])(?<![Tt]he )" + re.escape(short) + r"(?![\w&])(?![ \t]+[A-Z])")


@dataclass(frozen=True)
class Mention:
    symbol: str
    matched_by: str  # "symbol", "name" or "alias"


class InstrumentMatcher:
    def __init__(self, instruments: list[dict], aliases: dict[str, list[str]] | None = None) -> None:
        aliases = ALIASES if aliases is None else aliases
        self._symbols = {i["symbol"] for i in instruments}
        phrases: list[tuple[re.Pattern[str], int, str, str, _Needle]] = []
        for instrument in instruments:
            name, symbol = instrument.get("name") or "", instrument["symbol"]
            for phrase in {name, _SUFFIXES.sub("", name)}:
                if len(phrase) >= 4:
                    phrases.append((_phrase(phrase), len(phrase), symbol, "name", _Needle(_folded(phrase), True)))
            if (short := _GROUP.sub("", _SUFFIXES.sub("", name))) != _SUFFIXES.sub("", name) and len(
                short.split()
            ) >= 2:
                phrases.append((_short_name(short), len(short), symbol, "name", _Needle(short, False)))
            for alias in aliases.get(symbol, []):
                phrases.append((_phrase(alias), len(alias), symbol, "alias", _Needle(_folded(alias), True)))
        phrases.sort(key=lambda p: -p[1])  # longest first: "Island Savings Bank" before "Island Savings"
        self._phrases = [(pattern, s, how, needle) for pattern, _, s, how, needle in phrases]
        self._symbol_pattern = re.compile(r"(?<![\w.&-])([A-Z][A-Z0-9]{1,9})(?![\w&-])")

    def find(self, text: str, deadline: Deadline | None = None) -> list[Mention]:
        """The instruments `text` names; `deadline` is checked between patterns and every
        1,000 upper-case tokens (a text of nothing but symbols ran on past it)."""
        found: dict[str, Mention] = {}
        for i, match in enumerate(self._symbol_pattern.finditer(text)):
            if deadline is not None and i % 1000 == 999:
                deadline.check()
            if match.group(1) in self._symbols and not _among_capitals(text, *match.span(1), self._symbols):
                found.setdefault(match.group(1), Mention(match.group(1), "symbol"))
        folded = _folded(text)
        for pattern, symbol, how, needle in self._phrases:
            if deadline is not None:
                deadline.check()
            if symbol not in found and needle.text in (folded if needle.folded else text) and pattern.search(text):
                found[symbol] = Mention(symbol, how)
        return sorted(found.values(), key=lambda m: m.symbol)
