"""Research intake: PDF or text in, a structured summary out, stored once."""

import pytest

from analysis.research import intake_research
from market.errors import InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.conftest import ON_SQLITE_ONLY
from tests.pdf_samples import text_pdf

NOTE = (
    "Initiating coverage of Kingston Commercial Bank. Loan growth was strong and margins improved. "
    "We see limited risk from ISB. The meeting is on Tuesday."
)


@pytest.fixture
def engine(settings: Settings):
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                {"symbol": "KCB", "name": "Kingston Commercial Bank", "board": "MAIN", "source": "t"},
                {"symbol": "ISB", "name": "Island Savings Bank", "board": "MAIN", "source": "t"},
            ],
        )
    return engine


def test_a_text_note_is_summarised_and_stored_once(settings: Settings, engine) -> None:
    summary = intake_research(engine, settings, NOTE.encode(), "kcb.txt", "text/plain", client_id="client-1")
    assert summary["instruments"] == [
        {"symbol": "ISB", "matched_by": "symbol"},
        {"symbol": "KCB", "matched_by": "name"},
    ]
    assert summary["sentiment"]["label"] == "positive" and summary["already_stored"] is False
    assert summary["key_sentences"][0]["sentence"] == "Loan growth was strong and margins improved."
    again = intake_research(engine, settings, NOTE.encode(), "renamed.txt", "text/plain", client_id="client-1")
    assert again["already_stored"] is True and again["id"] == summary["id"]
    with engine.connect() as conn:
        (note,) = current_rows(conn, tables.research_notes)
        scores = current_rows(conn, tables.sentiment_scores)
    assert note["client_id"] == "client-1" and note["filename"] == "kcb.txt"
    assert [(s["doc_kind"], s["doc_id"]) for s in scores] == [("RESEARCH", note["id"])]


def test_a_pdf_note(settings: Settings, engine) -> None:
    pdf = text_pdf(["Island Savings Bank (ISB) faces litigation and weak demand.", "We downgrade the stock."])
    summary = intake_research(engine, settings, pdf, "isb.pdf", "application/pdf")
    assert summary["media_type"] == "application/pdf" and summary["pages"] == 1
    assert summary["instruments"] == [{"symbol": "ISB", "matched_by": "symbol"}]
    assert summary["sentiment"]["label"] == "negative"


