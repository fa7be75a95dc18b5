"""Research intake: a client's research note (PDF or plain text) read, tagged, scored,
stored and summarised. `POST /api/portfolio/upload-research` is a thin adapter over
`read_note` (no database) and `file_note`; `intake_research` is the two in turn.

A note is stored once per client and content (sha256): the same client uploading the same
bytes again gets its stored summary with `already_stored: true`; another client uploading
those bytes gets a record of its own (its own filename, never the first client's). PDFs go
through the sandboxed extractor (size, page and time limits); text must be UTF-8 and at
most `research_text_max_bytes`, and reading any note's text (tagging, scoring, key
sentences) stops with a clear error past `research_text_timeout_seconds`. A client's notes
hold at most `research_quota_characters` of text in all (413 past it). The summary names the instruments the
note mentions (and how each was matched), its sentiment with the scorer's label, and the
sentences that carry the most sentiment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import TypedDict

from sqlalchemy import Connection, Engine, func, select

from ingest.mentions import InstrumentMatcher, Mention
from ingest.text_sources import pdf_extractor
from market.budget import Deadline
from market.errors import InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError
from market.settings import Settings
from market.text import PDF_TYPES, checked_text
from market.text import media_type as declared_type
from models.sentiment import SCORER_ID, SentimentScore, key_sentences, score_text
from store import tables
from store.history import append_history, current_rows
from store.transactions import Respond, answered, write_transaction

TEXT_TYPES = {"text/plain", "text/markdown"}
TEXT_SUFFIXES = {".txt", ".md", ".text"}


@dataclass(frozen=True)
class NoteText:
    """A note as read, before anything is stored or scored."""

    sha256: str
    name: str
    media_type: str
    text: str
    pages: int | None


def read_note(
    settings: Settings, content: bytes, filename: str | None = None, media_type: str | None = None
) -> NoteText:
    """The note's text: a PDF through the sandboxed extractor, plain text checked. Touches
    no database (the API reads uploads holding no database slot: api/routers/portfolio.py)."""
    name = PurePath(filename or "research note").name
    if not content:
        raise InvalidInputError(f"{name} is empty")
    if len(content) > settings.pdf_max_bytes:
        raise PayloadTooLargeError(
            f"{name} is {len(content):,} bytes, more than the limit of {settings.pdf_max_bytes:,}"
        )
    kind, text, pages = _read(content, name, declared_type(media_type), settings)
    if not text.strip():
        raise InvalidInputError(f"{name} holds no readable text")
    return NoteText(hashlib.sha256(content).hexdigest(), name, kind, text, pages)


class NoteInstrument(TypedDict):
    symbol: str
    matched_by: str  # symbol, name or alias


class NoteSentiment(TypedDict):
    score: float
    label: str
    scorer: str
    positive_hits: int
    negative_hits: int


class NoteSummary(TypedDict):
    """What a client gets back for a note (stored with it): the file, the instruments it
    names, its sentiment and its key sentences."""

    sha256: str
    filename: str
    media_type: str
    pages: int | None
    characters: int
    instruments: list[NoteInstrument]
    sentiment: NoteSentiment
    key_sentences: list[str]


class FiledNote(NoteSummary):
    id: int
    already_stored: bool


@dataclass(frozen=True)
class TaggedNote:
    """What reading a note's text found: the instruments it mentions, its sentiment, and
    the summary a client gets back (without its stored id)."""

    mentions: list[Mention]
    sentiment: SentimentScore
    summary: NoteSummary


def file_note(
    engine: Engine, settings: Settings, note: NoteText, client_id: str | None = None, respond: Respond = None
) -> dict:
    """A note read by `read_note` tagged, scored and stored once per client and content;
    its summary. A note this client already stored answers its stored summary with
    `already_stored: true`, also when the same note was sent twice at once and the other
    request stored it first. A client's notes are written one at a time, each within the
    client's quota (the admin's notes have no client and no quota). `respond` renders the
    answer inside the transaction (store.transactions `answered`)."""
    mine = _client_note(client_id, note.sha256)
    with engine.connect() as conn:
        matcher = InstrumentMatcher(current_rows(conn, tables.instruments))
        stored = current_rows(conn, tables.research_notes, where=mine)
    if stored:
        return answered(_already_stored(stored[0]), respond)
    tagged = tag_note(note, matcher, settings)
    with write_transaction(engine, f"research:{client_id or 'house'}") as conn:  # a client's notes one at a time
        raced = current_rows(conn, tables.research_notes, where=mine)  # the same note sent twice at once
        if raced:
            return answered(_already_stored(raced[0]), respond)
        if client_id is not None:
            _within_quota(conn, settings, client_id, note.name, len(note.text))
        note_id = _store(conn, note, client_id, tagged)
        return answered({**tagged.summary, "id": note_id, "already_stored": False}, respond)


def tag_note(note: NoteText, matcher: InstrumentMatcher, settings: Settings) -> TaggedNote:
    """The note's mentions, sentiment and key sentences. Reading its text stops with a
    clear error past `research_text_timeout_seconds`: one deadline, checked while finding
    mentions, before scoring and while picking the key sentences."""
    text = note.text
    deadline = Deadline(settings.research_text_timeout_seconds, f"reading {note.name}")
    mentions = matcher.find(text, deadline)
    deadline.check()
    sentiment = score_text(text)
    summary: NoteSummary = {
        "sha256": note.sha256,
        "filename": note.name,
        "media_type": note.media_type,
        "pages": note.pages,
        "characters": len(text),
        "instruments": [{"symbol": m.symbol, "matched_by": m.matched_by} for m in mentions],
        "sentiment": {
            "score": sentiment.score,
            "label": sentiment.label,
            "scorer": SCORER_ID,
            "positive_hits": sentiment.positive,
            "negative_hits": sentiment.negative,
        },
        "key_sentences": key_sentences(text, deadline=deadline),
    }
    return TaggedNote(mentions, sentiment, summary)


def _store(conn: Connection, note: NoteText, client_id: str | None, tagged: TaggedNote) -> int:
    """Append the note with its summary, its mentions and its sentiment score; the stored
    note's id."""
    append_history(
        conn,
        tables.research_notes,
        [
            {
                "content_sha256": note.sha256,
                "client_id": client_id,
                "filename": note.name,
                "media_type": note.media_type,
                "body": note.text,
                "summary": tagged.summary,
            }
        ],
    )
    (stored,) = current_rows(conn, tables.research_notes, where=_client_note(client_id, note.sha256))
    document = {"doc_kind": "RESEARCH", "doc_id": stored["id"]}
    append_history(
        conn,
        tables.document_mentions,
        [{**document, "symbol": m.symbol, "matched_by": m.matched_by} for m in tagged.mentions],
    )
    sentiment = tagged.sentiment
    append_history(
        conn,
        tables.sentiment_scores,
        [{**document, "scorer": SCORER_ID, "score": sentiment.score, "detail": sentiment.as_detail()}],
    )
    return stored["id"]


