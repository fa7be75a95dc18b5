"""Lexicon sentiment with negation and intensity (`SCORER_ID` names the method).

For each token that the lexicon knows, the hit is +1 (positive) or -1 (negative), times
the intensity of the word right before or after it ("sharply lower", "fell sharply":
1.6), and flipped when a
negator stands within the three tokens before it ("did not improve", "no impairment").
The score is (sum of hits) / (number of hits + 1), so one mild word gives +-0.5 and the
score tends to +-1 as evidence piles up; a text without hits scores 0. Sentences are
scored the same way, which is how `key_sentences` picks the most telling ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from market.budget import Deadline
from models.sentiment.lexicon import INTENSIFIERS, IRREGULAR, NEGATION_WINDOW, NEGATIVE, NEGATORS, POSITIVE

SCORER_ID = "finlex-v1"
_TOKEN = re.compile(r"[a-z]+(?:['-][a-z]+)*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly", "d")


@dataclass(frozen=True)
class SentimentScore:
    score: float
    positive: int
    negative: int
    tokens: int
    hits: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return "positive" if self.score > 0.1 else "negative" if self.score < -0.1 else "neutral"

    def as_detail(self) -> dict:
        return {
            "scorer": SCORER_ID,
            "positive": self.positive,
            "negative": self.negative,
            "tokens": self.tokens,
            "hits": self.hits[:20],
        }


def normalise(token: str) -> str | None:
    """The lexicon word a token stands for: itself, or itself without a common suffix."""
    if token in POSITIVE or token in NEGATIVE:
        return token
    if token in IRREGULAR:
        return IRREGULAR[token]
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            stem = token[: -len(suffix)]
            for candidate in (stem, stem + "e", stem + "y"):
                if candidate in POSITIVE or candidate in NEGATIVE:
                    return candidate
    return None


def score_text(text: str) -> SentimentScore:
    tokens = _TOKEN.findall(text.lower())
    total, positive, negative, hits = 0.0, 0, 0, []
    for i, token in enumerate(tokens):
        word = normalise(token)
        if word is None:
            continue
        polarity = 1.0 if word in POSITIVE else -1.0
        before = INTENSIFIERS.get(tokens[i - 1]) if i else None
        after = INTENSIFIERS.get(tokens[i + 1]) if i + 1 < len(tokens) else None
        weight = before or after or 1.0  # "sharply lower" and "fell sharply" alike
        negated = any(t in NEGATORS for t in tokens[max(0, i - NEGATION_WINDOW) : i])
        value = -polarity * weight if negated else polarity * weight
        total += value
        positive += value > 0
        negative += value < 0
        hits.append(("not " if negated else "") + token)
    score = total / (len(hits) + 1) if hits else 0.0
    return SentimentScore(round(max(-1.0, min(1.0, score)), 4), positive, negative, len(tokens), hits)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def key_sentences(text: str, count: int = 3, deadline: Deadline | None = None) -> list[dict]:
    """The `count` sentences with the strongest sentiment, in reading order; `deadline` is
    checked every 200 sentences."""
    scored = []
    for i, s in enumerate(sentences(text)):
        if deadline is not None and i % 200 == 0:
            deadline.check()
        scored.append((i, s, score_text(s).score))
    strongest = sorted((x for x in scored if x[2] != 0), key=lambda x: -abs(x[2]))[:count]
    return [{"sentence": s, "score": v} for _, s, v in sorted(strongest)]