@pytest.mark.parametrize(
    "content, name, media_type, error, message",
    [
        (b"", "x.txt", "text/plain", InvalidInputError, "is empty"),
        (b"\xff\xfe\x00bad", "x.txt", "text/plain", InvalidInputError, "not UTF-8"),
        (b"<html>", "x.pdf", "application/pdf", InvalidInputError, "is not a PDF"),
        # a PDF's other media type, however written, is read as a PDF (it was 'not supported')
        (b"<html>", "note", "Application/X-PDF; charset=binary", InvalidInputError, "note is not a PDF"),
        (b"<p>KCB</p>", "n.html", "text/html", UnsupportedMediaTypeError, "text/html is not supported; send a PDF"),
        (b"GIF89a....", "x.gif", "image/gif", UnsupportedMediaTypeError, "image/gif is not supported"),
        (b"   \n  ", "x.txt", "text/plain", InvalidInputError, "holds no readable text"),
    ],
)
def test_bad_notes_are_refused_with_the_reason(
    settings: Settings, engine, content: bytes, name: str, media_type: str, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        intake_research(engine, settings, content, name, media_type)
    with engine.connect() as conn:
        assert current_rows(conn, tables.research_notes) == []


def test_a_note_over_the_size_limit(settings: Settings, engine) -> None:
    small = settings.model_copy(update={"pdf_max_bytes": 100})
    with pytest.raises(PayloadTooLargeError, match="more than the limit of 100"):
        intake_research(engine, small, b"x" * 101, "big.txt", "text/plain")


def test_notes_never_cross_clients(settings: Settings, engine) -> None:
    """Issue 18: a client uploading bytes another client uploaded got the other's summary
    and filename with already_stored: true. Each client now gets its own record."""
    first = intake_research(engine, settings, NOTE.encode(), "acme-secret-plan.txt", "text/plain", client_id="acme")
    other = intake_research(engine, settings, NOTE.encode(), "beta.txt", "text/plain", client_id="beta")
    assert other["already_stored"] is False and other["id"] != first["id"]
    assert other["filename"] == "beta.txt" and "acme" not in str(other)
    house = intake_research(engine, settings, NOTE.encode(), "house.txt", "text/plain", client_id=None)
    assert house["already_stored"] is False and house["filename"] == "house.txt"
    again = intake_research(engine, settings, NOTE.encode(), "renamed.txt", "text/plain", client_id="beta")
    assert again["already_stored"] is True and again["id"] == other["id"] and again["filename"] == "beta.txt"
    assert (
        intake_research(engine, settings, NOTE.encode(), "x.txt", "text/plain", client_id="acme")["id"] == first["id"]
    )
    assert intake_research(engine, settings, NOTE.encode(), "y.txt", "text/plain", client_id=None)["id"] == house["id"]
    with engine.connect() as conn:
        notes = {n["client_id"]: n for n in current_rows(conn, tables.research_notes)}
        everything = conn.execute(tables.research_notes.select()).all()
    assert {k: n["filename"] for k, n in notes.items()} == {
        "acme": "acme-secret-plan.txt",
        "beta": "beta.txt",
        None: "house.txt",
    }
    assert len(everything) == 3  # appended, never rewritten


def test_a_clients_note_never_moves_the_composites_and_the_houses_counts_once(settings: Settings, engine) -> None:
    """Issue 39, defect 7: client research fed the market-wide composite at weight 1.2, so
    one client's uploads moved every client's sentiment and the model's inputs."""
    from models.sentiment.composite import MARKET
    from pipeline.sentiment import build_composite, texts_in_window
    from tests.portfolio.seed import CALENDAR

    intake_research(engine, settings, NOTE.encode(), "a.txt", "text/plain", client_id="acme")
    intake_research(engine, settings, NOTE.encode(), "b.txt", "text/plain", client_id="beta")
    day = CALENDAR.next_trading_day(__import__("datetime").date.today())
    with engine.connect() as conn:
        assert texts_in_window(conn, day) == []
    with engine.begin() as conn:
        rows = {r["symbol"]: r for r in build_composite(conn, day)}
    assert rows[MARKET]["item_count"] == 0 and rows["KCB"]["score"] == 0.0
    # the operator admits it
    intake_research(engine, settings, NOTE.encode(), "house.txt", "text/plain", client_id=None)
    intake_research(engine, settings, NOTE.encode(), "house-again.txt", "text/plain", client_id=None)
    with engine.connect() as conn:
        assert [t.kind for t in texts_in_window(conn, day)] == ["RESEARCH"]


def test_a_plain_text_note_over_the_text_limit(settings: Settings, engine) -> None:
    small = settings.model_copy(update={"research_text_max_bytes": 1_000})
    with pytest.raises(PayloadTooLargeError, match="1,001 bytes of text, more than the limit of 1,000"):
        intake_research(engine, small, b"x" * 1_001, "big.txt", "text/plain")
    assert intake_research(engine, small, NOTE.encode(), "ok.txt", "text/plain")["already_stored"] is False
    with engine.connect() as conn:
        assert len(current_rows(conn, tables.research_notes)) == 1


def test_reading_a_note_stops_at_its_time_budget(settings: Settings, engine) -> None:
    import time

    from market.errors import BudgetExceededError

    text = (NOTE + " ") * 4_000  # about 570 kB: well under the size limit, over a 0.05 s budget
    quick = settings.model_copy(update={"research_text_timeout_seconds": 0.05})
    started = time.monotonic()
    with pytest.raises(BudgetExceededError, match="took longer than the 0.05 s allowed"):
        intake_research(engine, quick, text.encode(), "long.txt", "text/plain")
    assert time.monotonic() - started < 1.0
    with engine.connect() as conn:
        assert current_rows(conn, tables.research_notes) == []


def test_a_clients_notes_are_held_to_a_quota(settings: Settings, engine) -> None:
    """Issue 39, defect 8: research notes had no per-client quota (20 notes of 999 KB grew
    the store by 19 MB)."""
    small = settings.model_copy(update={"research_quota_characters": 2 * len(NOTE) + 10})
    intake_research(engine, small, NOTE.encode(), "one.txt", "text/plain", client_id="acme")
    intake_research(engine, small, (NOTE + " Again.").encode(), "two.txt", "text/plain", client_id="acme")
    with pytest.raises(PayloadTooLargeError, match="over your quota of"):
        intake_research(engine, small, (NOTE + " Third.").encode(), "three.txt", "text/plain", client_id="acme")
    assert intake_research(engine, small, NOTE.encode(), "one-again.txt", "text/plain", client_id="acme")[
        "already_stored"
    ]
    intake_research(engine, small, (NOTE + " Third.").encode(), "beta.txt", "text/plain", client_id="beta")  # its own
    intake_research(engine, small, (NOTE + " Third.").encode(), "house.txt", "text/plain", client_id=None)  # no quota
    with engine.connect() as conn:
        assert {n["client_id"] for n in current_rows(conn, tables.research_notes)} == {"acme", "beta", None}
        assert len(current_rows(conn, tables.research_notes)) == 4


@ON_SQLITE_ONLY  # no database: the reading alone
def test_a_text_of_nothing_but_symbols_stops_at_its_time_budget(settings: Settings) -> None:
    """A PDF's text is not held to the plain-text cap: 8 MB of 'KCB ' ran 17 s on a budget
    of 1 s, the mentions' symbol loop checking no deadline."""
    import time

    from analysis.research import NoteText, tag_note
    from ingest.mentions import InstrumentMatcher
    from market.errors import BudgetExceededError

    quick = settings.model_copy(update={"research_text_timeout_seconds": 0.5})
    matcher = InstrumentMatcher([{"symbol": "KCB", "name": "Kingston Commercial Bank"}])
    note = NoteText("0" * 64, "flood.pdf", "application/pdf", "KCB " * 1_000_000, 1)
    started = time.perf_counter()
    with pytest.raises(BudgetExceededError, match="reading flood.pdf took longer than the 0.5 s allowed"):
        tag_note(note, matcher, quick)
    assert time.perf_counter() - started < 2.5