def _already_stored(row: Mapping) -> FiledNote:  # a stored research_notes row
    """The summary of a note stored before, with its id."""
    return {**row["summary"], "id": row["id"], "already_stored": True}


def intake_research(
    engine: Engine,
    settings: Settings,
    content: bytes,
    filename: str | None = None,
    media_type: str | None = None,
    client_id: str | None = None,
) -> dict:
    """`read_note` then `file_note`."""
    return file_note(engine, settings, read_note(settings, content, filename, media_type), client_id)


def _within_quota(conn, settings: Settings, client_id: str, name: str, characters: int) -> None:  # noqa: ANN001
    """A client's notes hold at most `research_quota_characters` of text in all (20 notes of
    999 KB once grew the store by 19 MB)."""
    c = tables.research_notes.c
    used = conn.execute(
        select(func.coalesce(func.sum(func.length(c.body)), 0)).where(c.client_id == client_id)
    ).scalar_one()
    quota = settings.research_quota_characters
    if used + characters > quota:
        raise PayloadTooLargeError(
            f"{name} holds {characters:,} characters; with the {int(used):,} your notes already "
            f"hold that is over your quota of {quota:,}"
        )


def _client_note(client_id: str | None, sha: str) -> list:
    """The filter of one client's note with this content (the admin's notes have no client)."""
    c = tables.research_notes.c
    return [c.content_sha256 == sha, c.client_id.is_(None) if client_id is None else c.client_id == client_id]


def _read(content: bytes, name: str, media_type: str, settings: Settings) -> tuple[str, str, int | None]:
    looks_pdf = content.lstrip()[:5] == b"%PDF-"
    if looks_pdf or media_type in PDF_TYPES or name.lower().endswith(".pdf"):
        with pdf_extractor(settings) as extractor:
            text = extractor.extract(content, name)  # PdfRejected says why when it is no PDF
        return "application/pdf", text.text, text.pages  # printable: the extractor drops control characters
    if media_type in TEXT_TYPES or PurePath(name).suffix.lower() in TEXT_SUFFIXES or (not media_type and not looks_pdf):
        if len(content) > settings.research_text_max_bytes:
            raise PayloadTooLargeError(
                f"{name} is {len(content):,} bytes of text, more than the limit of "
                f"{settings.research_text_max_bytes:,} for a plain-text note"
            )
        try:
            decoded = content.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInputError(f"{name} is not UTF-8 text") from None
        return "text/plain", checked_text(decoded, name), None
    raise UnsupportedMediaTypeError(f"{name}: {media_type} is not supported; send a PDF or plain text")
