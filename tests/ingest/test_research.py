"""Research intake: PDF or text in, a structured summary out, stored once."""
import pytest

from ingest.research import intake_research
from market.errors import InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.pdf_samples import text_pdf

NOTE = ("Initiating coverage of Kingston Commercial Bank. Loan growth was strong and margins improved. "
        "We see limited risk from ISB. The meeting is on Tuesday.")


@pytest.fixture
def engine(settings: Settings):  # noqa: ANN201
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.instruments, [{"symbol": "KCB", "name": "Kingston Commercial Bank", "board": "MAIN", "source": "t"},
                                                  {"symbol": "ISB", "name": "Island Savings Bank", "board": "MAIN", "source": "t"}])
    return engine


def test_a_text_note_is_summarised_and_stored_once(settings: Settings, engine) -> None:  # noqa: ANN001
    summary = intake_research(engine, settings, NOTE.encode(), "kcb.txt", "text/plain", client_id="client-1")
    assert summary["instruments"] == [{"symbol": "ISB", "matched_by": "symbol"}, {"symbol": "KCB", "matched_by": "name"}]
    assert summary["sentiment"]["label"] == "positive" and summary["already_stored"] is False
    assert summary["key_sentences"][0]["sentence"] == "Loan growth was strong and margins improved."
    again = intake_research(engine, settings, NOTE.encode(), "renamed.txt", "text/plain", client_id="client-1")
    assert again["already_stored"] is True and again["id"] == summary["id"]
    with engine.connect() as conn:
        (note,) = current_rows(conn, tables.research_notes)
        scores = current_rows(conn, tables.sentiment_scores)
    assert note["client_id"] == "client-1" and note["filename"] == "kcb.txt"
    assert [(s["doc_kind"], s["doc_id"]) for s in scores] == [("RESEARCH", note["id"])]


def test_a_pdf_note(settings: Settings, engine) -> None:  # noqa: ANN001
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
        (b"GIF89a....", "x.gif", "image/gif", UnsupportedMediaTypeError, "image/gif is not supported"),
        (b"   \n  ", "x.txt", "text/plain", InvalidInputError, "holds no readable text"),
    ],
)
def test_bad_notes_are_refused_with_the_reason(settings: Settings, engine, content: bytes, name: str,  # noqa: ANN001
                                               media_type: str, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        intake_research(engine, settings, content, name, media_type)
    with engine.connect() as conn:
        assert current_rows(conn, tables.research_notes) == []


def test_a_note_over_the_size_limit(settings: Settings, engine) -> None:  # noqa: ANN001
    small = settings.model_copy(update={"pdf_max_bytes": 100})
    with pytest.raises(PayloadTooLargeError, match="more than the limit of 100"):
        intake_research(engine, small, b"x" * 101, "big.txt", "text/plain")
