"""Which instruments a text names: by symbol, by company name, or by a known alias.

- A symbol counts when it stands as its own upper-case token ("KCB", "(KCB)", "KCB:"),
  never inside a word and never in lower case ("win" is not the symbol WIN). Beside
  another upper-case word (a headline in capitals, a PDF's heading) a word and a symbol
  look alike ("WE EXPECT TO WIN MORE"), so there it counts only in brackets or before a
  colon ("(WIN)", "WIN:"); another symbol is not such a word ("KCB, ISB and NCT").
- A name counts case-insensitively as a whole phrase, with or without its legal suffix
  ("Kingston Commercial Bank Limited", "Kingston Commercial Bank").
  The legal suffix is a legal form (Limited, Ltd, plc, Inc, Company, Co, Corporation,
  Corp), never "Group" or "Holdings", without which a name is a common phrase.
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
class Mention:
    symbol: str
    matched_by: str  # "symbol", "name" or "alias"


class InstrumentMatcher:
    def __init__(self, instruments: list[dict], aliases: dict[str, list[str]] | None = None) -> None:
        aliases = ALIASES if aliases is None else aliases
        self._symbols = {i["symbol"] for i in instruments}
        phrases: list[tuple[str, str, str]] = []
        for instrument in instruments:
            name = instrument.get("name") or ""
            for phrase in {name, _SUFFIXES.sub("", name)}:
                if len(phrase) >= 4:
                    phrases.append((phrase, instrument["symbol"], "name"))
            for alias in aliases.get(instrument["symbol"], []):
                phrases.append((alias, instrument["symbol"], "alias"))
        phrases.sort(key=lambda p: -len(p[0]))  # longest first: "Island Savings Bank" before "Island Savings"
        self._phrases = [
            (re.compile(r"(?<![\w&])" + re.escape(p) + r"(?![\w&])", re.I), s, how) for p, s, how in phrases
        ]
        self._symbol_pattern = re.compile(r"(?<![\w.&-])([A-Z][A-Z0-9]{1,9})(?![\w&-])")

    def find(self, text: str, deadline: Deadline | None = None) -> list[Mention]:
        """The instruments `text` names; `deadline` is checked between patterns."""
        found: dict[str, Mention] = {}
        for match in self._symbol_pattern.finditer(text):
            if match.group(1) in self._symbols and not _among_capitals(text, *match.span(1), self._symbols):
                found.setdefault(match.group(1), Mention(match.group(1), "symbol"))
        for pattern, symbol, how in self._phrases:
            if deadline is not None:
                deadline.check()
            if symbol not in found and pattern.search(text):
                found[symbol] = Mention(symbol, how)
        return sorted(found.values(), key=lambda m: m.symbol)
