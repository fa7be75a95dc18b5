"""Which instruments a text names: by symbol, by company name, or by a known alias.

- A symbol counts when it stands as its own upper-case token ("KCB", "(KCB)", "KCB:"),
  never inside a word and never in lower case ("win" is not the symbol WIN).
- A name counts case-insensitively as a whole phrase, with or without its legal suffix
  ("Kingston Commercial Bank Limited", "Kingston Commercial Bank").
- ALIASES holds the short names the press uses; each alias is tested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from market.budget import Deadline

_SUFFIXES = re.compile(r"\s+(limited|ltd\.?|plc|inc\.?|company|co\.?|group|holdings|corporation|corp\.?)$", re.I)

ALIASES: dict[str, list[str]] = {
    "KCB": ["Kingston Commercial", "KC Bank"],
    "CFG": ["Caribbean Fin.", "CaribFin"],
    "ISB": ["Island Savings"],
    "NCT": ["North Coast Tel", "NC Telecom"],
    "JPC": ["Jamaica Power", "JP&C"],
    "BMD": ["Blue Mountain"],
    "SLA": ["Sandals Leisure"],
    "MBI": ["MoBay Insurance"],
}


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
            if match.group(1) in self._symbols:
                found.setdefault(match.group(1), Mention(match.group(1), "symbol"))
        for pattern, symbol, how in self._phrases:
            if deadline is not None:
                deadline.check()
            if symbol not in found and pattern.search(text):
                found[symbol] = Mention(symbol, how)
        return sorted(found.values(), key=lambda m: m.symbol)
