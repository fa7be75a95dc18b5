"""T1 step 3's shell around models/sentiment/composite.py: it scores the texts the current
scorer has not scored yet, reads the scored texts in the day's window and the active
instruments, and appends the day's composites that models/sentiment/composite.py builds
(its docstring has the rule: which texts count, their weights, the shrinkage)."""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy import Connection, select

from market.clock import session_close_utc
from models.sentiment.composite import LOOKBACK_DAYS, METHOD, ScoredText, composite_rows
from models.sentiment.scorer import SCORER_ID, score_text
from store import tables
from store.history import append_history, current_query, current_rows


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
        current = current_query(table, where=where, dialect=conn.dialect.name).subquery()
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
