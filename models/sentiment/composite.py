"""The sentiment composite per instrument and trading day (T1 step 3).

Inputs are the texts known when T1 runs whose publication time is at or before the
day's 16:00 close and within the last LOOKBACK_DAYS calendar days: news items,
disclosures that were read successfully, and the house's research notes (their upload
time counts as publication). A client's research note never enters a composite, the
market-wide one or an instrument's, so one client's uploads cannot move what every other
client sees or the model's sentiment inputs; the operator admits a note by uploading it
with the admin key (a house note, `client_id` null), which counts from its upload. Each
text's sentiment (scorer `finlex-v1`) enters with the weight

    weight = SOURCE_WEIGHTS[kind] * 0.5 ** (age_in_days / HALF_LIFE_DAYS)

and the composite is sum(weight * score) / (sum(weight) + PRIOR_WEIGHT): a weighted mean
shrunk toward neutral, so one old headline moves it little and a day without news is 0.
The market-wide composite (symbol `^MARKET`) uses every text, named instrument or not.
Every active instrument gets a row every day (score 0 and item_count 0 when nothing was
said), and each row lists its inputs (kind, id, score, weight) so any value can be
explained.

This module computes and opens no connection: pipeline/sentiment.py scores the new texts,
reads the texts in the window and the active instruments, and appends the rows built here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from market.clock import session_close_utc

METHOD = "decay-v1"
MARKET = "^MARKET"
HALF_LIFE_DAYS = 1.5
LOOKBACK_DAYS = 10
PRIOR_WEIGHT = 1.0
SOURCE_WEIGHTS = {"NEWS": 1.0, "DISCLOSURE": 1.5, "RESEARCH": 1.2}


@dataclass(frozen=True)
class ScoredText:
    kind: str
    doc_id: int
    published_at: datetime
    score: float
    symbols: frozenset[str]


def composite_rows(day: date, texts: list[ScoredText], symbols: list[str]) -> list[dict]:
    close = session_close_utc(day)
    weighted = [
        (t, SOURCE_WEIGHTS[t.kind] * 0.5 ** (((close - t.published_at).total_seconds() / 86400) / HALF_LIFE_DAYS))
        for t in texts
    ]

    def row(symbol: str, items: list[tuple[ScoredText, float]]) -> dict:
        total = sum(w for _, w in items)
        score = sum(t.score * w for t, w in items) / (total + PRIOR_WEIGHT) if items else 0.0
        inputs = [
            {"kind": t.kind, "id": t.doc_id, "score": t.score, "weight": round(w, 4)}
            for t, w in sorted(items, key=lambda x: (x[0].kind, x[0].doc_id))
        ]
        return {
            "symbol": symbol,
            "trading_date": day,
            "method": METHOD,
            "score": round(score, 6),
            "item_count": len(items),
            "inputs": inputs,
        }

    rows = [row(symbol, [(t, w) for t, w in weighted if symbol in t.symbols]) for symbol in symbols]
    rows.append(row(MARKET, weighted))
    return rows
