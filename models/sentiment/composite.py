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
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import Connection, select

from market.clock import session_close_utc
from models.sentiment.scorer import SCORER_ID, score_text
from store import tables
from store.history import append_history, current_query, current_rows

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


def score_new_documents(conn: Connection) -> int:
    """Score every stored text that has no score from the current scorer yet."""
    rows = []
    for kind, doc_id, text in _unscored_texts(conn):
        result = score_text(text)
        rows.append(
            {
                "doc_kind": kind,
                "doc_id": doc_id,
                "scorer": SCORER_ID,
                "score": result.score,
                "detail": result.as_detail(),
            }
        )
    return append_history(conn, tables.sentiment_scores, rows).inserted


_SOURCES = [
    ("NEWS", tables.news_items, "published_at"),
    ("DISCLOSURE", tables.disclosures, "published_at"),
    ("RESEARCH", tables.research_notes, "recorded_at"),
]


def _text(kind: str, row) -> str:  # noqa: ANN001
    if kind == "NEWS":
        return f"{row['title']}. {row['summary'] or ''}"
    if kind == "DISCLOSURE":
        return f"{row['title'] or ''}. {row['body'] or ''}"
    return row["body"]


def _unscored_texts(conn: Connection):  # noqa: ANN202
    """The current version of each text (a disclosure's latest one read successfully) that
    the current scorer has not scored. The database leaves out the scored ones: reading
    every text's body every day to find the new ones grew with the history."""
    scores = tables.sentiment_scores
    for kind, table, _ in _SOURCES:
        where = [table.c.status == "OK"] if kind == "DISCLOSURE" else []
        current = current_query(table, where=where).subquery()
        scored = select(scores.c.id).where(
            scores.c.doc_kind == kind, scores.c.doc_id == current.c.id, scores.c.scorer == SCORER_ID
        )
        for row in conn.execute(select(current).where(~scored.exists()).order_by(current.c.id)).mappings():
            yield kind, row["id"], _text(kind, row)


def texts_in_window(conn: Connection, day: date) -> list[ScoredText]:
    """The scored texts published in the LOOKBACK_DAYS before the day's close. Scores and
    mentions are read for the texts recorded in the window only, not the whole history."""
    close = session_close_utc(day)
    start = close - timedelta(days=LOOKBACK_DAYS)
    found = []
    for kind, table, stamp in _SOURCES:
        recent = (
            table.c[stamp] > start if stamp == "recorded_at" else table.c[stamp].is_(None) | (table.c[stamp] > start)
        )
        window = sorted(current_rows(conn, table, where=[recent]), key=lambda r: r["id"])
        if not window:  # no text of this kind in the window (a market of price files has none): nothing to look up
            continue
        candidates = select(table.c.id).where(recent).scalar_subquery()  # every version that may be a current one
        scores = {
            r["doc_id"]: r["score"]
            for r in current_rows(
                conn,
                tables.sentiment_scores,
                where=[
                    tables.sentiment_scores.c.scorer == SCORER_ID,
                    tables.sentiment_scores.c.doc_kind == kind,
                    tables.sentiment_scores.c.doc_id.in_(candidates),
                ],
            )
        }
        mentions: dict[int, set[str]] = {}
        for m in current_rows(
            conn,
            tables.document_mentions,
            where=[tables.document_mentions.c.doc_kind == kind, tables.document_mentions.c.doc_id.in_(candidates)],
        ):
            mentions.setdefault(m["doc_id"], set()).add(m["symbol"])
        contents: set[str] = set()
        for row in window:
            if kind == "RESEARCH":
                if row["client_id"] is not None:  # a client's note stays the client's (module docstring)
                    continue
                if row["content_sha256"] in contents:  # the house's copies of one note count once
                    continue
                contents.add(row["content_sha256"])
            published = row.get(stamp) or row["recorded_at"]
            if start < published <= close and row["id"] in scores:
                found.append(
                    ScoredText(kind, row["id"], published, scores[row["id"]], frozenset(mentions.get(row["id"], ())))
                )
    return found


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


def active_symbols(conn: Connection, day: date) -> list[str]:
    return sorted(
        r["symbol"]
        for r in current_rows(conn, tables.instruments)
        if (r["listed_on"] is None or r["listed_on"] <= day) and (r["delisted_on"] is None or r["delisted_on"] > day)
    )


def build_composite(conn: Connection, day: date) -> list[dict]:
    """Score new texts, compute the day's composites and append them; returns the rows."""
    score_new_documents(conn)
    rows = composite_rows(day, texts_in_window(conn, day), active_symbols(conn, day))
    append_history(
        conn,
        tables.sentiment_composites,
        rows,
        scope=[tables.sentiment_composites.c.trading_date == day, tables.sentiment_composites.c.method == METHOD],
    )
    return rows
